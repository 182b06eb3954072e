"""The text editor that shows token boundaries in place.

Token spans are drawn like a ``QSyntaxHighlighter`` draws: as additional
formats of each block's layout, but only for the blocks in the viewport,
and only once per result (a block remembers, in its user state, which
result styled it), so a megabyte of text costs the same per keystroke as a
line. Scrolling styles the blocks that come into view. A block too long to
lay out again cheaply (a megabyte on one line) gets ``ExtraSelections`` for
its visible part instead. Boxes around the current token, markers for
tokens that cover no text (BOS/EOS) and for tokens that hold a line break
are painted over the viewport.
"""

from __future__ import annotations

import math
import os
from typing import Any, Callable, Iterator

import numpy as np

from PySide6.QtCore import QEvent, QMimeData, QPoint, QPointF, QRect, QRectF, Qt, QTimer, Signal
from PySide6.QtGui import (QColor, QDragEnterEvent, QDragMoveEvent, QDropEvent, QFont, QFontDatabase, QFontMetricsF,
                           QHelpEvent, QKeyEvent, QKeySequence, QPainter, QPaintEvent, QPen, QTextBlock, QTextCharFormat,
                           QTextBlockUserData, QTextCursor, QTextDocument, QTextLayout, QTextLine, QTextOption)
from PySide6.QtWidgets import QPlainTextDocumentLayout, QPlainTextEdit, QTextEdit, QToolTip, QWidget

from tokenprism.core import Attr

from . import qt_compat  # noqa: F401  (guards against a PySide6 bug; see there)
from ..logic.analysis import Analysis, Style
from ..logic.pieces import tooltip_html
from .qt_slicer import SlicedEdit, is_huge
from .qt_text import document_text
from .styles import TokenColors, token_colors

MAX_SELECTIONS = 6000  # a viewport never shows more spans than this
MAX_BYTE_LABELS = 400  # byte labels painted at most (a screen of CJK in a small vocabulary)
LABEL_GAP = 2  # pixels around byte labels in their band
BLOCK_MARGIN = 1024  # characters beyond the visible lines that are styled too
HUGE_BLOCK = 20_000  # longer blocks are styled with ExtraSelections (no relayout)
_serials = iter(range(1, 2**31 - 1))  # block user states; -1 is Qt's "never set"


def gguf_paths(mime: QMimeData | None) -> list[str]:
    """Local ``.gguf`` files in a drag's mime data."""
    if mime is None or not mime.hasUrls():
        return []
    paths = [u.toLocalFile() for u in mime.urls() if u.isLocalFile()]
    return [p for p in paths if p.lower().endswith(".gguf")]


def local_files(mime: QMimeData | None) -> list[str]:
    """Local files (not folders) in a drag's mime data."""
    if mime is None or not mime.hasUrls():
        return []
    return [p for p in (u.toLocalFile() for u in mime.urls() if u.isLocalFile()) if os.path.isfile(p)]


def accept_file_drop(event: QDropEvent) -> bool:
    """Accept a drag or drop of files as a copy, else as a link, never as
    the move the source may propose: a viewer only reads the file, and a
    move tells the source (a file manager) to delete its original."""
    possible = event.possibleActions()
    for action in (Qt.DropAction.CopyAction, Qt.DropAction.LinkAction):
        if possible & action:
            event.setDropAction(action)
            event.accept()
            return True
    event.ignore()
    return False


def _block_state(a: Analysis, lo: int, hi: int, bpos: int, blen: int, serial: int) -> int:
    """A block's user state for spans ``[lo, hi)`` of ``a``: equal states
    mean equal formats (spans relative to the block, styles, the palette's
    ``serial``; the tints alternate afresh on every line)."""
    # (ufuncs: np.clip's Python wrapper costs more than the work on a line's spans)
    s = np.minimum(np.maximum(a.span_start16[lo:hi], bpos), bpos + blen) - bpos
    e = np.minimum(np.maximum(a.span_end16[lo:hi], bpos), bpos + blen) - bpos
    h = hash((serial, s.tobytes(), e.tobytes(), a.span_style[lo:hi].tobytes()))
    return (h & 0x3FFFFFFF) | 0x10000  # never -1 (unset) nor a bare serial


def labelled_spans(a: Analysis, lo: int, hi: int) -> np.ndarray:
    """The spans among ``[lo, hi)`` that get a byte label: byte groups
    (a character spelled as byte tokens, or cut by byte-level pieces), not a
    normalizer's groups (ﬁ split as f + i), which have no bytes of their own."""
    ks: np.ndarray = lo + np.flatnonzero(a.span_style[lo:hi] == Style.BYTES)
    if len(ks) == 0 or a.model.config.byte_level:
        return ks
    t0, t1 = int(a.span_first[ks[0]]), int(a.span_last[ks[-1]])
    byte_tokens = (a.info.attrs[a.ids[t0:t1]] & Attr.BYTE) != 0
    out: np.ndarray = np.intersect1d(ks, a.tok_span[t0:t1][byte_tokens])
    return out


class _Band(QTextBlockUserData):
    """Where a block's lines need room for byte labels: the block-relative
    positions where labelled groups start (sorted). The line holding one
    gets a band of empty space below it (see :meth:`_DocumentLayout.blockBoundingRect`)."""

    def __init__(self, starts: list[int]) -> None:
        super().__init__()
        self.starts = starts
        self.key: tuple[int, int, float, float] = (-1, -1, 0.0, 0.0)
        self.extra = 0.0  # band under the block's last line


