"""View ▸ Corpus Profile: the menu entry and shortcut of the Corpus view
(:mod:`.qt_corpus_window`), which is built, with the corpus service it
runs, on first use: the window starts without loading either.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from . import qt_compat  # noqa: F401  (guards against a PySide6 bug; see there)
from .qt_feature import WindowFeature, bring_up
from .window_parts import WindowParts

if TYPE_CHECKING:
    from .qt_corpus_window import QCorpusWindow

CORPUS_SHORTCUT = "Ctrl+Shift+R"


class CorpusFeature(WindowFeature):
    """View ▸ Corpus Profile of one main window (the view is made on first use)."""

    def __init__(self, window: WindowParts) -> None:
        super().__init__(window, "corpusFeature", "Corpus &Profile…", CORPUS_SHORTCUT,
                         "Count how models tokenize a folder of texts: tokens, bytes per token, scripts, "
                         "costliest words", "view")
        self.view: QCorpusWindow | None = None
        self.act.triggered.connect(self.show)

    def show(self, _checked: bool = False) -> QCorpusWindow:
        if self.view is None:
            from .qt_corpus_window import QCorpusWindow  # the service and its tables load on first use

            self.view = QCorpusWindow(self.window)
        else:
            info = self.window.model_info
            if info is not None:
                self.view.add_model(info.path, checked=False)  # offered, the user's ticks stay
        bring_up(self.view)
        return self.view

    def shutdown(self) -> None:
        if self.view is not None:
            self.view.shutdown()


def install(window: WindowParts) -> CorpusFeature:
    """Add View ▸ Corpus Profile… to ``window``."""
    return CorpusFeature(window)

