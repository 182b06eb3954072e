"""What the main window lends the features built onto it.

Each feature module (``qt_compare``, ``qt_export``, ``qt_metadata``,
``qt_models``, ``qt_progress``, ``qt_textfile``, ``qt_vocab``, …) has an
``install(window: WindowParts)`` that adds its commands, docks and
dialogs, and returns what it made; the main window keeps the result. A
feature reads only what is declared here, never the window class itself,
so no feature imports the window back and none attaches attributes to it.
:class:`~tokenprism.app.qt.main_window.TokenPrismWindow` is the one
implementation.
"""

from __future__ import annotations

from PySide6.QtGui import QAction
from PySide6.QtWidgets import QMainWindow, QMenu

from ..logic.analysis import Analysis, ModelInfo
from .qt_chips import QChipsView
from .qt_editor import QTokenEditor
from .qt_status import QMessageBanner, QStatsBar
from .qt_token_table import QTokenTable
from .settings import AppSettings
from .workers import LiveTokenizer, ModelLoader


class WindowParts(QMainWindow):
    """The main window as its features see it: a ``QMainWindow`` (a parent
    for their docks and dialogs, a place for their actions) with these
    parts."""

    settings: AppSettings
    model_info: ModelInfo | None
    """The model shown now; the loader's ``loaded`` signal tells of the next."""
    loader: ModelLoader
    editor: QTokenEditor
    live: LiveTokenizer
    table: QTokenTable
    chips: QChipsView
    stats: QStatsBar
    banner: QMessageBanner
    menus: dict[str, QMenu]
    """The menu bar's menus by name: file, edit, tokenize, view, help."""
    act_add_special: QAction
    act_parse_special: QAction
    act_quit: QAction
    act_dismiss: QAction

    @property
    def analysis(self) -> Analysis | None:
        """The tokens shown now (None while there are none)."""
        raise NotImplementedError

    @property
    def id_format(self) -> str:
        """How ids are copied: "space" or "json"."""
        raise NotImplementedError

    def open_path(self, path: str) -> None:
        """Open a model file in the background."""
        raise NotImplementedError

    def compare_models(self, paths: list[str]) -> None:
        """Add the models at ``paths`` to the compare view; a view not open
        yet opens with the window's model first."""
        raise NotImplementedError

    def show_tokens(self, first: int, last: int) -> None:
        """Select tokens ``[first, last]`` in the editor and the token views."""
        raise NotImplementedError
