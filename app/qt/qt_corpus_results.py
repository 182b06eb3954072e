"""The results half of the Corpus view (:mod:`.qt_corpus`): a summary
line, one row per model, and tabs with the charts, the counts by Unicode
script, the costliest words (filtered by model; double-click or Enter
asks for the word to be opened) and what was left out, with why."""

from __future__ import annotations

from typing import Sequence

from PySide6.QtCore import QEvent, QObject, Qt, Signal
from PySide6.QtGui import QKeyEvent
from PySide6.QtWidgets import (QAbstractItemView, QComboBox, QHBoxLayout, QHeaderView, QLabel, QListWidget,
                               QPushButton, QTableWidget, QTableWidgetItem, QTabWidget, QVBoxLayout, QWidget)

from tokenprism.core.corpus import CorpusReport

from . import qt_compat  # noqa: F401  (guards against a PySide6 bug; see there)
from ..logic import corpus_view as cv
from ..logic.pieces import readable
from .qt_corpus_charts import QCorpusCharts

# two-line headers keep the columns as narrow as their numbers
MODEL_COLUMNS = ("#", "Model", "Tokens", "Bytes/\ntoken", "Chars/\ntoken", "Tokens/\nword", "Byte\nfallback",
                 "Unknown", "Vocabulary used", "vs\nfirst")
SCRIPT_COLUMNS = ("Script", "Model", "Tokens", "Bytes", "Words", "Tokens/byte", "Tokens/word")
WORD_COLUMNS = ("Model", "Uses", "Tokens/use", "Tokens/char", "Word")
ROW_ROLE = Qt.ItemDataRole.UserRole + 1
MODEL_TABLE_MAX_PX = 260


class _NumberItem(QTableWidgetItem):
    """A cell shown formatted and sorted by its number."""

    def __init__(self, text: str, value: float) -> None:
        super().__init__(text)
        self.value = value
        self.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)

    def __lt__(self, other: QTableWidgetItem) -> bool:
        if isinstance(other, _NumberItem):
            return self.value < other.value
        return super().__lt__(other)


Cell = str | tuple[str, float]
"""A cell: text, or (text, number it sorts by)."""


def _table(headers: Sequence[str]) -> QTableWidget:
    t = QTableWidget(0, len(headers))
    t.setHorizontalHeaderLabels(list(headers))
    t.verticalHeader().hide()
    t.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
    t.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
    t.setAlternatingRowColors(True)
    t.verticalHeader().setDefaultSectionSize(t.fontMetrics().height() + 8)
    t.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
    t.horizontalHeader().setStretchLastSection(True)
    return t


def _fill(table: QTableWidget, rows: Sequence[Sequence[Cell]]) -> None:
    """Show ``rows`` in their order (the user may then sort by a column)."""
    table.setSortingEnabled(False)
    table.horizontalHeader().setSortIndicator(-1, Qt.SortOrder.AscendingOrder)
    table.setRowCount(len(rows))
    for r, row in enumerate(rows):
        for c, cell in enumerate(row):
            item = _NumberItem(*cell) if isinstance(cell, tuple) else QTableWidgetItem(cell)
            item.setData(ROW_ROLE, r)
            table.setItem(r, c, item)
    table.setSortingEnabled(True)


def _n(value: int) -> tuple[str, float]:
    return f"{value:,}", float(value)


def _r(value: float) -> tuple[str, float]:
    return cv.fmt_ratio(value), value


def row_of(*widgets: QWidget) -> QHBoxLayout:
    """The widgets side by side, left-aligned."""
    h = QHBoxLayout()
    for wdg in widgets:
        h.addWidget(wdg)
    h.addStretch(1)
    return h


