"""View ▸ Why: why the selected tokens were cut so, every stage replayed.

Select tokens in the editor, the token table or the chips and the panel
explains them (``Model.explain`` in a worker thread, for a bounded window
around the selection: :mod:`tokenprism.app.logic.why`): the stages as a
vertical story (special tokens, normalizer, pre-tokenizer, model, BOS/EOS),
then one word of the selection at a time: a slider that replays its BPE or
SentencePiece merges one by one, a Unigram word's lattice with its best
and runner-up paths (:mod:`.qt_lattice`), WordPiece's longest-match
attempts as a list.
"""

from __future__ import annotations

import html
import weakref
from typing import Final

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtGui import QFontDatabase, QPalette
from PySide6.QtWidgets import (QComboBox, QDockWidget, QHBoxLayout, QLabel, QListWidget, QScrollArea, QSlider,
                               QSplitter, QStackedWidget, QTextBrowser, QVBoxLayout, QWidget)

from tokenprism.core import Model
from tokenprism.core.errors import TokenPrismError
from tokenprism.core.explain import Explanation, Word

from . import qt_compat  # noqa: F401  (guards against a PySide6 bug; see there)
from ..logic.analysis import Analysis, ModelInfo
from ..logic.pieces import readable
from ..logic.why import (NO_CAPABILITY, Replay, WhyRequest, WhyView, alternative_lines, attempt_lines,
                         explain_request, lattice_of, path_edges, plural, replay_for, request_for, story_html,
                         view_for, window_note)
from .qt_background import QBackground
from .qt_lattice import QLatticeView
from .qt_vocab import install_side_dock
from .window_parts import WindowParts

SHORTCUT: Final = "Ctrl+Shift+E"
DEBOUNCE_MS: Final = 150  # a cursor walking through the text explains once it rests
PAGE_NONE, PAGE_MERGES, PAGE_LATTICE, PAGE_ATTEMPTS = range(4)
HINT: Final = "Select tokens in the editor, the token table or the chips to see why they were cut so."


