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


@pytest.fixture(scope="session")
def char_plugin():  # type: ignore[no-untyped-def]
    """Register the character-level test plugin for the whole session."""
    from tests.ggufmaker import CharPlugin
    from tokenprism.core.plugins import plugin_manager

    pm = plugin_manager()
    if pm.get_plugin("test-chars") is None:
        pm.register(CharPlugin(), name="test-chars")
    return pm.get_plugin("test-chars")


@pytest.fixture(scope="session")
def char_model_path(tmp_path_factory, char_plugin):  # type: ignore[no-untyped-def]
    """A tiny GGUF handled by the test plugin (bos=1, eos=2, unk=0, byte tokens)."""
    from tests.ggufmaker import CHAR_TOKENS, char_types, write_vocab_gguf

    path = tmp_path_factory.mktemp("chars") / "chars.gguf"
    return write_vocab_gguf(path, CHAR_TOKENS, types=char_types(), extra={
        "tokenizer.ggml.bos_token_id": 1, "tokenizer.ggml.eos_token_id": 2,
        "tokenizer.ggml.unknown_token_id": 0, "tokenizer.ggml.add_bos_token": True})
