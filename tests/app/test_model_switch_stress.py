"""Switching models rapidly while typing: 200 random steps (model switches,
typing, deleting, option toggles) across tokenizers of every type. Bursts
of steps run without waiting; after each burst settles, the tokens on
screen (status bar, table, chips, editor) are the named model's tokens of
the editor text. At every moment in between, whatever is on screen belongs
to the model the status bar names."""

from __future__ import annotations

import random

from PySide6.QtCore import QEvent, Qt
from PySide6.QtGui import QKeyEvent
from PySide6.QtWidgets import QApplication

from tests.app.conftest import RESULT_TIMEOUT_MS, is_current, real_vocab, type_text
from tokenprism.app.qt.qt_token_table import COL_ID

STEPS = 200
WORDS = ["the ", "quick ", "Wörter ", "日本語 ", "🙂 ", "\n", "  ", "<s>", "don't ", "x" * 40, "é\u0301 ", "\t"]


def _models() -> list[str]:
    from tokenprism.core.library.resources import demo_models
    paths = [str(p) for p in demo_models().values()]
    paths += [p for p in (real_vocab("llama-spm"), real_vocab("bert-bge"), real_vocab("gpt-2")) if p]
    return paths


def _backspace(widget, n: int) -> None:  # type: ignore[no-untyped-def]
    for _ in range(n):
        for kind in (QEvent.Type.KeyPress, QEvent.Type.KeyRelease):
            QApplication.sendEvent(widget, QKeyEvent(kind, Qt.Key.Key_Backspace, Qt.KeyboardModifier.NoModifier))


def _check_consistent(window) -> None:  # type: ignore[no-untyped-def]
    """Whatever is on screen belongs to the model the status bar names."""
    a = window.analysis
    if a is None:
        return
    assert a.info is window.model_info, "tokens of another model on screen"
    assert window.stats.model_label.toolTip().startswith(a.info.name)
    assert window.editor.analysis in (a, None) or window.editor.stale
    assert window.chips._a is a


def test_200_random_switch_and_type_steps(qtbot, window, models) -> None:  # type: ignore[no-untyped-def]
    paths = _models()
    assert len({models(p).kind for p in paths}) == 4  # every tokenizer type takes part
    rng = random.Random(12)
    window.editor.setFocus()
    window.live.resultReady.connect(lambda _a: _check_consistent(window))
    window.loader.loaded.connect(lambda _i: _check_consistent(window))
    kinds_seen: set[str] = set()
    settled = 0
    step = 0
    while step < STEPS:
        for _ in range(rng.randint(1, 5)):  # a burst, nothing waited for
            step += 1
            r = rng.random()
            if r < 0.3:
                window.open_path(rng.choice(paths))
            elif r < 0.75:
                type_text(window.editor, rng.choice(WORDS))
            elif r < 0.9:
                _backspace(window.editor, rng.randint(1, 6))
            else:
                rng.choice([window.act_add_special, window.act_parse_special]).toggle()
            if rng.random() < 0.5:
                qtbot.wait(rng.randint(0, 15))
            _check_consistent(window)
        if window.model_info is None:
            qtbot.waitUntil(lambda: window.model_info is not None, timeout=RESULT_TIMEOUT_MS)
        qtbot.waitUntil(lambda: is_current(window) and not window.loader.busy, timeout=RESULT_TIMEOUT_MS)
        settled += 1
        a = window.analysis
        info = window.model_info
        text = window.editor.token_text()
        expected = models(info.path).encode(text, add_special=window.act_add_special.isChecked(),
                                            parse_special=window.act_parse_special.isChecked()).ids
        _check_consistent(window)
        assert a.text == text
        assert list(a.encoding.ids) == list(expected), f"step {step}: {info.name}"
        assert f"<b>{len(expected):,}</b> tokens" in window.stats.counts_label.text()
        assert info.name in window.windowTitle()
        tm = window.table.token_model
        assert tm.rowCount() == len(expected)
        rows = range(min(len(expected), 60))
        assert [int(tm.data(tm.index(r, COL_ID))) for r in rows] == [expected[r] for r in rows]
        assert not window.editor.stale and window.editor.analysis is a
        kinds_seen.add(info.kind)
    assert settled >= STEPS // 5
    assert len(kinds_seen) >= 3
