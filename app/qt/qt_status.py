"""Small window parts: the statistics shown in the status bar, the message
banner for errors, and the empty state shown before any model is open."""

from __future__ import annotations

import re

from PySide6.QtCore import QSize, Qt, QTimer, Signal
from PySide6.QtGui import QColor, QFont, QFontMetrics, QPalette, QResizeEvent
from PySide6.QtWidgets import (QFrame, QHBoxLayout, QLabel, QProgressBar, QPushButton, QSizePolicy,
                               QToolButton, QVBoxLayout, QWidget)

from . import qt_compat  # noqa: F401  (guards against a PySide6 bug; see there)
from ..logic.analysis import Analysis
from .styles import is_dark, mix


def _fmt_ms(ms: float) -> str:
    return f"{ms:.1f} ms" if ms < 100 else f"{ms:,.0f} ms"


ELLIPSIS = "…"
_TRAILING = " \t,;:·(-–—/"  # not left before an ellipsis
MODEL_LABEL_CHARS = 40  # the model label's preferred width, in digits


def says_kind(name: str, kind: str) -> bool:
    """Does ``name`` already say the tokenizer type ``kind`` as a word of
    its own (the demo models' "TokenPrism demo SPM (…)")? A file name's
    part ("llama-spm") does not count: it reads as a name, not a type."""
    if not kind:
        return True
    pattern = rf"(?<![^\s(\[]){re.escape(kind)}(?![^\s)\],;:])"
    return re.search(pattern, name, re.IGNORECASE) is not None


def titled(name: str, kind: str) -> str:
    """"name (KIND)" for the window title, without saying the kind twice."""
    return name if says_kind(name, kind) else f"{name} ({kind})"


def labelled(name: str, kind: str) -> str:
    """"name · KIND" for the status bar, without saying the kind twice."""
    return name if says_kind(name, kind) else f"{name} · {kind}"


def elide_words(text: str, fm: QFontMetrics, width: int) -> str:
    """``text`` cut to ``width`` pixels after its last whole word that fits,
    with "…"; within the first word (a long file name) after the last
    character that fits. Never a cut without the ellipsis."""
    if fm.horizontalAdvance(text) <= width:
        return text
    room = width - fm.horizontalAdvance(ELLIPSIS)
    best = ""
    for m in re.finditer(r"\s+", text):
        head = text[:m.start()].rstrip(_TRAILING)
        if head and fm.horizontalAdvance(head) <= room:
            best = head
        elif head:
            break
    if best:
        return best + ELLIPSIS
    return fm.elidedText(text, Qt.TextElideMode.ElideRight, max(width, 0))


