"""The SPM (SentencePiece BPE with byte fallback) tokenizer next to llama.cpp: the benchmark suite
(run_suite.py) on llama-spm, phi-3, baichuan. Load, MB/s on 0.5 MB English prose, 0.5 MB
mixed scripts and 100 KB of code, for the compiled build, the pure-Python
build and llama.cpp, with the ratios; any run_suite option works here too.

    python benchmarks/bench_spm.py [--quick] [--llama-python PY] [--vocabs NAME,...]
"""

from __future__ import annotations

from run_suite import main

VOCABS = ("llama-spm", "phi-3", "baichuan")

if __name__ == "__main__":
    main(VOCABS, title="SPM tokenizer benchmark: " + ", ".join(VOCABS))
