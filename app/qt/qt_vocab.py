"""View ▸ Vocabulary: every token of the open model in one table.

The table model holds one numpy array of token ids (the current filter's
result, in its sort order) and reads cells from the
:class:`~tokenprism.core.library.vocab_query.VocabIndex` when the view asks, so a
262 144-token vocabulary scrolls like a short one. The index is built, and
every filter and sort is run, in a worker thread; a newer query cancels the
running one and a stale result is never shown.
"""

from __future__ import annotations

import html
from typing import Callable

import numpy as np
import regex
from PySide6.QtCore import (QAbstractTableModel, QItemSelectionModel, QModelIndex, QPersistentModelIndex, Qt,
                            QTimer, Signal)
from PySide6.QtGui import QAction, QContextMenuEvent, QFontDatabase, QGuiApplication, QKeyEvent, QKeySequence
from PySide6.QtWidgets import (QAbstractItemView, QApplication, QCheckBox, QComboBox, QDockWidget, QHBoxLayout,
                               QHeaderView, QLabel, QLineEdit, QMenu, QSplitter, QTableView, QTextBrowser,
                               QVBoxLayout, QWidget)

from tokenprism.core.library.find_tokens import FindError, FoundTokens, TokenBytes, find_tokens, phantom_space
from tokenprism.core.library.vocab_query import (COLUMNS as SORT_KEYS, KIND_NAMES, MergeNode, Query, QueryCancelled,
                                         QueryError, VocabIndex, attr_names, merge_tree_lines, search_text,
                                         token_type_name)

from . import qt_compat  # noqa: F401  (guards against a PySide6 bug; see there)
from ..logic.analysis import ModelInfo
from ..logic.pieces import format_ids, format_score, hex_bytes, readable
from .qt_background import QBackground
from .qt_columns import ALIGN_LEFT as _LEFT, ALIGN_RIGHT as _RIGHT, column_header
from .window_parts import WindowParts


SHORTCUT = "Ctrl+Shift+K"
COLUMNS = ("ID", "Piece", "Score", "Type", "Bytes")
COLUMN_HELP = (
    "Token id", "The token's piece (▁ is a space in SentencePiece vocabularies; ␣ ↵ ⇥ show spaces, "
    "line breaks and tabs; control characters are escaped)",
    "The token's score in the vocabulary", "Token type (normal, byte, control, user-defined, unknown, unused)",
    "Bytes the token stands for in text")
COL_ID, COL_PIECE, COL_SCORE, COL_TYPE, COL_BYTES = range(len(COLUMNS))
MODES = (("Substring", "substring"), ("Regex", "regex"), ("ID range", "ids"), ("Can produce…", "produce"))
MODE_HINTS = {"substring": "Filter pieces (a space also finds ▁ and Ġ)…",
              "regex": "Regular expression, e.g. ^▁?the$ …", "ids": "Ids or ranges, e.g. 100-200, 5…",
              "produce": "Text, e.g. a stop string: the tokens that can produce part of it…"}
PRODUCE = "produce"  # the mode answered by find_tokens, not by VocabIndex.run
DEBOUNCE_MS = 120
_SORT_HELP = tuple(h + " (click to sort)" for h in COLUMN_HELP)
Index = QModelIndex | QPersistentModelIndex


def count_text(n: int) -> str:
    """``1 234`` (thin spaces between thousands)."""
    return f"{n:,}".replace(",", "\u2009")


