"""Palettes, real tokenizer types, keyboard use, screenshots and the PySide6
reference-count guard."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QGuiApplication, QPalette
from PySide6.QtWidgets import QApplication

from tests.app.conftest import open_model_in, real_vocab, wait_result
from tokenprism.app.qt import qt_compat
from tokenprism.app.logic.analysis import Style
from tokenprism.app.qt.screenshots import dark_palette, render
from tokenprism.app.qt.styles import token_colors


def test_none_stays_alive_through_many_qt_calls(qtbot, window) -> None:  # type: ignore[no-untyped-def]
    if sys.version_info < (3, 12) and qt_compat.void_calls_drop_none():
        assert qt_compat.APPLIED
        assert sys.getrefcount(None) > 1 << 59
    for _ in range(50_000):  # more than None's own reference count without the guard
        window.editor.viewport().update()


def test_colours_follow_the_palette(qtbot, window, test_vocab) -> None:  # type: ignore[no-untyped-def]
    open_model_in(qtbot, window, test_vocab)
    wait_result(qtbot, window, lambda: window.editor.setPlainText("the fox and the dog"))
    light = [f.background().color().lightnessF() for _, _, f in window.editor.styled_spans()]
    assert light and min(light) > 0.5
    app = QApplication.instance()
    old = app.palette()
    try:
        app.setPalette(dark_palette())
        qtbot.waitUntil(lambda: window.editor.palette().color(QPalette.ColorRole.Base).lightnessF() < 0.5)
        window.editor.apply_visible()
        dark = [f.background().color().lightnessF() for _, _, f in window.editor.styled_spans()]
        assert dark and max(dark) < 0.5
        colors = token_colors(window.palette())
        assert colors.dark and colors.bg(Style.NORMAL, 0) != colors.bg(Style.NORMAL, 1)
    finally:
        app.setPalette(old)


def test_bpe_split_character_is_one_span(qtbot, window) -> None:  # type: ignore[no-untyped-def]
    path = real_vocab("llama-bpe")
    if path is None:
        pytest.skip("the BPE plugin or the llama-bpe reference vocab is not installed")
    open_model_in(qtbot, window, path)
    text = "hi 🦙 there"
    a = wait_result(qtbot, window, lambda: window.editor.setPlainText(text))
    assert a.encoding.ids == a.model.encode(text).ids
    k = a.span_at(text.index("🦙"))
    assert a.span_style[k] == Style.BYTES and a.span_last[k] - a.span_first[k] > 1
    assert a.stats.byte_fallback == 0  # byte-level pieces, not byte-fallback tokens


def test_wordpiece_unknown_token_is_counted(qtbot, window) -> None:  # type: ignore[no-untyped-def]
    path = real_vocab("bert-bge")
    if path is None:
        pytest.skip("the WPM plugin or the bert-bge reference vocab is not installed")
    open_model_in(qtbot, window, path)
    text = "hello 🙂 world"
    a = wait_result(qtbot, window, lambda: window.editor.setPlainText(text))
    assert a.encoding.ids == a.model.encode(text).ids
    k = a.span_at(text.index("🙂"))
    assert a.span_style[k] == Style.UNKNOWN
    assert a.stats.unknown == 1
    assert "1 unknown" in window.stats.special_label.text()


def test_keyboard_shortcuts(qtbot, window, test_vocab) -> None:  # type: ignore[no-untyped-def]
    open_model_in(qtbot, window, test_vocab)
    wait_result(qtbot, window, lambda: window.editor.setPlainText("the dog"))
    window.activateWindow()
    window.editor.setFocus()
    ctrl_shift = Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier
    wait_result(qtbot, window, lambda: qtbot.keyClick(window.editor, Qt.Key.Key_B, ctrl_shift))
    assert window.act_add_special.isChecked()
    assert window.analysis.encoding.token_ids[0] == 1
    qtbot.keyClick(window.editor, Qt.Key.Key_C, ctrl_shift)
    assert QGuiApplication.clipboard().text().split()[0] == "1"
    qtbot.keyClick(window.editor, Qt.Key.Key_2, Qt.KeyboardModifier.ControlModifier)
    assert window.tabs.currentWidget() is window.chips
    qtbot.keyClick(window.editor, Qt.Key.Key_1, Qt.KeyboardModifier.ControlModifier)
    assert window.tabs.currentWidget() is window.table
    # Tab types a tab in the editor; the focus chain then goes to the token views
    assert not window.editor.tabChangesFocus()
    chain = []
    w = window.editor.nextInFocusChain()
    while w is not window.editor and len(chain) < 200:
        chain.append(w)
        w = w.nextInFocusChain()
    assert chain.index(window.table) < chain.index(window.chips)


def test_screenshots_render(qtbot, test_vocab, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    written = render(tmp_path, {"test": Path(test_vocab)}, "the quick fox 🙂\nand the dog", (900, 560))
    assert [p.name for p in written] == ["test.png", "chips.png", "dark.png"]
    for p in written:
        assert p.stat().st_size > 10_000
