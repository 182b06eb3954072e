"""The lanes of the compare view: one text, drawn once per model with that
model's token boxes over it, so that the cut points line up vertically.

The text is wrapped into rows; each row is drawn as a block of lanes (one
strip per model) under a thin strip of difference marks. Everything is
painted by this one widget (no widget per token) and only the visible rows
are drawn, so a few thousand tokens and any vocabulary size scroll
smoothly. Positions are UTF-16 units throughout, as in every
:class:`Analysis`, so a range maps straight onto the compare editor.
"""

from __future__ import annotations

import html
from dataclasses import dataclass

import numpy as np
from PySide6.QtCore import QEvent, QPoint, QPointF, QRectF, QSize, Qt, Signal
from PySide6.QtGui import (QColor, QFont, QFontDatabase, QFontMetricsF, QMouseEvent, QPainter, QPaintEvent, QPen,
                           QPolygonF)
from PySide6.QtWidgets import QAbstractScrollArea, QToolTip, QWidget

from . import qt_compat  # noqa: F401  (guards against a PySide6 bug; see there)
from ..logic.analysis import Analysis
from ..logic.compare_align import cuts, difference_marks, space_adjacent, wrap_rows
from ..logic.pieces import tooltip_html
from .styles import TokenColors, mix, token_colors

GUTTER_CHARS = 14
GUTTER_MAX_CHARS = 32
MARK_COLOR = "#e0402a"
LAYOUT_MAX_UNITS = 200_000
"""Longer texts show only their beginning in the lanes (the summary counts all)."""


@dataclass(frozen=True)
class LaneData:
    """What one lane shows: a model's analysis of the view's text, or why not."""

    name: str
    kind: str
    analysis: Analysis | None
    message: str = ""
    path: str = ""
    """The model's file, shown when the pointer rests on the lane's name."""


def _display_char(ch: str) -> str:
    """What stands for ``ch`` in the lanes (line breaks and tabs visible)."""
    if ch == "\n":
        return "↵"
    if ch == "\t":
        return "→"
    if ch == "\u2028":  # line separator: a break inside a paragraph
        return "↲"
    if ch == "\u00a0":  # no-break space: tokenized unlike a space, so shown unlike one
        return "⍽"
    o = ord(ch)
    if o < 0x20:
        return chr(0x2400 + o)  # control pictures
    if o == 0x7F:
        return "␡"
    return ch


def to_units(text: str) -> str:
    """``text`` with one string element per UTF-16 code unit (characters
    outside the BMP become their two surrogates), so indices are Qt positions."""
    if text.isascii():
        return text
    return "".join(map(chr, np.frombuffer(text.encode("utf-16-le", "surrogatepass"), dtype=np.uint16).tolist()))


def from_units(units: str) -> str:
    """The real characters of a :func:`to_units` string (pairs joined again)."""
    return units if units.isascii() else units.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")


