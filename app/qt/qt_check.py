"""Tokenize ▸ Check Against Source…: does the open GGUF tokenize like the
tokenizer it was converted from?

The user picks the source (a ``tokenizer.json``, a SentencePiece
``.model``, a folder holding one, or a Hugging Face cache folder); the
check runs in the background with progress and Cancel; the window lists
the file's metadata warnings and the minimal diverging strings with the
stage at fault. Clicking a string puts it in the main editor and draws
both tokenizations as lanes, the GGUF's over the source's.
"""

from __future__ import annotations

import html
import os
import threading

from PySide6.QtCore import QObject, Qt, Signal
from PySide6.QtGui import QAction, QCloseEvent, QColor, QFontDatabase, QFontMetrics, QKeySequence
from PySide6.QtWidgets import (QAbstractItemView, QHBoxLayout, QHeaderView, QLabel, QListWidget, QListWidgetItem,
                               QProgressBar, QPushButton, QSplitter, QTableWidget, QTableWidgetItem, QVBoxLayout,
                               QWidget)

from tokenprism.core.check import Divergence

from . import qt_compat  # noqa: F401  (guards against a PySide6 bug; see there)
from ..logic.analysis import Analysis, ModelInfo, tokenize
from ..logic.check_view import (CheckOutcome, divergence_cells, divergence_tooltip, run_check,
                                source_analysis, summary_text, window_texts)
from .qt_background import QBackground
from .qt_compare_lanes import LaneData, QCompareLanes
from .qt_feature import WindowFeature, bring_up
from .qt_source_lane import choose_source, describe_source_error
from .qt_zoom import add_zoom_and_close, zoom_widgets
from .window_parts import WindowParts

CHECK_SHORTCUT = "Ctrl+Shift+U"
COLUMNS = ("Minimal string", "Stage", "Texts", "GGUF tokens", "Source tokens")
ERROR_COLOR = "#d02c26"
LANES_ZOOM = 4
"""Points added to the lanes' text size."""


class _Progress(QObject):
    """Carries the worker's progress reports to the GUI thread (queued)."""

    progress = Signal(int, int)


