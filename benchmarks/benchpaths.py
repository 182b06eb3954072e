"""Where the benchmarks find llama.cpp's reference vocabularies: where the
tests find them (``$TOKENPRISM_VOCAB_DIR``, ``../shared/llama-vocab``
beside the repo, then the folder ``tokenprism samples`` downloads to)."""

from __future__ import annotations

from pathlib import Path

SHARED = Path(__file__).resolve().parent.parent.parent / "shared" / "llama-vocab"


def vocab_dir() -> Path:
    """The folder with the reference vocabularies (the shared one, for the
    error message, when none has them)."""
    # imported here, not at the top: run_suite's pure-Python workers must
    # import tokenprism only after their import hook is in place
    from tokenprism.core.library.samples import find_vocab_dir

    return find_vocab_dir(SHARED) or SHARED


def vocab_file(name: str) -> Path:
    return vocab_dir() / f"ggml-vocab-{name}.gguf"
