"""The token table: one row per token, read straight from the encoding.

:class:`QTokenTableModel` keeps no rows of its own; ``data()`` looks a cell
up in the :class:`~tokenprism.core.Encoding`'s tuples when the view asks,
so showing 250 000 tokens costs as much as showing 40 (only the visible
rows are ever asked for).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from PySide6.QtCore import (QAbstractTableModel, QEvent, QItemSelection, QItemSelectionModel,
                            QModelIndex, QPersistentModelIndex, QRect, Qt, Signal)
from PySide6.QtGui import (QAccessible, QContextMenuEvent, QFont, QFontDatabase, QFontMetrics, QGuiApplication,
                           QKeyEvent, QKeySequence, QResizeEvent)
from PySide6.QtWidgets import QAbstractItemView, QHeaderView, QMenu, QStyle, QTableView, QWidget

import numpy as np

from . import qt_compat  # noqa: F401  (guards against a PySide6 bug; see there)
from ..logic.analysis import Analysis
from ..logic.pieces import format_ids, format_score, piece_cell, piece_label, tooltip_html, type_label, type_name
from .qt_columns import ALIGN_LEFT as _LEFT, ALIGN_RIGHT as _RIGHT, column_header
from .styles import TokenColors, token_colors

COLUMNS = ("#", "ID", "Piece", "Score", "Type", "Chars", "Bytes", "Rank", "Word")
COLUMN_HELP = (
    "Position of the token in the encoding",
    "Token id in the vocabulary",
    "The token's piece (▁ is a space in SentencePiece vocabularies; ␣ ↵ ⇥ show spaces, "
    "line breaks and tabs); byte tokens also show the character their group spells",
    "The token's score in the vocabulary",
    "Token type (normal, byte, control, user-defined, unknown, unused)",
    "Character span [start, end) in the text",
    "UTF-8 byte span [start, end) in the text",
    "Rank of the BPE merge that forms the token (lower merges first; empty for byte and special tokens)",
    "Which word of the text the token belongs to (WordPiece splits words first)",
)
COL_INDEX, COL_ID, COL_PIECE, COL_SCORE, COL_TYPE, COL_CHARS, COL_BYTES, COL_RANK, COL_WORD = range(len(COLUMNS))
OPTIONAL_COLUMNS = (COL_RANK, COL_WORD)
"""Shown only for a model whose tokenizer offers them."""

Index = QModelIndex | QPersistentModelIndex
_R = Qt.ItemDataRole
_DISPLAY, _ALIGN, _BACKGROUND, _FONT, _TOOLTIP, _USER = (
    int(_R.DisplayRole.value), int(_R.TextAlignmentRole.value), int(_R.BackgroundRole.value),
    int(_R.FontRole.value), int(_R.ToolTipRole.value), int(_R.UserRole.value))
_ROLES = frozenset({_DISPLAY, _ALIGN, _BACKGROUND, _FONT, _TOOLTIP, _USER})


class QTokenTableModel(QAbstractTableModel):
    """Table model over an :class:`Analysis` (no per-row Python objects)."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._a: Analysis | None = None
        self._colors: TokenColors | None = None
        self._fixed = QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont)

    @property
    def analysis(self) -> Analysis | None:
        return self._a

    @property
    def fixed_font(self) -> QFont:
        """The font of the ID and Piece cells (monospaced, the view's size)."""
        return self._fixed

    def set_point_size(self, size: float) -> None:
        """Size the monospaced cells like the rest of the view (zoom)."""
        if size > 0 and size != self._fixed.pointSizeF():
            self._fixed = QFont(self._fixed)
            self._fixed.setPointSizeF(size)
            if self._a is not None and len(self._a):
                self.dataChanged.emit(self.index(0, 0), self.index(len(self._a) - 1, len(COLUMNS) - 1),
                                      [Qt.ItemDataRole.FontRole])

    def set_analysis(self, analysis: Analysis | None) -> int | None:
        """Show ``analysis``; returns the first row that changed, or
        ``None`` when the model was reset (another model, a big change)."""
        old = self._a
        if (old is None or analysis is None or old.info is not analysis.info
                or abs(len(analysis) - len(old)) > _MAX_INSERT):  # a view inserts rows one by one
            self.beginResetModel()
            self._a = analysis
            self.endResetModel()
            return None
        # the same model on an edited text: rows before the first changed
        # token stay (no reset, so the view keeps its place and repaints
        # only rows that changed)
        n_old, n_new = len(old), len(analysis)
        first = _first_change(old, analysis)
        if n_new > n_old:
            self.beginInsertRows(QModelIndex(), first, first + n_new - n_old - 1)
            self._a = analysis
            self.endInsertRows()
        elif n_new < n_old:
            self.beginRemoveRows(QModelIndex(), first, first + n_old - n_new - 1)
            self._a = analysis
            self.endRemoveRows()
        else:
            self._a = analysis
        if first < n_new:
            self.dataChanged.emit(self.index(first, 0), self.index(n_new - 1, len(COLUMNS) - 1))
        return first

    def set_colors(self, colors: TokenColors) -> None:
        self._colors = colors
        if self._a is not None and len(self._a):
            self.dataChanged.emit(self.index(0, COL_PIECE), self.index(len(self._a) - 1, COL_PIECE),
                                  [Qt.ItemDataRole.BackgroundRole])

    def has_column(self, c: int) -> bool:
        """Whether column ``c`` means something for the current model (the
        optional columns need the plugin's ``merge_ranks``/``word_indices``)."""
        if c == COL_RANK or c == COL_WORD:
            a = self._a
            name = "merge_ranks" if c == COL_RANK else "word_indices"
            return a is not None and hasattr(a.model.tokenizer, name)
        return 0 <= c < len(COLUMNS)

    def visible_columns(self) -> list[int]:
        return [c for c in range(len(COLUMNS)) if self.has_column(c)]

    def rowCount(self, parent: Index = QModelIndex()) -> int:
        return 0 if parent.isValid() or self._a is None else len(self._a)

    def columnCount(self, parent: Index = QModelIndex()) -> int:
        return 0 if parent.isValid() else len(COLUMNS)

    def headerData(self, section: int, orientation: Qt.Orientation,
                   role: int = Qt.ItemDataRole.DisplayRole) -> object:
        return column_header(section, orientation, role, COLUMNS, COLUMN_HELP, (COL_PIECE, COL_TYPE))

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> object:
        # a repaint asks ~7 roles of every visible cell: the ones answered
        # with nothing go first, and roles compare as plain ints (an enum
        # member lookup costs more than the rest of a call)
        if role not in _ROLES:
            return None
        a = self._a
        if a is None or not index.isValid():
            return None
        r, c = index.row(), index.column()
        enc = a.encoding
        if role == _DISPLAY:
            if c == COL_INDEX:
                return r
            tid = enc.token_ids[r]
            if c == COL_ID:
                return tid
            if c == COL_PIECE:
                return piece_cell(a, r)
            if c == COL_SCORE:
                return format_score(a.model.vocab.scores[tid])
            if c == COL_TYPE:
                return type_label(a, tid)
            if c == COL_CHARS:
                return f"{enc.starts[r]}–{enc.ends[r]}"
            if c == COL_BYTES:
                return f"{enc.byte_starts[r]}–{enc.byte_ends[r]}"
            if c == COL_RANK or c == COL_WORD:
                # computed for the whole encoding on the first visible cell
                values = enc.ranks if c == COL_RANK else enc.words
                return "" if values is None or values[r] < 0 else values[r]
            return None
        if role == _ALIGN:
            return _LEFT if c in (COL_PIECE, COL_TYPE) else _RIGHT
        if role == _BACKGROUND and c == COL_PIECE and self._colors is not None:
            k = a.span_of_token(r)
            return self._colors.bg(int(a.tok_style[r]), a.span_tint(k) if k >= 0 else 0)
        if role == _FONT and c in (COL_ID, COL_PIECE):
            return self._fixed
        if role == _TOOLTIP:
            return tooltip_html(a, *a.token_range(r))
        if role == _USER:
            return enc.token_ids[r]
        return None

    def row_text(self, row: int) -> str:
        """One row as tab-separated values (for copying)."""
        a = self._a
        assert a is not None
        return "\t".join(piece_cell(a, row, with_group=False) if c == COL_PIECE
                         else str(self.data(self.index(row, c))) for c in self.visible_columns())


