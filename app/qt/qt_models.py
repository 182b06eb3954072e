"""View ▸ Models Panel: the GGUF models found on this computer.

A dock lists what ``tokenprism.core.library.discovery`` finds (the same list as
``tokenprism models``): name, tokenizer type, vocab size, file size and
where it was found, filtered as you type. The scan runs in a worker thread
and streams its rows in, with a busy bar; it starts the first time the
panel is shown and again with Rescan or after Add Folder…. Added folders are
kept in the settings. Enter or a double click opens the model in the
window, which reads only its tokenizer, so a 40 GB model opens as fast as a
vocab file.
"""

from __future__ import annotations

import os
import sys
import threading
from functools import partial
from pathlib import Path
from typing import Any, Mapping

from PySide6.QtCore import (QAbstractTableModel, QModelIndex, QObject, QPersistentModelIndex, QSortFilterProxyModel,
                            Qt, Signal)
from PySide6.QtGui import QFont, QKeySequence
from PySide6.QtWidgets import (QAbstractItemView, QDockWidget, QFileDialog, QHBoxLayout, QHeaderView, QLabel,
                               QLineEdit, QMenu, QProgressBar, QPushButton, QTableView, QToolButton, QVBoxLayout,
                               QWidget)

from tokenprism.core.library.discovery import FoundModel, discover, opened_folders
from tokenprism.core.plugins import tokenizer_specs
from tokenprism.core.library.samples import (SDIST_SHA256, SDIST_SIZE, SDIST_URL, SamplesError, SamplesReport,
                                     default_samples_dir, fetch_samples)

from . import qt_compat  # noqa: F401  (guards against a PySide6 bug; see there)
from ..logic.pieces import human_size
from .window_parts import WindowParts


PANEL_SHORTCUT = "Ctrl+Shift+L"
PANEL_WIDTH = 520
COLUMNS = ("Name", "Tokenizer", "Vocab", "Size", "Source")
COL_NAME, COL_TOKENIZER, COL_VOCAB, COL_SIZE, COL_SOURCE = range(len(COLUMNS))
SORT_ROLE = Qt.ItemDataRole.UserRole + 1
PATH_ROLE = Qt.ItemDataRole.UserRole + 2
_ModelIndex = QModelIndex | QPersistentModelIndex


def install(window: WindowParts) -> QModelsPanel:
    """Add the Models dock (hidden until asked for) and View ▸ Models Panel."""
    panel = QModelsPanel(window)
    dock = QDockWidget("Models", window)
    dock.setObjectName("modelsDock")  # saveState/restoreState remember it
    dock.setWidget(panel)
    window.addDockWidget(Qt.DockWidgetArea.LeftDockWidgetArea, dock)
    dock.hide()
    act = dock.toggleViewAction()
    act.setText("&Models Panel")
    act.setShortcut(QKeySequence(PANEL_SHORTCUT))
    act.setToolTip(f"GGUF models found on this computer ({PANEL_SHORTCUT})")
    window.addAction(act)
    window.menus["view"].addSeparator()
    window.menus["view"].addAction(act)
    dock.visibilityChanged.connect(panel.on_shown)
    act.triggered.connect(lambda checked: panel.filter.setFocus() if checked else None)  # type to filter at once
    window.loader.loaded.connect(lambda info: panel.table_model.set_current(info.path))
    window.loader.loaded.connect(lambda info: panel.on_model_opened(info.path))

    def cancel_background_work(*_: object) -> None:
        # only Python state is touched: the panel's Qt side is being deleted
        panel.scanner.stop(wait=False)
        panel._download_cancel.set()

    window.destroyed.connect(cancel_background_work)
    panel.dock = dock
    panel.toggle_action = act
    return panel


# ---- data ----------------------------------------------------------------------------------------