class _DocumentLayout(QPlainTextDocumentLayout):
    """Qt's plain-text layout, told the true extent of a restyle, with room
    under the lines that carry byte labels.

    ``QTextLayout.setFormats`` reports its block as changed with the
    block's length both removed and added, and the layout looks for the
    last changed block at ``from + removed + added``: past the block, so a
    one-block restyle clears the layouts of the next blocks too and
    repaints the whole viewport ("optimization potential", says Qt's
    source). :meth:`QTokenEditor` sets :attr:`narrow` to what really
    changed before such a report; the layout then relays out and repaints
    that one block."""

    def __init__(self, doc: QTextDocument) -> None:
        super().__init__(doc)
        self.narrow: tuple[int, int, int] | None = None
        self.band = 0.0
        """Height of the empty band below a line that holds a labelled byte group."""

    def blockBoundingRect(self, block: QTextBlock) -> QRectF:
        # Qt's plain-text layout stacks a block's lines without any spacing
        # (and ignores block formats' line heights), so byte labels would
        # have to cover text. Lines that hold a labelled group are moved
        # apart here, after Qt laid them out: every paint, cursor rectangle
        # and scroll computation asks this for the block's rectangle first.
        r = super().blockBoundingRect(block)
        data = block.userData()
        band = self.band
        if not isinstance(data, _Band) or band <= 0:
            return r
        layout = block.layout()
        n = layout.lineCount() if layout is not None else 0
        if n == 0:
            return r
        last = layout.lineAt(n - 1)
        # a relayout puts the lines back where Qt wants them: then the last
        # line moved (or nothing needs moving), or the wrap changed
        if data.key != (n, last.textStart(), last.y(), band):
            starts, j, y = data.starts, 0, 0.0
            banded = False
            for i in range(n):
                line = layout.lineAt(i)
                line.setPosition(QPointF(line.position().x(), y))
                end = line.textStart() + line.textLength()
                banded = False
                while j < len(starts) and starts[j] < end:
                    banded = True
                    j += 1
                y += line.height() + (band if banded else 0.0)
                if line.leading() < 0:
                    y += math.ceil(line.leading())
            data.extra = band if banded else 0.0
            data.key = (n, last.textStart(), last.y(), band)
            r = super().blockBoundingRect(block)
        return QRectF(r.x(), r.y(), r.width(), r.height() + data.extra)

    def documentChanged(self, from_: int, removed: int, added: int) -> None:
        n = self.narrow
        self.narrow = None
        # (only a narrower part of this very report: anything else is not what it was set for)
        if n is not None and from_ <= n[0] and n[0] + max(n[1], n[2]) <= from_ + max(removed, added):
            from_, removed, added = n
        super().documentChanged(from_, removed, added)


def _cover(narrow: tuple[int, int, int], pos: int, length: int) -> tuple[int, int, int]:
    """A :attr:`_DocumentLayout.narrow` report of an edit inside one block
    widened to cover ``[pos, pos + length)`` too (nothing removed: the
    layout relays out whole blocks anyway)."""
    start = min(narrow[0], pos)
    end = max(narrow[0] + max(narrow[1], narrow[2]), pos + length)
    return start, 0, end - start


def _x(line: QTextLine, pos: int) -> float:
    r: Any = line.cursorToX(pos)  # PySide6 returns (x, pos)
    return float(r[0] if isinstance(r, tuple) else r)


