"""One model's rendering in the chat view: where the template comes from,
the rendered text with every token coloured by its origin, and the counts
(per message, scaffold, special tokens, total and share of the context).

Rendering and tokenizing run in a worker (:class:`QBackground`, newest
request wins); a template that fails, loops or explodes shows its one-line
error and the last good rendering stays greyed out below it.
"""

from __future__ import annotations

from typing import Sequence

from PySide6.QtCore import QEvent, QObject, Qt, Signal
from PySide6.QtGui import QColor, QFontDatabase, QHelpEvent, QTextCharFormat, QTextLayout
from PySide6.QtWidgets import (QAbstractItemView, QHeaderView, QLabel, QPlainTextEdit, QTableWidget,
                               QTableWidgetItem, QToolTip, QVBoxLayout, QWidget)

from . import qt_compat  # noqa: F401  (guards against a PySide6 bug; see there)
from tokenprism.core import Model

from ..logic.chat_view import (ChatRequest, ChatView, Run, build_view, context_share, count_rows,
                               origin_notice, token_at, token_tooltip)
from .qt_background import QBackground
from .styles import is_dark

NOTICE_STYLE = "color: palette(text); background: #fff3c4; border-radius: 3px; padding: 2px 4px;"
ERROR_STYLE = "color: #a40000; font-weight: bold;"
MAX_COUNT_ROWS = 12


class QRenderedText(QPlainTextEdit):
    """The rendered conversation, read-only, with a tooltip per token."""

    def __init__(self) -> None:
        super().__init__()
        self.setReadOnly(True)
        self.setUndoRedoEnabled(False)
        self.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        self.setLineWrapMode(QPlainTextEdit.LineWrapMode.WidgetWidth)
        self.view: ChatView | None = None
        self.viewport().installEventFilter(self)

    def show_view(self, view: ChatView) -> None:
        self.view = view
        self.setPlainText(view.result.rendered)
        self._paint(view.runs)

    def _paint(self, runs: Sequence[Run]) -> None:
        # Formats go on each block's layout, as QSyntaxHighlighter puts
        # them: no edit of the document, so 20,000 coloured tokens take a
        # few ms where a cursor per token took half a second.
        doc = self.document()
        formats: dict[tuple[str, bool], QTextCharFormat] = {}
        i, n = 0, len(runs)
        block = doc.begin()
        while block.isValid():
            start = block.position()
            end = start + block.length() - 1  # the block separator is not drawn
            while i < n and runs[i].end <= start:
                i += 1
            ranges: list[QTextLayout.FormatRange] = []
            j = i
            while j < n and runs[j].start < end:
                run = runs[j]
                fmt = formats.get((run.colour, run.straddles))
                if fmt is None:
                    fmt = formats[(run.colour, run.straddles)] = QTextCharFormat()
                    fmt.setBackground(QColor(run.colour))
                    if run.straddles:
                        fmt.setUnderlineStyle(QTextCharFormat.UnderlineStyle.DashUnderline)
                r = QTextLayout.FormatRange()
                r.start = max(run.start, start) - start
                r.length = min(run.end, end) - start - r.start
                r.format = fmt
                ranges.append(r)
                j += 1
            block.layout().setFormats(ranges)
            block = block.next()
        doc.markContentsDirty(0, doc.characterCount())

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if watched is self.viewport() and event.type() == QEvent.Type.ToolTip and isinstance(event, QHelpEvent):
            view = self.view
            pos = self.cursorForPosition(event.pos()).position()
            i = token_at(view, pos) if view is not None else -1
            if view is not None and i >= 0:
                QToolTip.showText(event.globalPos(), token_tooltip(view, i), self.viewport())
            else:
                QToolTip.hideText()
            return True
        return super().eventFilter(watched, event)


