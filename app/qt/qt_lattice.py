"""A Unigram word's lattice drawn as a small graph (the "Why" panel).

The word's characters stand on a line between numbered positions; every
vocabulary piece starting at a position is an arc to where it ends. The
best segmentation's arcs are drawn under the line, thick, with their
pieces; the runner-up's over it, dashed; the other pieces as faint arcs
over it, so the reader sees how many choices there were and which won.
"""

from __future__ import annotations

from typing import Final

from PySide6.QtCore import QPointF, QRectF, QSize, Qt
from PySide6.QtGui import QColor, QFontDatabase, QPainter, QPainterPath, QPaintEvent, QPalette, QPen
from PySide6.QtWidgets import QSizePolicy, QWidget

from . import qt_compat  # noqa: F401  (guards against a PySide6 bug; see there)
from ..logic.pieces import readable
from tokenprism.core.explain import Lattice, LatticeEdge

MAX_OTHER_EDGES: Final = 600  # faint arcs drawn at most (a long word has thousands)
BEST_COLOR: Final = QColor(30, 136, 229)
RUNNER_COLOR: Final = QColor(229, 115, 0)


class QLatticeView(QWidget):
    """Paints one lattice; :meth:`set_lattice` gives it the paths to mark."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._lattice: Lattice | None = None
        self._best: tuple[LatticeEdge, ...] = ()
        self._runner: tuple[LatticeEdge, ...] = ()
        self.drawn: dict[str, int] = {"best": 0, "runner_up": 0, "other": 0}
        """Arcs drawn by the last paint, per kind (for tests and the tooltip)."""
        font = QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont)
        font.setPointSizeF(max(font.pointSizeF(), 10.0))
        self.setFont(font)
        self.setSizePolicy(QSizePolicy.Policy.Fixed, QSizePolicy.Policy.Fixed)
        self.setToolTip("Every vocabulary piece is an arc from where it starts to where it ends. "
                        "Blue, under the word: the best segmentation; orange, dashed: the runner-up; "
                        "grey: the other pieces.")

    def set_lattice(self, lattice: Lattice | None, best: tuple[LatticeEdge, ...] = (),
                    runner_up: tuple[LatticeEdge, ...] = ()) -> None:
        self._lattice = lattice
        self._best = best
        self._runner = runner_up
        self.drawn = {"best": 0, "runner_up": 0, "other": 0}
        self.setFixedSize(self.sizeHint())
        self.update()

    # ---- geometry --------------------------------------------------------------------------

    def _step(self) -> float:
        return self.fontMetrics().horizontalAdvance("W") * 3.0

    def _levels(self) -> tuple[float, float]:
        """Height over the line for the longest arc, and under it."""
        h = self.fontMetrics().height()
        return h * 6.0, h * 4.0

    def sizeHint(self) -> QSize:
        n = len(self._lattice.text) if self._lattice is not None else 0
        up, down = self._levels()
        h = self.fontMetrics().height()
        return QSize(int(self._step() * max(n, 1) + 40), int(up + down + h * 2 + 20))

    def _x(self, pos: int) -> float:
        return 20 + pos * self._step()

    def _baseline(self) -> float:
        up, _ = self._levels()
        return up + 10 + self.fontMetrics().height() * 0.5

    # ---- painting ----------------------------------------------------------------------------

    def paintEvent(self, event: QPaintEvent) -> None:
        lat = self._lattice
        p = QPainter(self)
        p.setRenderHint(QPainter.RenderHint.Antialiasing)
        pal = self.palette()
        text_color = pal.color(QPalette.ColorRole.WindowText)
        if lat is None:
            p.end()
            return
        y = self._baseline()
        n = len(lat.text)
        up, down = self._levels()
        counts = {"best": 0, "runner_up": 0, "other": 0}
        special = {(e.start, e.end, e.token) for e in self._best + self._runner}
        faint = QColor(text_color)
        faint.setAlpha(60)
        p.setPen(QPen(faint, 1))
        for edge in lat.edges:
            if counts["other"] >= MAX_OTHER_EDGES:
                break
            if (edge.start, edge.end, edge.token) in special:
                continue
            self._arc(p, edge, y, -up * 0.8, n)
            counts["other"] += 1
        pen = QPen(RUNNER_COLOR, 2, Qt.PenStyle.DashLine)
        for edge in self._runner:
            p.setPen(pen)
            self._arc(p, edge, y, -up, n)
            # (a cubic's middle reaches 3/4 of its control points' height)
            self._label(p, edge, y + self._height(edge, -up, n) * 0.75 - 4, RUNNER_COLOR)
            counts["runner_up"] += 1
        for edge in self._best:
            p.setPen(QPen(BEST_COLOR, 3))
            self._arc(p, edge, y, down, n)
            self._label(p, edge, y + self._height(edge, down, n) * 0.75 + self.fontMetrics().ascent() + 2,
                        BEST_COLOR)
            counts["best"] += 1
        # the word on its line, positions as dots
        fm = self.fontMetrics()
        p.setPen(QPen(text_color, 1))
        for i in range(n + 1):
            p.setBrush(text_color)
            p.drawEllipse(QPointF(self._x(i), y), 2.5, 2.5)
        p.setBrush(Qt.BrushStyle.NoBrush)
        for i, ch in enumerate(lat.text):
            label = readable(ch)
            w = fm.horizontalAdvance(label)
            p.drawText(QPointF((self._x(i) + self._x(i + 1) - w) / 2, y - 4), label)
        p.end()
        self.drawn = counts

    def _height(self, edge: LatticeEdge, full: float, n: int) -> float:
        span = max(1, edge.end - edge.start)
        return full * (0.35 + 0.65 * span / max(1, n))

    def _arc(self, p: QPainter, edge: LatticeEdge, y: float, full: float, n: int) -> None:
        x0, x1 = self._x(edge.start), self._x(edge.end)
        h = self._height(edge, full, n)
        path = QPainterPath(QPointF(x0, y))
        path.cubicTo(QPointF(x0, y + h), QPointF(x1, y + h), QPointF(x1, y))
        p.drawPath(path)

    def _label(self, p: QPainter, edge: LatticeEdge, y: float, color: QColor) -> None:
        fm = self.fontMetrics()
        text = readable(edge.piece)
        w = fm.horizontalAdvance(text)
        x = (self._x(edge.start) + self._x(edge.end) - w) / 2
        bg = self.palette().color(QPalette.ColorRole.Base)
        p.fillRect(QRectF(x - 2, y - fm.ascent(), w + 4, fm.height()), bg)
        p.setPen(QPen(color, 1))
        p.drawText(QPointF(x, y), text)
