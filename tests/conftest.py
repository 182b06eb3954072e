"""Shared fixtures: where the reference vocabularies are, and the parity
cases read from them (llama.cpp's own expected token ids)."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import contextlib  # noqa: E402
from typing import Iterator  # noqa: E402

import pytest  # noqa: E402
from pytest import TerminalReporter  # noqa: E402

from tests import refdata  # noqa: E402
from tests.refdata import vocab_path  # noqa: E402

# a pytest run may fetch the reference vocabularies when none are found
# (tests/refdata.py); importing refdata elsewhere never does
refdata.allow_fetch = True


class _TerminalLine:
    """Shows refdata's fetch line on the terminal even while pytest captures
    output (a fetch runs while test modules are being collected)."""

    def __init__(self, config: pytest.Config) -> None:
        self.config = config

    @contextlib.contextmanager
    def _terminal(self) -> Iterator[TerminalReporter | None]:
        capman = self.config.pluginmanager.get_plugin("capturemanager")
        tr: TerminalReporter | None = self.config.pluginmanager.get_plugin("terminalreporter")
        with capman.global_and_fixture_disabled() if capman is not None else contextlib.nullcontext():
            yield tr

    def begin(self, text: str) -> None:
        with self._terminal() as tr:
            if tr is None:
                return
            if tr.isatty() and self.config.option.verbose >= 0:
                tr.rewrite(text)  # over pytest's "collecting N items", which it rewrites in place too
            else:
                tr.ensure_newline()
                tr.write(text, flush=True)

    def end(self, text: str) -> None:
        with self._terminal() as tr:
            if tr is not None:
                tr.write_line(text)


@pytest.hookimpl(trylast=True)  # after the terminal reporter is registered
def pytest_configure(config: pytest.Config) -> None:
    refdata.set_announcer(_TerminalLine(config))


@pytest.fixture(scope="session")
def vocab_dir() -> str:
    source = refdata.vocab_source()
    if source.path is None:
        pytest.skip(source.skip_reason)
    return source.path


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
