"""End-to-end ``Model.encode`` throughput next to llama.cpp's, per reference
vocabulary and text, in one run.

    python benchmarks/bench_encode.py [--vocab-dir DIR] [--only NAME ...]
        [--repeat 3] [--llama-python PY] [--python LABEL=PY ...] [--json OUT]

Texts (generated from fixed seeds, so every interpreter sees the same
bytes): 0.5 MB of English prose, 0.5 MB of mixed scripts (CJK, Cyrillic,
Arabic, Greek, Devanagari, emoji, code) and 100 KB of Python-like source.

Every TokenPrism figure is the best of ``--repeat`` runs, each on a model
opened afresh and warmed up with one short sentence (which builds any
table made on first use), so that no run profits from a word cache filled
by the previous one (llama.cpp keeps no cache). Times are CPU time of the
measuring process. The ids of both sides are compared (by a hash): a ``!``
marks a mismatch.

Each side can run in another interpreter: ``--llama-python`` names a Python
with ``llama-cpp-python`` (default: this one, if it has it), and each
``--python LABEL=PY`` adds a TokenPrism column run by that Python (say, a
pure-Python and a compiled install); without any, this Python's TokenPrism
is measured as "tokenprism".
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import json
import os
import random
import subprocess
import sys
import time
from array import array
from pathlib import Path
from typing import Callable, Sequence

_HERE = Path(__file__).resolve().parent

VOCABS = ["aquila", "baichuan", "bert-bge", "command-r", "deepseek-coder", "deepseek-llm", "falcon",
          "gemma-4", "gpt-2", "gpt-neox", "llama-bpe", "llama-spm", "mpt", "nomic-bert-moe", "phi-3",
          "qwen2", "qwen35", "refact", "starcoder"]

# ---- texts --------------------------------------------------------------------

_COMMON = (
    "the of and to a in is it you that he was for on are with as I his they be at one have this from or had "
    "by not but what some we can out other were all there when up use your how said an each she which do "
    "their time if will way about many then them write would like so these her long make thing see him two "
    "has look more day could go come did number sound no most people my over know water than call first who "
    "may down side been now find any new work part take get place made live where after back little only "
    "round man year came show every good me give our under name very through just form sentence great think "
    "say help low line differ turn cause much mean before move right boy old too same tell does set three "
    "want air well also play small end put home read hand port large spell add even land here must big high"
).split()
_RARE = (
    "language model tokenizer vocabulary paragraph understanding extraordinary international responsibility "
    "photosynthesis infrastructure quarterly Mediterranean archaeological thermodynamics nevertheless "
    "Wednesday Kilimanjaro cryptocurrency misunderstanding bureaucratic hippopotamus onomatopoeia don't "
    "it's we'll they're I've isn't O'Brien e-mail well-known state-of-the-art co-operate U.S.A. Ph.D."
).split()
_SYLLABLES = "ba ri con de ment tion al ex pro ter ing ly un re ous ver sta ble gra phi cal nu mo qua zel".split()


def _english_word(rng: random.Random) -> str:
    r = rng.random()
    if r < 0.70:
        return rng.choice(_COMMON)
    if r < 0.85:
        return rng.choice(_RARE)
    if r < 0.90:
        return str(rng.choice((rng.randint(0, 99), rng.randint(100, 99999), 1900 + rng.randint(0, 130))))
    # made-up words keep the text meeting new words, as real prose does
    w = "".join(rng.choice(_SYLLABLES) for _ in range(rng.randint(2, 5)))
    return w.capitalize() if rng.random() < 0.3 else w


def english_text(n_bytes: int = 500_000, seed: int = 11) -> str:
    rng = random.Random(seed)
    parts: list[str] = []
    size = 0
    while size < n_bytes:
        words = [_english_word(rng) for _ in range(rng.randint(5, 28))]
        for _ in range(rng.randint(0, 2)):
            k = rng.randrange(len(words))
            words[k] += rng.choice((",", ",", ";", ":"))
        if rng.random() < 0.1:
            k = rng.randrange(len(words))
            words[k] = f'"{words[k]}"' if rng.random() < 0.5 else f"({words[k]})"
        s = " ".join(words)
        s = s[0].upper() + s[1:] + rng.choice((".", ".", ".", "?", "!"))
        s += "\n\n" if rng.random() < 0.12 else " "
        parts.append(s)
        size += len(s)
    return "".join(parts)


_CYRILLIC = ("съешь же ещё этих мягких французских булок да выпей чаю привет мир как дела всё хорошо "
             "спасибо государство университет программирование").split()
_GREEK = "γαζέες καὶ μυρτιὲς δὲν θὰ βρῶ πιὰ στὸ χρυσαφὶ ξέφωτο γλώσσα κόσμε".split()
_ARABIC = "أنا قادر على أكل الزجاج و هذا لا يؤلمني مرحبا بالعالم كيف حالك اليوم".split()
_HINDI = "मैं काँच खा सकता हूँ और मुझे उससे कोई चोट नहीं पहुंचती नमस्ते दुनिया".split()
_LATIN_EXT = "découpe même accents Größe Straße Übermaß murciélago niño pingüino façade naïve crème".split()
_CJK = ("我能吞下玻璃而不伤身体这是一个用于测试分词器的中文句子你好世界我们正在测试速度"
        "私はガラスを食べられますそれは私を傷つけません日本語のテキストカタカナもあります")
_HANGUL = "나는 유리를 먹을 수 있어요 그래도 아프지 않아요 한국어 문장입니다 안녕하세요".split()
_EMOJI = ["🦙", "🎉", "👍🏽", "😀", "🚀", "✅", "👨‍👩‍👧", "∑∫√∞", "≠ ≤ →", "ﬁne", "Ｆｕｌｌ", "①②③", "㎏", "x²"]
_CODE_LINES = ["def f(x):\n    return x ** 2  # squares\n", "for (int i = 0; i < n; ++i) { sum += a[i]; }\n",
               "\tprint(foo(3))\n", "const y = await fetch(`/api/${id}`);\n", "if x != None and y >= 0:\n"]


def mixed_text(n_bytes: int = 500_000, seed: int = 12) -> str:
    rng = random.Random(seed)
    parts: list[str] = []
    size = 0
    while size < n_bytes:
        kind = rng.randrange(9)
        n = rng.randint(3, 12)
        if kind == 0:
            s = " ".join(rng.choice(_CYRILLIC) for _ in range(n)).capitalize() + "."
        elif kind == 1:
            s = " ".join(rng.choice(_GREEK) for _ in range(n)) + "."
        elif kind == 2:
            s = " ".join(rng.choice(_ARABIC) for _ in range(n)) + "."
        elif kind == 3:
            s = " ".join(rng.choice(_HINDI) for _ in range(n)) + "।"
        elif kind == 4:
            k = rng.randrange(len(_CJK) - 20)
            s = _CJK[k:k + rng.randint(6, 20)] + "。"
        elif kind == 5:
            s = " ".join(rng.choice(_HANGUL) for _ in range(n)) + "."
        elif kind == 6:
            s = " ".join(rng.choice(_LATIN_EXT + _COMMON) for _ in range(n)).capitalize() + "."
        elif kind == 7:
            s = " ".join(rng.choice(_EMOJI + _COMMON) for _ in range(n))
        else:
            s = rng.choice(_CODE_LINES)
        s += rng.choice((" ", " ", "\n"))
        parts.append(s)
        size += len(s.encode("utf-8"))
    return "".join(parts)


_IDENT = "data value index count result buffer token piece offset length config parser item node cache".split()


def _ident(rng: random.Random) -> str:
    a = rng.choice(_IDENT)
    return a if rng.random() < 0.5 else a + rng.choice(("_", "")) + rng.choice(_IDENT).capitalize()


def code_text(n_bytes: int = 100_000, seed: int = 13) -> str:
    rng = random.Random(seed)
    out: list[str] = []
    size = 0
    while size < n_bytes:
        name = _ident(rng)
        args = ", ".join(f"{_ident(rng)}: {rng.choice(('int', 'str', 'list[int]', 'bytes'))}"
                         for _ in range(rng.randint(0, 3)))
        lines = [f"def {name}({args}) -> int:", f'    """Return the {rng.choice(_COMMON)} of {_ident(rng)}."""']
        for _ in range(rng.randint(2, 10)):
            a, b = _ident(rng), _ident(rng)
            lines.append(rng.choice((
                f"    {a} = {b}[{rng.randint(0, 64)}] + {rng.randint(0, 1 << 16)}",
                f"    if {a} >= {b} and not {a}.startswith('{rng.choice(_COMMON)}'):",
                f"        {a} += len({b})  # {rng.choice(_RARE)}",
                f"    for {a} in range({b}, 0x{rng.randint(0, 0xFFFF):04X}):",
                f"        {a}.append({{\"key\": {b}, 'n': {rng.random():.3f}}})",
                "    return " + a)))
        lines.append(f"    return {_ident(rng)}\n\n")
        s = "\n".join(lines) + "\n"
        out.append(s)
        size += len(s)
    return "".join(out)[:n_bytes]


WARM_UP = "Hello, world! Unrelated words warm nothing up."


def texts() -> dict[str, str]:
    return {"english": english_text(), "mixed": mixed_text(), "code": code_text()}


# ---- measuring ------------------------------------------------------------------


def _digest(ids: Sequence[int]) -> str:
    return hashlib.sha1(array("i", ids).tobytes()).hexdigest()[:12]


def _best(run: Callable[[], Sequence[int]], prepare: Callable[[], None], repeat: int) -> tuple[float, str, int]:
    best = float("inf")
    ids: Sequence[int] = ()
    for _ in range(repeat):
        prepare()
        t0 = time.process_time()
        ids = run()
        best = min(best, time.process_time() - t0)
    return best, _digest(ids), len(ids)


def measure_tokenprism(paths: dict[str, str], tx: dict[str, str], repeat: int) -> dict[str, object]:
    from tokenprism.core import open_model
    from tokenprism.core import spans

    out: dict[str, object] = {"compiled": not (spans.__file__ or "").endswith(".py")}
    for name, path in paths.items():
        for tname, text in tx.items():
            holder: list[object] = []

            def prepare() -> None:
                m = open_model(path)
                m.encode(WARM_UP)
                holder[:] = [m]

            def run() -> Sequence[int]:
                return holder[0].encode(text).token_ids  # type: ignore[attr-defined, no-any-return]

            secs, dig, n = _best(run, prepare, repeat)
            out[f"{name}/{tname}"] = [secs, dig, n]
    return out


def measure_llama(paths: dict[str, str], tx: dict[str, str], repeat: int) -> dict[str, object]:
    import llama_cpp

    out: dict[str, object] = {"compiled": True}
    for name, path in paths.items():
        with open(os.devnull, "w") as dn, contextlib.redirect_stderr(dn):
            m = llama_cpp.Llama(path, vocab_only=True, verbose=False)
        for tname, text in tx.items():
            raw = text.encode("utf-8")
            secs, dig, n = _best(lambda: m.tokenize(raw, add_bos=False, special=False), lambda: None, repeat)
            out[f"{name}/{tname}"] = [secs, dig, n]
        del m
    return out


def _run_side(python: str | None, side: str, paths: dict[str, str], repeat: int,
              tx: dict[str, str]) -> dict[str, object]:
    if python is None:
        fn = measure_llama if side == "llama" else measure_tokenprism
        return fn(paths, tx, repeat)
    args = [python, str(Path(__file__).resolve()), "--worker", side, "--repeat", str(repeat),
            "--paths", json.dumps(paths)]
    res = subprocess.run(args, check=True, stdout=subprocess.PIPE, text=True)
    return json.loads(res.stdout)  # type: ignore[no-any-return]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--vocab-dir", default=os.environ.get("TOKENPRISM_VOCAB_DIR",
                                                          str(_HERE.parent.parent / "shared" / "llama-vocab")))
    ap.add_argument("--only", nargs="*", default=None, help="vocab names (default: all 19)")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--llama-python", default=None)
    ap.add_argument("--python", action="append", default=[], metavar="LABEL=PY")
    ap.add_argument("--json", default=None, help="write the results here")
    ap.add_argument("--worker", choices=("tokenprism", "llama"), help=argparse.SUPPRESS)
    ap.add_argument("--paths", help=argparse.SUPPRESS)
    args = ap.parse_args()
    tx = texts()
    if args.worker:
        paths = json.loads(args.paths)
        fn = measure_llama if args.worker == "llama" else measure_tokenprism
        json.dump(fn(paths, tx, args.repeat), sys.stdout)
        return

    names = args.only or VOCABS
    paths = {n: os.path.join(args.vocab_dir, f"ggml-vocab-{n}.gguf") for n in names}
    sides: dict[str, tuple[str | None, str]] = {}
    for spec in args.python:
        label, _, py = spec.partition("=")
        sides[label] = (py, "tokenprism")
    if not sides:
        sides["tokenprism"] = (None, "tokenprism")
    llama_py = args.llama_python
    if llama_py is None:
        try:
            import llama_cpp  # noqa: F401
        except ImportError:
            llama_py = ""
    if llama_py != "":
        sides["llama.cpp"] = (llama_py, "llama")
    # one vocabulary at a time, every side in turn, so that a change in
    # the machine's load falls on all sides alike
    results: dict[str, dict[str, object]] = {label: {} for label in sides}
    for name in names:
        print(f"measuring {name} ...", file=sys.stderr, flush=True)
        for label, (py, side) in sides.items():
            results[label].update(_run_side(py, side, {name: paths[name]}, args.repeat, tx))

    mb = {t: len(s.encode("utf-8")) / 1e6 for t, s in tx.items()}
    labels = list(sides)
    ref = results.get("llama.cpp")
    head = f"{'vocab':16s}{'text':9s}" + "".join(f"{lb[:14]:>15s}" for lb in labels)
    if ref is not None:
        head += "".join(f"{'/llama ' + lb[:7]:>15s}" for lb in labels if lb != "llama.cpp")
    print(head + "   (MB/s)")
    table: list[dict[str, object]] = []
    for name in names:
        for tname in tx:
            key = f"{name}/{tname}"
            row: dict[str, object] = {"vocab": name, "text": tname}
            line = f"{name:16s}{tname:9s}"
            ref_dig = None
            if ref is not None:
                ref_dig = ref[key][1]  # type: ignore[index]
            for lb in labels:
                secs, dig, _n = results[lb][key]  # type: ignore[misc]
                speed = mb[tname] / max(secs, 1e-9)
                row[lb] = speed
                bad = "!" if ref_dig is not None and dig != ref_dig else " "
                line += f"{speed:14.2f}{bad}"
            if ref is not None:
                for lb in labels:
                    if lb == "llama.cpp":
                        continue
                    ratio = float(row[lb]) / float(row["llama.cpp"])  # type: ignore[arg-type]
                    row[f"{lb}/llama"] = ratio
                    line += f"{ratio:14.2f}x"
            table.append(row)
            print(line, flush=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"texts_mb": mb, "rows": table,
                       "compiled": {lb: results[lb].get("compiled") for lb in labels}}, f, indent=1)


if __name__ == "__main__":
    main()
