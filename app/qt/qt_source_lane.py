"""A source tokenizer (a ``tokenizer.json`` or SentencePiece ``.model``
run by its own library) as one lane of the compare view.

It answers the compare view as a :class:`CompareLane` does (``changed``,
``result``, ``waiting``, ``set_options``, ``text_changed``), loading the
source and tokenizing each text in a one-thread background pool that
drops stale results, so typing never waits for the library.
"""

from __future__ import annotations

import os
from typing import Callable

from PySide6.QtCore import QObject, QTimer, Signal
from PySide6.QtWidgets import QDialog, QFileDialog, QGridLayout, QPushButton, QWidget

from tokenprism.core import TokenPrismError

from . import qt_compat  # noqa: F401  (guards against a PySide6 bug; see there)
from ..logic.analysis import Analysis, ModelInfo
from ..logic.check_view import SourceModel, open_source, source_analysis
from .qt_background import QBackground
from .qt_compare_lane import LANE_DEBOUNCE_MS


SOURCE_FILTERS = "Tokenizer sources (tokenizer.json *.json *.model);;All files (*)"


class QSourceDialog(QFileDialog):
    """A file dialog that also takes the folder it shows (or the folder
    selected in it): Hugging Face model folders and cache folders are
    sources as much as the files in them."""

    def __init__(self, parent: QWidget | None, start: str) -> None:
        super().__init__(parent, "Choose a Source Tokenizer", start, SOURCE_FILTERS)
        # Qt's own dialog: a native one cannot take an extra button
        self.setOption(QFileDialog.Option.DontUseNativeDialog, True)
        self.setFileMode(QFileDialog.FileMode.ExistingFile)
        self.chosen_folder = ""
        self.folder_button = QPushButton("Use This Folder")
        self.folder_button.setToolTip("Check against the folder shown, or the folder selected: its tokenizer.json "
                                      "or .model with tokenizer_config.json, or a Hugging Face cache folder "
                                      "(models--org--name)")
        self.folder_button.clicked.connect(self._use_folder)
        lay = self.layout()
        if isinstance(lay, QGridLayout):
            lay.addWidget(self.folder_button, lay.rowCount(), 0, 1, lay.columnCount())

    def _use_folder(self) -> None:
        picked = [p for p in self.selectedFiles() if os.path.isdir(p)]
        self.chosen_folder = picked[0] if picked else self.directory().absolutePath()
        self.done(QDialog.DialogCode.Accepted.value)

    def path(self) -> str:
        """The chosen file or folder ("" when none)."""
        if self.chosen_folder:
            return self.chosen_folder
        files = self.selectedFiles()
        return files[0] if files else ""


def choose_source(parent: QWidget, start: str) -> str:
    """Ask for a source tokenizer file or folder; "" when cancelled."""
    dialog = QSourceDialog(parent, start)
    return dialog.path() if dialog.exec() == QDialog.DialogCode.Accepted.value else ""


def describe_source_error(error: BaseException) -> str:
    """One line for a source that failed to load or tokenize."""
    if isinstance(error, TokenPrismError):
        return str(error)
    return f"the source tokenizer failed: {type(error).__name__}: {error}"


class SourceLane(QObject):
    """One source tokenizer of the comparison."""

    changed = Signal()

    def __init__(self, path: str, text_source: Callable[[], str], parent: QObject,
                 source: SourceModel | None = None) -> None:
        super().__init__(parent)
        self.path = path
        self.source: SourceModel | None = None
        self.info: ModelInfo | None = None
        self.message = "Loading…"
        self.failed = False
        self._text_source = text_source
        self._add_special = False
        self._result: Analysis | None = None
        self._dirty = True
        self._jobs = QBackground(self, latest_only=True)
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(LANE_DEBOUNCE_MS)
        self._timer.timeout.connect(self._tokenize)
        if source is not None:
            self._on_loaded(source)
        else:
            self._jobs.submit(lambda: open_source(path), self._on_loaded, self._on_load_failed)

    # ---- what the compare view reads ---------------------------------------------

    @property
    def metadata_name(self) -> str:
        return f"{os.path.basename(self.path.rstrip(os.sep)) or self.path} (source)"

    @property
    def name(self) -> str:
        return self.metadata_name

    @property
    def kind(self) -> str:
        return self.source.ref.library if self.source is not None else "source"

    @property
    def loading(self) -> bool:
        return self.source is None and not self.failed

    @property
    def result(self) -> Analysis | None:
        if self.source is None or self.failed or self._dirty:
            return None
        return self._result

    @property
    def waiting(self) -> bool:
        return not self.failed and (self.loading or self.result is None)

    # ---- what the compare view asks ----------------------------------------------

    def set_options(self, add_special: bool, _parse_special: bool) -> None:
        # the library decides what it matches as special; BOS/EOS follow the window
        if add_special != self._add_special:
            self._add_special = add_special
            self.text_changed()

    def text_changed(self) -> None:
        self._dirty = True
        if self.source is not None:
            self._timer.start()

    def refresh_now(self) -> None:
        """Tokenize the current text without waiting for typing to pause."""
        self._dirty = True
        self._tokenize()

    def _tokenize(self) -> None:
        source = self.source
        if source is None:
            return
        text, add = self._text_source(), self._add_special
        self._jobs.submit(lambda: source_analysis(source, text, add), self._on_result, self._on_tokenize_failed)

    # ---- results --------------------------------------------------------------------

    def _on_loaded(self, source: SourceModel) -> None:
        self.source = source
        self.info = source.info
        self.message = ""
        self.refresh_now()
        self.changed.emit()

    def _on_load_failed(self, error: BaseException) -> None:
        self.failed = True
        self.message = describe_source_error(error)
        self.changed.emit()

    def _on_result(self, a: Analysis) -> None:
        if self._timer.isActive() or a.text != self._text_source():
            return  # a newer text is on its way
        self._result = a
        self._dirty = False
        self.failed = False
        self.message = ""
        self.changed.emit()

    def _on_tokenize_failed(self, error: BaseException) -> None:
        self.failed = True
        self.message = describe_source_error(error)
        self.changed.emit()

    def shutdown(self) -> None:
        self._timer.stop()
        self._jobs.shutdown()