class QElidedLabel(QLabel):
    """A one-line label that shortens its text at a word (see
    :func:`elide_words`) to whatever width the layout gives it, keeping a
    suffix whole, instead of clipping it mid-word; the full text is its
    tooltip's first line."""

    def __init__(self, text: str = "", parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setTextFormat(Qt.TextFormat.PlainText)  # file and model names are text, not markup
        self._main = text
        self._suffix = ""
        self._elide()

    def full_text(self) -> str:
        return self._main + self._suffix

    def set_parts(self, main: str, suffix: str = "") -> None:
        """Show ``main`` (shortened when needed) followed by ``suffix`` (always whole)."""
        self._main, self._suffix = main, suffix
        self._elide()
        self.updateGeometry()

    def _elide(self) -> None:
        fm = self.fontMetrics()
        room = self.contentsRect().width() - fm.horizontalAdvance(self._suffix)
        super().setText(elide_words(self._main, fm, room) + self._suffix)

    def sizeHint(self) -> QSize:
        hint = super().sizeHint()
        fm = self.fontMetrics()
        full = fm.horizontalAdvance(self.full_text()) + 2 * self.margin() + 2 * self.frameWidth() + 4
        return QSize(min(full, fm.horizontalAdvance("0") * MODEL_LABEL_CHARS), hint.height())

    def minimumSizeHint(self) -> QSize:
        return QSize(self.fontMetrics().horizontalAdvance("0") * 6, super().minimumSizeHint().height())

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        self._elide()


class QStatsBar(QWidget):
    """Model, counts and timing of the shown tokenization, plus a busy
    indicator. Everything shown comes from one :class:`Analysis`, so the
    model name always belongs to the tokens on screen."""

    cancelRequested = Signal()
    """The Cancel button next to a progress bar was clicked."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        lay = QHBoxLayout(self)
        lay.setContentsMargins(4, 0, 4, 0)
        lay.setSpacing(14)
        self.model_label = QElidedLabel("No model")
        f = QFont(self.model_label.font())
        f.setBold(True)
        self.model_label.setFont(f)
        self.model_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.counts_label = QLabel("")
        self.counts_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.special_label = QLabel("")
        self.time_label = QLabel("")
        self.busy = QProgressBar()
        self.busy.setRange(0, 0)  # indeterminate
        self.busy.setTextVisible(False)
        self.busy.setMaximumWidth(self.fontMetrics().horizontalAdvance("0") * 10)
        self.busy.setMaximumHeight(self.fontMetrics().height())
        self.busy_label = QLabel("")
        self.busy.hide()
        self.cancel_button = QToolButton()
        self.cancel_button.setText("Cancel")
        self.cancel_button.setToolTip("Stop tokenizing this text (Esc); the text stays as it is")
        self.cancel_button.clicked.connect(self.cancelRequested)
        self.cancel_button.hide()
        for w in (self.special_label, self.time_label, self.busy_label):
            # they show file and model names: "<b>x</b>.gguf" is text, not markup
            w.setTextFormat(Qt.TextFormat.PlainText)
        # numbers only, from the encoding, never file text: its bold count is markup
        self.counts_label.setTextFormat(Qt.TextFormat.RichText)
        self._flash_timer = QTimer(self)  # a child: it dies with the bar
        self._flash_timer.setSingleShot(True)
        self._flash_timer.timeout.connect(self._end_flash)
        for w in (self.model_label, self.counts_label, self.special_label, self.time_label):
            # full width when there is room, cut short rather than widening the window
            w.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Preferred)
            w.setMinimumWidth(self.fontMetrics().horizontalAdvance("0") * 6)
            lay.addWidget(w)
        lay.addStretch(1)
        lay.addWidget(self.busy_label)
        lay.addWidget(self.busy)
        lay.addWidget(self.cancel_button)

    def show_analysis(self, a: Analysis | None, model_text: str = "No model") -> None:
        if a is None:
            self.set_model_text(model_text)
            self.counts_label.setText("")
            self.special_label.setText("")
            self.time_label.setText("")
            return
        s = a.stats
        self.set_model_text(a.info.name, a, a.info.kind)
        self.counts_label.setText(
            f"<b>{s.tokens:,}</b> tokens · {s.chars:,} chars · {s.utf8_bytes:,} bytes · "
            f"{s.chars_per_token:.2f} chars/tok · {s.bytes_per_token:.2f} bytes/tok")
        self.counts_label.setToolTip(
            f"{s.tokens:,} tokens, {s.chars:,} characters, {s.utf8_bytes:,} UTF-8 bytes\n"
            f"{s.chars_per_token:.3f} characters and {s.bytes_per_token:.3f} bytes per token")
        self.special_label.setText(f"{s.unknown:,} unknown · {s.byte_fallback:,} byte-fallback")
        self.special_label.setToolTip("Unknown tokens, and byte tokens spelling characters the vocabulary lacks")
        self.time_label.setText(_fmt_ms(s.encode_ms))
        self.time_label.setToolTip(f"Last tokenization took {s.encode_ms:.2f} ms "
                                   f"({s.total_ms:.2f} ms with preparing the views)")

    def set_model_text(self, text: str, a: Analysis | None = None, kind: str = "") -> None:
        """The model label: ``text`` (a model's name) and its tokenizer type
        ``kind`` unless the name says it; the name is shortened at a word
        when the bar is narrow, the full text is in the tooltip."""
        suffix = "" if says_kind(text, kind) else f" · {kind}"
        self.model_label.set_parts(text, suffix)
        tip = text + suffix
        if a is not None:
            v = a.model.vocab
            tip += f"\n{a.info.path}\nvocabulary: {len(a.model):,} tokens ({v.model}" \
                   f"{', pre-tokenizer ' + v.pre if v.pre else ''})"
        self.model_label.setToolTip(tip)

    def flash(self, message: str, ms: int = 2500) -> None:
        """Show a short note (e.g. "Copied 42 ids") where the busy text goes."""
        self.busy_label.setText(message)
        self._flash_timer.start(ms)

    def _end_flash(self) -> None:
        if not self.busy.isVisible():
            self.busy_label.setText("")

    def set_busy(self, message: str) -> None:
        """Show (non-empty ``message``) or hide the busy indicator."""
        self.busy_label.setText(message)
        self.busy.setRange(0, 0)  # indeterminate again after a progress
        self.busy.setVisible(bool(message))
        self.cancel_button.hide()

    def set_progress(self, done: int, total: int, message: str = "Tokenizing") -> None:
        """Show how far a long job got, with its Cancel button."""
        frac = done / total if total else 1.0
        self.busy.setRange(0, 1000)
        self.busy.setValue(int(frac * 1000))
        self.busy_label.setText(f"{message} {frac:.0%}…")
        self.busy.setVisible(True)
        self.cancel_button.setVisible(True)


class QMessageBanner(QFrame):
    """A dismissable message strip above the editor (errors never become
    modal dialogs or tracebacks)."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setFrameShape(QFrame.Shape.StyledPanel)
        self.setAutoFillBackground(True)
        lay = QHBoxLayout(self)
        lay.setContentsMargins(8, 4, 4, 4)
        self.icon = QLabel("⚠")
        self.label = QLabel("")
        # messages quote file names and metadata: "<b>x</b>.gguf" is text, not markup
        self.label.setTextFormat(Qt.TextFormat.PlainText)
        self.label.setWordWrap(True)
        self.label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.label.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Preferred)
        close = QToolButton()
        close.setText("✕")
        close.setAutoRaise(True)
        close.setToolTip("Dismiss (Esc)")
        close.clicked.connect(self.hide)
        lay.addWidget(self.icon)
        lay.addWidget(self.label, 1)
        lay.addWidget(close)
        self.hide()

    @property
    def text(self) -> str:
        return self.label.text()

    def show_message(self, text: str, error: bool = True) -> None:
        pal = self.palette()
        parent = self.parentWidget()
        base = (parent.palette() if parent is not None else pal).color(QPalette.ColorRole.Window)
        hue = QColor("#e8403a" if error else "#4f8ff7")
        pal.setColor(QPalette.ColorRole.Window, mix(base, hue, 0.35 if is_dark(pal) else 0.18))
        self.setPalette(pal)
        self.icon.setText("⚠" if error else "ℹ")
        self.label.setText(text)
        self.show()


class QEmptyState(QWidget):
    """Shown while no model is open: what to do, an Open button, recent files."""

    openRequested = Signal()
    recentRequested = Signal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setAcceptDrops(False)  # the window handles drops
        outer = QVBoxLayout(self)
        outer.addStretch(2)
        title = QLabel("Open a GGUF model to see how it tokenizes")
        f = QFont(title.font())
        f.setPointSizeF(f.pointSizeF() * 1.6)
        title.setFont(f)
        title.setAlignment(Qt.AlignmentFlag.AlignCenter)
        hint = QLabel("TokenPrism reads the tokenizer from any .gguf file (a vocab-only file is enough)\n"
                      "and tokenizes your text live as you type.")
        hint.setAlignment(Qt.AlignmentFlag.AlignCenter)
        hint.setForegroundRole(QPalette.ColorRole.PlaceholderText)
        self.open_button = QPushButton("Open model…")
        self.open_button.setDefault(True)
        self.open_button.setToolTip("File › Open (Ctrl+O)")
        self.open_button.clicked.connect(self.openRequested)
        drop = QLabel("or drop a .gguf file anywhere on this window")
        drop.setAlignment(Qt.AlignmentFlag.AlignCenter)
        drop.setForegroundRole(QPalette.ColorRole.PlaceholderText)
        row = QHBoxLayout()
        row.addStretch(1)
        row.addWidget(self.open_button)
        row.addStretch(1)
        self.recent_box = QVBoxLayout()
        for w in (title, hint):
            outer.addWidget(w)
        outer.addSpacing(12)
        outer.addLayout(row)
        outer.addWidget(drop)
        outer.addSpacing(12)
        outer.addLayout(self.recent_box)
        outer.addStretch(3)

    def set_recent(self, paths: list[str]) -> None:
        while self.recent_box.count():
            item = self.recent_box.takeAt(0)
            w = item.widget() if item is not None else None
            if w is not None:
                w.deleteLater()
        if not paths:
            return
        label = QLabel("Recent models:")
        label.setTextFormat(Qt.TextFormat.PlainText)
        label.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.recent_box.addWidget(label)
        for path in paths[:5]:
            shown = self.fontMetrics().elidedText(path, Qt.TextElideMode.ElideMiddle,
                                                  self.fontMetrics().horizontalAdvance("0") * 50)
            b = QPushButton(shown)
            b.setToolTip(path)
            b.setFlat(True)
            b.setCursor(Qt.CursorShape.PointingHandCursor)
            b.clicked.connect(lambda _=False, p=path: self.recentRequested.emit(p))
            self.recent_box.addWidget(b, 0, Qt.AlignmentFlag.AlignHCenter)
