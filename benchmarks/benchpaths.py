"""Where the benchmarks find llama.cpp's reference vocabularies: the same
places the tests look (``$TOKENPRISM_VOCAB_DIR``, ``../shared/llama-vocab``
beside the repo, then the folder ``tokenprism samples`` downloads to)."""

from __future__ import annotations

import os
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def vocab_dir() -> Path:
    """The first folder that holds ``ggml-vocab-*.gguf`` files (or the
    shared one, for the error message, when none does)."""
    env = os.environ.get("TOKENPRISM_VOCAB_DIR")
    candidates = [Path(env)] if env else []
    shared = ROOT.parent / "shared" / "llama-vocab"
    candidates.append(shared)
    # imported here, not at the top: run_suite's pure-Python workers must
    # import tokenprism only after their import hook is in place
    from tokenprism.core.samples import default_samples_dir

    candidates.append(default_samples_dir())
    for c in candidates:
        if c.is_dir() and any(c.glob("ggml-vocab-*.gguf")):
            return c
    return candidates[0]


def vocab_file(name: str) -> Path:
    return vocab_dir() / f"ggml-vocab-{name}.gguf"
