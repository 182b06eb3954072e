"""View ▸ Decode IDs…: paste token ids, see their pieces and the decoded text.

Ids may be written ``1 15043 3186``, ``1,15043,3186`` or as a JSON list
(``tokenprism.core.formats.export.scan_ids`` reads all three, like ``tokenprism
decode``). Words that are not ids and ids outside the model's vocabulary
are flagged where they stand (highlighted in the input, marked in the
table, listed above it) and left out of the decoded text; nothing pasted
can make the view fail. Decoding runs in a worker thread, newest input wins.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass

import numpy as np
from PySide6.QtCore import QAbstractTableModel, QModelIndex, QObject, QPersistentModelIndex, Qt, QTimer
from PySide6.QtGui import (QAction, QCloseEvent, QColor, QFont, QFontDatabase, QGuiApplication, QKeySequence,
                           QSyntaxHighlighter, QTextCharFormat, QTextCursor, QTextDocument)
from PySide6.QtWidgets import (QAbstractItemView, QCheckBox, QDialog, QHBoxLayout, QHeaderView, QLabel,
                               QPlainTextEdit, QPushButton, QSplitter, QTableView, QVBoxLayout,
                               QWidget)

from tokenprism.core import Model
from tokenprism.core.formats.export import IdItem, describe_id_problems, scan_ids

from . import qt_compat  # noqa: F401  (guards against a PySide6 bug; see there)
from ..logic.analysis import ModelInfo, Utf16Map
from ..logic.pieces import piece_label, readable, type_name
from .qt_background import QBackground
from .styles import is_dark, mix
from .window_parts import WindowParts


SHORTCUT = "Ctrl+Shift+D"
DEBOUNCE_MS = 120
MAX_MARKS = 100_000
"""Problems highlighted in the input; more are counted but not drawn."""


def install(window: WindowParts) -> DecodeIds:
    """Add View ▸ Decode IDs… to ``window``."""
    return DecodeIds(window)


# ---- the work (no Qt) ------------------------------------------------------------------------

@dataclass(frozen=True)
class Decoded:
    """Pasted ids read against one model."""

    source: str
    model: Model
    items: tuple[IdItem, ...]
    problems: tuple[str, ...]
    """Per item: why it cannot be decoded, or ``""``."""
    bad: tuple[int, ...]
    """Indices of the items with a problem."""
    text: str
    """The decoded text of the valid ids."""

    @property
    def valid_ids(self) -> list[int]:
        return [it.value for it, p in zip(self.items, self.problems) if not p and it.value is not None]

    def summary(self) -> str:
        if not self.items:
            return "No ids yet: paste ids separated by spaces or commas, or a JSON list."
        if not self.bad:
            return f"{len(self.items):,} ids → {len(self.text):,} characters"
        listed = describe_id_problems([(self.items[i], self.problems[i]) for i in self.bad])
        return (f"{len(self.bad):,} of {len(self.items):,} ids cannot be decoded and are left out of the "
                f"text: {readable(listed, visible_spaces=False)}.")


def decode_ids(model: Model, source: str, special: bool = True) -> Decoded:
    """Read ``source`` as ids and decode the valid ones with ``model``."""
    items = scan_ids(source)
    n = len(model)
    problems = tuple(it.problem(n) for it in items)
    bad = tuple(i for i, p in enumerate(problems) if p)
    valid = [it.value for it, p in zip(items, problems) if not p and it.value is not None]
    return Decoded(source, model, items, problems, bad, model.decode(valid, special=special))


# ---- marks in the input -------------------------------------------------------------------------

class MarkRanges:
    """Sorted ``[start, end)`` document ranges that follow edits of the text."""

    def __init__(self) -> None:
        self.starts: list[int] = []
        self.ends: list[int] = []

    def shift(self, pos: int, removed: int, added: int) -> None:
        """A ``contentsChange`` of the document: move the ranges after the
        edit and drop those it touched. ``removed == added`` is also how a
        format change (the highlighting itself) is reported; an edit of that
        shape is rare and put right by the next result."""
        if not self.starts or removed == added:
            return
        delta = added - removed
        kept = [(s if s < pos else s + delta, e if e <= pos else e + delta)
                for s, e in zip(self.starts, self.ends) if e <= pos or s >= pos + removed]
        self.starts = [s for s, _ in kept]
        self.ends = [e for _, e in kept]


class BadIdMarks(QSyntaxHighlighter):
    """Underlines the ranges of a :class:`MarkRanges`. A highlighter, not
    extra selections: those re-lay out the whole block per mark, which takes
    seconds for a pasted one-line list of thousands of ids."""

    def __init__(self, doc: QTextDocument, ranges: MarkRanges, color: QColor, base: QColor) -> None:
        super().__init__(doc)
        self.ranges = ranges
        self.fmt = QTextCharFormat()
        self.fmt.setBackground(mix(base, color, 0.25))
        self.fmt.setUnderlineStyle(QTextCharFormat.UnderlineStyle.WaveUnderline)
        self.fmt.setUnderlineColor(color)

    def set_ranges(self, starts: list[int], ends: list[int]) -> None:
        """Mark ``[starts[i], ends[i])`` (sorted document positions)."""
        r = self.ranges
        if not starts and not r.starts:
            return
        r.starts, r.ends = starts, ends
        self.rehighlight()

    def highlightBlock(self, text: str) -> None:
        r = self.ranges
        block = self.currentBlock()
        p, n = block.position(), block.length()
        i = bisect.bisect_right(r.ends, p)
        while i < len(r.starts) and r.starts[i] < p + n:
            s = max(r.starts[i], p)
            self.setFormat(s - p, min(r.ends[i], p + n) - s, self.fmt)
            i += 1


# ---- table ---------------------------------------------------------------------------------------

class DecodedTableModel(QAbstractTableModel):
    """One row per pasted word: position, id, piece (or the problem), type."""

    HEADERS = ("#", "ID", "Piece", "Type")

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.decoded: Decoded | None = None
        self.bad_brush = QColor("#e8403a")

    def set_decoded(self, d: Decoded | None) -> None:
        self.beginResetModel()
        self.decoded = d
        self.endResetModel()

    def rowCount(self, parent: QModelIndex | QPersistentModelIndex = QModelIndex()) -> int:
        return 0 if parent.isValid() or self.decoded is None else len(self.decoded.items)

    def columnCount(self, parent: QModelIndex | QPersistentModelIndex = QModelIndex()) -> int:
        return 0 if parent.isValid() else len(self.HEADERS)

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole) -> object:
        if orientation == Qt.Orientation.Horizontal and role == Qt.ItemDataRole.DisplayRole:
            return self.HEADERS[section]
        return None

    def data(self, index: QModelIndex | QPersistentModelIndex, role: int = Qt.ItemDataRole.DisplayRole) -> object:
        d = self.decoded
        if d is None or not index.isValid():
            return None
        row, col = index.row(), index.column()
        item = d.items[row]
        problem = d.problems[row]
        if role == Qt.ItemDataRole.DisplayRole:
            if col == 0:
                return str(row)
            if col == 1:
                return readable(item.text[:40], visible_spaces=False)
            if problem:
                return f"⚠ {problem}" if col == 2 else ""
            assert item.value is not None
            return piece_label(d.model, item.value) if col == 2 else type_name(d.model.vocab.attrs[item.value])
        if role == Qt.ItemDataRole.ForegroundRole and problem and col in (1, 2):
            return self.bad_brush
        if role == Qt.ItemDataRole.TextAlignmentRole and col in (0, 1):
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        if role == Qt.ItemDataRole.ToolTipRole and col in (1, 2):
            if problem:
                return f"“{item.text[:80]}” at character {item.start}: {problem}"
            return f"id {item.value}: “{piece_label(d.model, item.value or 0)}”"
        return None


# ---- dialog --------------------------------------------------------------------------------------

class QDecodeDialog(QDialog):
    """The decode view of one window (non-modal; follows the window's model)."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Decode Token IDs")
        self.info: ModelInfo | None = None
        self.decoded: Decoded | None = None
        self.jobs = QBackground(self, latest_only=True)
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(DEBOUNCE_MS)

        self.model_label = QLabel("No model")
        f = QFont(self.model_label.font())
        f.setBold(True)
        self.model_label.setFont(f)
        self._make_input()
        self.summary = QLabel("")
        self.summary.setWordWrap(True)
        self.summary.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.special = QCheckBox("Show control tokens' text")
        self.special.setChecked(True)
        self.special.setToolTip("Decode control tokens such as <s> to their text, as llama.cpp does with "
                                "special=true")
        self.table_model = DecodedTableModel(self)
        self.table = self._make_table()
        self.output = QPlainTextEdit()
        self.output.setReadOnly(True)
        self.output.setPlaceholderText("The decoded text appears here")
        self.output.setToolTip("The text the valid ids decode to (llama.cpp's detokenizer)")

        self._timer.timeout.connect(self._start)
        self.input.textChanged.connect(self._on_text_changed)
        self.special.toggled.connect(lambda: self._timer.start(0))
        self.table.selectionModel().currentRowChanged.connect(self._on_row)
        self._lay_out()
        self.resize(640, 620)
        self._show(None)

    def _make_input(self) -> None:
        """The ids editor, with its marks under the words that are not ids."""
        self.input = QPlainTextEdit()
        self.input.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        self.input.setPlaceholderText("Paste token ids: 1 15043 3186, or 1,15043,3186, or [1, 15043, 3186]")
        self.input.setTabChangesFocus(True)
        self.input.setToolTip("Token ids separated by spaces or commas, or a JSON list; "
                              "words that are not valid ids are underlined in red")
        self.mark_ranges = MarkRanges()
        # connected before the highlighter's own handler, so the ranges
        # follow an edit before the edited block is highlighted again
        self.input.document().contentsChange.connect(self.mark_ranges.shift)
        self.marks = BadIdMarks(self.input.document(), self.mark_ranges, QColor("#e8403a"),
                                self.input.palette().base().color())

    def _make_table(self) -> QTableView:
        """The table of the ids, one row each: position, text, piece, type."""
        table = QTableView()
        table.setModel(self.table_model)
        table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        table.verticalHeader().hide()
        table.verticalHeader().setDefaultSectionSize(self.fontMetrics().height() + 6)
        hh = table.horizontalHeader()
        hh.setSectionResizeMode(0, QHeaderView.ResizeMode.ResizeToContents)
        hh.setSectionResizeMode(1, QHeaderView.ResizeMode.ResizeToContents)
        hh.setSectionResizeMode(2, QHeaderView.ResizeMode.Stretch)
        hh.setSectionResizeMode(3, QHeaderView.ResizeMode.ResizeToContents)
        return table

    def _lay_out(self) -> None:
        """The ids, the table and the decoded text in a splitter between
        the model's name and the buttons."""
        copy = QPushButton("&Copy Text")
        copy.setToolTip("Copy the decoded text")
        copy.clicked.connect(lambda: QGuiApplication.clipboard().setText(self.output.toPlainText()))
        close = QPushButton("Close")
        close.clicked.connect(self.close)

        top = QWidget()
        tv = QVBoxLayout(top)
        tv.setContentsMargins(0, 0, 0, 0)
        tv.addWidget(QLabel("Token IDs:"))
        tv.addWidget(self.input)
        bottom_table = QWidget()
        bv = QVBoxLayout(bottom_table)
        bv.setContentsMargins(0, 0, 0, 0)
        bv.addWidget(self.summary)
        bv.addWidget(self.table)
        out = QWidget()
        ov = QVBoxLayout(out)
        ov.setContentsMargins(0, 0, 0, 0)
        ov.addWidget(QLabel("Decoded text:"))
        ov.addWidget(self.output)
        split = QSplitter(Qt.Orientation.Vertical)
        for w, stretch in ((top, 1), (bottom_table, 3), (out, 2)):
            split.addWidget(w)
            split.setStretchFactor(split.count() - 1, stretch)
        split.setChildrenCollapsible(False)
        buttons = QHBoxLayout()
        buttons.addWidget(self.special)
        buttons.addStretch(1)
        buttons.addWidget(copy)
        buttons.addWidget(close)
        lay = QVBoxLayout(self)
        lay.addWidget(self.model_label)
        lay.addWidget(split, 1)
        lay.addLayout(buttons)

    # ---- inputs ----------------------------------------------------------------------

    def set_model(self, info: ModelInfo | None) -> None:
        self.info = info
        if info is None:
            self.model_label.setText("No model open: open one to decode ids")
        else:
            self.model_label.setText(f"Decoding with {info.name} ({info.kind}, ids 0..{len(info.model) - 1:,})")
        self._timer.start(0)

    def set_ids_text(self, text: str) -> None:
        self.input.setPlainText(text)

    # ---- work ------------------------------------------------------------------------

    def _on_text_changed(self) -> None:
        # the highlighting of bad ids reports itself as a text change too;
        # only a real edit is worth decoding again
        shown = self.decoded.source if self.decoded is not None else None
        if self.input.toPlainText() != shown:
            self._timer.start()

    def _start(self) -> None:
        info = self.info
        if info is None:
            self._show(None)
            return
        source = self.input.toPlainText()
        special = self.special.isChecked()
        model = info.model
        self.jobs.submit(lambda: decode_ids(model, source, special), self._on_done, self._on_failed)

    def _on_done(self, d: Decoded) -> None:
        if self.info is None or d.model is not self.info.model or d.source != self.input.toPlainText():
            return  # a newer job is coming
        self._show(d)

    def _on_failed(self, error: BaseException) -> None:
        # a tokenizer plugin's bug in detokenizing must not take the view down
        self._show(None)
        self._set_summary(f"Cannot decode: {type(error).__name__}: {readable(str(error))[:200]}", True)

    @property
    def busy(self) -> bool:
        return self._timer.isActive() or self.jobs.busy

    # ---- view ------------------------------------------------------------------------

    def _show(self, d: Decoded | None) -> None:
        self.decoded = d
        self.table_model.set_decoded(d)
        self.output.setPlainText(d.text if d is not None else "")
        self._mark(d)
        if d is None:
            self._set_summary("" if self.info is not None else "Open a model to decode ids.", False)
        else:
            self._set_summary(d.summary(), bool(d.bad))

    def _set_summary(self, text: str, bad: bool) -> None:
        self.summary.setText(("⚠ " if bad else "") + text)
        self.summary.setStyleSheet("color: #d0302b;" if bad and not is_dark(self.palette()) else
                                   "color: #ff7b72;" if bad else "")

    def _mark(self, d: Decoded | None) -> None:
        """Underline the words that are not valid ids where they stand in the input."""
        if d is None or not d.bad:
            self.marks.set_ranges([], [])
            return
        bad = d.bad[:MAX_MARKS]
        u16 = Utf16Map(d.source)
        starts = u16.to16(np.asarray([d.items[i].start for i in bad], dtype=np.int64))
        ends = u16.to16(np.asarray([d.items[i].end for i in bad], dtype=np.int64))
        self.marks.set_ranges(starts.tolist(), ends.tolist())

    def marked_ranges(self) -> list[tuple[int, int]]:
        """``(start, end)`` document positions of the highlighted words."""
        return list(zip(self.mark_ranges.starts, self.mark_ranges.ends))

    def marked_words(self) -> list[str]:
        """The highlighted words, as the input shows them."""
        doc = self.input.document()
        out = []
        for s, e in self.marked_ranges():
            cur = QTextCursor(doc)
            cur.setPosition(s)
            cur.setPosition(e, QTextCursor.MoveMode.KeepAnchor)
            out.append(cur.selectedText())
        return out

    def _on_row(self, current: QModelIndex, _previous: QModelIndex) -> None:
        """Show the selected row's word in the input."""
        d = self.decoded
        if d is None or not current.isValid() or d.source != self.input.toPlainText():
            return
        item = d.items[current.row()]
        u16 = Utf16Map(d.source)
        s, e = (int(x) for x in u16.to16(np.asarray([item.start, item.end], dtype=np.int64)))
        cur = self.input.textCursor()
        cur.setPosition(s)
        cur.setPosition(e, cur.MoveMode.KeepAnchor)
        self.input.blockSignals(True)  # selecting is not editing
        self.input.setTextCursor(cur)
        self.input.blockSignals(False)
        self.input.ensureCursorVisible()

    def closeEvent(self, event: QCloseEvent) -> None:
        self._timer.stop()
        super().closeEvent(event)


class DecodeIds(QObject):
    """The View ▸ Decode IDs… command of one window."""

    def __init__(self, window: WindowParts) -> None:
        super().__init__(window)
        self.window = window
        self.dialog: QDecodeDialog | None = None
        self.act = QAction("&Decode IDs…", window)
        self.act.setShortcut(QKeySequence(SHORTCUT))
        self.act.setToolTip(f"Paste token ids and see their pieces and decoded text ({SHORTCUT})")
        self.act.triggered.connect(self.show)
        window.addAction(self.act)
        menu = window.menus["view"]
        menu.addSeparator()
        menu.addAction(self.act)
        window.loader.loaded.connect(self._on_model)

    def show(self) -> QDecodeDialog:
        if self.dialog is None:
            self.dialog = QDecodeDialog(self.window)
            self.dialog.set_model(self.window.model_info)
        self.dialog.show()
        self.dialog.raise_()
        self.dialog.activateWindow()
        self.dialog.input.setFocus()
        return self.dialog

    def _on_model(self, info: ModelInfo) -> None:
        if self.dialog is not None:
            self.dialog.set_model(info)
