"""The legend under the editor never cuts an entry in two: a narrow pane
drops the title, then whole entries from the end."""

from __future__ import annotations

from typing import Any

import pytest

from tokenprism.app.qt.styles import QLegend


@pytest.mark.parametrize("width", [120, 260, 420, 560, 700, 1200])
def test_every_shown_entry_is_whole(qtbot: Any, width: int) -> None:
    legend = QLegend()
    qtbot.addWidget(legend)
    legend.resize(width, legend.sizeHint().height())
    legend.show()
    qtbot.waitExposed(legend)
    shown = [(s, lab) for s, lab in legend.entries if lab.isVisible()]
    for swatch, label in shown:
        # a label drawn whole: its full text fits in its rectangle, inside the legend
        assert label.width() >= label.fontMetrics().horizontalAdvance(label.text())
        assert label.geometry().right() <= legend.width()
        assert swatch.isVisible()
    hidden = [lab for _s, lab in legend.entries if not lab.isVisible()]
    # entries go from the end: every shown one comes before every hidden one
    assert [lab for _s, lab in legend.entries] == [lab for _s, lab in shown] + hidden
    if width >= 1200:
        assert legend.title.isVisible() and not hidden
