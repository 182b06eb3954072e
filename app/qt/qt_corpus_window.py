"""The Corpus view's window (View ▸ Corpus Profile, see :mod:`.qt_corpus`):
how several models tokenize a whole folder of texts.

The user picks folders and files, ticks models (the open one and the
recent ones are offered), and runs :func:`tokenprism.core.corpus.profile`
in the background: on all local cores (a Dask ``LocalCluster``), on a Dask
scheduler named by address, or in-process ("synchronous"). Progress shows
parts, bytes, rate and time left; Cancel stops the run, and the service
closes its cluster in the worker thread, so the window never waits for it.
The results (:mod:`.qt_corpus_results`): one row per model, the same by
Unicode script, charts (:mod:`.qt_corpus_charts`), the costliest words
(double-click or Enter puts the word in the main editor with that model)
and what was left out with why. Export writes the service's own report
(JSON, CSV, text or HTML). The options are kept in the settings.
"""

from __future__ import annotations

import os
import threading
from typing import Sequence

from PySide6.QtCore import QMimeData, QObject, Qt, Signal
from PySide6.QtGui import QAction, QCloseEvent, QDragEnterEvent, QDragMoveEvent, QDropEvent, QKeySequence, QTextCursor
from PySide6.QtWidgets import (QAbstractItemView, QCheckBox, QFileDialog, QFormLayout, QGroupBox, QLabel, QLineEdit,
                               QListWidget, QListWidgetItem, QProgressBar, QPushButton, QSpinBox, QSplitter,
                               QVBoxLayout, QWidget)

from tokenprism.core import TokenPrismError
from tokenprism.core.corpus import INSTALL_HINT, CorpusReport, Progress, profile
from tokenprism.core.library.names import file_label

from . import qt_compat  # noqa: F401  (guards against a PySide6 bug; see there)
from ..logic import corpus_view as cv
from .qt_background import QBackground
from .qt_corpus_results import QCorpusResults, row_of
from .qt_editor import accept_file_drop
from .qt_export import export_failure
from .window_parts import WindowParts

class _Relay(QObject):
    """Carries a run's progress from the worker thread to the GUI thread."""

    progress = Signal(object)