class VocabTableModel(QAbstractTableModel):
    """Rows are ``ids`` (numpy); cells come from the index on demand."""

    sortRequested = Signal(int, bool)
    """(column, descending): the view's header was clicked."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.index_data: VocabIndex | None = None
        self.ids = np.zeros(0, dtype=np.int64)
        self._fixed = QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont)

    def set_rows(self, index: VocabIndex | None, ids: np.ndarray) -> None:
        self.beginResetModel()
        self.index_data = index
        self.ids = ids
        self.endResetModel()

    def rowCount(self, parent: Index = QModelIndex()) -> int:
        return 0 if parent.isValid() else len(self.ids)

    def columnCount(self, parent: Index = QModelIndex()) -> int:
        return 0 if parent.isValid() else len(COLUMNS)

    def headerData(self, section: int, orientation: Qt.Orientation,
                   role: int = Qt.ItemDataRole.DisplayRole) -> object:
        return column_header(section, orientation, role, COLUMNS, _SORT_HELP, (COL_PIECE, COL_TYPE))

    def token_id(self, row: int) -> int:
        return int(self.ids[row])

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> object:
        ix = self.index_data
        if ix is None or not index.isValid():
            return None
        c = index.column()
        if role == Qt.ItemDataRole.DisplayRole:
            tid = int(self.ids[index.row()])
            if c == COL_ID:
                return tid
            if c == COL_PIECE:
                return readable(ix.display[tid])
            if c == COL_SCORE:
                return format_score(float(ix.scores[tid]))
            if c == COL_TYPE:
                return KIND_NAMES[int(ix.kinds[tid])]
            if c == COL_BYTES:
                return int(ix.byte_lengths[tid])
            return None
        if role == Qt.ItemDataRole.TextAlignmentRole:
            return _LEFT if c in (COL_PIECE, COL_TYPE) else _RIGHT
        if role == Qt.ItemDataRole.FontRole and c in (COL_ID, COL_PIECE):
            return self._fixed
        if role == Qt.ItemDataRole.UserRole:
            return int(self.ids[index.row()])
        return None

    def sort(self, column: int, order: Qt.SortOrder = Qt.SortOrder.AscendingOrder) -> None:
        # the index sorts in the worker; the view only says what was clicked
        self.sortRequested.emit(column, order == Qt.SortOrder.DescendingOrder)


class QVocabTable(QTableView):
    """The token table of the browser; Ctrl+C copies the selected ids."""

    def __init__(self, model: VocabTableModel, id_format: Callable[[], str], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setModel(model)
        self._model = model
        self._id_format = id_format
        self.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.setSelectionMode(QAbstractItemView.SelectionMode.ExtendedSelection)
        self.setAlternatingRowColors(True)
        self.setWordWrap(False)
        self.setTabKeyNavigation(False)
        self.setSortingEnabled(True)
        self.horizontalHeader().setSortIndicator(COL_ID, Qt.SortOrder.AscendingOrder)
        vh = self.verticalHeader()
        vh.hide()
        vh.setSectionResizeMode(QHeaderView.ResizeMode.Fixed)  # never measures 262 144 rows
        hh = self.horizontalHeader()
        hh.setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        hh.setStretchLastSection(True)
        hh.setHighlightSections(False)
        self._apply_metrics()

    def _apply_metrics(self) -> None:
        fm = self.fontMetrics()
        self.verticalHeader().setDefaultSectionSize(int(fm.height() * 1.5))
        digit = fm.horizontalAdvance("0")
        for col, chars in enumerate((8, 24, 8, 11, 6)):
            self.setColumnWidth(col, digit * chars)

    def selected_ids(self) -> np.ndarray:
        """Ids of the selected rows, in table order."""
        sel = self.selectionModel().selection()
        rows = [np.arange(r.top(), r.bottom() + 1) for r in (sel.at(i) for i in range(sel.count()))]
        if not rows:
            return np.zeros(0, dtype=np.int64)
        picked = np.unique(np.concatenate(rows))
        return self._model.ids[picked]

    def keyPressEvent(self, event: QKeyEvent) -> None:
        if event.matches(QKeySequence.StandardKey.Copy):
            self.copy_ids()
            return
        super().keyPressEvent(event)

    def contextMenuEvent(self, event: QContextMenuEvent) -> None:
        if not len(self.selected_ids()):
            return
        menu = QMenu(self)
        menu.addAction("Copy IDs\tCtrl+C", self.copy_ids)
        menu.addAction("Copy Pieces", self.copy_pieces)
        menu.exec(event.globalPos())

    def copy_pieces(self) -> int:
        """Copy the selected tokens' pieces as shown, one a line."""
        ids = self.selected_ids()
        index = self._model.index_data
        if len(ids) and index is not None:
            QGuiApplication.clipboard().setText("\n".join(readable(index.display[i]) for i in ids.tolist()))
        return len(ids)

    def copy_ids(self) -> int:
        ids = self.selected_ids()
        if len(ids):
            QGuiApplication.clipboard().setText(format_ids(ids.tolist(), self._id_format()))
        return len(ids)


