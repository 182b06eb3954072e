"""Text zoom: relative to each widget's own first size, clamped, and 0
restores the original exactly."""

from __future__ import annotations

from PySide6.QtWidgets import QLabel

from tokenprism.app.qt_zoom import ZOOM_MAX, ZOOM_MIN, zoom_widgets


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
