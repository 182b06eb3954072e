"""A byte-fallback group is drawn as one span labelled with its bytes."""

from __future__ import annotations

from typing import Any, Callable

import pytest
from PySide6.QtGui import QColor

from tests.app.conftest import open_model_in, wait_result
from tokenprism.app.analysis import Style
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