class QChatPane(QWidget):
    """One model's rendering of the conversation and its counts."""

    rendered = Signal()
    """A rendering (or its error) is shown."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.model: Model | None = None
        self.view: ChatView | None = None
        self.error = ""
        self._worker = QBackground(self, latest_only=True)
        self._worker.busyChanged.connect(self._on_busy)
        self.title = QLabel()
        self.title.setTextFormat(Qt.TextFormat.PlainText)
        font = self.title.font()
        font.setBold(True)
        self.title.setFont(font)
        self.notice = QLabel()
        self.notice.setWordWrap(True)
        self.notice.setStyleSheet(NOTICE_STYLE)
        self.summary = QLabel()
        self.warning = QLabel()
        self.warning.setWordWrap(True)
        self.warning.setStyleSheet(NOTICE_STYLE)
        self.error_label = QLabel()
        self.error_label.setWordWrap(True)
        self.error_label.setStyleSheet(ERROR_STYLE)
        self.error_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.text = QRenderedText()
        self.text.setToolTip("")
        self.counts = QTableWidget(0, 3)
        self.counts.setHorizontalHeaderLabels(["Origin", "Tokens", "Share"])
        self.counts.verticalHeader().hide()
        self.counts.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.counts.setSelectionMode(QAbstractItemView.SelectionMode.NoSelection)
        self.counts.horizontalHeader().setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        for col in (1, 2):
            self.counts.horizontalHeader().setSectionResizeMode(col, QHeaderView.ResizeMode.ResizeToContents)
        self.counts.setToolTip("Tokens per origin; the rows above the total add up to it")
        self.counts.verticalHeader().setDefaultSectionSize(self.fontMetrics().height() + 6)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.setSpacing(3)
        for w in (self.title, self.notice, self.summary, self.warning, self.error_label):
            lay.addWidget(w)
        lay.addWidget(self.text, 1)
        lay.addWidget(self.counts)
        self._fit_counts()
        for w in (self.notice, self.warning, self.error_label):
            w.hide()

    # ---- state -------------------------------------------------------------------

    @property
    def busy(self) -> bool:
        return self._worker.busy

    def set_model(self, model: Model | None) -> None:
        if model is not self.model:
            # the rendering on screen stays until the next one, but not the
            # old model its encoding holds (the window frees a model it left)
            self.view = self.text.view = None
        self.model = model
        self.title.setText(model.name if model is not None else "")

    def submit(self, request: ChatRequest) -> None:
        """Render ``request`` with this pane's model, in the background."""
        model = self.model
        if model is None:
            return
        self.notice.setText(origin_notice(request.template, model.name))
        self.notice.setVisible(request.template.origin != "file")
        self._worker.submit(lambda: build_view(model, request), self._on_view, self._on_error)

    def _on_busy(self, busy: bool) -> None:
        if busy:
            self.summary.setText(self.summary.text().split("  ·  rendering")[0] + "  ·  rendering…")

    def _on_view(self, view: ChatView) -> None:
        self.view = view
        self.error = ""
        self.error_label.hide()
        self.text.setEnabled(True)
        r = view.result
        dark = is_dark(self.palette())
        self.text.show_view(view)
        self.summary.setText(context_share(r.total, r.context_length))
        self.warning.setText("⚠ " + "; ".join(r.warnings))
        self.warning.setVisible(bool(r.warnings))
        rows = count_rows(r, dark)
        self.counts.setRowCount(len(rows))
        for i, row in enumerate(rows):
            label = QTableWidgetItem(row.label)
            if row.colour:
                label.setBackground(QColor(row.colour))
            else:
                font = label.font()
                font.setBold(True)
                label.setFont(font)
            n = QTableWidgetItem(f"{row.tokens:,}")
            n.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
            share = QTableWidgetItem(f"{row.share:.1f}%")
            share.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
            for col, item in enumerate((label, n, share)):
                self.counts.setItem(i, col, item)
        self._fit_counts()
        self.rendered.emit()

    def _fit_counts(self) -> None:
        # every row shows (up to MAX_COUNT_ROWS, then it scrolls); the text takes the rest
        rows = min(max(self.counts.rowCount(), 3), MAX_COUNT_ROWS)
        height = (self.counts.horizontalHeader().sizeHint().height() + 2 * self.counts.frameWidth()
                  + rows * self.counts.verticalHeader().defaultSectionSize())
        self.counts.setFixedHeight(height)

    def _on_error(self, error: BaseException) -> None:
        self.error = str(error) or type(error).__name__
        self.error_label.setText(self.error)
        self.error_label.show()
        self.text.setEnabled(False)  # the last good rendering stays, greyed
        self.summary.setText(self.summary.text().split("  ·  rendering")[0])
        self.rendered.emit()

    def shutdown(self) -> None:
        self._worker.shutdown()