class QCheckWindow(QWidget):
    """The check's results: summary, minimal strings, metadata warnings and
    the lanes of the string clicked."""

    finished = Signal(object)
    """The :class:`CheckOutcome` of a run that ended (None when it failed)."""
    lanesUpdated = Signal()

    def __init__(self, window: WindowParts) -> None:
        super().__init__(window, Qt.WindowType.Window)
        self.main = window
        self.setWindowTitle("Check Against Source — TokenPrism")
        self.resize(1100, 760)
        self.outcome: CheckOutcome | None = None
        self.source_path = ""
        self.error = ""
        self._info: ModelInfo | None = None
        self._cancel: threading.Event | None = None
        self.jobs = QBackground(self)
        self.lane_jobs = QBackground(self, latest_only=True)
        self._relay = _Progress()
        self._relay.progress.connect(self._on_progress)
        self._make_widgets()
        self._lay_out()
        self._set_running(False)

    def _make_widgets(self) -> None:
        self.source_label = QLabel("No source chosen")
        self.source_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.choose_button = QPushButton("Choose Source…")
        self.choose_button.setToolTip("A tokenizer.json, a SentencePiece .model, or a folder holding one "
                                      f"({CHECK_SHORTCUT})")
        self.choose_button.clicked.connect(self.choose)
        self.again_button = QPushButton("Run Again")
        self.again_button.setToolTip("Check again against the same source (after opening another model, or "
                                     "with other text in the editor, whose lines are checked too)")
        self.again_button.clicked.connect(lambda: self.start(self.source_path))
        self.progress = QProgressBar()
        self.progress.setFormat("%v / %m texts")
        self.progress.setMinimumWidth(180)
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.setToolTip("Stop the check; what was found so far is kept (Esc)")
        self.cancel_button.clicked.connect(self.cancel)
        act_cancel = QAction(self)
        act_cancel.setShortcut(QKeySequence(Qt.Key.Key_Escape))
        act_cancel.triggered.connect(self.cancel)
        self.addAction(act_cancel)
        add_zoom_and_close(self, self.zoom)
        self.summary = QLabel("Choose the tokenizer this GGUF was converted from.")
        self.summary.setWordWrap(True)
        self.summary.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)

        t = self.table = QTableWidget(0, len(COLUMNS))
        t.setHorizontalHeaderLabels(list(COLUMNS))
        t.verticalHeader().hide()
        t.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        t.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        t.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        t.setWordWrap(False)
        t.setAlternatingRowColors(True)
        mono = QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont)
        mono.setPointSizeF(t.font().pointSizeF())
        self._mono = mono
        t.verticalHeader().setDefaultSectionSize(max(t.fontMetrics().height(), QFontMetrics(mono).height()) + 6)
        hh = t.horizontalHeader()
        for c in range(len(COLUMNS)):
            hh.setSectionResizeMode(c, QHeaderView.ResizeMode.ResizeToContents)
        hh.setSectionResizeMode(len(COLUMNS) - 1, QHeaderView.ResizeMode.Stretch)
        hh.setDefaultAlignment(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter)
        t.setToolTip("Each minimal string still tokenizes differently; no character can be removed from it "
                     "without the two agreeing. Click one to put it in the editor and see both tokenizations.")
        t.itemSelectionChanged.connect(self._on_selection)

        self.warnings = QListWidget()
        self.warnings.setWordWrap(True)
        self.warnings.setToolTip("What looks stale or wrong in the GGUF's own metadata, source or not")

        self.lanes = QCompareLanes()
        # two tokenizations of one vocabulary: a cut beside a space is a real
        # difference here (a pre-tokenizer's), not two conventions
        self.lanes.set_ignore_space_cuts(False)
        # a minimal string is a few characters: drawn larger than the compare view's text
        self._zoom = zoom_widgets((self.lanes,), 0, LANES_ZOOM)
        self.lanes_label = QLabel("Click a minimal string: the GGUF's tokens are drawn over the source's.")

    def _lay_out(self) -> None:
        bar = QHBoxLayout()
        bar.addWidget(self.source_label, 1)
        bar.addWidget(self.choose_button)
        bar.addWidget(self.again_button)
        bar.addWidget(self.progress)
        bar.addWidget(self.cancel_button)

        def boxed(title: str, widget: QWidget) -> QWidget:
            box = QWidget()
            v = QVBoxLayout(box)
            v.setContentsMargins(0, 4, 0, 0)
            head = QLabel(f"<b>{title}</b>")
            v.addWidget(head)
            v.addWidget(widget, 1)
            return box

        lanes_box = QWidget()
        lv = QVBoxLayout(lanes_box)
        lv.setContentsMargins(0, 4, 0, 0)
        lv.addWidget(self.lanes_label)
        lv.addWidget(self.lanes, 1)
        self.splitter = QSplitter(Qt.Orientation.Vertical)
        self.splitter.addWidget(boxed("Minimal diverging strings", self.table))
        self.splitter.addWidget(boxed("Metadata warnings", self.warnings))
        self.splitter.addWidget(lanes_box)
        # most room for the list; the lanes of one short string need little
        self.splitter.setStretchFactor(0, 5)
        self.splitter.setStretchFactor(1, 1)
        self.splitter.setStretchFactor(2, 2)
        self.splitter.setSizes([420, 80, 180])
        self.splitter.setChildrenCollapsible(False)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(8, 8, 8, 8)
        lay.addLayout(bar)
        lay.addWidget(self.summary)
        lay.addWidget(self.splitter, 1)

    def zoom(self, step: int) -> None:
        """Larger (1) or smaller (-1) lanes, or back to their first size (0)."""
        self._zoom = zoom_widgets((self.lanes,), self._zoom, step if step else LANES_ZOOM - self._zoom)

    # ---- running ------------------------------------------------------------------------

    @property
    def running(self) -> bool:
        return self.jobs.busy

    def _set_running(self, on: bool) -> None:
        self.progress.setVisible(on)
        self.cancel_button.setVisible(on)
        self.cancel_button.setEnabled(on)
        self.choose_button.setEnabled(not on)
        self.again_button.setEnabled(not on and bool(self.source_path))

    def choose(self) -> None:
        q = self.main.settings.q
        folder = q.value("check/folder", "")
        start = folder if isinstance(folder, str) and os.path.isdir(folder) else os.path.expanduser("~")
        path = choose_source(self, start)
        if path:
            q.setValue("check/folder", os.path.dirname(path.rstrip(os.sep)))
            self.start(path)

    def start(self, source_path: str) -> bool:
        """Check the window's model against ``source_path`` in the background."""
        info = self.main.model_info
        if self.running or not source_path:
            return False
        if info is None:
            self._show_error("Open a GGUF model first: the check compares it with the tokenizer it came from.")
            return False
        self.source_path = source_path
        self._info = info
        self.outcome = None
        self.error = ""
        self.source_label.setText(f"<b>{html.escape(info.name)}</b> against <b>{html.escape(source_path)}</b>")
        self.source_label.setToolTip(f"{info.path}\n{source_path}")
        self.table.setRowCount(0)
        self.warnings.clear()
        self.lanes.set_lanes("", [])
        texts = window_texts(self.main.editor.token_text())
        add = self.main.act_add_special.isChecked()
        cancel = self._cancel = threading.Event()
        relay = self._relay
        model = info.model
        self.progress.setRange(0, len(texts))
        self.progress.setValue(0)
        self.summary.setStyleSheet("")
        self.summary.setText(f"Loading {os.path.basename(source_path.rstrip(os.sep))} and checking "
                             f"{len(texts):,} texts{' with BOS/EOS' if add else ''}…")
        self.jobs.submit(lambda: run_check(model, source_path, texts, add, relay.progress.emit, cancel),
                         self._on_done, self._on_failed)
        self._set_running(True)
        return True

    def cancel(self) -> None:
        if self._cancel is not None and self.running:
            self._cancel.set()
            self.cancel_button.setEnabled(False)
            self.summary.setText("Cancelling…")

    def _on_progress(self, done: int, total: int) -> None:
        if self.running:
            self.progress.setRange(0, total)
            self.progress.setValue(done)

    def _on_done(self, outcome: CheckOutcome) -> None:
        self._set_running(False)
        self.outcome = outcome
        self.summary.setText(summary_text(outcome))
        self._fill(outcome)
        self.finished.emit(outcome)

    def _on_failed(self, error: BaseException) -> None:
        self._set_running(False)
        self._show_error(describe_source_error(error))
        self.finished.emit(None)

    def _show_error(self, message: str) -> None:
        self.error = message
        self.summary.setText(message)
        self.summary.setStyleSheet(f"color: {ERROR_COLOR}")

    def _fill(self, outcome: CheckOutcome) -> None:
        t = self.table
        divergences = outcome.result.divergences
        t.setRowCount(len(divergences))
        for row, d in enumerate(divergences):
            tip = divergence_tooltip(d)
            for c, value in enumerate(divergence_cells(d, outcome.model, outcome.source)):
                item = QTableWidgetItem(value)
                item.setToolTip(tip)
                if c in (0, 3, 4):
                    item.setFont(self._mono)
                if c == 2:
                    item.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
                t.setItem(row, c, item)
        self.warnings.clear()
        for w in outcome.result.metadata_warnings:
            entry = QListWidgetItem(f"[{w.code}] {w.message}")
            entry.setForeground(QColor(ERROR_COLOR))
            self.warnings.addItem(entry)
        if not outcome.result.metadata_warnings:
            self.warnings.addItem("Nothing in the GGUF's metadata looks stale or wrong.")

    # ---- one minimal string --------------------------------------------------------------

    def _on_selection(self) -> None:
        rows = self.table.selectionModel().selectedRows()
        if rows:
            self.show_divergence(rows[0].row())

    def show_divergence(self, row: int) -> None:
        """Put minimal string ``row`` in the main editor and draw both
        tokenizations of it (tokenized in the background)."""
        outcome, info = self.outcome, self._info
        if outcome is None or info is None or not 0 <= row < len(outcome.result.divergences):
            return
        d = outcome.result.divergences[row]
        self.main.editor.setPlainText(d.text)
        source, add = outcome.source, outcome.add_special

        def job() -> tuple[Divergence, Analysis | None, Analysis]:
            ours = tokenize(info, d.text, 0, add, source.ref.parse_special)
            return d, ours, source_analysis(source, d.text, add)

        self.lane_jobs.submit(job, self._on_lanes, lambda e: self._show_error(describe_source_error(e)))

    def _on_lanes(self, result: tuple[Divergence, Analysis | None, Analysis]) -> None:
        d, ours, theirs = result
        info, source = self._info, self.outcome.source if self.outcome is not None else None
        if info is None or source is None:
            return
        self.lanes.set_lanes(d.text, [LaneData(info.name, info.kind, ours, "", info.path),
                                      LaneData(f"{source.name} (source)", source.ref.library, theirs, "",
                                               source.ref.path)])
        self.lanes_label.setText(f"{d.stage}: {d.why}" if d.why else d.stage)
        self.lanes_label.setToolTip(divergence_tooltip(d))
        self.lanesUpdated.emit()

    # ---- lifetime ---------------------------------------------------------------------

    def closeEvent(self, event: QCloseEvent) -> None:
        self.cancel()
        super().closeEvent(event)

    def shutdown(self) -> None:
        if self._cancel is not None:
            self._cancel.set()
        self.jobs.shutdown()
        self.lane_jobs.shutdown()


