"""Text zoom shared by the main window and the compare window.

Each widget remembers its unzoomed point size in a Qt property the first
time it is zoomed, so zooming is always relative to that size and never
drifts by rounding, and 0 brings back exactly the original.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QWidget

from . import qt_compat  # noqa: F401  (guards against a PySide6 bug; see there)

ZOOM_MIN, ZOOM_MAX = -6, 12  # points added to the base size


def zoom_keys(step: int) -> list[QKeySequence]:
    """The keys of zooming in (``step`` 1), out (-1) or back (0): the
    platform's, plus Ctrl+= for zooming in, the unshifted key that browsers
    and editors also take (on Linux the platform's is Ctrl++ alone, which
    needs Shift on most layouts)."""
    if step == 0:
        return [QKeySequence("Ctrl+0")]
    std = QKeySequence.StandardKey.ZoomIn if step > 0 else QKeySequence.StandardKey.ZoomOut
    keys = list(QKeySequence.keyBindings(std)) or [QKeySequence(std)]
    if step > 0 and QKeySequence("Ctrl+=") not in keys:
        keys.append(QKeySequence("Ctrl+="))
    return keys


def zoom_widgets(widgets: Iterable[QWidget], zoom: int, step: int) -> int:
    """Step ``zoom`` by ``step`` (0 resets it), apply it to ``widgets``' fonts
    and return the new zoom."""
    zoom = 0 if step == 0 else max(ZOOM_MIN, min(ZOOM_MAX, zoom + step))
    for w in widgets:
        f = w.font()
        base = w.property("baseFontSize")
        if base is None:
            base = f.pointSizeF()
            w.setProperty("baseFontSize", base)
        f.setPointSizeF(float(base) + zoom)
        w.setFont(f)
    return zoom


def add_zoom_and_close(window: QWidget, zoom: Callable[[int], None]) -> None:
    """Give a feature's own window the main window's zoom keys (``zoom``
    gets 1, -1 or 0) and the platform's Close key."""
    for step in (1, -1, 0):
        act = QAction(window)
        act.setShortcuts(zoom_keys(step))
        act.triggered.connect(lambda _=False, s=step: zoom(s))
        window.addAction(act)
    act_close = QAction(window)
    act_close.setShortcut(QKeySequence(QKeySequence.StandardKey.Close))
    act_close.triggered.connect(window.close)
    window.addAction(act_close)
