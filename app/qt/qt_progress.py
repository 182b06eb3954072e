"""Progress and cancel for tokenizing a huge text.

A big change (a paste of tens of kilobytes or more) is tokenized in pieces
(see ``app.analysis.tokenize``); the status bar's busy indicator then shows how
far it got, with a Cancel button (Esc also cancels). Cancelling keeps the
editor text as it is, says so in the banner, and pauses live tokenization
until Tokenize › Tokenize Now (F5), a new model or new options.
"""

from __future__ import annotations


from PySide6.QtGui import QAction, QKeySequence

from . import qt_compat  # noqa: F401  (guards against a PySide6 bug; see there)
from .qt_status import labelled
from .window_parts import WindowParts


CANCELLED_MESSAGE = ("Tokenization cancelled. The text is unchanged; its tokens are not shown. "
                     "Press F5 (Tokenize › Tokenize Now) to tokenize it.")


class ProgressControl:
    """Connects the live tokenizer's progress, the status bar and the
    cancel/resume actions of one window."""

    def __init__(self, window: WindowParts) -> None:
        self.window = window
        live = window.live
        stats = window.stats
        self.act_resume = QAction("Tokenize &Now", window)
        self.act_resume.setShortcut(QKeySequence("F5"))
        self.act_resume.setToolTip("Tokenize the text again; resumes after a cancel (F5)")
        self.act_resume.triggered.connect(self.resume)
        self.act_cancel = QAction("&Cancel Tokenizing\tEsc", window)
        self.act_cancel.setToolTip("Stop tokenizing a huge text; the text stays as it is (Esc)")
        self.act_cancel.setEnabled(False)
        self.act_cancel.triggered.connect(self.cancel)
        window.addAction(self.act_resume)
        menu = window.menus["tokenize"]
        menu.addSeparator()
        menu.addActions([self.act_resume, self.act_cancel])
        live.progress.connect(self._on_progress)
        live.cancelled.connect(self._on_cancelled)
        live.resultReady.connect(self._on_result)
        stats.cancelRequested.connect(self.cancel)
        # Esc already dismisses the banner; it also stops a long job
        window.act_dismiss.triggered.connect(self._on_escape)
        self.showing = False
        """True while a progress bar is shown."""

    def _on_progress(self, done: int, total: int) -> None:
        w = self.window
        if not w.live.busy:
            return  # a late report of a job that ended
        self.showing = True
        self.act_cancel.setEnabled(True)
        w.stats.set_progress(done, total)

    def _on_result(self, _a: object) -> None:
        self._end()

    def _end(self) -> None:
        if self.showing:
            self.showing = False
            self.act_cancel.setEnabled(False)
            if not self.window.loader.busy:
                self.window.stats.set_busy("")

    def _on_escape(self) -> None:
        if self.showing:
            self.cancel()

    def cancel(self) -> None:
        """Stop the running tokenization (the text is kept)."""
        self.window.live.cancel()

    def _on_cancelled(self) -> None:
        self._end()
        w = self.window
        # the views must not go on showing the tokens of an earlier text
        for view in (w.editor, w.table, w.chips):
            view.set_analysis(None)
        info = w.model_info
        w.stats.show_analysis(None, labelled(info.name, info.kind) if info is not None else "No model")
        w.stats.set_busy("")
        w.stats.flash("Tokenization cancelled", 60_000)
        w.banner.show_message(CANCELLED_MESSAGE, error=False)

    def resume(self) -> None:
        w = self.window
        if w.live.paused:
            w.banner.hide()
        w.live.resume()


def install(window: WindowParts) -> ProgressControl:
    """Add progress, Cancel (Esc) and Tokenize Now (F5) to ``window``."""
    return ProgressControl(window)