_MAX_INSERT = 10_000


def _menu_clip(text: str, limit: int = 24) -> str:
    text = text.replace("&", "&&")  # a menu would take & as a mnemonic
    return text if len(text) <= limit else text[:limit - 1] + "…"


def _first_change(a: Analysis, b: Analysis) -> int:
    """Index of the first token that differs (id or span) between two
    analyses by the same model, capped at the shorter length."""
    n = min(len(a), len(b))
    diff = (a.ids[:n] != b.ids[:n]) | (a.tok_start16[:n] != b.tok_start16[:n]) | (a.tok_end16[:n] != b.tok_end16[:n])
    hits = np.flatnonzero(diff)
    return int(hits[0]) if len(hits) else n


class QTokenTable(QTableView):
    """The token table view; selecting rows reports a token range."""

    tokensActivated = Signal(int, int)
    """The user selected tokens ``[first, last)`` (expanded to whole groups)."""
    exportRequested = Signal(int, int)
    """Export Selection… was chosen for tokens ``[first, last)``."""
    findInVocabularyRequested = Signal(int)
    """Find in Vocabulary was chosen for this token id."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._model = QTokenTableModel(self)
        self.setModel(self._model)
        self._model.set_colors(token_colors(self.palette()))
        self._syncing = False
        self._rows_from: int | None = None
        """First row that changed in a model change that moved rows (see doItemsLayout)."""
        self.id_format: Callable[[], str] = lambda: "space"
        """How Copy IDs writes ids (the window's Token ID Format)."""
        self._fitted: dict[int, int] = {}
        self._model_texts: tuple[object, str, list[str]] | None = None  # (info, widest score, type labels)
        self.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.setSelectionMode(QAbstractItemView.SelectionMode.ExtendedSelection)
        self.setAlternatingRowColors(True)
        self.setWordWrap(False)
        self.setTextElideMode(Qt.TextElideMode.ElideRight)
        self.setHorizontalScrollMode(QAbstractItemView.ScrollMode.ScrollPerPixel)
        self.setTabKeyNavigation(False)  # Tab leaves the table, arrows move inside
        vh = self.verticalHeader()
        vh.hide()
        # fixed row heights: the header never measures 250 000 rows
        vh.setSectionResizeMode(QHeaderView.ResizeMode.Fixed)
        for c in OPTIONAL_COLUMNS:
            self.setColumnHidden(c, True)
        hh = self.horizontalHeader()
        hh.setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        # the number columns fit their widest value and the piece column
        # takes the rest (a long piece is elided), so the table fits its pane
        hh.setSectionResizeMode(COL_PIECE, QHeaderView.ResizeMode.Stretch)
        hh.setStretchLastSection(False)
        hh.setHighlightSections(False)
        self._apply_metrics()
        self.selectionModel().selectionChanged.connect(self._on_selection)

    @property
    def token_model(self) -> QTokenTableModel:
        return self._model

    def _apply_metrics(self) -> None:
        self._model.set_point_size(self.font().pointSizeF())
        hh = self.horizontalHeader()
        if hh.font().pointSizeF() != self.font().pointSizeF():
            # the header has a font of its own (the style's): zoom it as well
            f = QFont(hh.font())
            f.setPointSizeF(self.font().pointSizeF())
            hh.setFont(f)
        height = max(self.fontMetrics().height(), QFontMetrics(self._model.fixed_font).height())
        self.verticalHeader().setDefaultSectionSize(int(height * 1.5))
        self._fitted.clear()
        self.fit_columns()

    def widest_texts(self) -> dict[int, str]:
        """For each column but Piece, the widest text it can show for the
        current analysis, found from the largest values (the token count,
        the vocabulary size, the text's length) rather than by reading rows:
        the digits are all the font's widest digit."""
        a = self._model.analysis
        digit = max("0123456789", key=self.fontMetrics().horizontalAdvance)

        def number(value: int) -> str:
            return digit * len(str(max(value, 0)))

        if a is None:
            n = vocab = chars = n_bytes = 99_999
            score, types = "-99999", ["user-defined"]
        else:
            enc = a.encoding
            n, vocab = len(a), len(a.model.vocab.pieces)
            # spans only grow along the text, so the last token's end is the largest
            chars = enc.ends[n - 1] if n else 0
            n_bytes = enc.byte_ends[n - 1] if n else 0
            score, types = self._model_widest(a)
        span = "–"
        return {COL_INDEX: number(n - 1), COL_ID: number(vocab - 1), COL_SCORE: score,
                COL_TYPE: max(types, key=self.fontMetrics().horizontalAdvance),
                COL_CHARS: number(chars) + span + number(chars),
                COL_BYTES: number(n_bytes) + span + number(n_bytes),
                COL_RANK: number(vocab), COL_WORD: number(n)}

    def _model_widest(self, a: Analysis) -> tuple[str, list[str]]:
        """The widest score and the type labels of ``a``'s model (one pass
        over the vocabulary per model)."""
        cached = self._model_texts
        if cached is not None and cached[0] is a.info:
            return cached[1], cached[2]
        vocab = a.model.vocab
        scores = np.asarray(vocab.scores, dtype=np.float64)
        cands = [0.0]
        if len(scores):
            finite = scores[np.isfinite(scores)]
            cands += [float(x) for x in scores[~np.isfinite(scores)][:3]]
            if len(finite):
                cands += [float(finite.min()), float(finite.max())]
                for part in (finite[finite < 0], finite[finite > 0]):
                    if len(part):  # the one nearest zero has the most decimals
                        cands.append(float(part[np.argmin(np.abs(part))]))
        score = max((format_score(x) for x in cands), key=self.fontMetrics().horizontalAdvance)
        types = sorted({type_name(int(t)) for t in np.unique(np.asarray(vocab.attrs))})
        unk = a.info.unk_id
        if 0 <= unk < len(vocab.pieces):
            types.append(type_label(a, unk))
        self._model_texts = (a.info, score, types)
        return score, types

    def fit_columns(self) -> None:
        """Size every column but Piece to its widest text (and its header);
        a column keeps a width the user gave it until its widest text changes."""
        fm = self.fontMetrics()
        fixed = QFontMetrics(self._model.fixed_font)
        margin = 2 * (self.style().pixelMetric(QStyle.PixelMetric.PM_FocusFrameHMargin, None, self) + 1) + 2
        hh = self.horizontalHeader()
        for c, text in self.widest_texts().items():
            metrics = fixed if c == COL_ID else fm
            width = max(metrics.horizontalAdvance(text) + margin, hh.sectionSizeHint(c))
            if self._fitted.get(c) != width:
                self._fitted[c] = width
                self.setColumnWidth(c, width)
        self._fit_piece()

    def piece_minimum(self) -> int:
        """The narrowest the piece column gets: ten monospaced characters."""
        return QFontMetrics(self._model.fixed_font).horizontalAdvance("0" * 10)

    def _fit_piece(self) -> None:
        # the piece column stretches over what the others leave; when that
        # is too narrow to read a piece it keeps its minimum and the table
        # scrolls sideways instead
        hh = self.horizontalHeader()
        others = sum(self.columnWidth(c) for c in range(len(COLUMNS))
                     if c != COL_PIECE and not self.isColumnHidden(c))
        least = self.piece_minimum()
        stretch = self.viewport().width() - others >= least
        mode = QHeaderView.ResizeMode.Stretch if stretch else QHeaderView.ResizeMode.Interactive
        if hh.sectionResizeMode(COL_PIECE) != mode:
            hh.setSectionResizeMode(COL_PIECE, mode)
        if not stretch and self.columnWidth(COL_PIECE) != least:
            self.setColumnWidth(COL_PIECE, least)

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        self._fit_piece()

    def set_analysis(self, analysis: Analysis | None) -> None:
        self._syncing = True
        rows = self._model.rowCount()
        try:
            first = self._model.set_analysis(analysis)
        finally:
            self._syncing = False
        # (see doItemsLayout; a hidden table repaints in full when shown)
        moved = first is not None and self._model.rowCount() != rows and self.isVisible()
        self._rows_from = first if moved else None
        for c in OPTIONAL_COLUMNS:
            hide = not self._model.has_column(c)
            if self.isColumnHidden(c) != hide:
                self.setColumnHidden(c, hide)
        self.fit_columns()

    # ---- repainting what changed -------------------------------------------------

    # An edit changes every row after it (their character spans move), but
    # Qt repaints the whole viewport for any change of more than one cell,
    # even one wholly below it, and again when the row count changes: a
    # keystroke repainted all ~38 visible rows (7.8 ms of a 10 KB text's
    # ~17 ms keystroke on llama-spm) where the rows on screen that changed
    # are usually the one or two at the cursor's token.

    def _update_rows(self, first: int, last: int) -> None:
        """Repaint the visible part of rows ``[first, last]`` (``last`` -1:
        down to the viewport's bottom, rows removed there included)."""
        vp = self.viewport()
        top = self.rowAt(0)
        if top < 0:  # no row at the top: an empty table
            vp.update()
            return
        bottom = self.rowAt(vp.height() - 1)
        lo = max(first, top)
        if bottom >= 0 and lo > bottom or last >= 0 and lo > last:
            return  # none of them on screen
        n = self._model.rowCount()
        # (rows removed at the end: from below the last row that is left)
        y0 = self.rowViewportPosition(lo) if lo < n else (
            self.rowViewportPosition(n - 1) + self.rowHeight(n - 1) if n else 0)
        y1 = vp.height() if last < 0 or bottom < 0 or last >= bottom else (
            self.rowViewportPosition(last) + self.rowHeight(last))
        vp.update(QRect(0, y0, vp.width(), y1 - y0))

    def dataChanged(self, top_left: Index, bottom_right: Index, roles: Sequence[int] = ()) -> None:
        if (top_left.row() == bottom_right.row() or not top_left.isValid() or not bottom_right.isValid()
                or QAccessible.isActive()):  # (Qt's own also tells assistive tools)
            super().dataChanged(top_left, bottom_right, list(roles))
            return
        self._update_rows(top_left.row(), bottom_right.row())

    def doItemsLayout(self) -> None:
        # Qt lays the items out again after rows were inserted or removed,
        # which repaints everything; after an edit's rows only the geometry
        # (the scroll range) changes, and the rows from the first changed one
        # down, which are repainted here. (Qt's own also syncs the hidden
        # row header's offset and re-enables its updates: the same below.)
        first = self._rows_from
        self._rows_from = None
        if first is None:
            super().doItemsLayout()
            return
        bar, vh = self.verticalScrollBar(), self.verticalHeader()
        before = (bar.value(), vh.offset())
        self.updateGeometries()
        if self.verticalScrollMode() == QAbstractItemView.ScrollMode.ScrollPerItem:
            if 0 < bar.maximum() == bar.value():
                vh.setOffsetToLastSection()
            else:
                vh.setOffsetToSectionPosition(bar.value())
        else:
            vh.setOffset(bar.value())
        if not vh.updatesEnabled():
            vh.setUpdatesEnabled(True)
        if (bar.value(), vh.offset()) != before:
            # the rows moved (rows removed with the table at its end): all of it
            self.viewport().update()
        else:
            self._update_rows(first, -1)

    def changeEvent(self, event: QEvent) -> None:
        super().changeEvent(event)
        if event.type() == QEvent.Type.PaletteChange:
            self._model.set_colors(token_colors(self.palette()))
        elif event.type() == QEvent.Type.FontChange:
            self._apply_metrics()

    # ---- linked selection --------------------------------------------------------

    def selected_range(self) -> tuple[int, int] | None:
        """``[first, last)`` rows spanned by the selection, or ``None``."""
        ranges = self.selectionModel().selection()
        if ranges.isEmpty():
            return None
        parts = [ranges.at(i) for i in range(ranges.count())]
        return min(r.top() for r in parts), max(r.bottom() for r in parts) + 1

    def _on_selection(self, selected: QItemSelection, deselected: QItemSelection) -> None:
        if self._syncing:
            return
        a = self._model.analysis
        rng = self.selected_range()
        if a is None or rng is None:
            return
        first = a.token_range(rng[0])[0]
        last = a.token_range(rng[1] - 1)[1]
        self.tokensActivated.emit(first, last)
        self.select_tokens(first, last)

    def select_tokens(self, first: int, last: int, scroll: bool = True) -> None:
        """Select rows ``[first, last)`` without reporting it back."""
        a = self._model.analysis
        if a is None or not 0 <= first < last <= len(a):
            return
        m = self._model
        sm = self.selectionModel()
        self._syncing = True
        try:
            sel = QItemSelection(m.index(first, 0), m.index(last - 1, len(COLUMNS) - 1))
            flags = QItemSelectionModel.SelectionFlag.ClearAndSelect | QItemSelectionModel.SelectionFlag.Rows
            sm.select(sel, flags)
            cur = self.currentIndex()
            if not (cur.isValid() and first <= cur.row() < last):
                sm.setCurrentIndex(m.index(first, cur.column() if cur.isValid() else 0),
                                   QItemSelectionModel.SelectionFlag.NoUpdate)
            if scroll:
                self.scrollTo(m.index(first, 0), QAbstractItemView.ScrollHint.EnsureVisible)
        finally:
            self._syncing = False

    def clear_token_selection(self) -> None:
        self._syncing = True
        try:
            self.selectionModel().clearSelection()
        finally:
            self._syncing = False

    def keyPressEvent(self, event: QKeyEvent) -> None:
        if event.matches(QKeySequence.StandardKey.Copy):
            self.copy_selection()
            return
        super().keyPressEvent(event)

    # ---- context menu ----------------------------------------------------------------------------

    def contextMenuEvent(self, event: QContextMenuEvent) -> None:
        menu = self.context_menu(self.indexAt(event.pos()).row())
        if menu is not None:
            menu.exec(event.globalPos())

    def context_menu(self, row: int = -1) -> QMenu | None:
        """The menu of the selected tokens (a right-click outside the
        selection selects the clicked row first); ``None`` with no tokens."""
        a = self._model.analysis
        if a is None or not len(a):
            return None
        rng = self.selected_range()
        if 0 <= row < len(a) and (rng is None or not rng[0] <= row < rng[1]):
            first, last = a.token_range(row)
            self.select_tokens(first, last, scroll=False)
            self.tokensActivated.emit(first, last)
            rng = (first, last)
        if rng is None:
            return None
        first, last = rng
        n = last - first
        menu = QMenu(self)
        tokens = "token" if n == 1 else f"{n:,} tokens"
        menu.addAction(f"Copy ID{'s' if n > 1 else ''}", self.copy_ids)
        menu.addAction(f"Copy Piece{'s' if n > 1 else ''}", self.copy_pieces)
        menu.addAction("Copy Rows\tCtrl+C", self.copy_selection)
        menu.addSeparator()
        menu.addAction(f"Export {tokens}…", lambda: self.exportRequested.emit(first, last))
        cur = self.currentIndex()
        at = cur.row() if cur.isValid() and first <= cur.row() < last else first
        tid = int(a.encoding.token_ids[at])
        act = menu.addAction(f"Find “{_menu_clip(piece_label(a.model, tid))}” in Vocabulary",
                             lambda: self.findInVocabularyRequested.emit(tid))
        act.setToolTip("Show the vocabulary filtered to this piece, the token selected")
        return menu

    def selected_ids(self) -> list[int]:
        rng = self.selected_range()
        a = self._model.analysis
        if rng is None or a is None:
            return []
        return list(a.encoding.token_ids[rng[0]:rng[1]])

    def copy_ids(self) -> int:
        """Copy the selected tokens' ids in the window's id format."""
        ids = self.selected_ids()
        if ids:
            QGuiApplication.clipboard().setText(format_ids(ids, self.id_format()))
        return len(ids)

    def copy_pieces(self) -> int:
        """Copy the selected tokens' pieces as the table shows them, one a line."""
        rng = self.selected_range()
        a = self._model.analysis
        if rng is None or a is None:
            return 0
        QGuiApplication.clipboard().setText(
            "\n".join(piece_cell(a, r, with_group=False) for r in range(rng[0], rng[1])))
        return rng[1] - rng[0]

    def copy_selection(self) -> None:
        """Copy the selected rows as tab-separated values (with a header)."""
        rng = self.selected_range()
        if rng is None or self._model.analysis is None:
            return
        first, last = rng[0], min(rng[1], rng[0] + 100_000)
        header = "\t".join(COLUMNS[c] for c in self._model.visible_columns())
        lines = [header] + [self._model.row_text(r) for r in range(first, last)]
        QGuiApplication.clipboard().setText("\n".join(lines))