class QCorpusWindow(QWidget):
    """The Corpus view: what to profile on the left, the results on the right."""

    finished = Signal(object)
    """A :class:`CorpusReport` is shown (also after a cancel: partial counts)."""
    failed = Signal(str)
    exported = Signal(str)
    exportFailed = Signal(str)

    def __init__(self, window: WindowParts) -> None:
        super().__init__(window, Qt.WindowType.Window)
        self.main = window
        self.setWindowTitle("Corpus Profile — TokenPrism")
        self.setAcceptDrops(True)  # folders and texts to profile, .gguf models to tick
        self.resize(1280, 820)
        self.report: CorpusReport | None = None
        self.jobs = QBackground(self)
        self.export_jobs = QBackground(self)
        self._cancel: threading.Event | None = None
        self._ticket = 0
        self._relay = _Relay(self)
        self._relay.progress.connect(self._on_progress)
        saved = cv.options_from_json(window.settings.corpus_options)
        setup = self._make_setup(saved)
        results = self._make_results()
        split = QSplitter(Qt.Orientation.Horizontal)
        split.addWidget(setup)
        split.addWidget(results)
        split.setStretchFactor(0, 0)
        split.setStretchFactor(1, 1)
        split.setSizes([380, 900])
        split.setChildrenCollapsible(False)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(6, 6, 6, 6)
        lay.addWidget(split)
        self._fill_models(saved.models)
        self._update_buttons()

    # ---- construction ---------------------------------------------------------------

    def _make_setup(self, saved: cv.CorpusOptions) -> QWidget:
        texts = QGroupBox("Texts")
        self.path_list = QListWidget()
        self.path_list.setSelectionMode(QAbstractItemView.SelectionMode.ExtendedSelection)
        self.path_list.setToolTip("Folders are read recursively: text files, .jsonl (one record per line), "
                                  ".parquet (a text column); binary files are skipped")
        for p in saved.paths:
            self._add_path_item(p)
        add_folder = QPushButton("Add Folder…")
        add_folder.clicked.connect(self.add_folder_dialog)
        add_files = QPushButton("Add Files…")
        add_files.clicked.connect(self.add_files_dialog)
        self.remove_button = QPushButton("Remove")
        self.remove_button.setToolTip("Remove the selected paths from the list (Delete)")
        self.remove_button.clicked.connect(self.remove_selected_paths)
        act_remove = QAction(self.path_list)
        act_remove.setShortcut(QKeySequence(QKeySequence.StandardKey.Delete))
        act_remove.setShortcutContext(Qt.ShortcutContext.WidgetShortcut)
        act_remove.triggered.connect(self.remove_selected_paths)
        self.path_list.addAction(act_remove)
        self.path_list.itemSelectionChanged.connect(self._update_buttons)
        tv = QVBoxLayout(texts)
        tv.addWidget(self.path_list, 1)
        tv.addLayout(row_of(add_folder, add_files, self.remove_button))

        models = QGroupBox("Models")
        self.model_list = QListWidget()
        self.model_list.setToolTip("Tick the models to compare; the first ticked one is the baseline")
        self.model_list.itemChanged.connect(lambda _item: self._update_buttons())
        add_model = QPushButton("Add Model File…")
        add_model.clicked.connect(self.add_model_dialog)
        mv = QVBoxLayout(models)
        mv.addWidget(self.model_list, 1)
        mv.addLayout(row_of(add_model))

        options = QGroupBox("Options")
        form = QFormLayout(options)
        self.field_edit = QLineEdit(saved.field)
        self.field_edit.setToolTip("The key of each JSON Lines record that holds its text")
        self.workers_spin = QSpinBox()
        self.workers_spin.setRange(0, cv.MAX_WORKERS)
        self.workers_spin.setSpecialValueText("one per core")
        self.workers_spin.setValue(saved.workers)
        self.workers_spin.setToolTip("Worker processes on this computer (each opens each model once); "
                                     "a scheduler's cluster has its own")
        self.limit_spin = QSpinBox()
        self.limit_spin.setRange(0, cv.MAX_LIMIT_MB)
        self.limit_spin.setSpecialValueText("no limit")
        self.limit_spin.setSuffix(" MB")
        self.limit_spin.setValue(saved.limit_mb)
        self.limit_spin.setToolTip("Read at most this much of the corpus (a quick look at a big one)")
        self.special_check = QCheckBox("Add BOS/EOS to each document")
        self.special_check.setChecked(saved.add_special)
        self.special_check.setToolTip("Count the special tokens the model adds, as llama.cpp does")
        self.scheduler_edit = QLineEdit(saved.scheduler)
        self.scheduler_edit.setPlaceholderText("this computer")
        self.scheduler_edit.setToolTip("A Dask scheduler, tcp://HOST:PORT (its workers read the texts and models "
                                       "by the same paths); empty: this computer's cores; synchronous: in this "
                                       "process, without Dask")
        form.addRow("JSON Lines field", self.field_edit)
        form.addRow("Workers", self.workers_spin)
        form.addRow("Read at most", self.limit_spin)
        form.addRow("Scheduler", self.scheduler_edit)
        form.addRow(self.special_check)

        self.run_button = QPushButton("Run")
        self.run_button.setDefault(True)
        self.run_button.setToolTip("Profile the texts with the ticked models (Ctrl+Return)")
        self.run_button.clicked.connect(self.run)
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.setToolTip("Stop the run; the parts counted so far are shown (Esc)")
        self.cancel_button.clicked.connect(self.cancel)
        for key, slot in ((QKeySequence("Ctrl+Return"), self.run), (QKeySequence("Esc"), self.cancel)):
            act = QAction(self)
            act.setShortcut(key)
            act.triggered.connect(slot)
            self.addAction(act)
        self.progress = QProgressBar()
        self.progress.setRange(0, 1000)
        self.progress.setTextVisible(False)
        self.progress.hide()
        self.status = QLabel("")
        self.status.setWordWrap(True)

        panel = QWidget()
        v = QVBoxLayout(panel)
        v.setContentsMargins(0, 0, 0, 0)
        v.addWidget(texts, 2)
        v.addWidget(models, 2)
        v.addWidget(options)
        v.addLayout(row_of(self.run_button, self.cancel_button))
        v.addWidget(self.progress)
        v.addWidget(self.status)
        return panel

    def _make_results(self) -> QWidget:
        self.results = QCorpusResults()
        self.results.export_button.clicked.connect(self.export_dialog)
        act_export = QAction(self)
        act_export.setShortcut(QKeySequence(QKeySequence.StandardKey.Save))
        act_export.triggered.connect(self.export_dialog)
        self.addAction(act_export)
        self.results.wordActivated.connect(self.open_word)
        return self.results

    # ---- paths and models -----------------------------------------------------------

    def _add_path_item(self, path: str) -> None:
        path = os.path.abspath(os.path.expanduser(path))
        if path in self.paths():
            return
        item = QListWidgetItem(cv.display_path(path))
        item.setData(Qt.ItemDataRole.UserRole, path)
        item.setToolTip(path)
        self.path_list.addItem(item)

    def add_paths(self, paths: Sequence[str]) -> None:
        for p in paths:
            self._add_path_item(p)
        self._update_buttons()

    def paths(self) -> list[str]:
        return [str(self.path_list.item(i).data(Qt.ItemDataRole.UserRole)) for i in range(self.path_list.count())]

    def remove_selected_paths(self) -> None:
        for item in self.path_list.selectedItems():
            self.path_list.takeItem(self.path_list.row(item))
        self._update_buttons()

    def add_folder_dialog(self) -> None:
        folder = QFileDialog.getExistingDirectory(self, "Add a Folder of Texts")
        if folder:
            self.add_paths([folder])

    def add_files_dialog(self) -> None:
        files, _ = QFileDialog.getOpenFileNames(self, "Add Text Files", "",
                                                "Texts (*.txt *.md *.jsonl *.ndjson *.parquet);;All files (*)")
        self.add_paths(files)

    def _fill_models(self, ticked: Sequence[str]) -> None:
        """Offer the open model, the saved ones and the recent ones; tick
        the saved choice, else the open model and the one used before it."""
        info = self.main.model_info
        current = [os.path.abspath(info.path)] if info is not None else []
        recent = [p for p in self.main.settings.recent_files() if os.path.isfile(p)]
        offered = list(dict.fromkeys([*current, *ticked, *recent]))
        chosen = set(ticked) if ticked else set(offered[:2])
        for p in offered:
            self.add_model(p, checked=p in chosen)

    def add_model(self, path: str, checked: bool = True) -> None:
        """Offer the model at ``path`` (tick it when it is offered already)."""
        path = os.path.abspath(path)
        for i in range(self.model_list.count()):
            item = self.model_list.item(i)
            if item.data(Qt.ItemDataRole.UserRole) == path:
                if checked:
                    item.setCheckState(Qt.CheckState.Checked)
                return
        info = self.main.model_info
        label = file_label(path) + ("  (open)" if info is not None and os.path.abspath(info.path) == path else "")
        item = QListWidgetItem(label)
        item.setData(Qt.ItemDataRole.UserRole, path)
        item.setToolTip(path)
        item.setFlags(item.flags() | Qt.ItemFlag.ItemIsUserCheckable)
        item.setCheckState(Qt.CheckState.Checked if checked else Qt.CheckState.Unchecked)
        self.model_list.addItem(item)

    def add_dropped(self, paths: Sequence[str]) -> None:
        """Dropped ``.gguf`` files are models (ticked); anything else is text."""
        for p in paths:
            if p.lower().endswith(".gguf"):
                self.add_model(p)
        self.add_paths([p for p in paths if not p.lower().endswith(".gguf")])

    def dragEnterEvent(self, event: QDragEnterEvent) -> None:
        if dropped_paths(event.mimeData()):
            accept_file_drop(event)

    def dragMoveEvent(self, event: QDragMoveEvent) -> None:
        if dropped_paths(event.mimeData()):
            accept_file_drop(event)

    def dropEvent(self, event: QDropEvent) -> None:
        paths = dropped_paths(event.mimeData())
        if paths and accept_file_drop(event):
            self.add_dropped(paths)

    def add_model_dialog(self) -> None:
        files, _ = QFileDialog.getOpenFileNames(self, "Add Model Files", "", "GGUF models (*.gguf);;All files (*)")
        for f in files:
            self.add_model(f)

    def models(self) -> list[str]:
        """The ticked models, in list order."""
        items = [self.model_list.item(i) for i in range(self.model_list.count())]
        return [str(it.data(Qt.ItemDataRole.UserRole)) for it in items if it.checkState() == Qt.CheckState.Checked]

    def options(self) -> cv.CorpusOptions:
        return cv.CorpusOptions(tuple(self.paths()), tuple(self.models()), self.field_edit.text().strip(),
                                self.workers_spin.value(), self.special_check.isChecked(), self.limit_spin.value(),
                                self.scheduler_edit.text().strip())

    def save_options(self) -> None:
        self.main.settings.corpus_options = cv.options_to_json(self.options())

    # ---- running --------------------------------------------------------------------

    @property
    def running(self) -> bool:
        return self._cancel is not None

    def _update_buttons(self) -> None:
        self.run_button.setEnabled(not self.running)
        self.cancel_button.setEnabled(self.running and not (self._cancel is not None and self._cancel.is_set()))
        self.remove_button.setEnabled(bool(self.path_list.selectedItems()))

    def run(self) -> bool:
        """Start profiling with the form's options (False: not started, the
        status says why)."""
        if self.running:
            return False
        opts = self.options()
        problem = opts.problem()
        if problem:
            self.status.setText(problem)
            return False
        self.save_options()
        self._ticket += 1
        ticket = self._ticket
        cancel = self._cancel = threading.Event()
        relay = self._relay

        def job() -> cv.ReportView:  # in the worker thread
            return cv.view_of(profile(list(opts.paths), list(opts.models), field=opts.field,
                                      workers=opts.workers or None, scheduler=opts.scheduler or None,
                                      limit_bytes=opts.limit_bytes, add_special=opts.add_special,
                                      progress=lambda p: relay.progress.emit((ticket, p)), cancel=cancel))

        where = opts.scheduler or "this computer"
        self.status.setText(f"Starting on {where}…")
        self.progress.setValue(0)
        self.progress.show()
        self._update_buttons()
        self.jobs.submit(job, self._on_done, self._on_failed)
        return True

    def cancel(self) -> None:
        """Stop the run; counts of finished parts are still shown."""
        if self._cancel is None or self._cancel.is_set():
            return
        self._cancel.set()
        self.status.setText("Cancelling… (stopping the workers)")
        self._update_buttons()

    def _on_progress(self, payload: tuple[int, Progress]) -> None:
        ticket, p = payload
        if ticket != self._ticket or self._cancel is None or self._cancel.is_set():
            return  # a late report, or one after Cancel: the status says "Cancelling"
        self.progress.setValue(cv.progress_permille(p))
        self.status.setText(cv.progress_text(p))

    def _ended(self) -> None:
        self._cancel = None
        self.progress.hide()
        self._update_buttons()

    def _on_done(self, view: cv.ReportView) -> None:
        self._ended()
        self.status.setText("Cancelled." if view.report.cancelled else "Done.")
        self.show_report(view)

    def _on_failed(self, error: BaseException) -> None:
        self._ended()
        message = describe_failure(error)
        self.status.setText(message)
        self.failed.emit(message)

    # ---- results --------------------------------------------------------------------

    def show_report(self, view: cv.ReportView) -> None:
        self.report = view.report
        self.results.show_report(view)
        self._update_buttons()
        self.finished.emit(view.report)

    def open_word(self, row: cv.WordRow) -> None:
        """Put ``row``'s word in the main window's editor (one edit: Ctrl+Z
        brings the text back) and show it with the word's model."""
        w = self.main
        cursor = QTextCursor(w.editor.document())
        cursor.select(QTextCursor.SelectionType.Document)
        w.editor.replace_sliced(cursor, row.word, "Opening the word")
        info = w.model_info
        if info is None or os.path.abspath(info.path) != os.path.abspath(row.model_path):
            w.open_path(row.model_path)
        w.stats.flash(f"“{row.word}” with {row.model} (Ctrl+Z in the editor brings your text back)", 8000)
        w.show()
        w.raise_()
        w.activateWindow()

    # ---- export ---------------------------------------------------------------------

    def export_dialog(self) -> None:
        if self.report is None:
            return
        path, chosen = QFileDialog.getSaveFileName(self, "Export Corpus Report",
                                                   cv.default_export_name(self.report, "html"),
                                                   ";;".join(cv.EXPORT_FILTERS.values()))
        if path:
            self.export_to(*cv.export_format(path, chosen))

    def export_to(self, path: str, fmt: str) -> bool:
        """Write the report to ``path`` in the background (False: nothing to write)."""
        report = self.report
        if report is None:
            return False
        name = os.path.basename(path)
        self.status.setText(f"Exporting to {name}…")
        self.export_jobs.submit(lambda: cv.write_report(report, path, fmt), lambda _r: self._exported(path),
                                lambda e: self._export_failed(name, e))
        return True

    def _exported(self, path: str) -> None:
        self.status.setText(f"Saved the report to {os.path.basename(path)}.")
        self.exported.emit(path)

    def _export_failed(self, name: str, error: BaseException) -> None:
        message = export_failure(name, error)
        self.status.setText(message)
        self.exportFailed.emit(message)

    # ---- lifetime -------------------------------------------------------------------

    def closeEvent(self, event: QCloseEvent) -> None:
        self.save_options()
        super().closeEvent(event)

    def shutdown(self) -> None:
        """Stop a run and wait for its workers to close (the app is quitting)."""
        if self._cancel is not None:
            self._cancel.set()
        self.save_options()
        self.jobs.shutdown()
        self.export_jobs.shutdown()


def dropped_paths(mime: QMimeData | None) -> list[str]:
    """Local files and folders in a drag's mime data."""
    if mime is None or not mime.hasUrls():
        return []
    return [u.toLocalFile() for u in mime.urls() if u.isLocalFile() and os.path.exists(u.toLocalFile())]


def describe_failure(error: BaseException) -> str:
    """One line on why a run stopped."""
    if isinstance(error, TokenPrismError):
        return str(error)
    if isinstance(error, ImportError):
        return f"Profiling needs the corpus extra ({error.name or error}): {INSTALL_HINT}"
    if isinstance(error, OSError):
        return f"Cannot read “{error.filename or ''}”: {error.strerror or error}."
    return f"The run stopped: {type(error).__name__}: {error}"