class QVocabBrowser(QWidget):
    """Filter box, type filter, the token table and a details pane."""

    queryFinished = Signal()
    """A query's rows are on screen (or its error is)."""

    def __init__(self, id_format: Callable[[], str] = lambda: "space", parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.info: ModelInfo | None = None
        self.index: VocabIndex | None = None
        self._wanted = False  # build only while the browser is shown
        self._built_for: ModelInfo | None = None
        self._generation = 0
        self._sort = ("id", False)
        self._find_id: int | None = None  # find_token's token, selected when its rows arrive
        self._builder = QBackground(self, latest_only=True)
        self._queries = QBackground(self, latest_only=True)
        self._queries.busyChanged.connect(self._on_busy)

        self.filter = QLineEdit()
        self.filter.setClearButtonEnabled(True)
        self.filter.setToolTip("Show only matching tokens")
        self.mode = QComboBox()
        for label, mode in MODES:
            self.mode.addItem(label, mode)
        self.mode.setToolTip("Match the text as a substring, a regular expression (regex package syntax; "
                             "each piece on its own) or id ranges such as 100-200, 5, 1000-; or list the "
                             "tokens that can produce the text: whose bytes are a prefix, a suffix or a part "
                             "of it (for stop strings and logit bias)")
        self._token_bytes: TokenBytes | None = None  # built for "Can produce…" on first use
        self.found: FoundTokens | None = None
        """The last "Can produce…" answer shown."""
        self.produce_note = QLabel()
        self.produce_note.setWordWrap(True)
        self.produce_note.setTextFormat(Qt.TextFormat.PlainText)
        self.produce_note.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.produce_note.hide()
        self.case = QCheckBox("Aa")
        self.case.setToolTip("Match case")
        self.kind = QComboBox()
        self.kind.addItem("All types", -1)
        for code, name in enumerate(KIND_NAMES):
            self.kind.addItem(name, code)
        self.kind.setToolTip("Show only tokens of one type")
        self.count = QLabel()
        self.count.setTextFormat(Qt.TextFormat.PlainText)
        self.count.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.error = QLabel()
        self.error.setWordWrap(True)
        self.error.setTextFormat(Qt.TextFormat.PlainText)  # messages quote what was typed
        self.error.setStyleSheet("color: palette(bright-text); background: #b3261e; padding: 3px 6px;"
                                 " border-radius: 3px;")
        self.error.hide()

        self.table_model = VocabTableModel(self)
        self.table = QVocabTable(self.table_model, id_format)
        self.details = QTextBrowser()
        self.details.setOpenLinks(False)
        self.details.setPlaceholderText("Click a token to see its bytes, type, score rank and merges.")

        top = QHBoxLayout()
        top.setContentsMargins(0, 0, 0, 0)
        top.addWidget(self.filter, 1)
        top.addWidget(self.mode)
        top.addWidget(self.case)
        top.addWidget(self.kind)
        split = QSplitter(Qt.Orientation.Vertical)
        split.addWidget(self.table)
        split.addWidget(self.details)
        split.setStretchFactor(0, 3)
        split.setStretchFactor(1, 2)
        split.setChildrenCollapsible(False)
        self.splitter = split
        lay = QVBoxLayout(self)
        lay.setContentsMargins(4, 4, 4, 4)
        lay.setSpacing(4)
        lay.addLayout(top)
        lay.addWidget(self.error)
        lay.addWidget(self.produce_note)
        lay.addWidget(split, 1)
        lay.addWidget(self.count)

        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(DEBOUNCE_MS)
        self._timer.timeout.connect(self.run_query)
        self.filter.textChanged.connect(lambda _t: self._timer.start())
        self.filter.returnPressed.connect(self.run_query)
        self.mode.currentIndexChanged.connect(self._on_mode)
        self.case.toggled.connect(lambda _c: self.run_query())
        self.kind.currentIndexChanged.connect(lambda _i: self.run_query())
        self.table_model.sortRequested.connect(self._on_sort)
        self.table.selectionModel().currentRowChanged.connect(self._on_current)
        self._on_mode()
        self._show_count()

    # ---- model -------------------------------------------------------------------------

    def set_model(self, info: ModelInfo | None) -> None:
        """Follow the window's model (the index is built when shown)."""
        self.info = info
        if self._wanted:
            self._build()
        elif self._built_for is not None and info is not self._built_for:
            # hidden (or behind another panel's tab): the old model's index
            # goes now, not when the browser is next shown; it can hold
            # gigabytes for a large vocabulary
            self._clear()
            self._built_for = None

    def set_wanted(self, shown: bool) -> None:
        """The browser became visible (or hidden): build its index if it is stale."""
        self._wanted = shown  # a hidden one catches up when shown again
        if shown:
            self._build()

    def _build(self) -> None:
        info = self.info
        if info is self._built_for:
            return
        self._built_for = info
        self._clear()
        if info is None:
            self._show_count()
            return
        self.count.setText(f"Reading the vocabulary of {info.name}…")
        model = info.model

        def moved_on() -> bool:  # read from the worker: the browser wants another model
            return info is not self._built_for

        def job() -> VocabIndex:
            # stops early when the model changes, so the old model is let go at once
            index = VocabIndex(model, moved_on)
            index.score_ranks()
            return index

        def done(index: VocabIndex) -> None:
            if info is self._built_for:
                self.index = index
                self.run_query()
                # merges are needed only for details; read them after the table shows
                if model.vocab.merges:
                    self._builder.submit(index.merge_ranks, lambda _r: self._refresh_details(),
                                         lambda _e: None)

        self._builder.submit(job, done, self._on_build_failed)

    def _clear(self) -> None:
        """Let go of the index and the rows shown (a running query's result is dropped)."""
        self._generation += 1
        self.index = None
        self._token_bytes = None
        self.found = None
        self.produce_note.hide()
        self.table_model.set_rows(None, np.zeros(0, dtype=np.int64))
        self.details.clear()

    def _on_build_failed(self, error: BaseException) -> None:
        if isinstance(error, QueryCancelled):
            return  # the browser moved on to another model
        self._show_error(f"Cannot read the vocabulary: {type(error).__name__}: {error}")

    # ---- queries ----------------------------------------------------------------------------

    def query(self) -> Query:
        col, desc = self._sort
        return Query(text=self.filter.text(), mode=str(self.mode.currentData()), case_sensitive=self.case.isChecked(),
                     kind=int(self.kind.currentData()), sort=col, descending=desc)

    def _on_mode(self) -> None:
        mode = str(self.mode.currentData())
        self.filter.setPlaceholderText(MODE_HINTS[mode])
        self.case.setEnabled(mode not in ("ids", PRODUCE))
        self.produce_note.setVisible(mode == PRODUCE and self.found is not None)
        self.run_query()

    def _on_sort(self, column: int, descending: bool) -> None:
        self._sort = (SORT_KEYS[column], descending)
        self.run_query()

    def run_query(self) -> None:
        """Run the current query now (a running one is cancelled)."""
        self._timer.stop()
        index = self.index
        if index is None:
            return
        self._generation += 1
        gen = self._generation
        query = self.query()

        def cancelled() -> bool:  # read from the worker: a newer query exists
            return self._generation != gen

        def done(ids: np.ndarray) -> None:
            if gen == self._generation and index is self.index:
                self._show_rows(index, ids)

        def failed(error: BaseException) -> None:
            if gen != self._generation or isinstance(error, QueryCancelled):
                return
            if isinstance(error, (QueryError, FindError)):
                self.produce_note.hide()
                self._show_error(str(error))
            else:
                self._show_error(f"The filter failed: {type(error).__name__}: {error}")
            self.queryFinished.emit()

        if query.mode == PRODUCE:
            self._run_produce(index, query, gen, failed)
            return
        self._queries.submit(lambda: index.run(query, cancelled), done, failed)

    def _run_produce(self, index: VocabIndex, query: Query, gen: int,
                     failed: Callable[[BaseException], None]) -> None:
        """"Can produce…": the tokens whose bytes are part of the text (all
        of prefix, suffix and inside), of the kind chosen, in the sort
        chosen; the note above the table says which start and end it and
        what the text tokenizes to."""
        if not query.text:
            self.found = None
            self.produce_note.hide()
            self._show_rows(index, np.zeros(0, dtype=np.int64))
            return
        built = self._token_bytes

        def job() -> tuple[TokenBytes, FoundTokens, np.ndarray]:
            table = built if built is not None else TokenBytes(index.model, lambda: self._generation != gen)
            found = find_tokens(table, query.text)
            # the literal matches and the word-start pieces (the note tells them apart)
            ids = np.union1d(np.asarray(found.substring, dtype=np.int64),
                             np.asarray(found.word_start, dtype=np.int64))
            if query.kind >= 0:
                ids = ids[index.kinds[ids] == query.kind]
            return table, found, index.sort(ids, query.sort, query.descending)

        def done(result: tuple[TokenBytes, FoundTokens, np.ndarray]) -> None:
            if index is not self.index:
                return
            self._token_bytes = result[0]  # kept even when a newer query came: built once per model
            if gen == self._generation:
                self.found = result[1]
                self.produce_note.setText(produce_note(index, result[1]))
                self.produce_note.show()
                self._show_rows(index, result[2])

        self._queries.submit(job, done, failed)

    def find_token(self, token_id: int) -> None:
        """Filter to the pieces that read exactly as ``token_id``'s (an
        anchored, escaped regular expression, case as it is) and select that
        token, so its details show (the token table's Find in Vocabulary)."""
        info = self.info
        if info is None or not 0 <= token_id < len(info.model):
            return
        self._find_id = token_id
        pattern = "^" + regex.escape(search_text(info.model.display_piece(token_id))) + "$"
        for w in (self.mode, self.case, self.kind, self.filter):
            w.blockSignals(True)
        try:
            self.mode.setCurrentIndex(self.mode.findData("regex"))
            self.case.setChecked(True)
            self.kind.setCurrentIndex(0)
            self.filter.setText(pattern)
        finally:
            for w in (self.mode, self.case, self.kind, self.filter):
                w.blockSignals(False)
        self._on_mode()  # runs the query (or the index build will)

    def _show_rows(self, index: VocabIndex, ids: np.ndarray) -> None:
        current = self.current_id() if self._find_id is None else self._find_id
        self._find_id = None
        self.error.hide()
        self.table_model.set_rows(index, ids)
        self._show_count()
        if current is not None:  # keep the token in view when it is still listed
            rows = np.flatnonzero(ids == current)
            if len(rows):
                idx = self.table_model.index(int(rows[0]), 0)
                self.table.selectionModel().setCurrentIndex(
                    idx, QItemSelectionModel.SelectionFlag.ClearAndSelect | QItemSelectionModel.SelectionFlag.Rows)
                self.table.scrollTo(idx, QAbstractItemView.ScrollHint.PositionAtCenter)
        self.queryFinished.emit()

    def _show_error(self, message: str) -> None:
        self.error.setText(message)
        self.error.show()
        self._show_count()

    def _show_count(self) -> None:
        index = self.table_model.index_data
        if index is None:
            self.count.setText("No model" if self.info is None else "")
            return
        self.count.setText(f"{count_text(len(self.table_model.ids))} of {count_text(index.size)} tokens")

    def _on_busy(self, busy: bool) -> None:
        if busy and self.index is not None:
            QTimer.singleShot(150, self._show_busy)
        elif not busy:
            self._show_count()

    def _show_busy(self) -> None:
        if self._queries.busy:
            self.count.setText("Filtering…")

    # ---- details -----------------------------------------------------------------------------

    def current_id(self) -> int | None:
        idx = self.table.currentIndex()
        if not idx.isValid() or self.table_model.index_data is None:
            return None
        return self.table_model.token_id(idx.row())

    def _on_current(self, current: QModelIndex, _previous: QModelIndex) -> None:
        self._refresh_details()

    def _refresh_details(self) -> None:
        tid = self.current_id()
        index = self.table_model.index_data
        if tid is None or index is None:
            self.details.clear()
            return
        html_text = details_html(index, tid)
        found = self.found
        if found is not None and str(self.mode.currentData()) == PRODUCE and tid in found.substring:
            where = [w for w, ids in (("starts", found.prefix), ("ends", found.suffix)) if tid in ids]
            line = (f"<p>Can produce part of <code>{html.escape(readable(found.string))}</code>"
                    + (f": it {' and '.join(where)} it" if where else " (inside it)") + "</p>")
            html_text = html_text.replace("<qt>", "<qt>" + line, 1)
        self.details.setHtml(html_text)

    def cancel(self) -> None:
        """Cancel the running query."""
        self._generation += 1

    def shutdown(self) -> None:
        self.cancel()
        self._builder.shutdown()
        self._queries.shutdown()


def details_html(index: VocabIndex, token_id: int) -> str:
    """The details pane for one token."""
    model = index.model
    vocab = model.vocab
    data = model.token_bytes(token_id)
    rank = index.score_rank(token_id)
    rows = [
        ("Piece", f"<code>{html.escape(readable(index.display[token_id]))}</code>"),
        ("Bytes", f"<code>{hex_bytes(data, 64) or '(none)'}</code> · {len(data)} byte{'s' if len(data) != 1 else ''}"),
        ("Type", f"{token_type_name(int(index.types[token_id]))} (as stored) · attributes: "
                 f"{', '.join(attr_names(int(index.attrs[token_id]))) or 'none'}"),
        ("Score", f"{html.escape(format_score(float(index.scores[token_id])))} · " + (
            f"rank {count_text(rank)} of {count_text(index.size)} by score{_ties(index, token_id)}"
            if index.scores_differ
            else "every token has this score")),
    ]
    if vocab.pieces[token_id] != index.display[token_id]:  # byte-level BPE stores other glyphs
        rows.insert(1, ("Stored piece", f"<code>{html.escape(readable(vocab.pieces[token_id]))}</code>"))
    specials = [name for name, i in vocab.special_ids.items() if i == token_id]
    if specials:
        rows.append(("Special", ", ".join(specials)))
    body = "".join(f"<tr><td style='color: gray; padding-right: 10px'>{k}</td><td>{v}</td></tr>" for k, v in rows)
    out = [f"<b>id {token_id}</b>", f"<table cellspacing='0' cellpadding='2'>{body}</table>"]
    if vocab.merges:
        out.append(_merges_html(index, token_id))
    return "<qt>" + "".join(out) + "</qt>"


def produce_note(index: VocabIndex, found: FoundTokens) -> str:
    """What the "Can produce…" rows are, and the text's own tokens."""
    model = index.model
    own = "  ".join(f"{i} {readable(index.display[i])}" for i in found.tokenization[:12])
    more = " …" if len(found.tokenization) > 12 else ""
    return (f"{count_text(len(found.substring))} tokens can produce part of it: {count_text(len(found.prefix))} "
            f"start it, {count_text(len(found.suffix))} end it. It tokenizes to "
            f"{len(found.tokenization)} token{'s' if len(found.tokenization) != 1 else ''}: {own}{more}"
            + (f". {count_text(len(found.word_start))} more start it as a word start (their ▁ is no byte of it)"
               if phantom_space(model) and found.word_start else ""))


def _ties(index: VocabIndex, token_id: int) -> str:
    same = int(np.count_nonzero(index.scores == index.scores[token_id]))
    return f" (shared by {count_text(same)} tokens)" if same > 1 else ""


def _merges_html(index: VocabIndex, token_id: int) -> str:
    if not index.merges_ready:  # still being read in the worker
        return "<p style='color: gray'>Reading the merges…</p>"
    nodes = index.merge_tree(token_id)
    if not nodes:
        return ""
    piece = index.model.vocab.pieces[token_id]
    if len(nodes) == 1 and nodes[0].text == piece:
        head = "<b>Merges</b> (BPE builds it from its characters in this order)"
    else:
        head = (f"<b>Merges</b>: the merges stop at {len(nodes)} parts; this token is not built by "
                "merging (it is matched whole, e.g. a special or added token)")
    return f"<p>{head}</p><pre>{html.escape(merge_tree_text(nodes))}</pre>"


def merge_tree_text(nodes: list[MergeNode]) -> str:
    """An indented tree: each merge with its rank, then its two parts."""
    lines: list[str] = []
    for depth, node in merge_tree_lines(nodes):
        text = readable(node.text)
        if node.left is not None and node.right is not None:
            lines.append(f"{'   ' * depth}{text}   ← {readable(node.left.text)} + {readable(node.right.text)}"
                         f"   (merge #{node.rank})")
        elif depth == 0:  # a part no merge reaches (the leaves show in their parents' lines)
            lines.append(text)
    return "\n".join(lines)


DOCK_WIDTH = 640


def dock_beside(window: WindowParts, dock: QDockWidget, other_name: str) -> None:
    """Put ``dock`` in the right dock area, hidden, as a tab beside the dock
    named ``other_name`` when there is one; shown, it comes to the front
    and, the first time, gets room for its columns."""
    window.addDockWidget(Qt.DockWidgetArea.RightDockWidgetArea, dock)
    other = window.findChild(QDockWidget, other_name)
    if other is not None:
        window.tabifyDockWidget(other, dock)
    dock.hide()
    sized = [False]

    def on_toggled(shown: bool) -> None:
        if not shown:
            return
        QTimer.singleShot(0, dock.raise_)  # once its tab exists
        if not sized[0] and not dock.isFloating():
            sized[0] = True
            if dock.width() < DOCK_WIDTH * 2 // 3:  # a width restored from the last session stays
                window.resizeDocks([dock], [DOCK_WIDTH], Qt.Orientation.Horizontal)

    dock.toggleViewAction().toggled.connect(on_toggled)


def add_beside(window: WindowParts, act: QAction, name: str, partner: str, before: bool) -> None:
    """Add ``act`` (named ``name``) to the View menu next to the action
    named ``partner`` when that is there, else in a new section at the end."""
    act.setObjectName(name)
    menu = window.menus["view"]
    other = next((a for a in menu.actions() if a.objectName() == partner), None)
    if other is None:
        menu.addSeparator()
        menu.addAction(act)
        return
    actions = menu.actions()
    at = actions.index(other) + (0 if before else 1)
    if at < len(actions):
        menu.insertAction(actions[at], act)
    else:
        menu.addAction(act)


def install_side_dock(window: WindowParts, panel: QWidget, title: str, names: tuple[str, str],
                      partners: tuple[str, str], act: tuple[str, str, str], before: bool,
                      set_model: Callable[[ModelInfo | None], None],
                      set_wanted: Callable[[bool], None]) -> QDockWidget:
    """A dock (hidden until asked for) holding ``panel``, tabbed with its
    partner dock, and its View menu entry beside the partner's. ``names``:
    the dock's and its action's object names; ``partners``: the partner's;
    ``act``: the entry's text, shortcut and tooltip. The panel follows the
    window's model (``set_model``) and works while its dock is visible
    (``set_wanted``)."""
    dock = QDockWidget(title, window)
    dock.setObjectName(names[0])  # saveState/restoreState remember it
    dock.setWidget(panel)
    dock_beside(window, dock, partners[0])
    toggle = dock.toggleViewAction()
    toggle.setText(act[0])
    toggle.setShortcut(QKeySequence(act[1]))
    toggle.setToolTip(f"{act[2]} ({act[1]})")
    window.addAction(toggle)
    add_beside(window, toggle, names[1], partners[1], before=before)
    dock.visibilityChanged.connect(set_wanted)
    window.loader.loaded.connect(set_model)
    set_model(window.model_info)
    return dock


def install(window: WindowParts) -> tuple[QVocabBrowser, QDockWidget]:
    """Add the Vocabulary dock (hidden until asked for) and View ▸ Vocabulary."""
    browser = QVocabBrowser(lambda: window.id_format)
    dock = install_side_dock(window, browser, "Vocabulary", ("vocabularyDock", "actVocabulary"),
                             ("metadataDock", "actModelMetadata"),
                             ("&Vocabulary", SHORTCUT, "Browse, filter and sort every token of the model"),
                             True, browser.set_model, browser.set_wanted)
    app = QApplication.instance()
    if app is not None:  # a running filter stops instead of delaying the exit
        app.aboutToQuit.connect(browser.cancel)
    def find(token_id: int) -> None:
        dock.show()
        dock.raise_()
        browser.find_token(token_id)

    window.table.findInVocabularyRequested.connect(find)
    return browser, dock