class QCorpusResults(QWidget):
    """What a run found; empty until :meth:`show_report`."""

    wordActivated = Signal(object)
    """A :class:`~tokenprism.app.logic.corpus_view.WordRow` double-clicked or entered."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.report: CorpusReport | None = None
        self.word_rows: list[cv.WordRow] = []
        self.summary = QLabel("Add texts, tick models and press Run.")
        self.summary.setWordWrap(True)
        self.export_button = QPushButton("Export…")
        self.export_button.setToolTip("Save the report: HTML with charts, JSON, or CSV (Ctrl+S)")
        self.model_table = _table(MODEL_COLUMNS)
        self.charts = QCorpusCharts()
        self.script_table = _table(SCRIPT_COLUMNS)
        self.word_table = _table(WORD_COLUMNS)
        self.word_table.setToolTip("Double-click or Enter: open the word in the editor with its model")
        self.word_table.doubleClicked.connect(lambda _index: self._activate_current())
        self.word_table.installEventFilter(self)  # Enter opens the word too
        self.word_model = QComboBox()
        self.word_model.setToolTip("Show the costliest words of one model, or of all")
        self.word_model.currentIndexChanged.connect(self._filter_words)
        words = QWidget()
        wv = QVBoxLayout(words)
        wv.setContentsMargins(0, 4, 0, 0)
        hint = QLabel("Double-click a word, or press Enter, to open it in the editor with its model.")
        wv.addLayout(row_of(QLabel("Model:"), self.word_model, hint))
        wv.addWidget(self.word_table, 1)
        self.left_out = QListWidget()
        self.tabs = QTabWidget()
        self.tabs.setDocumentMode(True)
        self.tabs.addTab(self.charts, "Charts")
        self.tabs.addTab(self.script_table, "By script")
        self.tabs.addTab(words, "Costliest words")
        self.tabs.addTab(self.left_out, "Left out")
        v = QVBoxLayout(self)
        v.setContentsMargins(0, 0, 0, 0)
        head = QHBoxLayout()
        head.addWidget(self.summary, 1)
        head.addWidget(self.export_button, 0, Qt.AlignmentFlag.AlignTop)
        v.addLayout(head)
        v.addWidget(self.model_table)
        v.addWidget(self.tabs, 1)
        self.export_button.setEnabled(False)
        self._fit_model_table()  # the header alone until a run: the tabs get the room

    def show_report(self, view: cv.ReportView) -> None:
        """Show ``view`` (made by :func:`~tokenprism.app.logic.corpus_view.view_of`)."""
        report = self.report = view.report
        self.export_button.setEnabled(True)
        self.summary.setText(view.summary)
        rows = view.models
        _fill(self.model_table, [[_n(i + 1), r.name, _n(r.tokens), _r(r.bytes_per_token), _r(r.chars_per_token),
                                  _r(r.tokens_per_word), _n(r.byte_fallback), _n(r.unknown),
                                  (cv.fmt_share(r.vocab_used, r.vocab_size), r.vocab_share),
                                  (f"{r.vs_first:.1%}", r.vs_first)] for i, r in enumerate(rows)])
        for i, r in enumerate(rows):
            item = self.model_table.item(i, 1)
            if item is not None:
                item.setToolTip(r.path)
        _fill(self.script_table, [[s.script, s.model, _n(s.tokens), _n(s.bytes), _n(s.words), _r(s.tokens_per_byte),
                                   _r(s.tokens_per_word)] for s in view.scripts])
        self.word_rows = list(view.words)
        _fill(self.word_table, [[w.model, _n(w.count), _r(w.tokens_per_use), _r(w.tokens_per_char),
                                 readable(w.word, visible_spaces=False)] for w in self.word_rows])
        self.word_model.blockSignals(True)
        self.word_model.clear()
        self.word_model.addItem("All models", "")
        for r in rows:
            self.word_model.addItem(r.name, r.path)
        self.word_model.blockSignals(False)
        self._filter_words()
        self.left_out.clear()
        self.left_out.addItems(list(view.left_out) or ["Nothing: every file was read and every part counted."])
        self._fit_model_table()
        self.tabs.setTabText(3, f"Left out ({len(report.stats.skipped) + len(report.missing):,})")
        self.charts.show_data(view.charts)

    def _filter_words(self) -> None:
        path = self.word_model.currentData()
        for r in range(self.word_table.rowCount()):
            item = self.word_table.item(r, 0)
            index = item.data(ROW_ROLE) if item is not None else None
            row = self.word_rows[index] if isinstance(index, int) and 0 <= index < len(self.word_rows) else None
            self.word_table.setRowHidden(r, bool(path) and (row is None or row.model_path != path))

    def _fit_model_table(self) -> None:
        """As tall as its rows (a few models): the tabs below get the rest."""
        t = self.model_table
        height = t.horizontalHeader().sizeHint().height() + 2 * t.frameWidth()
        height += sum(t.rowHeight(r) for r in range(t.rowCount()))
        if t.horizontalScrollBar().isVisible() or t.horizontalHeader().length() > t.viewport().width():
            height += t.horizontalScrollBar().sizeHint().height()
        t.setFixedHeight(min(height, MODEL_TABLE_MAX_PX))

    def eventFilter(self, obj: QObject, event: QEvent) -> bool:
        if (obj is self.word_table and event.type() == QEvent.Type.KeyPress and isinstance(event, QKeyEvent)
                and event.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter)):
            self._activate_current()
            return True
        return super().eventFilter(obj, event)

    def current_word(self) -> cv.WordRow | None:
        item = self.word_table.item(self.word_table.currentRow(), 0)
        if item is None:
            return None
        index = item.data(ROW_ROLE)
        return self.word_rows[index] if isinstance(index, int) and 0 <= index < len(self.word_rows) else None

    def _activate_current(self) -> None:
        row = self.current_word()
        if row is not None:
            self.wordActivated.emit(row)
