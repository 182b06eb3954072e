"""The chips view: every token as a small box with its piece on top and its
id underneath, wrapping like text.

One widget paints everything, and only the rows in the viewport. Chip
widths come from a per-model cache of piece widths (measured once per
distinct id) and the rows are found with a numpy-assisted greedy wrap; for
big encodings the wrap runs in a worker thread so resizing stays smooth.
"""

from __future__ import annotations

import numpy as np
from PySide6.QtCore import QEvent, QObject, QPoint, QRectF, Qt, QThreadPool, QTimer, Signal
from PySide6.QtGui import (QFont, QFontDatabase, QFontMetricsF, QHelpEvent, QKeyEvent, QMouseEvent,
                           QPainter, QPaintEvent, QPen)
from PySide6.QtWidgets import QAbstractScrollArea, QToolTip, QWidget

from . import qt_compat  # noqa: F401  (guards against a PySide6 bug; see there)
from ..logic.analysis import Analysis, Style
from ..logic.pieces import piece_label, tooltip_html
from .styles import TokenColors, mix, token_colors

SYNC_LAYOUT_TOKENS = 20_000  # above this the wrap is computed in a worker
MAX_CHIP_CHARS = 32


def wrap_rows(widths: np.ndarray, breaks_after: np.ndarray, avail: float,
              gap: float) -> tuple[np.ndarray, np.ndarray]:
    """Greedy line wrapping of boxes of ``widths`` into rows ``avail`` wide,
    also ending a row after every box flagged in ``breaks_after``.

    Where each row would end if it started at box ``i`` is found for every
    ``i`` at once with numpy; only following that chain from box 0 is a
    Python loop (one step per row).

    Returns (row starts, with ``len(widths)`` appended; x of every box).
    """
    n = len(widths)
    if n == 0:
        return np.zeros(1, dtype=np.int64), np.zeros(0, dtype=np.float64)
    cum = np.zeros(n + 1, dtype=np.float64)
    np.cumsum(widths + gap, out=cum[1:])
    idx = np.arange(n, dtype=np.int64)
    nxt = np.searchsorted(cum, cum[:n] + avail + gap, "right") - 1
    forced = np.append(np.flatnonzero(breaks_after) + 1, n)
    nxt = np.minimum(nxt, forced[np.searchsorted(forced, idx, "right")])
    nxt = np.maximum(nxt, idx + 1)  # a box wider than the row gets a row of its own
    chain = nxt.tolist()
    starts = [0]
    i = 0
    while i < n:
        i = chain[i]
        starts.append(i)
    row_starts = np.asarray(starts, dtype=np.int64)
    row_of = np.repeat(np.arange(len(row_starts) - 1), np.diff(row_starts))
    xs = cum[:n] - cum[row_starts[:-1]][row_of]
    return row_starts, xs


class _LayoutRelay(QObject):
    done = Signal(object)


