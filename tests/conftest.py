"""Shared fixtures: where the reference vocabularies are, and the parity
cases read from them (llama.cpp's own expected token ids)."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from tests.refdata import VOCAB_DIR, vocab_path  # noqa: E402

import pytest  # noqa: E402


@pytest.fixture(scope="session")
def vocab_dir() -> str:
    if VOCAB_DIR is None:
        pytest.skip("reference vocabs not found: set TOKENPRISM_VOCAB_DIR or put "
                    "llama-vocab/ in ../shared beside the repo")
    return VOCAB_DIR


@pytest.fixture(scope="session")
def ref_model():  # type: ignore[no-untyped-def]
    """``ref_model(name)`` opens ``ggml-vocab-<name>.gguf`` once per session."""
    from tokenprism.core import open_model

    cache: dict[str, object] = {}

    def get(name: str):  # type: ignore[no-untyped-def]
        if name not in cache:
            cache[name] = open_model(vocab_path(name))
        return cache[name]

    return get
