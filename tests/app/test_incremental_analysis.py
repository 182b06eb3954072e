"""An analysis spliced from the previous keystroke's equals one built from
scratch, and the live tokenizer's incremental results equal full ones."""

from __future__ import annotations

import random
from dataclasses import fields
from typing import Any, Callable

import numpy as np
import pytest

from tests.app.conftest import is_current, open_model_in, type_text
from tokenprism.app.logic.analysis import Analysis, ModelInfo, analyze, tokenize
from tokenprism.core import Model

PIECES = ["a", "word", " ", "  ", "\n", "é", "e\u0301", "日本", "🙂", "<s>", ".", "123", "\t", "x\ny"]


def assert_same_analysis(a: Analysis, b: Analysis) -> None:
    for f in fields(Analysis):
        if f.name in ("encoding", "info", "generation", "stats", "u16", "extra"):
            continue
        x, y = getattr(a, f.name), getattr(b, f.name)
        assert np.array_equal(np.asarray(x), np.asarray(y)), f.name
    for f in ("token_ids", "starts", "ends", "byte_starts", "byte_ends", "groups"):
        assert getattr(a.encoding, f) == getattr(b.encoding, f), f
    assert (a.stats.tokens, a.stats.unknown, a.stats.byte_fallback) == (b.stats.tokens, b.stats.unknown,
                                                                         b.stats.byte_fallback)


@pytest.mark.parametrize("name", ["llama-spm", "gpt-2", "bert-bge", "nomic-bert-moe"])
def test_spliced_analysis_equals_fresh_one(ref_model: Callable[[str], Model], name: str) -> None:
    info = ModelInfo(ref_model(name))
    rnd = random.Random(5)
    text = "".join(rnd.choice(PIECES) for _ in range(1500))
    for add_special, parse_special in ((False, False), (True, True)):
        a = tokenize(info, text, 0, add_special, parse_special)
        assert a is not None
        t = text
        for step in range(25):
            pos = rnd.randrange(len(t) + 1)
            new = t[:pos] + rnd.choice(PIECES + [""]) + t[pos + rnd.randint(0, 3):]
            b = tokenize(info, new, step, add_special, parse_special, base=a)
            assert b is not None
            fresh = analyze(info.model.encode(new, add_special, parse_special), info, step, 0.0)
            assert_same_analysis(b, fresh)
            t, a = new, b


def test_typing_shows_what_a_full_encode_gives(qtbot: Any, window: Any, spm_vocab: str,
                                               models: Callable[[str], Model]) -> None:
    """Typing in the middle of a long text: every shown result is exact."""
    open_model_in(qtbot, window, spm_vocab)
    text = "The quick brown fox jumps over the lazy dog. 🙂 Ελληνικά\n" * 120
    window.editor.setPlainText(text)
    qtbot.waitUntil(lambda: is_current(window), timeout=20_000)
    c = window.editor.textCursor()
    c.setPosition(len(text) // 2)
    window.editor.setTextCursor(c)
    for chunk in ["x", " new words", "\n", "é🙂", " <s> "]:
        type_text(window.editor, chunk)
        qtbot.waitUntil(lambda: is_current(window), timeout=20_000)
        a = window.analysis
        full = models(spm_vocab).encode(window.editor.token_text())
        assert a.encoding.token_ids == full.token_ids and a.encoding.starts == full.starts
        assert window.table.model().rowCount() == len(full)
