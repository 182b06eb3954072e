"""A huge text tokenizes with progress and a Cancel button; cancelling
keeps the text, says so, and F5 resumes.

Sizes are scaled down (the thresholds are lowered) so the test is quick;
``benchmarks/bench_latency.py --huge`` measures a real 10 MB text.
"""

from __future__ import annotations

from typing import Any, Callable

import pytest
from PySide6.QtCore import QEvent, Qt
from PySide6.QtGui import QKeyEvent
from PySide6.QtWidgets import QApplication

from tests.app.conftest import hold_inside, is_current, open_model_in
from tokenprism.app.logic import analysis
from tokenprism.app.qt import workers
from tokenprism.core import Model

LINE = "The quick brown fox jumps over the lazy dog; 日本語 and 🙂 emoji, numbers 3.14159.\n"


@pytest.fixture
def small_thresholds(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(analysis, "CHUNKED_MIN", 40_000)
    monkeypatch.setattr(analysis, "CHUNK_CHARS", 2_000)
    monkeypatch.setattr(workers, "PROGRESS_INTERVAL_S", 0.0)


def huge_text() -> str:
    return LINE * 6_000  # ~500 000 characters, 250 pieces


def test_progress_then_cancel_then_resume(qtbot: Any, window: Any, spm_vocab: str, small_thresholds: None,
                                          monkeypatch: pytest.MonkeyPatch, models: Callable[[str], Model]) -> None:
    open_model_in(qtbot, window, spm_vocab)
    clicked = hold_inside(monkeypatch)
    stats = window.stats
    reports: list[tuple[int, int]] = []
    window.live.progress.connect(lambda d, t: reports.append((d, t)))
    text = huge_text()
    with qtbot.waitSignal(window.live.progress, timeout=20_000):
        window.editor.setPlainText(text)
    # the status bar shows a determinate bar and a Cancel button
    assert stats.busy.isVisible() and stats.busy.maximum() == 1000
    assert stats.cancel_button.isVisible()
    assert "Tokenizing" in stats.busy_label.text()
    with qtbot.waitSignal(window.live.cancelled, timeout=20_000):
        qtbot.mouseClick(stats.cancel_button, Qt.MouseButton.LeftButton)
        clicked.set()
    assert reports and all(0 <= d <= t == len(text) for d, t in reports)
    assert reports[-1][0] < len(text)  # it stopped before the end
    # the text is intact, the state is clear, nothing is tokenizing
    assert window.editor.token_text() == text
    assert window.live.paused and not window.live.busy
    assert window.banner.isVisible() and "cancelled" in window.banner.text.lower()
    assert "cancelled" in stats.busy_label.text().lower()
    assert not stats.cancel_button.isVisible()
    assert window.analysis is None and window.table.model().rowCount() == 0  # no stale tokens shown
    # typing while paused does not start again
    window.editor.textCursor().insertText("!")
    qtbot.wait(100)
    assert not window.live.busy
    # F5 resumes and ends with the exact tokens
    window.progress_control.act_resume.trigger()
    qtbot.waitUntil(lambda: is_current(window), timeout=60_000)
    current = window.editor.token_text()
    assert window.analysis.encoding.token_ids == models(spm_vocab).encode(current).token_ids
    assert not window.banner.isVisible() and not stats.cancel_button.isVisible()
    assert window.table.model().rowCount() == len(window.analysis)


def test_escape_cancels_a_huge_text(qtbot: Any, window: Any, spm_vocab: str, small_thresholds: None,
                                    monkeypatch: pytest.MonkeyPatch) -> None:
    open_model_in(qtbot, window, spm_vocab)
    pressed = hold_inside(monkeypatch)
    text = huge_text()
    with qtbot.waitSignal(window.live.progress, timeout=20_000):
        window.editor.setPlainText(text)
    window.editor.setFocus()
    with qtbot.waitSignal(window.live.cancelled, timeout=20_000):
        for kind in (QEvent.Type.KeyPress, QEvent.Type.KeyRelease):
            QApplication.sendEvent(window.editor, QKeyEvent(kind, Qt.Key.Key_Escape, Qt.KeyboardModifier.NoModifier))
        pressed.set()
    assert window.editor.token_text() == text and window.live.paused


def test_small_texts_show_no_progress(qtbot: Any, window: Any, spm_vocab: str, small_thresholds: None) -> None:
    open_model_in(qtbot, window, spm_vocab)
    reports: list[int] = []
    window.live.progress.connect(lambda d, t: reports.append(d))
    window.editor.setPlainText(LINE * 100)
    qtbot.waitUntil(lambda: is_current(window), timeout=20_000)
    assert reports == [] and not window.stats.cancel_button.isVisible()
    # Esc with nothing running only dismisses messages
    window.banner.show_message("note", error=False)
    window.act_dismiss.trigger()
    assert not window.banner.isVisible() and not window.live.paused
