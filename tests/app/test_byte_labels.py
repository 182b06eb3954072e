"""A byte-fallback group is drawn as one span labelled with its bytes."""

from __future__ import annotations

from typing import Any, Callable

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QColor

from tests.app.conftest import open_model_in, wait_result
from tokenprism.app.logic.analysis import Style
from tokenprism.core import Attr, Model


def test_byte_group_gets_a_label_with_its_bytes(qtbot: Any, window: Any, spm_vocab: str,
                                                models: Callable[[str], Model]) -> None:
    text = "Hi 🙂 there and ① too"
    model = models(spm_vocab)
    if not any(model.vocab.attrs[i] & Attr.BYTE for i in model.encode(text).ids):
        pytest.skip("needs an SPM model with byte fallback")
    open_model_in(qtbot, window, spm_vocab)
    a = wait_result(qtbot, window, lambda: window.editor.setPlainText(text))
    ed = window.editor
    # by default only the current token's group is labelled
    ed.moveCursor(ed.textCursor().MoveOperation.End)
    ed.viewport().repaint()
    assert ed.byte_labels == []
    c = ed.textCursor()
    c.setPosition(len(text[:text.index("①")].encode("utf-16-le")) // 2)  # a UTF-16 position
    ed.setTextCursor(c)
    ed.viewport().repaint()
    assert [t for _, _, t in ed.byte_labels] == ["E2 91 A0"]
    # View > Label All Byte Groups: every visible group
    window.act_byte_labels.trigger()
    ed.viewport().repaint()
    labels = ed.byte_labels
    assert [t for _, _, t in labels] == ["F0 9F 99 82", "E2 91 A0"]
    # each label sits on its group's span
    for (k, box, _), ch in zip(labels, "🙂①"):
        pos = len(text[:text.index(ch)].encode("utf-16-le")) // 2
        assert a.span_start16[k] == pos
        span = ed.range_rects(int(a.span_start16[k]), int(a.span_end16[k]))[0]
        assert abs(box.left() - span.left()) < 1 and span.top() < box.center().y() < span.bottom() + box.height()
    # and is really painted: most of its pixels have the byte style's colour
    img = ed.viewport().grab().toImage()
    want = QColor(ed._colors.border[Style.BYTES])
    _, box, _ = labels[0]
    near = total = 0
    for x in range(int(box.left()) + 1, int(box.right()) - 1):
        for y in range(int(box.top()) + 1, int(box.bottom()) - 1):
            c = img.pixelColor(x, y)
            total += 1
            near += abs(c.red() - want.red()) + abs(c.green() - want.green()) + abs(c.blue() - want.blue()) < 60
    assert total and near / total > 0.4
    # no byte groups, no labels
    wait_result(qtbot, window, lambda: ed.setPlainText("plain words only"))
    ed.viewport().repaint()
    assert ed.byte_labels == []


ISSUE_TEXT = "Emoji 🙂🚀 한국어 Ærøskøbing ẞ"


def _u16(text: str, i: int) -> int:
    return len(text[:i].encode("utf-16-le")) // 2


def _glyph_rects(ed: Any, text: str) -> list[tuple[str, Any]]:
    """(character, rectangle) of every character of ``text`` in the editor."""
    out = []
    for i, ch in enumerate(text):
        if ch == "\n":
            continue
        s = _u16(text, i)
        for r in ed.range_rects(s, s + len(ch.encode("utf-16-le")) // 2):
            out.append((ch, r))
    return out


def _overlap(a: Any, b: Any) -> float:
    r = a.intersected(b)
    return max(r.width(), 0.0) * max(r.height(), 0.0)


def _assert_labels_hide_nothing(ed: Any, text: str) -> None:
    labels = ed.byte_labels
    assert labels
    glyphs = _glyph_rects(ed, text)
    for _, box, label in labels:
        for ch, g in glyphs:
            assert _overlap(box, g) == 0, f"label {label} covers {ch!r}"
    for i, (_, a, la) in enumerate(labels):
        for _, b, lb in labels[i + 1:]:
            assert _overlap(a, b) == 0, f"labels {la} and {lb} overlap"


def test_byte_labels_never_cover_text(qtbot: Any, window: Any, spm_vocab: str,
                                      models: Callable[[str], Model]) -> None:
    """Emoji and CJK in llama-spm are byte groups whose labels are wider than
    their glyphs: they go into room left under the line, never over text."""
    model = models(spm_vocab)
    if sum(bool(model.vocab.attrs[i] & Attr.BYTE) for i in model.encode(ISSUE_TEXT).ids) < 8:
        pytest.skip("needs an SPM model that spells emoji and Hangul in bytes")
    # a long line that wraps (labels on every wrapped line), a short one, and
    # rare CJK that llama-spm spells in bytes (three labels side by side)
    text = " ".join([ISSUE_TEXT] * 4) + "\n" + ISSUE_TEXT + " 龘靐齉\nplain words below"
    open_model_in(qtbot, window, spm_vocab)
    ed = window.editor
    wait_result(qtbot, window, lambda: ed.setPlainText(text))
    assert ed.document().firstBlock().layout().lineCount() > 1
    # the current token's label alone, on the emoji: not over the rocket after it
    c = ed.textCursor()
    c.setPosition(_u16(text, text.index("🙂")) + 1)
    ed.setTextCursor(c)
    ed.viewport().repaint()
    assert [t for _, _, t in ed.byte_labels] == ["F0 9F 99 82"]
    _assert_labels_hide_nothing(ed, text)
    plain = ed.range_rects(_u16(text, text.rindex("plain")), _u16(text, text.rindex("plain")) + 1)[0]
    # Ctrl+Shift+Y: every group labelled, still nothing covered
    qtbot.keyClick(ed, Qt.Key.Key_Y, Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier)
    assert window.act_byte_labels.isChecked()
    ed.viewport().repaint()
    texts = [t for _, _, t in ed.byte_labels]
    assert texts.count("F0 9F 99 82") == 5 and texts.count("F0 9F 9A 80") == 5
    assert texts.count("E1 BA 9E") == 5  # ẞ
    assert {"E9 BE 98", "E9 9D 90", "E9 BD 89"} <= set(texts)  # 龘靐齉
    _assert_labels_hide_nothing(ed, text)
    # each label hangs under its own group's line
    a = ed.analysis
    for k, box, _ in ed.byte_labels:
        span = ed.range_rects(int(a.span_start16[k]), int(a.span_end16[k]))[0]
        assert span.bottom() <= box.top() < span.bottom() + ed.fontMetrics().height()
    # the room is only under lines with byte groups
    plain2 = ed.range_rects(_u16(text, text.rindex("plain")), _u16(text, text.rindex("plain")) + 1)[0]
    assert plain2.height() == plain.height()
    grab = ed.grab()
    import os
    os.makedirs("/tmp/shots", exist_ok=True)
    grab.save("/tmp/shots/bytelabels.png")
    # switched off: the editor's lines close up again to one row of room
    band_all = ed._layout.band
    window.act_byte_labels.trigger()
    ed.viewport().repaint()
    assert ed._layout.band < band_all
    _assert_labels_hide_nothing(ed, text)


def test_a_huge_line_gets_no_labels_over_its_text(qtbot: Any, window: Any, spm_vocab: str,
                                                   models: Callable[[str], Model]) -> None:
    """A block too long to lay out again at every keystroke gets no label
    band; its labels are left out rather than drawn over the text."""
    from tokenprism.app.qt.qt_editor import HUGE_BLOCK

    if not any(models(spm_vocab).vocab.attrs[i] & Attr.BYTE for i in models(spm_vocab).encode("🙂").ids):
        pytest.skip("needs an SPM model with byte fallback")
    text = ("words and more 🙂 " * (HUGE_BLOCK // 10))[:HUGE_BLOCK + 500]
    open_model_in(qtbot, window, spm_vocab)
    ed = window.editor
    wait_result(qtbot, window, lambda: ed.setPlainText(text), timeout=60_000)
    window.act_byte_labels.trigger()
    ed.viewport().repaint()
    assert ed.byte_labels == []
    # a short line below it still has them
    wait_result(qtbot, window, lambda: ed.setPlainText("short 🙂\n" + text), timeout=60_000)
    ed.verticalScrollBar().setValue(0)
    ed.viewport().repaint()
    assert [t for _, _, t in ed.byte_labels][:1] == ["F0 9F 99 82"]
