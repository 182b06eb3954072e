"""One model of the compare view: its own loader and live tokenizer.

Each lane has a one-thread :class:`ModelLoader` and :class:`LiveTokenizer`,
so the models of a comparison load and tokenize in parallel and off the GUI
thread, each dropping its stale results as the main window does.
"""

from __future__ import annotations

from typing import Callable

from PySide6.QtCore import QObject, Signal

from tokenprism.core.library.names import display_name

from . import qt_compat  # noqa: F401  (guards against a PySide6 bug; see there)
from ..logic.analysis import Analysis, ModelInfo
from .workers import DEBOUNCE_MS, LiveTokenizer, ModelLoader

LANE_DEBOUNCE_MS = DEBOUNCE_MS + 10
"""Longer than the main window's debounce, which turns off its inline
(GUI-thread) retokenization: every lane tokenizes in its worker."""


class CompareLane(QObject):
    """One model of the comparison: its loader, tokenizer and state."""

    changed = Signal()

    def __init__(self, path: str, text_source: Callable[[], str], info: ModelInfo | None, parent: QObject) -> None:
        super().__init__(parent)
        self.path = path
        self.info: ModelInfo | None = None
        self.message = "Loading…"
        self.failed = False
        self.loader = ModelLoader(self)
        self.live = LiveTokenizer(text_source, self, debounce_ms=LANE_DEBOUNCE_MS)
        self.loader.loaded.connect(self._on_loaded)
        self.loader.failed.connect(self._on_failed)
        self.live.resultReady.connect(self._on_result)
        self.live.failed.connect(self._on_tokenize_failed)
        if info is not None:
            self._on_loaded(info)
        else:
            self.loader.load(path)

    @property
    def metadata_name(self) -> str:
        """The model's own name (``general.name``), "" until it is loaded.
        The compare view shows :func:`~tokenprism.core.library.names.display_names`
        of all lanes, which falls back to the file name and tells repeated
        names apart."""
        return self.info.model.name if self.info is not None else ""

    @property
    def name(self) -> str:
        """This lane's name on its own (the view shows ``display_names`` of all lanes)."""
        return display_name(self.metadata_name, self.path)

    @property
    def kind(self) -> str:
        return self.info.kind if self.info is not None else ""

    @property
    def result(self) -> Analysis | None:
        """The tokens of the current text, or None while they are being made."""
        if self.info is None or self.failed or self.live.busy:
            return None
        return self.live.last_result

    @property
    def waiting(self) -> bool:
        """True while this lane's model should soon give tokens."""
        return not self.failed and (self.loader.busy or (self.info is not None and self.result is None))

    @property
    def loading(self) -> bool:
        return self.loader.busy

    def set_options(self, add_special: bool, parse_special: bool) -> None:
        self.live.set_options(add_special, parse_special)

    def text_changed(self) -> None:
        self.live.text_changed()

    def _on_loaded(self, info: ModelInfo) -> None:
        self.info = info
        self.message = ""
        self.live.set_model(info)
        self.changed.emit()

    def _on_failed(self, _path: str, message: str) -> None:
        self.failed = True
        self.message = message
        self.changed.emit()

    def _on_result(self, _a: Analysis) -> None:
        self.failed = False
        self.message = ""
        self.changed.emit()

    def _on_tokenize_failed(self, message: str) -> None:
        self.failed = True
        self.message = message
        self.changed.emit()

    def shutdown(self) -> None:
        self.live.shutdown()
        self.loader.shutdown()