class QWhyPanel(QWidget):
    """The story of the selection's stages, and one word's steps."""

    explained = Signal()
    """An explanation (or its error) is on screen."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.info: ModelInfo | None = None
        self._wanted = False
        # the analysis only weakly: a hidden panel keeps its last request
        # until shown, and a strong reference kept a pasted-over 1.5 MB
        # text's tokens alive (the disposer waits for every holder to let go)
        self._pending: tuple[weakref.ref[Analysis], int, int] | None = None
        self._jobs = QBackground(self, latest_only=True)
        self.view: WhyView | None = None
        self.request: WhyRequest | None = None
        """What the view explains (the window of the text)."""
        self._model: Model | None = None
        self.replay: Replay | None = None
        fixed = QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont)

        self.note = QLabel(HINT)
        self.note.setWordWrap(True)
        self.note.setTextFormat(Qt.TextFormat.PlainText)
        self.note.setForegroundRole(QPalette.ColorRole.PlaceholderText)
        self.story = QTextBrowser()
        self.story.setOpenLinks(False)

        self.words = QComboBox()
        self.words.setToolTip("The words of the selection, as the model stage saw them")
        self.words.currentIndexChanged.connect(self._show_word)
        self.pages = QStackedWidget()
        self.no_steps = QLabel("")
        self.no_steps.setWordWrap(True)
        self.no_steps.setAlignment(Qt.AlignmentFlag.AlignTop | Qt.AlignmentFlag.AlignLeft)
        self.pages.addWidget(self.no_steps)

        merges = QWidget()
        mv = QVBoxLayout(merges)
        mv.setContentsMargins(0, 0, 0, 0)
        self.slider = QSlider(Qt.Orientation.Horizontal)
        self.slider.setToolTip("Replay the merges one at a time (arrow keys step)")
        self.slider.setPageStep(1)
        self.slider.valueChanged.connect(self._show_step)
        self.step_label = QLabel()
        self.step_label.setTextFormat(Qt.TextFormat.PlainText)
        self.pieces_label = QLabel()
        self.pieces_label.setTextFormat(Qt.TextFormat.RichText)
        self.pieces_label.setWordWrap(True)
        self.pieces_label.setFont(fixed)
        self.fallback_label = QLabel()
        self.fallback_label.setWordWrap(True)
        self.fallback_label.setTextFormat(Qt.TextFormat.PlainText)
        mv.addWidget(self.slider)
        mv.addWidget(self.step_label)
        mv.addWidget(self.pieces_label)
        mv.addWidget(self.fallback_label)
        mv.addStretch(1)
        self.pages.addWidget(merges)

        lattice = QWidget()
        lv = QVBoxLayout(lattice)
        lv.setContentsMargins(0, 0, 0, 0)
        self.lattice = QLatticeView()
        scroll = QScrollArea()
        scroll.setWidget(self.lattice)
        scroll.setWidgetResizable(False)
        self.alternatives = QLabel()
        self.alternatives.setTextFormat(Qt.TextFormat.PlainText)
        self.alternatives.setFont(fixed)
        self.alternatives.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        legend = QLabel("<span style='color: #1e88e5'>━ best path</span> (under the word) &nbsp; "
                        "<span style='color: #e57300'>┅ runner-up</span> &nbsp; "
                        "<span style='color: gray'>⌒ other pieces</span>")
        legend.setTextFormat(Qt.TextFormat.RichText)
        lv.addWidget(legend)
        lv.addWidget(scroll, 1)
        lv.addWidget(self.alternatives)
        self.pages.addWidget(lattice)

        self.attempts = QListWidget()
        self.attempts.setFont(fixed)
        self.attempts.setWordWrap(True)  # a long word's tries wrap instead of running off the side
        self.pages.addWidget(self.attempts)

        lower = QWidget()
        low = QVBoxLayout(lower)
        low.setContentsMargins(0, 0, 0, 0)
        row = QHBoxLayout()
        row.addWidget(QLabel("Word:"))
        row.addWidget(self.words, 1)
        low.addLayout(row)
        low.addWidget(self.pages, 1)
        self.splitter = QSplitter(Qt.Orientation.Vertical)
        self.splitter.addWidget(self.story)
        self.splitter.addWidget(lower)
        self.splitter.setStretchFactor(0, 1)
        self.splitter.setStretchFactor(1, 1)
        self.splitter.setChildrenCollapsible(False)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(4, 4, 4, 4)
        lay.addWidget(self.note)
        lay.addWidget(self.splitter, 1)
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(DEBOUNCE_MS)
        self._timer.timeout.connect(self._run)
        self._clear(HINT)

    # ---- following the window ------------------------------------------------------------

    def set_model(self, info: ModelInfo | None) -> None:
        self.info = info
        self._pending = None
        self._timer.stop()
        self._clear(HINT)

    def set_wanted(self, shown: bool) -> None:
        """Explain only while the panel is shown (a hidden one catches up)."""
        self._wanted = shown
        if shown and self._pending is not None:
            self._timer.start()

    def explain_tokens(self, analysis: Analysis | None, first: int, last: int, now: bool = False) -> None:
        """Explain tokens ``[first, last)`` of ``analysis`` (debounced
        unless ``now``)."""
        if analysis is None or not 0 <= first < last <= len(analysis):
            return
        # token indices only: their character spans are read when the panel
        # runs, since reading them here made every keystroke build the new
        # encoding's span columns for a hidden panel (10 KB: the GUI thread's
        # time per key 16 -> 26 ms, bench_latency on demo:bpe)
        self._pending = (weakref.ref(analysis), first, last)
        if now:
            self._run()
        elif self._wanted:
            self._timer.start()

    def _run(self) -> None:
        self._timer.stop()
        pending = self._pending
        if pending is None or (not self._wanted and not self.isVisible()):
            return
        ref, first, last = pending
        a = ref()
        if a is None:  # replaced (and freed) before the panel got to it
            self._pending = None
            return
        model = a.model
        text = a.text
        enc = a.encoding
        # spans run in text order (BOS/EOS are empty at the ends): O(1) for
        # any selection, where a loop over a 1 MB selection's tokens was not
        s = int(enc.starts[first])
        e = max(s, int(enc.ends[last - 1]))
        req = request_for(text, s, e, enc.add_special, enc.parse_special)
        if getattr(model.tokenizer, "trace_fragment", None) is None:
            self._clear(f"{NO_CAPABILITY} ({model.spec.name}).")
            self.explained.emit()
            return
        self.note.setText("Explaining…")

        def done(ex: Explanation) -> None:
            if self._pending is pending:
                self._show(ex, req, len(text), a)

        def failed(error: BaseException) -> None:
            if self._pending is not pending:
                return
            msg = str(error) if isinstance(error, TokenPrismError) else f"{type(error).__name__}: {error}"
            self._clear(f"Cannot explain this selection: {msg}")
            self.explained.emit()

        self._jobs.submit(lambda: explain_request(model, text, req), done, failed)

    # ---- showing ---------------------------------------------------------------------------

    def _clear(self, message: str) -> None:
        # (lets go of the model too: a switched-away model must be freed)
        self.view = None
        self.request = None
        self._model = None
        self.replay = None
        self.note.setText(message)
        self.story.clear()
        self.words.blockSignals(True)
        self.words.clear()
        self.words.blockSignals(False)
        self.words.setEnabled(False)
        self.no_steps.setText("")
        self.pages.setCurrentIndex(PAGE_NONE)
        self.lattice.set_lattice(None)

    def _show(self, ex: Explanation, req: WhyRequest, text_len: int, a: Analysis) -> None:
        view = view_for(ex, req)
        self.view = view
        self.request = req
        self._model = a.model
        note = window_note(req, text_len)
        self.note.setText(note or f"Why {plural(len(view.words), 'word')} of the selection "
                                  f"{'was' if len(view.words) == 1 else 'were'} cut so, stage by stage.")
        self.story.setHtml(story_html(view, a.model))
        self.words.blockSignals(True)
        self.words.clear()
        for w in view.words:
            self.words.addItem(f"{readable(w.text)}  →  {plural(len(w.tokens), 'token')}")
        self.words.blockSignals(False)
        self.words.setEnabled(bool(view.words))
        self._show_word(0 if view.words else -1)
        self.explained.emit()

    def current_word(self) -> Word | None:
        view, k = self.view, self.words.currentIndex()
        return view.words[k] if view is not None and 0 <= k < len(view.words) else None

    def _show_word(self, _index: int) -> None:
        word = self.current_word()
        self.replay = None
        self.lattice.set_lattice(None)
        if word is None or self._model is None:
            self.no_steps.setText("The selection has no word the model stage cut (a special token, or BOS/EOS).")
            self.pages.setCurrentIndex(PAGE_NONE)
            return
        model = self._model
        replay = replay_for(word)
        lattice = lattice_of(word)
        attempts = attempt_lines(word)
        if replay is not None:
            self.replay = replay
            self.slider.blockSignals(True)
            self.slider.setRange(0, replay.steps)
            self.slider.setValue(replay.steps)
            self.slider.blockSignals(False)
            self.slider.setEnabled(replay.steps > 0)
            self.fallback_label.setText("".join(
                f"Byte fallback: {readable(f.text)!r} has no piece, written as "
                f"{' '.join(model.display_piece(t) for t in f.tokens)}\n" for f in replay.fallbacks).strip())
            self._show_step(replay.steps)
            self.pages.setCurrentIndex(PAGE_MERGES)
        elif lattice is not None:
            alts = word.alternatives or ()
            best = path_edges(lattice, alts[0].tokens if alts else word.tokens) or ()
            runner = path_edges(lattice, alts[1].tokens) if len(alts) > 1 else None
            self.lattice.set_lattice(lattice, best, runner or ())
            lines = alternative_lines(model, alts)
            self.alternatives.setText("\n".join(lines) if lines else "")
            self.pages.setCurrentIndex(PAGE_LATTICE)
        elif attempts:
            self.attempts.clear()
            self.attempts.addItems(attempts)
            self.pages.setCurrentIndex(PAGE_ATTEMPTS)
        else:
            pieces = " ".join(model.display_piece(t) for t in word.tokens)
            self.no_steps.setText(f"{readable(word.text)!r} became {pieces} (no steps recorded).")
            self.pages.setCurrentIndex(PAGE_NONE)

    def _show_step(self, step: int) -> None:
        replay = self.replay
        if replay is None:
            return
        pieces = replay.labels_at(step)
        made = replay.merged_at(step)
        pal = self.palette()
        hi = pal.color(QPalette.ColorRole.Highlight).name()
        hi_text = pal.color(QPalette.ColorRole.HighlightedText).name()
        mid = pal.color(QPalette.ColorRole.Mid).name()
        cells = []
        for i, p in enumerate(pieces):
            style = (f"background: {hi}; color: {hi_text};" if i == made else f"border: 1px solid {mid};")
            cells.append(f"<span style='{style}'>&nbsp;{html.escape(p)}&nbsp;</span>")
        self.pieces_label.setText("&nbsp;".join(cells))
        self.step_label.setText(replay.describe(step))

    def shown_pieces(self) -> list[str]:
        """The symbols the slider's position shows (for tests)."""
        return self.replay.pieces_at(self.slider.value()) if self.replay is not None else []

    def shutdown(self) -> None:
        self._timer.stop()
        self._jobs.shutdown()


