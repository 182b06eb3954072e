"""Throughput of the UGM tokenizer, ours and (when installed) llama.cpp's.

    python benchmarks/bench_ugm.py [VOCAB.gguf] [--mb 0.5] [--repeat 3]

The texts are generated from a fixed seed, so two runs (say, one with this
project's venv and one with a venv that has ``llama-cpp-python``) measure
the same input. Either side is skipped when its package is missing. The
default vocabulary is nomic-bert-moe (XLM-R's 250k-piece unigram model).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import random
import sys
import time
from pathlib import Path
from typing import Callable

_HERE = Path(__file__).resolve().parent

_ENGLISH = (
    "the of and to in is that for it as was with be by on not he this are or his from at which but have an "
    "they you were her she there been one all we their has would when if so what can out about more no "
    "time into some could them other its then two first any new these may such only over like years "
    "language model tokenizer text token merge vocabulary piece byte fallback sentence paragraph window "
    "understanding running quickly carefully beautiful extraordinary international responsibility "
    "don't it's we'll they're I've 2024 3.14 1,000 $25 #42 (see above) [note] e-mail well-known"
).split()

_MULTI = [
    "Le tokenizer découpe le texte en morceaux, même les accents: é, è, ç, œ.",
    "Der schnelle braune Fuchs springt über den faulen Hund; Größe, Straße, Übermaß.",
    "El veloz murciélago hindú comía feliz cardillo y kiwi; ¿dónde está el niño?",
    "Съешь же ещё этих мягких французских булок, да выпей чаю.",
    "Γαζέες καὶ μυρτιὲς δὲν θὰ βρῶ πιὰ στὸ χρυσαφὶ ξέφωτο.",
    "我能吞下玻璃而不伤身体。这是一个用于测试分词器的中文句子。",
    "私はガラスを食べられます。それは私を傷つけません。日本語のテキスト。",
    "나는 유리를 먹을 수 있어요. 그래도 아프지 않아요. 한국어 문장입니다.",
    "मैं काँच खा सकता हूँ और मुझे उससे कोई चोट नहीं पहुंचती।",
    "أنا قادر على أكل الزجاج و هذا لا يؤلمني.",
    "Emoji too 🦙🎉👍🏽 and symbols ∑∫√∞ ≠ ≤ → ← ✓ ✗, ﬁne Ｆｕｌｌ ①②③ ㎏.",
    "def tokenize(text: str) -> list[int]:\n    return [ord(c) for c in text]  # code\n",
]

_SYLLABLES = "ba ri con de ment tion al ex pro ter ing ly un re ous ver sta ble gra phi cal nu mo".split()


def _word(rng: random.Random) -> str:
    # one word in five is made up, so the text keeps meeting new words the
    # way real prose does, instead of a few hundred cached ones
    if rng.random() < 0.2:
        return "".join(rng.choice(_SYLLABLES) for _ in range(rng.randint(2, 5)))
    return rng.choice(_ENGLISH)


def english_text(n_bytes: int, seed: int = 1) -> str:
    rng = random.Random(seed)
    parts: list[str] = []
    size = 0
    while size < n_bytes:
        words = [_word(rng) for _ in range(rng.randint(5, 25))]
        s = " ".join(words).capitalize() + rng.choice((".", ".", ".", "?", "!", ";"))
        s += "\n\n" if rng.random() < 0.15 else " "
        parts.append(s)
        size += len(s)
    return "".join(parts)


def multilingual_text(n_bytes: int, seed: int = 2) -> str:
    rng = random.Random(seed)
    parts: list[str] = []
    size = 0
    while size < n_bytes:
        s = rng.choice(_MULTI) + rng.choice((" ", "\n"))
        parts.append(s)
        size += len(s.encode("utf-8"))
    return "".join(parts)


def default_vocab() -> str:
    env = os.environ.get("TOKENPRISM_VOCAB_DIR")
    base = Path(env) if env else _HERE.parent.parent / "shared" / "llama-vocab"
    return str(base / "ggml-vocab-nomic-bert-moe.gguf")


def measure(fn: Callable[[str], int], text: str, repeat: int) -> tuple[float, int]:
    """Best MB/s over ``repeat`` runs, and the token count. CPU time of this
    process, so that other work on the machine disturbs it less (both sides
    are single-threaded)."""
    mb = len(text.encode("utf-8")) / 1e6
    best = float("inf")
    n = 0
    for _ in range(repeat):
        t0 = time.process_time()
        n = fn(text)
        best = min(best, time.process_time() - t0)
    return mb / max(best, 1e-9), n


def ours(path: str) -> dict[str, Callable[[str], int]] | None:
    try:
        from tokenprism.core import open_model
        from tokenprism.plugins.ugm import charsmap as cm_mod
        from tokenprism.plugins.ugm import ugm as ugm_mod
    except ImportError:
        print("tokenprism not installed")
        return None
    t0 = time.perf_counter()
    model = open_model(path)
    t_open = time.perf_counter() - t0
    t0 = time.perf_counter()
    fresh = ugm_mod.build_ugm(model.vocab)
    t_build = time.perf_counter() - t0
    t0 = time.perf_counter()
    cm_mod.Charsmap(model.vocab.precompiled_charsmap)
    t_cm = time.perf_counter() - t0
    compiled = [not (m.__file__ or "").endswith(".py") for m in (ugm_mod, cm_mod)]
    print(f"tokenprism: {model!r}, ugm/charsmap compiled: {compiled}")
    print(f"  open_model {t_open:.2f} s; of which build_ugm {t_build:.2f} s "
          f"(charsmap check {t_cm:.3f} s, {len(fresh.pref)} pieces and prefixes in the trie)")
    tok = model.tokenizer

    def encode(text: str) -> int:
        return len(model.encode(text).token_ids)

    def fragment(text: str) -> int:
        return len(tok.encode_fragment(text, True).ids)

    def cold(text: str) -> int:
        fresh.clear_caches()
        return len(fresh.encode_fragment(text, True).ids)

    def normalize(text: str) -> int:
        return len(tok.normalized(text))

    return {"Model.encode": encode, "plugin encode_fragment": fragment,
            "plugin, empty word cache": cold, "normalizer only": normalize}


def llama(path: str) -> dict[str, Callable[[str], int]] | None:
    try:
        import llama_cpp
    except ImportError:
        print("llama.cpp not installed")
        return None
    with open(os.devnull, "w") as dn, contextlib.redirect_stderr(dn):
        m = llama_cpp.Llama(path, vocab_only=True, verbose=False)

    def tokenize(text: str) -> int:
        return len(m.tokenize(text.encode("utf-8"), add_bos=False, special=False))

    return {"llama.cpp tokenize": tokenize}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("vocab", nargs="?", default=default_vocab())
    ap.add_argument("--mb", type=float, default=0.5, help="size of each text in MB")
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    if not os.path.exists(args.vocab):
        sys.exit(f"vocab not found: {args.vocab}")
    n = int(args.mb * 1e6)
    texts = {"english": english_text(n), "multilingual": multilingual_text(n)}
    runners: dict[str, Callable[[str], int]] = {}
    for side in (ours(args.vocab), llama(args.vocab)):
        if side:
            runners.update(side)
    for tname, text in texts.items():
        size = len(text.encode("utf-8")) / 1e6
        print(f"\n{tname}: {size:.2f} MB, {len(text)} chars")
        for rname, fn in runners.items():
            mbs, ntok = measure(fn, text, args.repeat)
            print(f"  {rname:28s} {mbs:8.2f} MB/s  {ntok} tokens")


if __name__ == "__main__":
    main()
