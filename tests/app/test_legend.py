"""The legend under the editor never cuts an entry: a narrow pane wraps
it onto more lines, every entry whole and visible."""

from __future__ import annotations

from typing import Any

import pytest
from PySide6.QtWidgets import QWidget

from tokenprism.app.qt.styles import QLegend


@pytest.mark.parametrize("width", [120, 260, 420, 560, 700, 1200])
def test_every_entry_is_shown_whole(qtbot: Any, width: int) -> None:
    legend = QLegend()
    qtbot.addWidget(legend)
    legend.resize(width, legend.height())
    legend.show()
    qtbot.waitExposed(legend)
    boxes: list[QWidget] = legend.items
    for swatch, label in legend.entries:
        assert swatch.isVisible() and label.isVisible()
        # the label's whole text fits in it
        assert label.width() >= label.fontMetrics().horizontalAdvance(label.text())
    rects = [b.geometry() for b in boxes]
    for r in rects:
        assert r.left() >= 0 and r.bottom() < legend.height()
        # inside the width, unless one entry alone is wider than the pane
        assert r.right() < legend.width() or r.left() <= QLegend.MARGIN
    for i, a in enumerate(rects):
        for b in rects[i + 1:]:
            assert not a.intersects(b)
    rows = len({r.top() for r in rects})
    if width >= 1200:
        assert rows == 1
    if width <= 420:
        assert rows > 1 and legend.height() > rows * boxes[1].height()