def install(window: WindowParts) -> tuple[QWhyPanel, QDockWidget]:
    """Add the Why dock (hidden until asked for) and View ▸ Why; selecting
    tokens in the editor, the table or the chips explains them."""
    panel = QWhyPanel()
    dock = install_side_dock(window, panel, "Why", ("whyDock", "actWhy"), ("vocabularyDock", "actVocabulary"),
                             ("&Why These Tokens", SHORTCUT,
                              "Why the selected tokens were cut so: every stage of the tokenizer replayed"),
                             False, panel.set_model, panel.set_wanted)

    def on_tokens(first: int, last: int) -> None:
        a = window.analysis
        if a is not None and first >= 0:
            panel.explain_tokens(a, first, last)

    def on_editor(first: int, last: int) -> None:
        # the cursor's token, or every token the editor's selection touches
        a = window.analysis
        cursor = window.editor.textCursor()
        if a is not None and cursor.hasSelection():
            lo, hi = a.spans_in(cursor.selectionStart(), cursor.selectionEnd())
            if hi > lo:
                first, last = int(a.span_first[lo]), int(a.span_last[hi - 1])
        on_tokens(first, last)

    def on_shown(shown: bool) -> None:
        # opened with nothing asked yet: the token at the editor's cursor
        current = window.editor.current_tokens
        if shown and panel.request is None and current is not None:
            on_editor(*current)

    window.editor.cursorTokenChanged.connect(on_editor)
    dock.visibilityChanged.connect(on_shown)
    window.table.tokensActivated.connect(on_tokens)
    window.chips.tokensActivated.connect(on_tokens)
    return panel, dock
