"""Text zoom: relative to each widget's own first size, clamped, and 0
restores the original exactly."""

from __future__ import annotations

from PySide6.QtWidgets import QLabel

from tokenprism.app.qt.qt_zoom import ZOOM_MAX, ZOOM_MIN, zoom_widgets


def test_zoom_steps_clamps_and_resets(qtbot) -> None:  # type: ignore[no-untyped-def]
    small, big = QLabel("a"), QLabel("b")
    for w, size in ((small, 9.0), (big, 14.0)):
        qtbot.addWidget(w)
        f = w.font()
        f.setPointSizeF(size)
        w.setFont(f)
    z = zoom_widgets((small, big), 0, 2)
    assert z == 2
    assert (small.font().pointSizeF(), big.font().pointSizeF()) == (11.0, 16.0)
    z = zoom_widgets((small, big), z, 1)
    assert (small.font().pointSizeF(), big.font().pointSizeF()) == (12.0, 17.0)
    z = zoom_widgets((small, big), z, 100)
    assert z == ZOOM_MAX and small.font().pointSizeF() == 9.0 + ZOOM_MAX
    z = zoom_widgets((small, big), z, -100)
    assert z == ZOOM_MIN and big.font().pointSizeF() == 14.0 + ZOOM_MIN
    z = zoom_widgets((small, big), z, 0)
    assert z == 0
    assert (small.font().pointSizeF(), big.font().pointSizeF()) == (9.0, 14.0)


def test_window_zoom_grows_the_table_and_chips_with_the_editor(qtbot, make_window) -> None:  # type: ignore[no-untyped-def]
    from PySide6.QtCore import Qt
    from PySide6.QtGui import QFont

    from tests.app.conftest import open_model_in
    from tokenprism.app.qt.qt_token_table import COL_ID, COL_INDEX, COL_PIECE
    from tokenprism.core.library.resources import demo_models

    w = make_window()
    open_model_in(qtbot, w, str(demo_models()["spm"]))
    w.activateWindow()
    qtbot.waitActive(w)
    w.editor.setFocus()
    t, m = w.table, w.table.token_model

    def sizes() -> tuple[float, float, float, float, int, int]:
        cell = m.data(m.index(0, COL_PIECE), Qt.ItemDataRole.FontRole)
        assert isinstance(cell, QFont)
        return (w.editor.font().pointSizeF(), t.font().pointSizeF(), cell.pointSizeF(),
                w.chips._piece_font.pointSizeF(), t.verticalHeader().defaultSectionSize(), t.columnWidth(COL_ID))

    before = sizes()
    assert before[2] == before[1]  # the monospaced cells are the table's size
    for _ in range(3):  # Ctrl+= (unshifted), as browsers and editors zoom
        qtbot.keyClick(w.editor, Qt.Key.Key_Equal, Qt.KeyboardModifier.ControlModifier)
    grown = sizes()
    assert grown[0] == before[0] + 3 and grown[1] == before[1] + 3 and grown[2] == before[2] + 3
    assert grown[3] > before[3]
    assert t.horizontalHeader().font().pointSizeF() == grown[1]
    assert grown[4] > before[4] and grown[5] > before[5]  # rows and columns grow with the text
    assert t.columnWidth(COL_INDEX) >= t.fontMetrics().horizontalAdvance(str(m.data(m.index(0, COL_INDEX))))
    qtbot.keyClick(w.editor, Qt.Key.Key_Minus, Qt.KeyboardModifier.ControlModifier)
    assert sizes()[1] == before[1] + 2
    qtbot.keyClick(w.editor, Qt.Key.Key_0, Qt.KeyboardModifier.ControlModifier)
    assert sizes() == before