class QCompareLanes(QAbstractScrollArea):
    """Token lanes of several models over one text."""

    rangeHovered = Signal(int, int)
    """UTF-16 ``[start, end)`` under the mouse, (-1, -1) when none."""
    rangeClicked = Signal(int, int)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setMouseTracking(True)
        self.viewport().setMouseTracking(True)
        self.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
        self._lanes: list[LaneData] = []
        self._text = ""
        self._shown = ""  # the laid-out text (a prefix of a huge one)
        self._adv = np.zeros(0)
        self._x = np.zeros(1)
        self._rows = np.zeros(2, dtype=np.int64)
        self._marks = np.zeros(0, dtype=np.int64)
        self._units = ""
        self._hover = (-1, -1)
        self._ascii_table: np.ndarray | None = None
        self._ascii_font = ""
        self.ignore_space_cuts = True
        """Leave out marks next to whitespace (where models differ only in
        which side of a space they cut, or drop it, as WordPiece does)."""
        self._set_fonts()
        self._gutter = self._gutter_width()

    # ---- inputs ---------------------------------------------------------------------

    def _set_fonts(self) -> None:
        f = QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont)
        f.setPointSizeF(self.font().pointSizeF() + 2)
        self._mono = f
        self._fm = QFontMetricsF(f)
        # drawing whole rows at once needs every ASCII glyph (and the dot) one width
        widths = {self._fm.horizontalAdvance(c) for c in "iWm .·"}
        self._mono_ascii = len(widths) == 1
        small = QFont(self.font())
        small.setPointSizeF(max(6.0, self.font().pointSizeF() - 1))
        self._small = small
        self._cache: dict[str, float] = {}

    def set_lanes(self, text: str, lanes: list[LaneData]) -> None:
        """Show ``lanes`` (every analysis is of ``text``)."""
        self._lanes = list(lanes)
        if text != self._text:
            self._text = text
            self._shown = text[:LAYOUT_MAX_UNITS]
            self._measure()
        self._compute_marks()
        self.relayout()

    def set_ignore_space_cuts(self, on: bool) -> None:
        self.ignore_space_cuts = on
        self._compute_marks()
        self.viewport().update()

    @property
    def text(self) -> str:
        return self._text

    @property
    def lanes(self) -> list[LaneData]:
        return list(self._lanes)

    @property
    def marks(self) -> np.ndarray:
        """UTF-16 positions where the lanes' cuts differ."""
        return self._marks

    @property
    def hover_range(self) -> tuple[int, int]:
        return self._hover

    def _measure(self) -> None:
        units = to_units(self._shown)
        self._units = units
        cache = self._cache
        fm = self._fm
        cell = fm.horizontalAdvance("0") * 1.3
        if units.isascii():  # one table lookup instead of a loop
            table = self._ascii_widths(cell)
            self._adv = table[np.frombuffer(units.encode("ascii"), dtype=np.uint8)]
            return
        adv = np.zeros(len(units), dtype=np.float64)
        for i, ch in enumerate(units):
            o = ord(ch)
            if 0xDC00 <= o <= 0xDFFF and i and 0xD800 <= ord(units[i - 1]) <= 0xDBFF:
                continue  # the pair's width went to its first unit
            key = units[i:i + 2] if 0xD800 <= o <= 0xDBFF else ch
            w = cache.get(key)
            if w is None:
                disp = _display_char(key) if len(key) == 1 else from_units(key)
                w = max(fm.horizontalAdvance(disp), 1.0)
                if disp != key:  # a stand-in glyph (often from a fallback font) gets a full cell
                    w = max(w, cell)
                cache[key] = w
            adv[i] = w
        self._adv = adv

    def _ascii_widths(self, cell: float) -> np.ndarray:
        table = self._ascii_table
        if table is None or self._ascii_font != self._mono.key():
            table = np.array([max(self._fm.horizontalAdvance(_display_char(chr(c))), 1.0) for c in range(128)])
            for c in list(range(0x20)) + [0x7F]:
                table[c] = max(table[c], cell)
            self._ascii_table = table
            self._ascii_font = self._mono.key()
        return table

    def _compute_marks(self) -> None:
        shown = [ln.analysis for ln in self._lanes if ln.analysis is not None]
        n = len(self._text.encode("utf-16-le", "surrogatepass")) // 2
        marks = difference_marks([cuts(a.span_start16, a.span_end16, n) for a in shown])
        if self.ignore_space_cuts and len(marks):
            marks = marks[~space_adjacent(to_units(self._text), marks)]
        self._marks = marks

    # ---- geometry ---------------------------------------------------------------------

    @property
    def lane_height(self) -> float:
        return self._fm.height() + 12.0

    @property
    def mark_height(self) -> float:
        return 9.0

    @property
    def block_height(self) -> float:
        return self.mark_height + max(1, len(self._lanes)) * self.lane_height + 8.0

    @property
    def gutter(self) -> float:
        return self._gutter

    def _gutter_width(self) -> float:
        """Room for the longest "n name" of the lanes, between GUTTER_CHARS and
        GUTTER_MAX_CHARS digits wide (and at most a third of the view), so
        names that differ only at their end (``qwen2 (ggml-vocab-qwen35)``)
        are shown whole when the view is wide enough."""
        fm = QFontMetricsF(self._small)
        digit = fm.horizontalAdvance("0")
        need = max([fm.horizontalAdvance(f"{i + 1} {ld.name}") for i, ld in enumerate(self._lanes)], default=0.0)
        most = max(digit * GUTTER_CHARS, min(digit * GUTTER_MAX_CHARS, self.viewport().width() / 3))
        return min(max(need, digit * GUTTER_CHARS), most) + 12.0

    def gutter_label(self, lane: int) -> str:
        """Lane ``lane``'s number and name as its gutter shows them, cut in
        the middle when too long: a name's end (the file) tells apart models
        that share a name."""
        return QFontMetricsF(self._small).elidedText(f"{lane + 1} {self._lanes[lane].name}",
                                                     Qt.TextElideMode.ElideMiddle, self.gutter - 10)

    def relayout(self) -> None:
        self._gutter = self._gutter_width()
        avail = max(40.0, self.viewport().width() - self.gutter - 12.0)
        self._rows = wrap_rows(self._adv, self._units, avail)
        self._x = np.concatenate([[0.0], np.cumsum(self._adv)])
        self._update_scrollbar()
        self.viewport().update()

    @property
    def row_count(self) -> int:
        return len(self._rows) - 1

    def _update_scrollbar(self) -> None:
        total = int(self.row_count * self.block_height) + 8
        sb = self.verticalScrollBar()
        sb.setRange(0, max(0, total - self.viewport().height()))
        sb.setPageStep(self.viewport().height())
        sb.setSingleStep(int(self.block_height / 2))

    def _row_of(self, pos: int) -> int:
        return max(0, min(self.row_count - 1, int(np.searchsorted(self._rows, pos, "right")) - 1))

    def pos_x(self, pos: int, row: int) -> float:
        """Viewport x of UTF-16 position ``pos`` in row ``row``."""
        rs = int(self._rows[row])
        return self.gutter + float(self._x[min(pos, len(self._x) - 1)] - self._x[rs])

    def lane_rect(self, row: int, lane: int) -> QRectF:
        """Viewport rectangle of lane ``lane``'s strip in row ``row``."""
        top = 4.0 + row * self.block_height - self.verticalScrollBar().value() + self.mark_height
        return QRectF(0.0, top + lane * self.lane_height, self.viewport().width(), self.lane_height)

    def range_rects(self, lane: int, start: int, end: int) -> list[QRectF]:
        """Viewport rectangles covering UTF-16 ``[start, end)`` in one lane."""
        out: list[QRectF] = []
        if end <= start or self.row_count <= 0:
            return out
        for r in range(self._row_of(start), self._row_of(max(start, end - 1)) + 1):
            rs, re = int(self._rows[r]), int(self._rows[r + 1])
            a, b = max(start, rs), min(end, re)
            if a >= b:
                continue
            lr = self.lane_rect(r, lane)
            out.append(QRectF(self.pos_x(a, r), lr.top() + 2, self.pos_x(b, r) - self.pos_x(a, r),
                              lr.height() - 4))
        return out

    def hit(self, pt: QPoint | QPointF) -> tuple[int, int]:
        """(lane, UTF-16 position) under viewport point ``pt``, or (-1, -1)."""
        y = pt.y() + self.verticalScrollBar().value() - 4.0
        if y < 0 or not self._lanes:
            return -1, -1
        row = int(y // self.block_height)
        if row >= self.row_count:
            return -1, -1
        lane_y = y - row * self.block_height - self.mark_height
        lane = int(lane_y // self.lane_height)
        if lane_y < 0 or lane >= len(self._lanes):
            return -1, -1
        rs, re = int(self._rows[row]), int(self._rows[row + 1])
        x = pt.x() - self.gutter + float(self._x[rs])
        pos = int(np.searchsorted(self._x, x, "right")) - 1
        if pos < rs or pos >= re:
            return lane, -1
        return lane, pos

    def token_range_at(self, pt: QPoint | QPointF) -> tuple[int, int, int]:
        """(lane, start, end) of the token box under ``pt``; start is -1 when none."""
        lane, pos = self.hit(pt)
        if lane < 0 or pos < 0:
            return lane, -1, -1
        a = self._lanes[lane].analysis
        if a is None:
            return lane, -1, -1
        k = a.span_at(pos)
        if k < 0:
            return lane, -1, -1
        return lane, int(a.span_start16[k]), int(a.span_end16[k])

    # ---- painting ---------------------------------------------------------------------

    def paintEvent(self, event: QPaintEvent) -> None:
        p = QPainter(self.viewport())
        colors = token_colors(self.palette())
        p.fillRect(self.viewport().rect(), colors.base)
        if not self._lanes:
            p.setPen(colors.muted)
            p.drawText(self.viewport().rect(), Qt.AlignmentFlag.AlignCenter, "Add models to compare")
            p.end()
            return
        bh = self.block_height
        scroll = self.verticalScrollBar().value()
        first = max(0, int((scroll - 4) // bh))
        last = min(self.row_count, int((scroll + self.viewport().height()) // bh) + 1)
        mark_pen = QPen(QColor(MARK_COLOR), 1.0, Qt.PenStyle.DotLine)
        hl = QColor(colors.highlight)
        hl.setAlphaF(0.30)
        for r in range(first, last):
            self._paint_row(p, r, colors, mark_pen)
        if self._hover[0] >= 0:
            for lane in range(len(self._lanes)):
                for rect in self.range_rects(lane, *self._hover):
                    if rect.bottom() < 0 or rect.top() > self.viewport().height():
                        continue
                    p.fillRect(rect, hl)
                    p.setPen(QPen(colors.highlight, 1.6))
                    p.setBrush(Qt.BrushStyle.NoBrush)
                    p.drawRect(rect)
        p.end()

    def _paint_row(self, p: QPainter, r: int, colors: TokenColors, mark_pen: QPen) -> None:
        rs, re = int(self._rows[r]), int(self._rows[r + 1])
        top = 4.0 + r * self.block_height - self.verticalScrollBar().value()
        g = self.gutter
        fm = self._fm
        # difference marks: a red wedge above the block and a dotted line through it
        lo = int(np.searchsorted(self._marks, rs, "right"))
        hi = int(np.searchsorted(self._marks, re, "left"))
        row_marks = [int(m) for m in self._marks[lo:hi]]
        bottom = top + self.mark_height + len(self._lanes) * self.lane_height
        red = QColor(MARK_COLOR)
        for m in row_marks:
            x = self.pos_x(m, r)
            p.setPen(Qt.PenStyle.NoPen)
            p.setBrush(red)
            p.drawPolygon(QPolygonF([QPointF(x - 3.5, top + 1), QPointF(x + 3.5, top + 1),
                                     QPointF(x, top + self.mark_height - 1)]))
            p.setPen(mark_pen)
            p.drawLine(QPointF(x, top + self.mark_height), QPointF(x, bottom))
        ascent = fm.ascent()
        row = self._units[rs:re]
        tail = ""
        if row.endswith("\n"):
            row, tail = row[:-1], "↵"
        plain: str | None = row if self._mono_ascii and row.isascii() and row.isprintable() else None
        dots = "".join("·" if c == " " else " " for c in row) if plain is not None else ""
        for lane_i, lane in enumerate(self._lanes):
            lr = self.lane_rect(r, lane_i)
            # gutter: lane number and short model name
            p.setFont(self._small)
            p.setPen(colors.muted)
            name = self.gutter_label(lane_i)
            p.drawText(QRectF(4, lr.top(), g - 8, lr.height()),
                       int(Qt.AlignmentFlag.AlignVCenter | Qt.AlignmentFlag.AlignLeft), name)
            a = lane.analysis
            p.setFont(self._mono)
            base_y = lr.top() + (lr.height() - fm.height()) / 2 + ascent
            if a is None:
                p.setPen(colors.muted)
                p.drawText(QRectF(g, lr.top(), self.viewport().width() - g, lr.height()),
                           int(Qt.AlignmentFlag.AlignVCenter), lane.message or "…")
                continue
            lo, hi = a.spans_in(rs, re)
            box_top, box_h = lr.top() + 3, lr.height() - 6
            for k in range(lo, hi):
                s, e = int(a.span_start16[k]), int(a.span_end16[k])
                cs, ce = max(s, rs), min(e, re)
                if cs >= ce:
                    continue
                x0, x1 = self.pos_x(cs, r), self.pos_x(ce, r)
                style = int(a.span_style[k])
                rect = QRectF(x0 + 0.5, box_top, x1 - x0 - 1.0, box_h)
                p.setBrush(colors.bg(style, k))
                p.setPen(QPen(mix(colors.bg(style, k), colors.text, 0.35), 1.0))
                p.drawRoundedRect(rect, 3, 3)
            p.setPen(colors.text)
            if plain is not None:
                # a plain ASCII row sits on the monospace grid already: two
                # calls draw it (the text, then dots for its spaces)
                p.drawText(QPointF(g, base_y), plain)
                p.setPen(colors.muted)
                p.drawText(QPointF(g, base_y), dots)
                if tail:
                    p.drawText(QPointF(self.pos_x(re - 1, r), base_y), tail)
                continue
            self._draw_text(p, rs, re, g, base_y, colors.muted, colors.text)
            # tokens that cover no text (BOS/EOS): a thin bar
            elo, ehi = a.empties_in(rs, re)
            if ehi > elo:
                p.setPen(QPen(colors.border[3], 2.0))
                for j in range(elo, ehi):
                    pos = int(a.empty_pos16[j])
                    if pos < re or r == self.row_count - 1:
                        x = self.pos_x(pos, r)
                        p.drawLine(QPointF(x, box_top), QPointF(x, box_top + box_h))

    def _draw_text(self, p: QPainter, a: int, b: int, x: float, y: float, muted: QColor, text: QColor) -> None:
        """Units ``[a, b)`` of one row starting at ``x``: runs of plain ASCII
        in one call, every other character at its own place on the grid (a
        fallback font's glyphs would drift otherwise), spaces, breaks and
        tabs as muted marks."""
        units = self._units
        xs = self._x
        x0 = float(xs[a])
        run = a
        i = a
        while i <= b:
            ch = units[i] if i < b else ""
            plain = ch != "" and ch.isascii() and ch.isprintable() and ch != " "
            if plain:
                i += 1
                continue
            if i > run:
                p.drawText(QPointF(x + float(xs[run]) - x0, y), units[run:i])
            if ch == "":
                break
            cx = x + float(xs[i]) - x0
            o = ord(ch)
            if ch == " " or o < 0x20 or o == 0x7F or ch == "\u00a0" or ch == "\u2028":
                p.setPen(muted)
                p.drawText(QPointF(cx, y), "·" if ch == " " else _display_char(ch))
                p.setPen(text)
                i += 1
            elif 0xD800 <= o <= 0xDBFF and i + 1 < b:
                p.drawText(QPointF(cx, y), from_units(units[i:i + 2]))
                i += 2
            else:
                p.drawText(QPointF(cx, y), from_units(ch))
                i += 1
            run = i

    # ---- events -----------------------------------------------------------------------

    def set_hover(self, start: int, end: int) -> None:
        if (start, end) != self._hover:
            self._hover = (start, end)
            self.viewport().update()

    def viewportEvent(self, event: QEvent) -> bool:
        if event.type() == QEvent.Type.ToolTip:
            pos = event.pos()  # type: ignore[attr-defined]
            lane, s, _e = self.token_range_at(pos)
            a = self._lanes[lane].analysis if lane >= 0 else None
            if lane >= 0 and pos.x() < self.gutter:
                # the gutter shows a short name: the full path says which file it is
                ld = self._lanes[lane]
                where = f"<br>{html.escape(ld.path)}" if ld.path else ""
                QToolTip.showText(event.globalPos(),  # type: ignore[attr-defined]
                                  f"<b>{html.escape(ld.name)}</b> ({html.escape(ld.kind)}){where}", self)
            elif a is not None and s >= 0:
                k = a.span_at(s)
                first, last = int(a.span_first[k]), int(a.span_last[k])
                head = f"<b>{html.escape(self._lanes[lane].name)}</b> ({html.escape(self._lanes[lane].kind)})<br>"
                QToolTip.showText(event.globalPos(), head + tooltip_html(a, first, last), self)  # type: ignore[attr-defined]
            else:
                QToolTip.hideText()
            return True
        if event.type() == QEvent.Type.Leave:
            self.set_hover(-1, -1)
            self.rangeHovered.emit(-1, -1)
        return super().viewportEvent(event)

    def mouseMoveEvent(self, event: QMouseEvent) -> None:
        _lane, s, e = self.token_range_at(event.position())
        self.set_hover(s, e)
        self.rangeHovered.emit(s, e)
        super().mouseMoveEvent(event)

    def mousePressEvent(self, event: QMouseEvent) -> None:
        if event.button() == Qt.MouseButton.LeftButton:
            _lane, s, e = self.token_range_at(event.position())
            if s >= 0:
                self.set_hover(s, e)
                self.rangeClicked.emit(s, e)
        super().mousePressEvent(event)

    def resizeEvent(self, event: object) -> None:
        super().resizeEvent(event)  # type: ignore[arg-type]
        self.relayout()

    def changeEvent(self, event: QEvent) -> None:
        if event.type() in (QEvent.Type.FontChange, QEvent.Type.PaletteChange):
            if event.type() == QEvent.Type.FontChange:
                self._set_fonts()
                self._measure()
                self.relayout()
            self.viewport().update()
        super().changeEvent(event)

    def sizeHint(self) -> QSize:
        return QSize(900, 360)
