"""Throughput of the BPE plugin (and of llama.cpp, when ``llama_cpp`` is
importable) on ~0.5 MB of English prose and of mixed-script text.

    python benchmarks/bench_bpe.py [VOCAB_DIR]

The texts are generated deterministically, so runs are comparable. Each
figure is the best of three runs of ``Model.encode`` (core included); "cold"
clears the plugin's per-word cache before each run, "warm" keeps it;
"plugin alone" is ``encode_fragment`` on the whole text (warm). Run it with a Python that has
``tokenprism`` installed for the plugin figures and with one that has
``llama-cpp-python`` for llama.cpp's (either may be missing).
"""

from __future__ import annotations

import os
import random
import sys
import time
from typing import Callable

VOCABS = ["gpt-2", "llama-bpe", "qwen2", "gemma-4"]
TARGET_BYTES = 500_000

_WORDS = (
    "the of and to a in is it you that he was for on are with as I his they be at one have this from or had by "
    "hot word but what some we can out other were all there when up use your how said an each she which do their "
    "time if will way about many then them write would like so these her long make thing see him two has look "
    "more day could go come did number sound no most people my over know water than call first who may down side "
    "been now find any new work part take get place made live where after back little only round man year came "
    "show every good me give our under name very through just form sentence great think say help low line differ "
    "turn cause much mean before move right boy old too same tell does set three want air well also play small end "
    "put home read hand port large spell add even land here must big high such follow act why ask men change went "
    "light kind off need house picture try us again animal point mother world near build self earth father head "
    "stand own page should country found answer school grow study still learn plant cover food sun four between "
    "state keep eye never last let thought city tree cross farm hard start might story saw far sea draw left late "
    "run don't while press close night real life few north open seem together next white children begin got walk "
    "example ease paper group always music those both mark often letter until mile river car feet care second book "
    "carry took science eat room friend began idea fish mountain stop once base hear horse cut sure watch color face "
    "wood main enough plain girl usual young ready above ever red list though feel talk bird soon body dog family "
    "direct pose leave song measure door product black short numeral class wind question happen complete ship area "
    "half rock order fire south problem piece told knew pass since top whole king space heard best hour better true "
    "during hundred five remember step early hold west ground interest reach fast verb sing listen six table travel "
    "less morning ten simple several vowel toward war lay against pattern slow center love person money serve appear "
    "road map rain rule govern pull cold notice voice unit power town fine certain fly fall lead cry dark machine "
    "note wait plan figure star box noun field rest correct able pound done beauty drive stood contain front teach "
    "week final gave green oh quick develop ocean warm free minute strong special mind behind clear tail produce "
    "fact street inch multiply nothing course stay wheel full force blue object decide surface deep moon island "
    "foot system busy test record boat common gold possible plane stead dry wonder laugh thousand ago ran check "
    "game shape equate hot miss brought heat snow tire bring yes distant fill east paint language among"
).split()

_MIXED = [
    "Hello, world! It's 2024 and we're testing tokenizers.",
    "Привет, мир! Как дела? Всё хорошо, спасибо.",
    "Γειά σου Κόσμε! Η γλώσσα μας είναι ωραία.",
    "こんにちは世界。今日はいい天気ですね。カタカナもあります。",
    "你好，世界！我们正在测试分词器的速度。",
    "안녕하세요 세계! 오늘 날씨가 좋네요.",
    "مرحبا بالعالم! كيف حالك اليوم؟",
    "नमस्ते दुनिया! आज मौसम अच्छा है।",
    "สวัสดีชาวโลก วันนี้อากาศดี",
    "Emoji test 😀🚀✅ 👨‍👩‍👧 and symbols ∀x∈ℝ: x² ≥ 0 → ∞.",
    "Código en español: ¿Qué tal? ¡Muy bien! Ñandú, pingüino.",
    "def foo(x):\n    return x ** 2  # squares\n\n\tprint(foo(3))\n",
]


def english_prose(target: int = TARGET_BYTES, seed: int = 1234) -> str:
    rng = random.Random(seed)
    paras: list[str] = []
    size = 0
    while size < target:
        sents: list[str] = []
        for _ in range(rng.randint(3, 8)):
            words = [rng.choice(_WORDS) for _ in range(rng.randint(6, 22))]
            if rng.random() < 0.15:
                words.insert(rng.randrange(len(words)), str(rng.randint(1, 99999)))
            if rng.random() < 0.3:
                k = rng.randrange(1, len(words))
                words[k] = words[k] + ","
            s = " ".join(words)
            sents.append(s[0].upper() + s[1:] + rng.choice([".", ".", ".", "?", "!"]))
        p = " ".join(sents)
        paras.append(p)
        size += len(p) + 2
    return "\n\n".join(paras)


