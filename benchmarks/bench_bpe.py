"""The BPE (byte-level, llama.cpp's pre-tokenizers) tokenizer next to llama.cpp: the benchmark suite
(run_suite.py) on gpt-2, llama-bpe, qwen2, gemma-4, gpt-neox. Load, MB/s on 0.5 MB English prose, 0.5 MB
mixed scripts and 100 KB of code, for the compiled build, the pure-Python
build and llama.cpp, with the ratios; any run_suite option works here too.

    python benchmarks/bench_bpe.py [--quick] [--llama-python PY] [--vocabs NAME,...]
"""

from __future__ import annotations

from run_suite import main

VOCABS = ("gpt-2", "llama-bpe", "qwen2", "gemma-4", "gpt-neox")

if __name__ == "__main__":
    main(VOCABS, title="BPE tokenizer benchmark: " + ", ".join(VOCABS))
