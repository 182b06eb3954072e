"""View ▸ Corpus Profile: the menu entry and shortcut of the Corpus view
(:mod:`.qt_corpus_window`), which is built, with the corpus service it
runs, on first use: the window starts without loading either.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import QEvent, QObject
from PySide6.QtGui import QAction, QKeySequence

from . import qt_compat  # noqa: F401  (guards against a PySide6 bug; see there)
from .window_parts import WindowParts

if TYPE_CHECKING:
    from .qt_corpus_window import QCorpusWindow

CORPUS_SHORTCUT = "Ctrl+Shift+R"


class CorpusFeature(QObject):
    """View ▸ Corpus Profile of one main window (the view is made on first use)."""

    def __init__(self, window: WindowParts) -> None:
        super().__init__(window)
        self.setObjectName("corpusFeature")
        self.window = window
        self.view: QCorpusWindow | None = None
        self.act = QAction("Corpus &Profile…", window)
        self.act.setShortcut(QKeySequence(CORPUS_SHORTCUT))
        self.act.setToolTip("Count how models tokenize a folder of texts: tokens, bytes per token, scripts, "
                            f"costliest words ({CORPUS_SHORTCUT})")
        self.act.triggered.connect(self.show)
        window.addAction(self.act)
        window.menus["view"].addAction(self.act)
        window.installEventFilter(self)

    def eventFilter(self, obj: QObject, event: QEvent) -> bool:
        if obj is self.window and event.type() == QEvent.Type.Close:
            self.shutdown()
        return False

    def show(self, _checked: bool = False) -> QCorpusWindow:
        if self.view is None:
            from .qt_corpus_window import QCorpusWindow  # the service and its tables load on first use

            self.view = QCorpusWindow(self.window)
        else:
            info = self.window.model_info
            if info is not None:
                self.view.add_model(info.path, checked=False)  # offered, the user's ticks stay
        self.view.show()
        self.view.raise_()
        self.view.activateWindow()
        return self.view

    def shutdown(self) -> None:
        if self.view is not None:
            self.view.shutdown()


def install(window: WindowParts) -> CorpusFeature:
    """Add View ▸ Corpus Profile… to ``window``."""
    return CorpusFeature(window)