class QTokenEditor(QPlainTextEdit):
    """Plain-text editor that draws the tokens of its own text."""

    label_all_bytes = False
    """Label every visible byte group, not only the current one (see :meth:`set_label_all_bytes`)."""
    _label_h = 0

    cursorTokenChanged = Signal(int, int)
    """Token range ``[first, last)`` under the text cursor; (-1, -1) for none."""
    modelFilesDropped = Signal(list)
    textFilesDropped = Signal(list)
    """Other local files dropped on the editor (opened as text)."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        doc = QTextDocument(self)
        self._layout = _DocumentLayout(doc)
        doc.setDocumentLayout(self._layout)
        self.setDocument(doc)
        self._end_x: dict[tuple[str, float, int], float] = {}
        font = QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont)
        font.setPointSizeF(max(font.pointSizeF(), 11.0))
        self.setFont(font)
        self._update_band()
        self.setWordWrapMode(QTextOption.WrapMode.WrapAtWordBoundaryOrAnywhere)
        self.setTabStopDistance(self.fontMetrics().horizontalAdvance(" ") * 4)
        self.setPlaceholderText("Type or paste text here…")
        self.setAcceptDrops(True)
        self._analysis: Analysis | None = None
        self._stale = True
        self._current: tuple[int, int] | None = None
        self._suppress_cursor = False
        self._colors: TokenColors = token_colors(self.palette())
        self._formats: dict[tuple[int, int], QTextCharFormat] = {}
        self._build_formats()
        self._serial = next(_serials)
        self._has_extra = False
        self._restyled: list[QRect] = []
        self._heights: dict[tuple[int, int], float] = {}  # (block, block count) → height before an edit
        self._stale_rect = QRect()  # painted while stale (no overlay): the next result repaints it
        self._stale_scrolled = False  # ... and scrolled since: it repaints all
        self._box_rect: QRect | None = None  # where the last paint drew the token box
        self.shown_spans: tuple[int, int] = (0, 0)
        """Span index range styled by the last pass (for tests and benchmarks)."""
        self.newline_marks: list[tuple[int, int]] = []
        """(position, span) of the line breaks drawn as token parts by the last paint."""
        self.byte_labels: list[tuple[int, QRectF, str]] = []
        """(span, rectangle, text) of the byte labels drawn by the last paint."""
        self._refresh = QTimer(self)
        self._refresh.setSingleShot(True)
        self._refresh.setInterval(0)
        self._refresh.timeout.connect(self.apply_visible)
        for bar in (self.verticalScrollBar(), self.horizontalScrollBar()):
            bar.valueChanged.connect(self._refresh.start)
            bar.valueChanged.connect(self._on_scrolled)
        self.document().contentsChange.connect(self._on_contents_change)
        self.cursorPositionChanged.connect(self._on_cursor_moved)
        self.slicer = SlicedEdit(self)
        """Makes huge edits a slice at a time (pastes, drops, opened files, huge selections replaced)."""

    # ---- text -------------------------------------------------------------------

    def token_text(self) -> str:
        """The text exactly as it is tokenized: the document's raw text (no
        space substituted for NBSP as ``toPlainText`` does) with paragraph
        separators as ``\\n``. Its UTF-16 offsets equal document positions."""
        return document_text(self.document())

    def set_label_all_bytes(self, on: bool) -> None:
        """Label every visible byte group with its bytes (off: only the
        current token's group, so dense text stays readable)."""
        self.label_all_bytes = on
        self._update_band()
        self.viewport().update()

    def set_show_whitespace(self, on: bool) -> None:
        opt = self.document().defaultTextOption()
        flags = opt.flags()
        ws = QTextOption.Flag.ShowTabsAndSpaces | QTextOption.Flag.ShowLineAndParagraphSeparators
        opt.setFlags(flags | ws if on else flags & ~ws)
        self.document().setDefaultTextOption(opt)
        self._end_x.clear()
        self.viewport().update()

    @property
    def analysis(self) -> Analysis | None:
        return self._analysis

    @property
    def stale(self) -> bool:
        """True when the text changed after the shown analysis was made."""
        return self._stale

    # ---- analysis ---------------------------------------------------------------

    def set_analysis(self, analysis: Analysis | None) -> None:
        """Show ``analysis``, which must be of the editor's current text."""
        prev = self._analysis
        self._analysis = analysis
        # the next result of the same model after an edit repaints only the
        # blocks it restyles, what was painted without the overlay meanwhile
        # (the edited line, usually) and the token box: a full repaint of
        # token formats is what a keystroke costs most
        partial = (prev is not None and analysis is not None and prev.info is analysis.info
                   and not self._stale_scrolled)
        stale_rect = self._stale_rect
        self._stale_rect = QRect()
        self._stale_scrolled = False
        self._stale = analysis is None
        self._current = None
        self._restyled = []
        self.apply_visible()
        if partial:
            vp = self.viewport()
            for r in self._restyled:
                vp.update(r)
            if not stale_rect.isEmpty():
                vp.update(stale_rect)
            self._update_box()
        else:
            self.viewport().update()

    def _on_contents_change(self, pos: int, removed: int, added: int) -> None:
        if removed or added:
            self._stale = True
            self._current = None
            doc = self.document()
            edited = doc.findBlock(pos)
            if edited.isValid():  # its height before the relayout (see _repaint_moved)
                self._heights.setdefault((edited.blockNumber(), doc.blockCount()),
                                         self.blockBoundingRect(edited).height())
            if self._shift_formats(pos, removed, added):
                # (the formats' report would reach past the block: see _DocumentLayout)
                self._layout.narrow = (pos, removed, added)
            # the edited blocks' formats no longer match what their state says
            block = edited
            end = doc.findBlock(pos + added)
            if end.blockNumber() - block.blockNumber() > 64:
                self._serial = next(_serials)  # a big paste: every block's state is void
                return
            while block.isValid():
                block.setUserState(-1)
                if block == end:
                    break
                block = block.next()

    def _repaint_moved(self) -> None:
        """Repaint everything below an edited block whose height changed.

        Qt repaints only the block itself when an edit inside it leaves its
        line count alone, even when the line got taller (a fallback font
        for 日本 has a taller line): the lines below move down, but the
        screen keeps them where they were until something repaints them."""
        doc = self.document()
        count = doc.blockCount()
        top: float | None = None
        for (number, was_count), height in self._heights.items():
            block = doc.findBlockByNumber(number)
            if was_count == count and block.isValid() and self.blockBoundingRect(block).height() != height:
                y = self.blockBoundingGeometry(block).translated(self.contentOffset()).top()
                top = y if top is None else min(top, y)
        self._heights.clear()
        if top is not None:
            vp = self.viewport()
            vp.update(QRect(0, int(top), vp.width(), vp.height()))

    def _on_scrolled(self, _value: int) -> None:
        if not self._stale_rect.isEmpty():
            self._stale_scrolled = True  # what was painted stale moved with the text

    def _shift_formats(self, pos: int, removed: int, added: int) -> bool:
        """Move the spans of an edited block along with its text, so they stay
        in place until the new result restyles it (a keystroke in a long
        text may take a while to tokenize). False if it left them."""
        block = self.document().findBlock(pos)
        layout = block.layout()
        bpos = block.position()
        if layout is None or not block.isValid() or pos + added > bpos + block.length() - 1:
            return False  # the edit made or joined lines: wait for the new result
        at, delta = pos - bpos, added - removed
        ranges = []
        for r in layout.formats():
            start, end = r.start, r.start + r.length
            if end <= at:
                pass  # before the edit
            elif start >= at + removed:
                start, end = start + delta, end + delta  # after the edit
            else:  # the edit is inside this span: it grows or shrinks with it
                end = max(start + 1, end + delta)
            if end > start:
                nr = QTextLayout.FormatRange()
                nr.start, nr.length, nr.format = start, end - start, r.format
                ranges.append(nr)
        layout.setFormats(ranges)
        return True

    def _build_formats(self) -> None:
        self._formats = {(int(s), p): self._colors.char_format(int(s), p) for s in Style for p in (0, 1)}

    def visible_range(self) -> tuple[int, int]:
        """Document positions ``[begin, end)`` of the visible blocks (at most
        ``BLOCK_MARGIN`` characters beyond the visible lines)."""
        vp = self.viewport().rect()
        top = self.cursorForPosition(QPoint(0, 0)).position()
        bottom = self._bottom_position(vp.height() - 1)
        doc = self.document()
        tb = doc.findBlock(top)
        bb = doc.findBlock(bottom)
        begin = max(tb.position(), top - BLOCK_MARGIN)
        end = min(bb.position() + bb.length(), bottom + BLOCK_MARGIN)
        return begin, max(begin, end)

    def _bottom_position(self, y: int) -> int:
        """The document position at the end of the line at viewport height
        ``y`` (or of the last line above it): about what ``cursorForPosition``
        gives at the viewport's right edge, found with one walk of
        :meth:`_geometries` (Qt's hit test asks the layout for every block
        from the top, from C++)."""
        pos = 0
        for block, geo in self._geometries(self.firstVisibleBlock()):
            layout = block.layout()
            n = layout.lineCount() if layout is not None else 0
            if n and geo.top() + layout.lineAt(0).y() <= y:
                # the last line starting at or above y: a binary search, as
                # a huge block has thousands of lines
                lo, hi = 0, n - 1
                while lo < hi:
                    mid = (lo + hi + 1) // 2
                    if geo.top() + layout.lineAt(mid).y() <= y:
                        lo = mid
                    else:
                        hi = mid - 1
                line = layout.lineAt(lo)
                pos = block.position() + line.textStart() + line.textLength()
            if geo.bottom() > y or n and geo.top() + layout.lineAt(0).y() > y:
                break
        return pos

    def apply_visible(self) -> None:
        """Style the visible blocks that the current result has not styled yet."""
        a = self._analysis
        if a is not None and self._stale:
            return  # positions no longer match; the next result restyles
        begin, end = self.visible_range()
        doc = self.document()
        block = doc.findBlock(begin)
        serial = self._serial & 0xFFFF
        extra: list[QTextEdit.ExtraSelection] = []
        lo_all, hi_all = -1, -1
        while block.isValid() and block.position() < end:
            bpos, blen = block.position(), block.length() - 1
            if blen > HUGE_BLOCK:
                if a is not None:
                    lo, hi = a.spans_in(max(bpos, begin), min(bpos + blen, end))
                    extra.extend(self._selections(a, lo, min(hi, lo + MAX_SELECTIONS), a.line_first_span(bpos)))
                    lo_all, hi_all = (lo if lo_all < 0 else lo_all), hi
                # No label bands in a huge block: moving its ~15 000 lines
                # apart again after every keystroke costs ~80 ms. Its byte
                # groups go unlabelled (their tooltips tell the bytes); the
                # labels are drawn only where a band is, never over text.
                data = block.userData()
                if isinstance(data, _Band) and data.starts:
                    block.setUserData(_Band([]))  # its lines go back together (no relayout here)
            else:
                # a block whose spans (relative to it) did not change keeps
                # its formats: no relayout, no repaint, after a keystroke
                # elsewhere; its state is a hash of what styled it
                if a is not None:
                    lo, hi = a.spans_in(bpos, bpos + blen)
                    lo_all, hi_all = (lo if lo_all < 0 else lo_all), hi
                    state = _block_state(a, lo, hi, bpos, blen, serial)
                else:
                    state = serial
                if block.userState() != state:
                    ranges = self._ranges(a, lo, hi, bpos, blen) if a is not None else []
                    if a is not None:
                        self._set_band(block, a, lo, hi)
                    elif block.userData() is not None:
                        block.setUserData(None)  # type: ignore[arg-type]
                    layout = block.layout()
                    if layout is not None:
                        layout.setFormats(ranges)
                        outer = self._layout.narrow
                        self._layout.narrow = (bpos, 0, blen + 1)  # this block only (see _DocumentLayout)
                        doc.markContentsDirty(bpos, blen + 1)  # repaint with the new formats
                        # Inside an edit (a result made inline) Qt reports this with the edit,
                        # once, after us: its narrowing must then cover the edit and every
                        # block restyled (dropped, the report reached past the block and
                        # every keystroke repainted the whole viewport).
                        self._layout.narrow = None if outer is None else _cover(outer, bpos, blen + 1)
                    block.setUserState(state)
                    # its area, and the line end above (a token may hold that break)
                    prev_block = block.previous()
                    top = prev_block if prev_block.isValid() else block
                    geos = self._geometries(top)
                    top_geo = next(geos)[1]
                    geo = top_geo if top == block else next(geos)[1]
                    # (and the top of the next line, where a byte label may hang)
                    self._restyled.append(geo.united(top_geo).toAlignedRect().adjusted(
                        -2, -2, 2, 2 + self.fontMetrics().height() // 2))
            block = block.next()
        if extra or self._has_extra:
            self.setExtraSelections(extra)
            self._has_extra = bool(extra)
        self.shown_spans = (max(lo_all, 0), max(hi_all, 0))

    def _set_band(self, block: QTextBlock, a: Analysis, lo: int, hi: int) -> None:
        """Record which lines of ``block`` (spans ``[lo, hi)``) need room
        below them for a byte label (before the block is laid out again).
        Every line with a byte group gets it, labelled now or not, so that
        moving the cursor never moves the text."""
        bpos, blen = block.position(), block.length() - 1
        ks = labelled_spans(a, lo, hi)
        starts = a.span_start16[ks]
        # (a group that starts on an earlier line is labelled there)
        starts = starts[(starts >= bpos) & (starts < bpos + blen)] - bpos
        old = block.userData()
        if not len(starts) and not isinstance(old, _Band):
            return
        block.setUserData(_Band(starts.tolist()))

    def _ranges(self, a: Analysis, lo: int, hi: int, bpos: int, blen: int) -> list[QTextLayout.FormatRange]:
        """Formats of spans ``[lo, hi)`` clipped to one block's text."""
        formats = self._formats
        out: list[QTextLayout.FormatRange] = []
        bend = bpos + blen
        for k, s, e, st in zip(range(lo, hi), a.span_start16[lo:hi].tolist(),
                               a.span_end16[lo:hi].tolist(), a.span_style[lo:hi].tolist()):
            s, e = max(s, bpos), min(e, bend)
            if e <= s:
                continue  # only the line break: painted by paintEvent
            r = QTextLayout.FormatRange()
            r.start = s - bpos
            r.length = e - s
            r.format = formats[(st, (k - lo) & 1)]  # (lo: the line's first span, Analysis.line_first_span)
            out.append(r)
        return out

    def _selections(self, a: Analysis, lo: int, hi: int, first: int) -> list[QTextEdit.ExtraSelection]:
        """Spans ``[lo, hi)`` of a huge block whose first span is ``first``,
        as extra selections (formats on a huge block's layout cost too much)."""
        doc = self.document()
        formats = self._formats
        keep = QTextCursor.MoveMode.KeepAnchor
        sels: list[QTextEdit.ExtraSelection] = []
        for k, s, e, st in zip(range(lo, hi), a.span_start16[lo:hi].tolist(),
                               a.span_end16[lo:hi].tolist(), a.span_style[lo:hi].tolist()):
            sel = QTextEdit.ExtraSelection()
            c = QTextCursor(doc)
            c.setPosition(s)
            c.setPosition(e, keep)
            sel.cursor = c
            sel.format = formats[(st, (k - first) & 1)]
            sels.append(sel)
        return sels

    def styled_spans(self) -> list[tuple[int, int, QTextCharFormat]]:
        """(start, end, format) of every span drawn in the visible blocks, read
        back from Qt (block formats and extra selections), for tests."""
        out: list[tuple[int, int, QTextCharFormat]] = []
        begin, end = self.visible_range()
        block = self.document().findBlock(begin)
        while block.isValid() and block.position() < end:
            layout = block.layout()
            if layout is not None:
                for r in layout.formats():
                    out.append((block.position() + r.start, block.position() + r.start + r.length,
                                QTextCharFormat(r.format)))
            block = block.next()
        for sel in self.extraSelections():
            out.append((sel.cursor.selectionStart(), sel.cursor.selectionEnd(), QTextCharFormat(sel.format)))
        return sorted(out, key=lambda t: t[0])

    def resizeEvent(self, event: object) -> None:
        super().resizeEvent(event)  # type: ignore[arg-type]
        self._end_x.clear()
        self._refresh.start()

    def changeEvent(self, event: QEvent) -> None:
        super().changeEvent(event)
        if event.type() == QEvent.Type.FontChange:
            self._end_x.clear()
            self._update_band()
        if event.type() == QEvent.Type.PaletteChange:
            self._colors = token_colors(self.palette())
            self._build_formats()
            self._serial = next(_serials)
            self.apply_visible()

    # ---- current token ------------------------------------------------------------

    def _on_cursor_moved(self) -> None:
        if self._suppress_cursor:
            return
        self.emit_cursor_token()

    def emit_cursor_token(self) -> None:
        """Report the token under the text cursor (and box it)."""
        a = self._analysis
        if a is None or self._stale:
            return
        pos = self.textCursor().position()
        k = a.span_at(pos)
        if k < 0 and pos > 0:
            k = a.span_at(pos - 1)
        if k < 0:
            self._current = None
            self._update_box()
            self.cursorTokenChanged.emit(-1, -1)
            return
        first, last = int(a.span_first[k]), int(a.span_last[k])
        self._current = (first, last)
        self._update_box()
        self.cursorTokenChanged.emit(first, last)

    def _box_rects(self) -> list[QRectF]:
        """Where the box around the current token goes (viewport coordinates)."""
        a = self._analysis
        if self._current is None or a is None or self._stale:
            return []
        s, e = a.range16(*self._current)
        if e > s:
            return self.range_rects(s, e)
        pt = self._marker_pos(s)
        return [] if pt is None else [QRectF(pt.x() - 4, pt.y(), 8, self.fontMetrics().height())]

    def _update_box(self) -> None:
        """Repaint where the token box was and where it goes now."""
        vp = self.viewport()
        if self._box_rect is not None:
            vp.update(self._box_rect)
        for _, r, _ in self.byte_labels:  # the current group's label goes with the box
            vp.update(r.toAlignedRect().adjusted(-2, -2, 2, 2))
        extra = self.fontMetrics().height()
        for r in self._box_rects():  # (and where the group's label will go, in the band below)
            vp.update(r.toAlignedRect().adjusted(-3, -3, 3 + extra * 9, 3 + int(self._layout.band)))

    def select_tokens(self, first: int, last: int) -> None:
        """Select the text of tokens ``[first, last)`` without reporting the
        cursor move back (the caller already knows the token)."""
        a = self._analysis
        if a is None or self._stale or not 0 <= first < last <= len(a):
            return
        s, e = a.range16(first, last)
        c = self.textCursor()
        self._suppress_cursor = True
        try:
            c.setPosition(s)
            c.setPosition(e, QTextCursor.MoveMode.KeepAnchor)
            self.setTextCursor(c)
            self.ensureCursorVisible()
        finally:
            self._suppress_cursor = False
        self._current = (first, last)
        self.viewport().update()

    def box_tokens(self, first: int, last: int) -> None:
        """Box tokens ``[first, last)`` without moving the cursor (a token
        hovered in another view); ``(-1, -1)`` boxes the cursor's token again."""
        a = self._analysis
        if a is None or self._stale:
            return
        if first < 0:
            self.emit_cursor_token()
            return
        if not 0 <= first < last <= len(a):
            return
        self._current = (first, last)
        self._update_box()
        boxes = self._box_rects()
        if boxes and not self.viewport().rect().intersects(boxes[0].toAlignedRect()):
            s, _ = a.range16(first, last)  # scroll it into view, cursor kept
            c = QTextCursor(self.document())
            c.setPosition(s)
            sb = self.verticalScrollBar()
            sb.setValue(sb.value() + self.cursorRect(c).top() - self.viewport().height() // 3)

    @property
    def current_tokens(self) -> tuple[int, int] | None:
        return self._current

    # ---- painting -------------------------------------------------------------------

    def range_rects(self, s: int, e: int) -> list[QRectF]:
        """Viewport rectangles covering document positions ``[s, e)``, one per line."""
        height = self.viewport().height()
        rects: list[QRectF] = []
        for block, geo in self._geometries(self.document().findBlock(s)):
            if block.position() >= e or geo.top() > height:
                break
            bpos = block.position()
            a, b = max(s, bpos) - bpos, min(e, bpos + block.length()) - bpos
            layout = block.layout()
            if geo.bottom() >= 0 and layout is not None:
                for li in range(layout.lineCount()):
                    line = layout.lineAt(li)
                    ls, le = line.textStart(), line.textStart() + line.textLength()
                    lo, hi = max(a, ls), min(b, le)
                    ends_line = b > le and li == layout.lineCount() - 1  # holds the line break
                    if lo >= hi and not (ends_line and lo <= le):
                        continue
                    x1 = _x(line, lo)
                    x2 = _x(line, hi) if not ends_line else max(_x(line, le), x1) + line.height() * 0.4
                    rects.append(QRectF(geo.left() + x1, geo.top() + line.y(), max(x2 - x1, 2.0),
                                        line.height()))
        return rects

    def _geometries(self, first: QTextBlock) -> Iterator[tuple[QTextBlock, QRectF]]:
        """``first`` and the blocks after it, each with its rectangle in the
        viewport (what ``blockBoundingGeometry`` gives, translated by the
        content offset): ``first``'s from Qt, each next one right below
        the one before. Qt finds every block's rectangle by walking down
        from the top visible block, asking the layout for each block on
        the way, and every such question is a call from C++ into
        :meth:`_DocumentLayout.blockBoundingRect`: the walks of this
        editor's own geometry queries were ~180 of ~390 such calls a
        keystroke, ~1 ms."""
        if not first.isValid():
            return
        layout = self._layout
        offset = self.contentOffset()
        # from the top visible block down to ``first`` (Qt's own walk, here
        # in Python), unless ``first`` is above it, or far below the
        # viewport, where Qt's walk stops too
        target = first.blockNumber()
        block = self.firstVisibleBlock()
        if not block.isValid() or block.blockNumber() > target:
            block = first
        geo = self.blockBoundingGeometry(block).translated(offset)
        limit = 2 * self.viewport().height()
        while block.blockNumber() < target:
            if geo.top() > limit:
                block = first
                geo = self.blockBoundingGeometry(first).translated(offset)
                break
            block = block.next()
            r = layout.blockBoundingRect(block)
            geo = QRectF(geo.left(), geo.top() + geo.height(), r.width(), r.height())
        while True:
            yield block, geo
            block = block.next()
            if not block.isValid():
                return
            r = layout.blockBoundingRect(block)
            geo = QRectF(geo.left(), geo.top() + geo.height(), r.width(), r.height())

    def _marker_pos(self, pos: int) -> QPointF | None:
        block = self.document().findBlock(pos)
        layout = block.layout()
        if not block.isValid() or layout is None:
            return None
        line = layout.lineForTextPosition(pos - block.position())
        if not line.isValid():
            return None
        geo = self.blockBoundingGeometry(block).translated(self.contentOffset())
        return QPointF(geo.left() + _x(line, pos - block.position()), geo.top() + line.y())

    def _line_end_x(self, block: QTextBlock, line: QTextLine) -> float:
        """x of the end of a block's text (``cursorToX`` is slow enough to
        show in every repaint, and the answer depends only on the text and
        the layout's width, font and options)."""
        key = (block.text(), line.width(), line.textStart())
        x = self._end_x.get(key)
        if x is None:
            if len(self._end_x) > 4096:
                self._end_x.clear()
            x = self._end_x[key] = _x(line, block.length() - 1)
        return x

    def _paint_newlines(self, p: QPainter, a: Analysis, area: QRect) -> None:
        """A block's layout cannot draw a format on its line break, so the
        part of a token that is a line break is painted here, at the end of
        the block's last line (of the blocks in ``area``: after a keystroke
        Qt repaints only the restyled lines)."""
        marks: list[tuple[int, int]] = []
        # (the block at the area's top: walking there from the first visible
        # block costs a geometry query per line)
        block = self.cursorForPosition(QPoint(0, max(0, area.top()))).block()
        if not block.isValid():
            block = self.firstVisibleBlock()
        width = self.fontMetrics().horizontalAdvance(" ")
        colors = self._colors
        for block, geo in self._geometries(block):
            if geo.top() > area.bottom():
                break
            if geo.bottom() < area.top():
                continue
            layout = block.layout()
            pos = block.position() + block.length() - 1
            k = a.span_at(pos) if block.next().isValid() else -1
            if k >= 0 and layout is not None and layout.lineCount():
                line = layout.lineAt(layout.lineCount() - 1)
                x = geo.left() + self._line_end_x(block, line)
                style = int(a.span_style[k])
                fill = QColor(colors.bg(style, k - a.line_first_span(block.position())))
                fill.setAlphaF(0.8)  # lets a whitespace mark (¶) show through
                p.setPen(QPen(colors.border[style], 1.0) if style != Style.NORMAL else Qt.PenStyle.NoPen)
                p.setBrush(fill)
                p.drawRect(QRectF(x + 0.5, geo.top() + line.y() + 0.5, width - 1, line.height() - 1))
                marks.append((pos, k))
        self.newline_marks = marks

    def _label_font(self) -> QFont:
        font = QFont(self.font())
        font.setPointSizeF(max(6.0, self.font().pointSizeF() * 0.6))
        return font

    def _update_band(self) -> None:
        """Size the room under lines with byte groups: one row of labels
        (the current group's), two when every group is labelled (neighbours
        then alternate rows, as a CJK word in a small vocabulary needs)."""
        self._label_h = math.ceil(QFontMetricsF(self._label_font()).height())
        rows = 2 if self.label_all_bytes else 1
        band = float(rows * (self._label_h + LABEL_GAP) + LABEL_GAP)
        if band != self._layout.band:
            self._layout.band = band
            # the lines move apart or together: scroll range and paint follow
            self._layout.documentSizeChanged.emit(self._layout.documentSize())
            self.viewport().update()

    def _band_below(self, pos: int) -> bool:
        """Whether the line holding document position ``pos`` has the
        label band below it (labels are drawn only there, never over text)."""
        block = self.document().findBlock(pos)
        self.blockBoundingRect(block)  # (lays the lines out with their bands)
        layout = block.layout()
        if layout is None:
            return False
        line = layout.lineForTextPosition(pos - block.position())
        if not line.isValid():
            return False
        bottom = line.y() + line.height()
        n = line.lineNumber()
        room = (layout.lineAt(n + 1).y() if n + 1 < layout.lineCount()
                else self.blockBoundingRect(block).height()) - bottom
        return room >= self._layout.band - 0.5

    def _paint_byte_labels(self, p: QPainter, a: Analysis, begin: int, end: int) -> None:
        """Label byte groups (a character spelled as byte tokens, or cut by
        byte-level pieces) with their bytes, ``F0 9F 99 82``: a small tag in
        the band the layout leaves under the group's first line (see
        :class:`_DocumentLayout`), so the group reads as one thing, its bytes
        need no tooltip and no tag hides any text. Only the current token's
        group is labelled unless ``label_all_bytes`` asks for every visible
        group; tags that would touch go to the band's second row, or queue
        up to the right of it."""
        labels: list[tuple[int, QRectF, str]] = []
        if self.label_all_bytes:
            lo, hi = a.spans_in(begin, end)
            hi = min(hi, lo + MAX_SELECTIONS)
        elif self._current is not None and self._current[1] > self._current[0]:
            k = a.span_of_token(self._current[0])
            lo, hi = (k, k + 1) if k >= 0 else (0, 0)
        else:
            lo = hi = 0
        ks = labelled_spans(a, lo, hi)
        if len(ks):
            font = self._label_font()
            fm = QFontMetricsF(font)
            p.setFont(font)
            model = a.model
            ids = a.encoding.token_ids
            height = self.viewport().height()
            colors = self._colors
            doc = self.document()
            rows = 2 if self.label_all_bytes else 1
            row_h = self._label_h + LABEL_GAP
            ends: dict[int, list[float]] = {}  # a band's top → right end of each of its rows
            for k in ks[:MAX_BYTE_LABELS].tolist():
                s16, e16 = int(a.span_start16[k]), int(a.span_end16[k])
                if e16 - s16 == 1 and doc.characterAt(s16) == "\u2029":
                    continue  # a line break: it has its own mark at the line's end
                rects = self.range_rects(s16, e16)
                if not rects or rects[0].top() > height or rects[0].bottom() < 0 or not self._band_below(s16):
                    continue
                first, last = int(a.span_first[k]), int(a.span_last[k])
                data = b"".join(model.token_bytes(t) for t in ids[first:last])
                text = " ".join(f"{b:02X}" for b in data[:8]) + (" …" if len(data) > 8 else "")
                r = rects[0]
                w = fm.horizontalAdvance(text) + 4
                row_ends = ends.setdefault(round(r.bottom()), [-math.inf] * rows)
                x = r.left()
                row = next((i for i, e in enumerate(row_ends) if e + LABEL_GAP <= x), -1)
                if row < 0:  # no row free under the group: after the row that ends first
                    row = min(range(rows), key=row_ends.__getitem__)
                    x = row_ends[row] + LABEL_GAP
                box = QRectF(x, r.bottom() + LABEL_GAP + row * row_h, w, self._label_h)
                row_ends[row] = box.right()
                fill = QColor(colors.border[Style.BYTES])
                fill.setAlphaF(0.88)
                p.setPen(Qt.PenStyle.NoPen)
                p.setBrush(fill)
                p.drawRoundedRect(box, 2, 2)
                p.setPen(QColor(colors.base))
                p.drawText(box, int(Qt.AlignmentFlag.AlignCenter), text)
                labels.append((k, box, text))
        self.byte_labels = labels

    def paintEvent(self, event: QPaintEvent) -> None:
        super().paintEvent(event)
        if self._heights:
            self._repaint_moved()
        a = self._analysis
        if a is None or self._stale:
            self._stale_rect = self._stale_rect.united(event.rect())
            return
        p = QPainter(self.viewport())
        p.setRenderHint(QPainter.RenderHint.Antialiasing)
        line_h = self.fontMetrics().height()
        self._paint_newlines(p, a, event.rect())
        begin, end = self.visible_range()
        self._paint_byte_labels(p, a, begin, end)
        lo, hi = a.empties_in(begin, end)
        p.setPen(Qt.PenStyle.NoPen)
        for k in range(lo, min(hi, lo + 200)):
            pt = self._marker_pos(int(a.empty_pos16[k]))
            if pt is not None:
                p.setBrush(self._colors.border[int(a.tok_style[int(a.empty_tokens[k])])])
                p.drawRoundedRect(QRectF(pt.x() - 1.5, pt.y() + 1, 3, line_h - 2), 1.5, 1.5)
        self._box_rect = None
        if self._current is not None:
            first, last = self._current
            s, e = a.range16(first, last)
            pen = QPen(self._colors.highlight, 1.6)
            p.setPen(pen)
            p.setBrush(Qt.BrushStyle.NoBrush)
            if e > s:
                box = QRect()
                for r in self.range_rects(s, e):
                    p.drawRoundedRect(r.adjusted(-0.5, 0.5, 0.5, -0.5), 3, 3)
                    box = box.united(r.toAlignedRect().adjusted(-3, -3, 3, 3))
                self._box_rect = box
            else:
                pt = self._marker_pos(s)
                if pt is not None:
                    p.drawRoundedRect(QRectF(pt.x() - 3.5, pt.y(), 7, line_h), 2, 2)
                    self._box_rect = QRect(int(pt.x()) - 6, int(pt.y()) - 2, 12, line_h + 4)
        p.end()

    # ---- tooltips ---------------------------------------------------------------------

    def tokens_at_point(self, pt: QPoint) -> tuple[int, int] | None:
        """Token range under a viewport point, or ``None``."""
        a = self._analysis
        if a is None or self._stale:
            return None
        c = self.cursorForPosition(pt)
        pos = c.position()
        if self.cursorRect(c).center().x() > pt.x() and pos > 0:
            pos -= 1  # the point is on the character before the cursor position
        lo, hi = a.empties_in(pos - 1, pos + 1)
        for k in range(lo, hi):
            mp = self._marker_pos(int(a.empty_pos16[k]))
            if mp is not None and abs(mp.x() - pt.x()) <= 4 and mp.y() <= pt.y():
                i = int(a.empty_tokens[k])
                return i, i + 1
        k = a.span_at(pos)
        if k < 0:
            return None
        r = self.cursorRect(c)
        if abs(r.center().y() - pt.y()) > r.height():  # below the last line
            return None
        return int(a.span_first[k]), int(a.span_last[k])

    def viewportEvent(self, event: QEvent) -> bool:
        if event.type() == QEvent.Type.ToolTip and isinstance(event, QHelpEvent):
            rng = self.tokens_at_point(event.pos())
            a = self._analysis
            if rng is None or a is None:
                QToolTip.hideText()
                event.ignore()
            else:
                QToolTip.showText(event.globalPos(), tooltip_html(a, *rng), self.viewport())
            return True
        return super().viewportEvent(event)

    def replace_sliced(self, cursor: QTextCursor, text: str, what: str = "Pasting",
                       on_done: Callable[[], None] | None = None) -> None:
        """Replace ``cursor``'s selection with ``text`` as one edit, over
        many event-loop turns (see :mod:`.qt_slicer`)."""
        # positions move before Qt reports the edit: nothing styles or
        # paints tokens of the old result until the new one
        self._stale = True
        self._current = None
        self.slicer.replace(cursor, text, what, on_done)

    def insertFromMimeData(self, source: QMimeData) -> None:
        text = source.text() if source.hasText() else ""
        cursor = self.textCursor()
        if is_huge(cursor, text):
            self.replace_sliced(cursor, text)
        else:
            super().insertFromMimeData(source)

    def keyPressEvent(self, event: QKeyEvent) -> None:
        # a huge selection deleted, cut or typed over goes in slices too
        cursor = self.textCursor()
        if not self.isReadOnly() and is_huge(cursor, ""):
            typed: str | None = event.text()
            if event.matches(QKeySequence.StandardKey.Cut):
                self.copy()
                typed = ""
            elif event.key() in (Qt.Key.Key_Delete, Qt.Key.Key_Backspace) and not event.modifiers():
                typed = ""
            elif not typed or not typed.isprintable() and typed not in "\t\r":
                typed = None
            if typed is not None:
                self.replace_sliced(cursor, "\n" if typed == "\r" else typed, "Deleting" if not typed else "Replacing")
                event.accept()
                return
        super().keyPressEvent(event)

    # ---- dropping model files ------------------------------------------------------------

    def dragEnterEvent(self, event: QDragEnterEvent) -> None:
        if gguf_paths(event.mimeData()) or local_files(event.mimeData()):
            accept_file_drop(event)
        else:
            super().dragEnterEvent(event)

    def dragMoveEvent(self, event: QDragMoveEvent) -> None:
        if gguf_paths(event.mimeData()) or local_files(event.mimeData()):
            accept_file_drop(event)
        else:
            super().dragMoveEvent(event)

    def dropEvent(self, event: QDropEvent) -> None:
        paths = gguf_paths(event.mimeData())
        if paths:
            if accept_file_drop(event):
                self.modelFilesDropped.emit([os.path.abspath(p) for p in paths])
        elif local_files(event.mimeData()):
            if accept_file_drop(event):
                self.textFilesDropped.emit([os.path.abspath(p) for p in local_files(event.mimeData())])
        else:
            super().dropEvent(event)