def kind_names() -> dict[str, str]:
    """``tokenizer.ggml.model`` → the installed plugin's short name ("SPM"…)."""
    out: dict[str, str] = {}
    for spec in reversed(tokenizer_specs()):  # the first spec listed wins, as when opening
        for t in spec.model_types:
            out[t] = spec.name.upper()
    return out


class ModelListModel(QAbstractTableModel):
    """The found models, one per row, in the order found."""

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.models: list[FoundModel] = []
        self.kinds = kind_names()
        self.current = ""

    def rowCount(self, parent: _ModelIndex = QModelIndex()) -> int:
        return 0 if parent.isValid() else len(self.models)

    def columnCount(self, parent: _ModelIndex = QModelIndex()) -> int:
        return 0 if parent.isValid() else len(COLUMNS)

    def headerData(self, section: int, orientation: Qt.Orientation,
                   role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if orientation == Qt.Orientation.Horizontal and role == Qt.ItemDataRole.DisplayRole:
            return COLUMNS[section]
        return None

    def tokenizer_text(self, m: FoundModel) -> str:
        if not m.tokenizer:
            return "none"
        kind = self.kinds.get(m.tokenizer)
        return f"{kind} · {m.tokenizer}" if kind else f"{m.tokenizer} (unsupported)"

    def data(self, index: _ModelIndex, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid():
            return None
        m = self.models[index.row()]
        col = index.column()
        if role == Qt.ItemDataRole.DisplayRole:
            if col == COL_NAME:
                return m.name
            if col == COL_TOKENIZER:
                return self.tokenizer_text(m)
            if col == COL_VOCAB:
                return f"{m.vocab_size:,}" if m.vocab_size else "–"
            if col == COL_SIZE:
                return human_size(m.size)
            return m.source
        if role == SORT_ROLE:
            return (m.name.lower(), self.tokenizer_text(m), m.vocab_size, m.size, m.source)[col]
        if role == PATH_ROLE:
            return m.path
        if role == Qt.ItemDataRole.ToolTipRole:
            lines = [m.path]
            if m.model_name:
                lines.insert(0, m.model_name)
            if not m.tokenizer:
                lines.append("This file holds no tokenizer (a projector, adapter or tensor-only file).")
            elif m.tokenizer not in self.kinds:
                lines.append(f"No installed tokenizer plugin handles {m.tokenizer!r}.")
            return "\n".join(lines)
        if role == Qt.ItemDataRole.TextAlignmentRole and col in (COL_VOCAB, COL_SIZE):
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        if role == Qt.ItemDataRole.ForegroundRole and (not m.tokenizer or m.tokenizer not in self.kinds):
            from PySide6.QtGui import QPalette
            from PySide6.QtWidgets import QApplication
            return QApplication.palette().color(QPalette.ColorGroup.Disabled, QPalette.ColorRole.Text)
        if role == Qt.ItemDataRole.FontRole and m.path == self.current:
            f = QFont()
            f.setBold(True)
            return f
        return None

    def clear(self) -> None:
        self.beginResetModel()
        self.models = []
        self.kinds = kind_names()
        self.endResetModel()

    def append(self, m: FoundModel) -> None:
        n = len(self.models)
        self.beginInsertRows(QModelIndex(), n, n)
        self.models.append(m)
        self.endInsertRows()

    def set_current(self, path: str) -> None:
        self.current = path
        if self.models:
            self.dataChanged.emit(self.index(0, 0), self.index(len(self.models) - 1, len(COLUMNS) - 1),
                                  [Qt.ItemDataRole.FontRole])


# ---- the scan ------------------------------------------------------------------------------------

class _DownloadRelay(QObject):
    progress = Signal(int, int)
    done = Signal(object)
    failed = Signal(str)


class _Relay(QObject):
    """Carries the worker thread's results to the GUI thread (queued)."""

    found = Signal(int, object)
    progress = Signal(int, str)
    finished = Signal(int, str)


class ModelScanner(QObject):
    """Runs :func:`discover` in a thread; each row arrives as ``found``.
    A rescan cancels the running scan, whose late rows are dropped."""

    found = Signal(object)
    progress = Signal(str)
    finished = Signal(str)  # "" or an error message
    busyChanged = Signal(bool)

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.home = Path.home()
        self.env: Mapping[str, str] = os.environ
        self.platform = sys.platform
        self.include_system = True
        self.data_dir: Path | None = None  # tokenprism's data folder (None: platformdirs'); tests give a fake one
        self._generation = 0
        self._cancel = threading.Event()
        self._thread: threading.Thread | None = None
        self._relay = _Relay()
        self._relay.found.connect(self._on_found)
        self._relay.progress.connect(self._on_progress)
        self._relay.finished.connect(self._on_finished)
        self.busy = False

    def start(self, folders: list[str], opened: list[str] | None = None) -> None:
        """Scan the usual places, ``folders`` and the folders of the
        ``opened`` model files."""
        self.stop(wait=False)
        opened = list(opened or ())
        self._generation += 1
        gen = self._generation
        cancel = self._cancel = threading.Event()
        relay = self._relay
        home, env, platform, system = self.home, dict(self.env), self.platform, self.include_system
        data_dir = self.data_dir

        def emit(signal: Any, *args: object) -> None:
            try:
                signal.emit(gen, *args)
            except RuntimeError:  # the panel went away with its window: stop quietly
                cancel.set()

        def run() -> None:  # in the worker thread
            error = ""
            try:
                for m in discover(home, env, platform, folders, system,
                                  progress=lambda text: emit(relay.progress, text), opened=opened,
                                  data_dir=data_dir):
                    if cancel.is_set():
                        return
                    emit(relay.found, m)
            except Exception as e:  # noqa: BLE001 - shown in the panel, never raised into Qt
                error = f"Scan failed: {e}"
            if not cancel.is_set():
                emit(relay.finished, error)

        self._set_busy(True)
        self._thread = threading.Thread(target=run, name="tokenprism-model-scan", daemon=True)
        self._thread.start()

    def stop(self, wait: bool = True) -> None:
        self._cancel.set()
        if wait and self._thread is not None:
            self._thread.join(timeout=5)

    def _set_busy(self, busy: bool) -> None:
        if busy != self.busy:
            self.busy = busy
            self.busyChanged.emit(busy)

    def _on_found(self, gen: int, m: FoundModel) -> None:
        if gen == self._generation:
            self.found.emit(m)

    def _on_progress(self, gen: int, text: str) -> None:
        if gen == self._generation:
            self.progress.emit(text)

    def _on_finished(self, gen: int, error: str) -> None:
        if gen == self._generation:
            self._set_busy(False)
            self.finished.emit(error)


# ---- the panel -----------------------------------------------------------------------------------

class QModelsPanel(QWidget):
    """Filter box, Rescan, Add Folder…, the model table and a status line."""

    def __init__(self, window: WindowParts) -> None:
        super().__init__(window)
        self.window_ = window
        self.settings = window.settings
        self.dock: QDockWidget | None = None
        self.toggle_action: Any = None
        self.scanned = False
        self._scanned_opened: list[Path] = []  # folders of opened models the last scan looked at
        self.table_model = ModelListModel(self)
        self.proxy = QSortFilterProxyModel(self)
        self.proxy.setSourceModel(self.table_model)
        self.proxy.setFilterKeyColumn(-1)
        self.proxy.setFilterCaseSensitivity(Qt.CaseSensitivity.CaseInsensitive)
        self.proxy.setSortRole(SORT_ROLE)
        self.scanner = ModelScanner(self)

        self._make_controls()
        self.view = self._make_view()
        self._lay_out()
        self._connect()
        self._set_up_downloads()

    def _make_controls(self) -> None:
        """The filter box, the Rescan and Add Folder… buttons, the busy bar
        and the status line."""
        self.filter = QLineEdit()
        self.filter.setPlaceholderText("Filter by name, tokenizer or source")
        self.filter.setClearButtonEnabled(True)
        self.filter.setToolTip("Show only models whose name, tokenizer or source contains this text")
        self.rescan_button = QPushButton("Rescan")
        self.rescan_button.setToolTip("Look for models again")
        self.add_button = QToolButton()
        self.add_button.setText("Add Folder…")
        self.add_button.setToolTip("Also look for .gguf files in a folder of your choice (remembered)")
        self.add_button.setPopupMode(QToolButton.ToolButtonPopupMode.MenuButtonPopup)
        self.folders_menu = QMenu(self)
        self.add_button.setMenu(self.folders_menu)
        self.busy_bar = QProgressBar()
        self.busy_bar.setRange(0, 0)  # busy mode: the number of files is not known in advance
        self.busy_bar.setMaximumHeight(6)
        self.busy_bar.setTextVisible(False)
        self.busy_bar.hide()
        self.status = QLabel("Not scanned yet")
        self.status.setWordWrap(True)

    def _make_view(self) -> QTableView:
        """The table of found models, sortable, in found order at first."""
        view = QTableView()
        view.setModel(self.proxy)
        view.setSortingEnabled(True)
        view.sortByColumn(-1, Qt.SortOrder.AscendingOrder)  # found order until a header is clicked
        view.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        view.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        view.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        view.setAlternatingRowColors(True)
        view.setWordWrap(False)
        view.setTextElideMode(Qt.TextElideMode.ElideMiddle)  # keep the file name's end visible
        view.verticalHeader().hide()
        view.verticalHeader().setDefaultSectionSize(view.fontMetrics().height() + 6)
        header = view.horizontalHeader()
        header.setSectionResizeMode(COL_NAME, QHeaderView.ResizeMode.Stretch)
        for col in (COL_TOKENIZER, COL_VOCAB, COL_SIZE, COL_SOURCE):
            header.setSectionResizeMode(col, QHeaderView.ResizeMode.ResizeToContents)
        view.setToolTip("Enter or double-click opens the model; right-click to compare it with the open one")
        view.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        return view

    def _lay_out(self) -> None:
        top = QHBoxLayout()
        top.addWidget(self.filter, 1)
        top.addWidget(self.rescan_button)
        top.addWidget(self.add_button)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(4, 4, 4, 4)
        lay.addLayout(top)
        lay.addWidget(self.view, 1)
        lay.addWidget(self.busy_bar)
        lay.addWidget(self.status)
        self.setMinimumWidth(360)

    def _connect(self) -> None:
        """What the controls, the table and the scanner do."""
        self.filter.textChanged.connect(self.proxy.setFilterFixedString)
        self.filter.textChanged.connect(lambda _: self._show_count())
        self.rescan_button.clicked.connect(self.rescan)
        self.add_button.clicked.connect(self.add_folder_dialog)
        self.folders_menu.aboutToShow.connect(self._fill_folders_menu)
        self.view.customContextMenuRequested.connect(self._context_menu)
        self.view.activated.connect(self.open_index)
        self.scanner.found.connect(self._on_found)
        self.scanner.progress.connect(self.status.setText)
        self.scanner.finished.connect(self._on_finished)
        self.scanner.busyChanged.connect(self._on_busy)

    def _set_up_downloads(self) -> None:
        """`tokenprism samples` from the panel; tests point these at a
        local archive."""
        self.samples_url = SDIST_URL
        self.samples_sha256 = SDIST_SHA256
        self.samples_dest: Path | None = None
        self.downloading = False
        self._download_cancel = threading.Event()
        self._download_relay = _DownloadRelay(self)
        self._download_relay.progress.connect(self._on_download_progress)
        self._download_relay.done.connect(self._on_downloaded)
        self._download_relay.failed.connect(self._on_download_failed)

    # ---- scanning -----------------------------------------------------------------------------

    @property
    def scanning(self) -> bool:
        return self.scanner.busy

    def on_shown(self, visible: bool) -> None:
        if visible and not self.scanned:
            dock = self.dock
            if dock is not None and not dock.isFloating() and dock.width() < PANEL_WIDTH:
                # wide enough for the names on first show; a width the user chose is kept
                self.window_.resizeDocks([dock], [PANEL_WIDTH], Qt.Orientation.Horizontal)
            self.rescan()

    def rescan(self) -> None:
        self.scanned = True
        self.table_model.clear()
        if self.window_.model_info is not None:
            self.table_model.set_current(self.window_.model_info.path)
        self.status.setText("Scanning…")
        opened = self.settings.recent_files()
        self._scanned_opened = opened_folders(opened)
        self.scanner.start(self.settings.model_folders(), opened)

    def on_model_opened(self, path: str) -> None:
        """A model from a folder the list has not looked at: look again, so
        it and the models beside it are listed."""
        if self.scanned and opened_folders([path])[0] not in self._scanned_opened:
            self.rescan()

    def _on_found(self, m: FoundModel) -> None:
        self.table_model.append(m)

    def _on_busy(self, busy: bool) -> None:
        self.busy_bar.setVisible(busy or self.downloading)
        self.rescan_button.setEnabled(not busy)

    def _on_finished(self, error: str) -> None:
        if error:
            self.status.setText(error)
        else:
            self._show_count()

    def _show_count(self) -> None:
        if self.scanner.busy:
            return
        total = self.table_model.rowCount()
        shown = self.proxy.rowCount()
        if total == 0:
            self.status.setText("No GGUF models found in the usual places or beside the models you opened. "
                                "Add a folder, or run `tokenprism samples` to download llama.cpp's reference "
                                "vocabs.")
            return
        text = f"{total} model{'s' if total != 1 else ''}"
        if shown != total:
            text = f"{shown} of {text}"
        self.status.setText(text + " · Enter or double-click opens one")
        self.status.setToolTip(f"Reference vocabs from `tokenprism samples`: {default_samples_dir()}")

    # ---- folders ----------------------------------------------------------------------------------

    def add_folder_dialog(self) -> None:
        folder = QFileDialog.getExistingDirectory(self, "Add a folder to scan for GGUF models", str(Path.home()))
        if folder:
            self.add_folder(folder)

    def add_folder(self, folder: str) -> None:
        self.settings.add_model_folder(folder)
        self.rescan()

    def remove_folder(self, folder: str) -> None:
        self.settings.remove_model_folder(folder)
        self.rescan()

    def _fill_folders_menu(self) -> None:
        menu = self.folders_menu
        menu.clear()
        menu.addAction("Add Folder…", self.add_folder_dialog)
        folders = self.settings.model_folders()
        if folders:
            menu.addSeparator()
        for f in folders:
            sub = menu.addMenu(f)
            sub.addAction("Remove from the scan", partial(self.remove_folder, f))
        menu.addSeparator()
        act = menu.addAction(f"Download llama.cpp Reference Vocabs ({SDIST_SIZE / 1e6:.0f} MB)…",
                             self.download_samples)
        act.setEnabled(not self.downloading)
        act.setToolTip("The same as `tokenprism samples`: llama.cpp's ggml-vocab test files, "
                       f"verified by SHA-256, into {default_samples_dir()}")
        menu.setToolTipsVisible(True)

    # ---- reference vocabs ----------------------------------------------------------------------

    def download_samples(self, confirm: bool = True) -> None:
        """Fetch the reference vocabs in the background, then rescan."""
        if self.downloading:
            return
        dest = self.samples_dest or default_samples_dir()
        if confirm:
            from PySide6.QtWidgets import QMessageBox
            answer = QMessageBox.question(
                self, "Download reference vocabs",
                f"Download the llama-cpp-python source release ({SDIST_SIZE / 1e6:.0f} MB) from PyPI "
                f"and unpack llama.cpp's reference vocab files into\n{dest}?")
            if answer != QMessageBox.StandardButton.Yes:
                return
        self.downloading = True
        self.busy_bar.setRange(0, 0)
        self.busy_bar.show()
        self.status.setText("Downloading the reference vocabs…")
        relay, url, sha = self._download_relay, self.samples_url, self.samples_sha256
        cancel = self._download_cancel = threading.Event()

        def progress(done: int, total: int) -> None:
            if cancel.is_set():
                raise SamplesError("download cancelled")
            relay.progress.emit(done, total)

        def run() -> None:  # in a daemon thread: closing the window never waits for the network
            try:
                report = fetch_samples(dest, url=url, sha256=sha, progress=progress)
            except Exception as e:  # noqa: BLE001 - shown in the banner
                if not cancel.is_set():
                    self._emit(relay.failed, str(e))
            else:
                self._emit(relay.done, report)

        threading.Thread(target=run, name="tokenprism-samples", daemon=True).start()

    @staticmethod
    def _emit(signal: Any, arg: object) -> None:
        try:
            signal.emit(arg)
        except RuntimeError:
            pass  # the panel went away meanwhile

    def stop(self) -> None:
        self.scanner.stop()
        self._download_cancel.set()

    def _on_download_progress(self, done: int, total: int) -> None:
        total = total or SDIST_SIZE
        self.busy_bar.setRange(0, 1000)
        self.busy_bar.setValue(min(1000, done * 1000 // max(1, total)))
        self.status.setText(f"Downloading the reference vocabs: {done / 1e6:.1f} of {total / 1e6:.1f} MB")

    def _download_ended(self) -> None:
        self.downloading = False
        self.busy_bar.setRange(0, 0)
        self.busy_bar.setVisible(self.scanner.busy)

    def _on_downloaded(self, report: SamplesReport) -> None:
        self._download_ended()
        self.rescan()
        self.window_.banner.show_message(report.summary()[0].upper() + report.summary()[1:] + ".", error=False)

    def _on_download_failed(self, message: str) -> None:
        self._download_ended()
        self._show_count()
        self.window_.banner.show_message(message)

    # ---- opening ----------------------------------------------------------------------------------

    def comparable(self) -> list[FoundModel]:
        """The found models an installed plugin can tokenize (what the
        compare view offers), in the order found."""
        kinds = self.table_model.kinds
        return [m for m in self.table_model.models if m.tokenizer in kinds]

    def _model_at(self, index: QModelIndex) -> FoundModel | None:
        src = self.proxy.mapToSource(index)
        return self.table_model.models[src.row()] if src.isValid() else None

    def _context_menu(self, pos: Any) -> None:
        index = self.view.indexAt(pos)
        m = self._model_at(index)
        if m is None:
            return
        menu = QMenu(self)
        menu.addAction("Open", partial(self.open_index, index))
        act = menu.addAction("Compare with Open Model", partial(self.compare_index, index))
        act.setEnabled(m.tokenizer in self.table_model.kinds)
        menu.exec(self.view.viewport().mapToGlobal(pos))

    def compare_index(self, index: QModelIndex) -> None:
        """Add the model at ``index`` to the compare view (opened with the
        window's model first, when it is not open yet)."""
        m = self._model_at(index)
        if m is None:
            return
        if m.tokenizer not in self.table_model.kinds:
            self.window_.banner.show_message(f"{m.name} has no tokenizer TokenPrism can run, so it cannot be "
                                             "compared.", error=False)
            return
        self.window_.compare_models([m.path])

    def open_index(self, index: QModelIndex) -> None:
        src = self.proxy.mapToSource(index)
        if not src.isValid():
            return
        m = self.table_model.models[src.row()]
        if not m.tokenizer:
            self.window_.banner.show_message(f"{m.name} holds no tokenizer, so there is nothing to show.",
                                             error=False)
            return
        self.window_.open_path(m.path)
