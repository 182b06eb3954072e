"""Huge edits go into an editor's document a slice at a time.

Qt inserts or removes text in a ``QTextDocument`` in one call that cannot
be cut short: 10 MB hold the GUI thread for 0.6-1.7 s to insert and
0.3 s to remove. :class:`SlicedEdit` does it ``SLICE`` characters per
event-loop turn instead, all inside one edit block that stays open across
the turns, so that the document ends exactly as one edit leaves it: one
undo step, one ``contentsChange`` report (Qt holds the report and the
layout's update until the block closes, and then they take ~20 ms on
10 MB). The editor is read-only meanwhile, so nothing else can edit the
half-built text.
"""

from __future__ import annotations

from typing import Callable

from PySide6.QtCore import QObject, QTimer, Signal
from PySide6.QtGui import QTextCursor
from PySide6.QtWidgets import QPlainTextEdit

SLICE = 1 << 16
"""Characters inserted per turn: ~5 ms of Qt's work on an idle 2-core
machine, ~20 ms on a loaded one. Removing costs about half as much."""
SLICED_MIN = 1 << 19
"""Edits of this many characters or more go in slices (Qt's single
insertion of 512 K characters takes ~35 ms, above which it is felt)."""


def is_huge(cursor: QTextCursor, text: str) -> bool:
    """Would replacing ``cursor``'s selection with ``text`` be felt?"""
    return len(text) >= SLICED_MIN or cursor.selectionEnd() - cursor.selectionStart() >= SLICED_MIN


class SlicedEdit(QObject):
    """Replaces a huge selection and/or inserts a huge text into
    ``editor`` over many event-loop turns."""

    progress = Signal(str)
    """What is going on and how far ("Pasting… 40%"); "" once done or aborted."""

    def __init__(self, editor: QPlainTextEdit) -> None:
        super().__init__(editor)
        self._editor = editor
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(0)
        self._timer.timeout.connect(self._step)
        self._cursor: QTextCursor | None = None
        self._cut_from = 0  # still to remove: [_cut_from, _cut_to) of the document
        self._cut_to = 0
        self._cut_total = 0
        self._text = ""
        self._pos = 0
        self._was_read_only = False
        self._what = ""
        self._on_done: Callable[[], None] | None = None

    @property
    def busy(self) -> bool:
        """An edit is under way: the document is not whole yet."""
        return self._cursor is not None

    def replace(self, cursor: QTextCursor, text: str, what: str = "Pasting",
                on_done: Callable[[], None] | None = None) -> None:
        """Replace ``cursor``'s selection with ``text``, a slice per turn;
        ``on_done`` runs after the edit block closed (not after :meth:`abort`)."""
        self.abort()
        editor = self._editor
        self._was_read_only = editor.isReadOnly()
        editor.setReadOnly(True)
        cursor.beginEditBlock()
        self._cut_from, self._cut_to = cursor.selectionStart(), cursor.selectionEnd()
        self._cut_total = self._cut_to - self._cut_from
        cursor.clearSelection()
        self._cursor, self._text, self._pos = cursor, text, 0
        self._what, self._on_done = what, on_done
        self._timer.start()

    def _cut_slice(self, cursor: QTextCursor) -> None:
        """Remove the last slice of what is left to remove: from the end, so
        the positions before it stay put."""
        lo, hi = self._cut_from, self._cut_to
        at = max(lo, hi - 2 * SLICE)
        if at > lo:
            doc = self._editor.document()
            start = doc.findBlock(at).position()
            if start > lo:
                at = start  # a line start: never inside "\r\n" or a surrogate pair
            elif 0xDC00 <= ord(doc.characterAt(at) or "\0") <= 0xDFFF:
                at -= 1  # one huge line: keep the pair whole
        cursor.setPosition(at)
        cursor.setPosition(hi, QTextCursor.MoveMode.KeepAnchor)
        cursor.removeSelectedText()
        self._cut_to = at

    def _step(self) -> None:
        cursor, text = self._cursor, self._text
        if cursor is None:
            return
        if self._cut_to > self._cut_from:
            self._cut_slice(cursor)
        else:
            end = min(len(text), self._pos + SLICE)
            if end < len(text) and text[end - 1] == "\r":
                end += 1  # "\r\n" is one line break to Qt: never cut it in two
            cursor.insertText(text[self._pos:end])
            self._pos = end
        total = self._cut_total + len(text)
        done = self._cut_total - (self._cut_to - self._cut_from) + self._pos
        if done < total:
            self.progress.emit(f"{self._what}… {done * 100 // total}%")
            self._timer.start()
            return
        on_done = self._on_done
        self._close()
        cursor.endEditBlock()
        self._editor.setTextCursor(cursor)  # after the text, as Qt's own paste leaves it
        self._editor.ensureCursorVisible()
        if on_done is not None:
            on_done()

    def _close(self) -> None:
        self._timer.stop()
        self._cursor, self._text, self._on_done = None, "", None
        self._cut_from = self._cut_to = self._cut_total = 0
        self._editor.setReadOnly(self._was_read_only)
        self.progress.emit("")

    def abort(self) -> None:
        """Stop where it is (what was done so far stays, as one edit); for
        a caller about to replace the whole document anyway."""
        cursor = self._cursor
        if cursor is None:
            return
        self._close()
        cursor.endEditBlock()
