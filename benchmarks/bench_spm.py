"""The SPM (SentencePiece BPE with byte fallback) tokenizer next to llama.cpp: the benchmark suite
(run_suite.py) on llama-spm, phi-3, baichuan. Load, MB/s on 0.5 MB English prose, 0.5 MB
mixed scripts and 100 KB of code, for the compiled build, the pure-Python
build and llama.cpp, with the ratios; any run_suite option works here too.

    python benchmarks/bench_spm.py [--quick] [--llama-python PY] [--vocabs NAME,...]
    python benchmarks/bench_spm.py --core-share [--vocabs NAME,...]

``--core-share`` runs in this process instead: for each text, the CPU time
of the plugin's ``encode_fragment`` and of the whole ``Model.encode`` (the
rest is the core's: character spans, groups, the Encoding's tuples), each
on a model opened afresh (cold word cache, as the suite measures), best
of three.
"""

from __future__ import annotations

import gc
import sys
import time

from run_suite import main

VOCABS = ("llama-spm", "phi-3", "baichuan")


def core_share(vocabs: list[str], rounds: int = 3) -> None:
    from benchpaths import vocab_file
    from benchtexts import texts

    from tokenprism.core import open_model

    print(f"{'vocab':12s} {'text':8s} {'tokens':>7s} {'plugin ms':>10s} {'encode ms':>10s} {'core share':>10s}")
    for name in vocabs:
        path = vocab_file(name)
        for text_name, text in texts().items():
            plugin = whole = float("inf")
            n_tokens = 0
            for _ in range(rounds):
                m = open_model(path)
                m.encode("warm up")
                gc.disable()  # as Model.encode does
                t0 = time.process_time()
                m.tokenizer.encode_fragment(text, True)
                plugin = min(plugin, time.process_time() - t0)
                gc.enable()
                m = open_model(path)
                m.encode("warm up")
                t0 = time.process_time()
                enc = m.encode(text)
                whole = min(whole, time.process_time() - t0)
                n_tokens = len(enc.ids)
                del enc
            print(f"{name:12s} {text_name:8s} {n_tokens:7d} {plugin * 1e3:10.1f} {whole * 1e3:10.1f} "
                  f"{max(0.0, 1 - plugin / whole):10.0%}")


if __name__ == "__main__":
    if "--core-share" in sys.argv:
        args = sys.argv[1:]
        chosen = list(VOCABS)
        if "--vocabs" in args:
            chosen = args[args.index("--vocabs") + 1].split(",")
        core_share(chosen)
    else:
        main(VOCABS, title="SPM tokenizer benchmark: " + ", ".join(VOCABS))