def mixed_text(target: int = TARGET_BYTES // 2, seed: int = 99) -> str:
    rng = random.Random(seed)
    parts: list[str] = []
    size = 0
    while size < target:
        s = rng.choice(_MIXED)
        parts.append(s)
        size += len(s.encode("utf-8")) + 1
    return " ".join(parts)


def _best(fn: Callable[[], object], reps: int = 3) -> float:
    best = float("inf")
    for _ in range(reps):
        t = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t)
    return best


def bench_tokenprism(vocab_dir: str, texts: dict[str, str]) -> None:
    try:
        from tokenprism.core import open_model
    except ImportError:
        print("tokenprism is not installed in this Python: skipping the plugin")
        return
    try:
        from tokenprism.plugins.bpe import bpe as bpe_mod
        compiled = bpe_mod.__file__ is not None and not bpe_mod.__file__.endswith(".py")
    except ImportError:
        compiled = False
    print(f"TokenPrism BPE plugin ({'compiled' if compiled else 'pure Python'})")
    for name in VOCABS:
        path = os.path.join(vocab_dir, f"ggml-vocab-{name}.gguf")
        t = time.perf_counter()
        model = open_model(path)
        t_open = time.perf_counter() - t
        t = time.perf_counter()
        ranks = getattr(model.tokenizer, "ranks", None)
        if callable(ranks):
            ranks()  # the merge ranks are built on first use
        model.encode("warm up the merge ranks")
        t_ranks = time.perf_counter() - t
        line = f"  {name:10s} open {t_open:5.2f}s  ranks {t_ranks:5.2f}s"
        tok = model.tokenizer
        for label, text in texts.items():
            mb = len(text.encode("utf-8")) / 1e6

            def cold() -> None:
                tok.cache.clear()  # type: ignore[attr-defined]
                model.encode(text)

            def warm() -> None:
                model.encode(text)

            def plugin_only() -> None:
                tok.encode_fragment(text, True)

            tc = _best(cold)
            tw = _best(warm)
            tp = _best(plugin_only)
            line += f"\n    {label:8s} encode cold {mb / tc:5.2f} MB/s, warm {mb / tw:5.2f} MB/s; plugin alone {mb / tp:5.2f} MB/s"
        print(line, flush=True)


def bench_llama_cpp(vocab_dir: str, texts: dict[str, str]) -> None:
    try:
        import contextlib

        import llama_cpp
    except ImportError:
        print("llama_cpp is not installed in this Python: skipping llama.cpp")
        return
    print(f"llama.cpp (llama-cpp-python {getattr(llama_cpp, '__version__', '?')})")
    for name in VOCABS:
        path = os.path.join(vocab_dir, f"ggml-vocab-{name}.gguf")
        with open(os.devnull, "w") as dn, contextlib.redirect_stderr(dn):
            t = time.perf_counter()
            m = llama_cpp.Llama(path, vocab_only=True, verbose=False)
            t_open = time.perf_counter() - t
        line = f"  {name:10s} open {t_open:5.2f}s"
        for label, text in texts.items():
            raw = text.encode("utf-8")
            mb = len(raw) / 1e6
            tt = _best(lambda: m.tokenize(raw, add_bos=False, special=False))
            line += f"\n    {label:8s} tokenize {mb / tt:5.2f} MB/s"
        print(line, flush=True)


def main() -> None:
    here = os.path.dirname(os.path.abspath(__file__))
    vocab_dir = sys.argv[1] if len(sys.argv) > 1 else os.environ.get(
        "TOKENPRISM_VOCAB_DIR", os.path.join(here, "..", "..", "shared", "llama-vocab"))
    texts = {"english": english_prose(), "mixed": mixed_text()}
    for k, v in texts.items():
        print(f"{k}: {len(v.encode('utf-8')) / 1e6:.2f} MB")
    bench_tokenprism(vocab_dir, texts)
    bench_llama_cpp(vocab_dir, texts)


if __name__ == "__main__":
    main()
