"""The "Normalized" tab: the text as a normalizing model (UGM) actually sees
it, after its normalizer (``Model.normalized``), with the token boundaries.

The normalized text is made in the tokenizer's worker along with the
tokens (``Analysis.extra["normalized"]``), while this tab is the one shown,
so the tab always shows the same result as the other views. Its characters may differ from the editor's
(``ﬁ`` becomes ``fi``, ``①`` becomes ``1``, full-width letters become
ASCII), which is the point: hovering a token here boxes, and clicking it
selects, the ORIGINAL characters in the editor that the token came from.
"""

from __future__ import annotations

import numpy as np

from PySide6.QtCore import QEvent, QObject, Qt, Signal
from PySide6.QtGui import QFontDatabase, QMouseEvent, QPalette, QTextCursor, QTextOption
from PySide6.QtWidgets import QLabel, QPlainTextEdit, QTextEdit, QVBoxLayout, QWidget

from . import qt_compat  # noqa: F401  (guards against a PySide6 bug; see there)
from ..logic.analysis import Analysis, Normalized, Style
from .styles import token_colors

MAX_MARKED = 6000  # token boundaries drawn at most (ExtraSelections)


class QNormalizedView(QWidget):
    """Read-only normalized text with linked token selection."""

    tokensActivated = Signal(int, int)
    """Tokens ``[first, last)`` clicked (or reached with the cursor)."""
    tokensHovered = Signal(int, int)
    """Tokens under the mouse; (-1, -1) when none."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.note = QLabel("")
        self.note.setWordWrap(True)
        self.note.setForegroundRole(QPalette.ColorRole.PlaceholderText)
        self.text = QPlainTextEdit()
        self.text.setReadOnly(True)
        font = QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont)
        font.setPointSizeF(max(font.pointSizeF(), 11.0))
        self.text.setFont(font)
        self.text.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse
                                          | Qt.TextInteractionFlag.TextSelectableByKeyboard)
        self.text.setWordWrapMode(QTextOption.WrapMode.WrapAtWordBoundaryOrAnywhere)
        self.text.setMouseTracking(True)
        self.text.viewport().setMouseTracking(True)
        self.text.viewport().installEventFilter(self)
        self.text.cursorPositionChanged.connect(self._on_cursor)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(2, 2, 2, 2)
        lay.addWidget(self.note)
        lay.addWidget(self.text, 1)
        self._a: Analysis | None = None
        self._n: Normalized | None = None
        self._quiet = False
        self._hovered = (-1, -1)

    @property
    def normalized(self) -> Normalized | None:
        return self._n

    def set_analysis(self, a: Analysis | None) -> None:
        n = a.extra.get("normalized") if a is not None else None
        self._a = a
        self._n = n if isinstance(n, Normalized) else None
        self._quiet = True
        try:
            if self._n is None:
                self.text.setPlainText("")
                self.note.setText("Normalizing…" if a is not None and a.model.config.normalizes
                                  and "normalized" not in a.extra else "")
            elif self._n.too_long:
                self.text.setPlainText("")
                self.note.setText("The text is too long to show normalized here.")
            else:
                self.text.setPlainText(self._n.text)
                self.note.setText("What the model sees after its normalizer. Hover or click a token "
                                  "to find the characters it came from in the editor."
                                  if self._n.tok_start16 is not None else
                                  "What the model sees after its normalizer (token boundaries are not "
                                  "shown: the pieces do not spell it, e.g. unknown tokens).")
            self._mark()
        finally:
            self._quiet = False

    def _mark(self) -> None:
        """Alternate soft backgrounds over the token pieces."""
        n, a = self._n, self._a
        sels: list[QTextEdit.ExtraSelection] = []
        if n is not None and a is not None and n.tok_start16 is not None:
            colors = token_colors(self.palette())
            fmts = [colors.char_format(int(Style.NORMAL), p) for p in (0, 1)]
            doc = self.text.document()
            starts = n.tok_start16
            k = 0
            for i in range(min(len(starts) - 1, MAX_MARKED)):
                s, e = int(starts[i]), int(starts[i + 1])
                if e <= s:
                    continue
                sel = QTextEdit.ExtraSelection()
                c = QTextCursor(doc)
                c.setPosition(s)
                c.setPosition(e, QTextCursor.MoveMode.KeepAnchor)
                sel.cursor = c
                sel.format = fmts[k & 1]
                k += 1
                sels.append(sel)
        self.text.setExtraSelections(sels)

    def token_at(self, pos16: int) -> tuple[int, int] | None:
        """Tokens ``[first, last)`` (one token or its group) at a position of
        the normalized text, or None."""
        n, a = self._n, self._a
        if n is None or a is None or n.tok_start16 is None or not len(a):
            return None
        starts = n.tok_start16
        i = int(np.searchsorted(starts, pos16, "right")) - 1
        while 0 <= i < len(a) and starts[i + 1] <= starts[i]:
            i += 1  # an empty piece (BOS): the token after it holds the character
        if not 0 <= i < len(a) or pos16 >= starts[-1]:
            return None
        return a.token_range(i)

    def select_tokens(self, first: int, last: int) -> None:
        """Select the pieces of tokens ``[first, last)`` (no signal back)."""
        n = self._n
        if n is None or n.tok_start16 is None or not 0 <= first < last < len(n.tok_start16):
            return
        c = self.text.textCursor()
        c.setPosition(int(n.tok_start16[first]))
        c.setPosition(int(n.tok_start16[last]), QTextCursor.MoveMode.KeepAnchor)
        self._quiet = True
        try:
            self.text.setTextCursor(c)
        finally:
            self._quiet = False

    def _on_cursor(self) -> None:
        if self._quiet:
            return
        c = self.text.textCursor()
        rng = self.token_at(c.selectionStart() if c.hasSelection() else c.position())
        if rng is not None:
            self.tokensActivated.emit(*rng)

    def eventFilter(self, obj: QObject, event: QEvent) -> bool:
        if event.type() == QEvent.Type.MouseMove and isinstance(event, QMouseEvent):
            c = self.text.cursorForPosition(event.position().toPoint())
            pos = c.position()
            if self.text.cursorRect(c).center().x() > event.position().x() and pos > 0:
                pos -= 1  # the point is on the character before the cursor position
            rng = self.token_at(pos) or (-1, -1)
            if rng != self._hovered:
                self._hovered = rng
                self.tokensHovered.emit(*rng)
        elif event.type() == QEvent.Type.Leave and self._hovered != (-1, -1):
            self._hovered = (-1, -1)
            self.tokensHovered.emit(-1, -1)
        return False