class CheckFeature(WindowFeature):
    """Tokenize ▸ Check Against Source… of one main window (the results
    window is made on first use)."""

    def __init__(self, window: WindowParts) -> None:
        super().__init__(window, "checkFeature", "Check Against &Source…", CHECK_SHORTCUT,
                         "Does this GGUF tokenize like the tokenizer.json or .model it was converted from? "
                         "Finds minimal diverging strings and the stage at fault", "tokenize", separate=True)
        self.view: QCheckWindow | None = None
        self.act.triggered.connect(self.choose)

    def show(self) -> QCheckWindow:
        if self.view is None:
            self.view = QCheckWindow(self.window)
        bring_up(self.view)
        return self.view

    def choose(self, _checked: bool = False) -> None:
        """Ask for a source, then check the open model against it."""
        if self.window.model_info is None:
            self.window.banner.show_message("Open a GGUF model first: Check Against Source compares it with "
                                            "the tokenizer it was converted from.")
            return
        self.show().choose()

    def check(self, source_path: str) -> QCheckWindow:
        """Check the open model against ``source_path`` (no dialog)."""
        view = self.show()
        view.start(source_path)
        return view

    def shutdown(self) -> None:
        if self.view is not None:
            self.view.shutdown()


def install(window: WindowParts) -> CheckFeature:
    """Add Tokenize ▸ Check Against Source… to ``window``."""
    return CheckFeature(window)


__all__ = ["CHECK_SHORTCUT", "CheckFeature", "QCheckWindow", "install"]