class QChipsView(QAbstractScrollArea):
    """Tokens as chips (piece over id), painted in one widget."""

    tokensActivated = Signal(int, int)
    """The user picked tokens ``[first, last)``."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.viewport().setAttribute(Qt.WidgetAttribute.WA_OpaquePaintEvent, False)
        self._a: Analysis | None = None
        self._colors: TokenColors = token_colors(self.palette())
        self._current: tuple[int, int] | None = None
        self._width_cache: np.ndarray = np.zeros(0, dtype=np.float64)
        self._cache_key: object = None
        self._widths: np.ndarray = np.zeros(0)
        self._rows: np.ndarray = np.zeros(1, dtype=np.int64)
        self._xs: np.ndarray = np.zeros(0)
        self._laid_out: tuple[object, int] | None = None  # (analysis, width) of the layout shown
        self._wanted: tuple[object, int] | None = None
        self._pool = QThreadPool(self)
        self._pool.setMaxThreadCount(1)
        self._relay = _LayoutRelay()
        self._relay.done.connect(self._on_layout)
        self._resize_timer = QTimer(self)
        self._resize_timer.setSingleShot(True)
        self._resize_timer.setInterval(60)
        self._resize_timer.timeout.connect(self.relayout)
        self._closed = False
        self._set_fonts()

    # ---- metrics -----------------------------------------------------------------

    def _set_fonts(self) -> None:
        self._piece_font = QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont)
        self._piece_font.setPointSizeF(max(self.font().pointSizeF(), 9.0))
        self._id_font = QFont(self.font())
        self._id_font.setPointSizeF(max(self.font().pointSizeF() * 0.8, 7.0))
        pf, idf = QFontMetricsF(self._piece_font), QFontMetricsF(self._id_font)
        self._pfm, self._ifm = pf, idf
        self._pad = round(pf.height() * 0.3)
        self._gap = round(pf.height() * 0.3)
        self._chip_h = pf.height() + idf.height() + self._pad * 1.5
        self._row_h = self._chip_h + self._gap
        self._margin = self._gap * 2
        self._digit_w = max(idf.horizontalAdvance(str(d)) for d in range(10))
        self._cache_key = None
        self._laid_out = None

    @property
    def row_count(self) -> int:
        return len(self._rows) - 1

    # ---- data --------------------------------------------------------------------

    def set_analysis(self, analysis: Analysis | None) -> None:
        self._a = analysis
        self._current = None
        self._laid_out = None
        if analysis is None:
            # (the window's model changed): one float per token of the old
            # model is 32 MB for 4M tokens, and its key, the old info's id,
            # may come back as the new info's
            self._cache_key = None
            self._width_cache = np.zeros(0, dtype=np.float64)
            self._rows = np.zeros(1, dtype=np.int64)
            self._xs = self._widths = np.zeros(0)
            self._update_scrollbar()
            self.viewport().update()
        elif self.isVisible():
            self.relayout()

    def _chip_widths(self, a: Analysis) -> np.ndarray:
        key = (id(a.info), self._piece_font.key())
        if self._cache_key != key:
            self._cache_key = key
            self._width_cache = np.full(len(a.model), np.nan, dtype=np.float64)
        cache = self._width_cache
        if len(a.ids) == 0:
            return np.zeros(0)
        known = cache[a.ids]
        # ids never measured before, found with a scatter (np.unique sorts
        # the whole encoding: ~50 ms for a megabyte of text)
        seen = np.zeros(len(cache), dtype=bool)
        seen[a.ids[np.isnan(known)]] = True
        missing = np.flatnonzero(seen)
        fm = self._pfm
        for tid in missing.tolist():
            label = piece_label(a.model, tid)[:MAX_CHIP_CHARS]
            cache[tid] = max(fm.horizontalAdvance(label), len(str(tid)) * self._digit_w)
        if len(missing):
            known = cache[a.ids]
        widths: np.ndarray = known + 2 * self._pad
        return widths

    def _avail(self) -> float:
        return max(self.viewport().width() - 2 * self._margin, 40.0)

    def relayout(self) -> None:
        """Wrap the chips for the current width (in a worker when big)."""
        a = self._a
        if a is None or self._closed:
            return
        width = self.viewport().width()
        key = (a, width)
        if self._laid_out == key or self._wanted == key:
            return
        widths = np.minimum(self._chip_widths(a), self._avail())
        breaks = a.tok_newline
        avail, gap = self._avail(), float(self._gap)
        self._wanted = key
        if len(widths) <= SYNC_LAYOUT_TOKENS:
            rows, xs = wrap_rows(widths, breaks, avail, gap)
            self._on_layout((key, widths, rows, xs))
            return
        relay = self._relay

        def job() -> None:  # worker thread: numpy and plain Python only
            rows, xs = wrap_rows(widths, breaks, avail, gap)
            relay.done.emit((key, widths, rows, xs))

        self._pool.start(job)

    def _on_layout(self, payload: tuple[tuple[object, int], np.ndarray, np.ndarray, np.ndarray]) -> None:
        key, widths, rows, xs = payload
        if key != self._wanted or key[0] is not self._a:
            return  # a newer analysis or width is on its way
        self._wanted = None
        self._laid_out = key
        self._widths, self._rows, self._xs = widths, rows, xs
        self._update_scrollbar()
        if self._current is not None:
            self.ensure_visible(self._current[0])
        self.viewport().update()

    def _update_scrollbar(self) -> None:
        total = self.row_count * self._row_h + 2 * self._margin
        sb = self.verticalScrollBar()
        sb.setRange(0, max(0, int(total - self.viewport().height())))
        sb.setPageStep(self.viewport().height())
        sb.setSingleStep(int(self._row_h))

    # ---- geometry ------------------------------------------------------------------

    def _row_of(self, index: int) -> int:
        return int(np.searchsorted(self._rows, index, "right")) - 1

    def chip_rect(self, index: int) -> QRectF:
        """Viewport rectangle of chip ``index`` (for the current layout)."""
        row = self._row_of(index)
        y = self._margin + row * self._row_h - self.verticalScrollBar().value()
        return QRectF(self._margin + float(self._xs[index]), y, float(self._widths[index]), self._chip_h)

    def index_at(self, pt: QPoint) -> int:
        """The chip under a viewport point, or -1."""
        if self._laid_out is None or not len(self._xs):
            return -1
        y = pt.y() + self.verticalScrollBar().value() - self._margin
        row = int(y // self._row_h)
        if not 0 <= row < self.row_count or y - row * self._row_h > self._chip_h:
            return -1
        lo, hi = int(self._rows[row]), int(self._rows[row + 1])
        x = pt.x() - self._margin
        k = lo + int(np.searchsorted(self._xs[lo:hi], x, "right")) - 1
        if lo <= k < hi and x <= self._xs[k] + self._widths[k]:
            return k
        return -1

    def ensure_visible(self, index: int) -> None:
        if self._laid_out is None or not 0 <= index < len(self._xs):
            return
        r = self.chip_rect(index)
        sb = self.verticalScrollBar()
        h = self.viewport().height()
        if r.top() < 0:
            sb.setValue(int(sb.value() + r.top() - self._margin))
        elif r.bottom() > h:
            sb.setValue(int(sb.value() + r.bottom() - h + self._margin))

    # ---- selection -------------------------------------------------------------------

    def select_tokens(self, first: int, last: int) -> None:
        self._current = (first, last) if first >= 0 else None
        if first >= 0:
            self.ensure_visible(first)
        self.viewport().update()

    @property
    def current_tokens(self) -> tuple[int, int] | None:
        return self._current

    def _activate(self, index: int) -> None:
        a = self._a
        if a is None or not 0 <= index < len(a):
            return
        first, last = a.token_range(index)
        self.select_tokens(first, last)
        self.tokensActivated.emit(first, last)

    def mousePressEvent(self, event: QMouseEvent) -> None:
        k = self.index_at(event.position().toPoint())
        if k >= 0:
            self._activate(k)
        super().mousePressEvent(event)

    def keyPressEvent(self, event: QKeyEvent) -> None:
        a = self._a
        key = event.key()
        if a is not None and len(a) and key in (Qt.Key.Key_Left, Qt.Key.Key_Right, Qt.Key.Key_Home,
                                                 Qt.Key.Key_End):
            first, last = self._current if self._current else (-1, 0)
            if key == Qt.Key.Key_Left:
                self._activate(max(first - 1, 0))
            elif key == Qt.Key.Key_Right:
                self._activate(min(last, len(a) - 1))
            elif key == Qt.Key.Key_Home:
                self._activate(0)
            else:
                self._activate(len(a) - 1)
            return
        super().keyPressEvent(event)

    # ---- painting ----------------------------------------------------------------------

    def paintEvent(self, event: QPaintEvent) -> None:
        a = self._a
        p = QPainter(self.viewport())
        if a is None or self._laid_out is None:
            p.setPen(self._colors.muted)
            msg = "No tokens yet." if a is None else "Laying out tokens…"
            p.drawText(self.viewport().rect(), Qt.AlignmentFlag.AlignCenter, msg)
            p.end()
            return
        p.setRenderHint(QPainter.RenderHint.Antialiasing)
        top = self.verticalScrollBar().value()
        first_row = max(0, int((top - self._margin) // self._row_h))
        last_row = min(self.row_count, int((top + self.viewport().height()) // self._row_h) + 1)
        c = self._colors
        cur = self._current
        pfm, ifm = self._pfm, self._ifm
        piece_h = pfm.height()
        model = a.model
        for row in range(first_row, last_row):
            y = self._margin + row * self._row_h - top
            for k in range(int(self._rows[row]), int(self._rows[row + 1])):
                style = int(a.tok_style[k])
                span = int(a.tok_span[k])
                if span >= 0 and a.encoding.groups[k] >= 0:
                    style = max(style, int(Style.BYTES))
                r = QRectF(self._margin + float(self._xs[k]), y, float(self._widths[k]), self._chip_h)
                bg = c.bg(style, a.span_tint(span) if span >= 0 else 0)
                edge = c.border[style] if style != Style.NORMAL else mix(bg, c.text, 0.25)
                selected = cur is not None and cur[0] <= k < cur[1]
                p.setPen(QPen(c.highlight if selected else edge, 2.0 if selected else 1.0))
                p.setBrush(bg)
                p.drawRoundedRect(r.adjusted(0.5, 0.5, -0.5, -0.5), 4, 4)
                inner = r.adjusted(self._pad, self._pad * 0.5, -self._pad, 0)
                p.setPen(c.text)
                p.setFont(self._piece_font)
                label = piece_label(model, int(a.ids[k]))
                label = pfm.elidedText(label, Qt.TextElideMode.ElideRight, inner.width() + 1)
                p.drawText(QRectF(inner.left(), inner.top(), inner.width(), piece_h),
                           Qt.AlignmentFlag.AlignHCenter | Qt.AlignmentFlag.AlignVCenter, label)
                p.setPen(c.muted)
                p.setFont(self._id_font)
                p.drawText(QRectF(inner.left(), inner.top() + piece_h, inner.width(), ifm.height()),
                           Qt.AlignmentFlag.AlignHCenter | Qt.AlignmentFlag.AlignVCenter, str(int(a.ids[k])))
        p.end()

    def viewportEvent(self, event: QEvent) -> bool:
        if event.type() == QEvent.Type.ToolTip and isinstance(event, QHelpEvent):
            k = self.index_at(event.pos())
            a = self._a
            if k < 0 or a is None:
                QToolTip.hideText()
                event.ignore()
            else:
                QToolTip.showText(event.globalPos(), tooltip_html(a, *a.token_range(k)), self.viewport())
            return True
        return super().viewportEvent(event)

    def resizeEvent(self, event: object) -> None:
        super().resizeEvent(event)  # type: ignore[arg-type]
        self._update_scrollbar()
        if self._a is not None:
            if len(self._a) <= SYNC_LAYOUT_TOKENS:
                self.relayout()
            else:
                self._resize_timer.start()

    def showEvent(self, event: object) -> None:
        super().showEvent(event)  # type: ignore[arg-type]
        self.relayout()

    def changeEvent(self, event: QEvent) -> None:
        super().changeEvent(event)
        if event.type() == QEvent.Type.PaletteChange:
            self._colors = token_colors(self.palette())
            self.viewport().update()
        elif event.type() == QEvent.Type.FontChange:
            self._set_fonts()
            self.relayout()

    def shutdown(self) -> None:
        self._closed = True
        self._resize_timer.stop()
        self._pool.clear()
        self._pool.waitForDone()
