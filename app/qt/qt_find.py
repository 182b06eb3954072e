"""Edit ▸ Find… (Ctrl+F), Find Next/Previous (F3, Shift+F3) and Go to
Token… (Ctrl+G).

Find opens a bar above the editor: typing searches as you type, Enter and
F3 go to the next match, Shift+Enter and Shift+F3 to the previous one (both
wrap around, and say so), Esc closes the bar and gives the editor the
focus; the bar counts the matches ("3 of 12") and has a match-case switch.
Go to Token takes ``#N`` (the token at position N, as in the token table's
# column) or ``id N`` (the next token with that id) and selects it in the
editor and the token views. The searching and the reading of the query
live in :mod:`.text_find`, without Qt.

:func:`install` takes the parts it needs as parameters (the editor, the
menu, how to get the analysis on screen and how to show tokens), not the
window.
"""

from __future__ import annotations

from typing import Callable

from PySide6.QtCore import QEvent, QObject, Qt, QTimer
from PySide6.QtGui import QAction, QKeyEvent, QKeySequence, QTextCursor
from PySide6.QtWidgets import (QBoxLayout, QDialog, QDialogButtonBox, QHBoxLayout, QLabel, QLineEdit, QMenu,
                               QToolButton, QVBoxLayout, QWidget)

from . import qt_compat  # noqa: F401  (guards against a PySide6 bug; see there)
from ..logic.analysis import Analysis
from .qt_editor import QTokenEditor
from ..logic.text_find import find_all, indexed, match_at, next_match, parse_goto, resolve_goto

FIND_SHORTCUT = "Ctrl+F"
GOTO_SHORTCUT = "Ctrl+G"
SEARCH_DELAY_MS = 120  # typing pauses this long before a big text is searched
BIG_TEXT = 200_000  # UTF-16 units; smaller texts are searched at every keystroke


class QFindBar(QWidget):
    """The find bar: a search box, the match count, previous/next and
    match case; it drives the search on the editor it belongs to."""

    def __init__(self, editor: QTokenEditor, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.editor = editor
        self.edit = QLineEdit()
        self.edit.setPlaceholderText("Find in text")
        self.edit.setClearButtonEnabled(True)
        self.edit.setToolTip("Enter or F3: next match · Shift+Enter or Shift+F3: previous · Esc: close")
        self.count = QLabel("")
        self.count.setMinimumWidth(self.count.fontMetrics().horizontalAdvance("999,999 of 999,999"))
        self.case = QToolButton()
        self.case.setText("Aa")
        self.case.setCheckable(True)
        self.case.setToolTip("Match case")
        self.prev_btn = QToolButton()
        self.prev_btn.setText("↑")
        self.prev_btn.setToolTip("Previous match (Shift+F3)")
        self.next_btn = QToolButton()
        self.next_btn.setText("↓")
        self.next_btn.setToolTip("Next match (F3)")
        close = QToolButton()
        close.setText("✕")
        close.setToolTip("Close (Esc)")
        close.setAutoRaise(True)
        row = QHBoxLayout(self)
        row.setContentsMargins(2, 2, 2, 2)
        row.setSpacing(4)
        row.addWidget(self.edit, 1)
        row.addWidget(self.count)
        row.addWidget(self.case)
        row.addWidget(self.prev_btn)
        row.addWidget(self.next_btn)
        row.addWidget(close)
        self.matches: list[tuple[int, int]] = []
        self._key: tuple[str, bool, int] | None = None  # what the matches are of (needle, case, revision)
        self._revision = 0
        self._anchor = 0  # where the search as you type starts
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(SEARCH_DELAY_MS)
        self._timer.timeout.connect(lambda: self._search_from(self._anchor))
        self._recount = QTimer(self)  # the count after edits of a big text, once typing pauses
        self._recount.setSingleShot(True)
        self._recount.setInterval(SEARCH_DELAY_MS)
        self._recount.timeout.connect(self._refresh_count)
        self.wrapped = False
        """Whether the last step went round the end (or start) of the text."""
        self.edit.textEdited.connect(self._on_typed)
        self.case.toggled.connect(lambda _on: self._on_typed(self.edit.text()))
        self.prev_btn.clicked.connect(lambda: self.find_next(backward=True))
        self.next_btn.clicked.connect(lambda: self.find_next())
        close.clicked.connect(self.close_bar)
        editor.document().contentsChange.connect(self._on_text_change)
        self.edit.installEventFilter(self)
        self.hide()

    # ---- opening and closing ------------------------------------------------------

    def open_bar(self) -> None:
        """Show the bar with the editor's selection (one line of it) as the search."""
        sel = self.editor.textCursor().selectedText()
        if sel and "\u2029" not in sel and len(sel) <= 200:
            self.edit.setText(sel)
            self._key = None
        self.show()
        self.edit.setFocus(Qt.FocusReason.ShortcutFocusReason)
        self.edit.selectAll()
        self._refresh_count()

    def close_bar(self) -> None:
        self.hide()
        self.editor.setFocus(Qt.FocusReason.OtherFocusReason)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if (watched is self.edit and event.type() == QEvent.Type.ShortcutOverride and isinstance(event, QKeyEvent)
                and event.key() == Qt.Key.Key_Escape):
            event.accept()  # Esc closes the bar (the window's Esc dismisses a message otherwise)
            return True
        if watched is self.edit and event.type() == QEvent.Type.KeyPress and isinstance(event, QKeyEvent):
            key = event.key()
            if key == Qt.Key.Key_Escape:
                self.close_bar()
                return True
            if key in (Qt.Key.Key_Return, Qt.Key.Key_Enter):
                self.find_next(backward=bool(event.modifiers() & Qt.KeyboardModifier.ShiftModifier))
                return True
        return False

    # ---- searching --------------------------------------------------------------------

    def _on_text_change(self, _pos: int, removed: int, added: int) -> None:
        if removed or added:
            self._revision += 1
            if self.isVisible() and self.edit.text():
                if self.editor.document().characterCount() > BIG_TEXT:
                    self._recount.start()  # (searching a megabyte per keystroke would lag the typing)
                else:
                    self._refresh_count()

    def _current_matches(self) -> list[tuple[int, int]]:
        key = (self.edit.text(), self.case.isChecked(), self._revision)
        if key != self._key:
            self._key = key
            self.matches = indexed(find_all(self.editor.token_text(), key[0], key[1]))
        return self.matches

    def _on_typed(self, _text: str) -> None:
        # as you type: from where the search started, so a longer word
        # stays on the same match when it still matches there
        c = self.editor.textCursor()
        self._anchor = c.selectionStart()
        if self.editor.document().characterCount() > BIG_TEXT:
            self._timer.start()
        else:
            self._search_from(self._anchor)

    def _search_from(self, pos: int) -> None:
        matches = self._current_matches()
        i, _ = next_match(matches, pos, pos)
        if i >= 0:
            self._select(i)
        self._refresh_count()

    def find_next(self, backward: bool = False) -> bool:
        """Select the next (previous) match; False when there is none."""
        if not self.edit.text():
            self.open_bar()
            return False
        self._timer.stop()
        matches = self._current_matches()
        c = self.editor.textCursor()
        i, self.wrapped = next_match(matches, c.selectionStart(), c.selectionEnd(), backward)
        if i < 0:
            self._refresh_count()
            return False
        self._select(i)
        self._refresh_count()
        return True

    def _select(self, i: int) -> None:
        s, e = self.matches[i]
        ed = self.editor
        c = QTextCursor(ed.document())
        c.setPosition(s)
        c.setPosition(e, QTextCursor.MoveMode.KeepAnchor)
        ed.setTextCursor(c)
        if ed.viewport().rect().contains(ed.cursorRect()):
            ed.ensureCursorVisible()
        else:
            ed.centerCursor()  # a jump: the match mid-screen, with what surrounds it

    def _refresh_count(self) -> None:
        if not self.edit.text():
            self.count.setText("")
            return
        matches = self._current_matches()
        if not matches:
            self.count.setText("No matches")
            self.count.setStyleSheet("color: #e8403a;")
            return
        self.count.setStyleSheet("")
        c = self.editor.textCursor()
        i = match_at(matches, c.selectionStart(), c.selectionEnd())
        total = f"{len(matches):,}"
        text = f"{i + 1:,} of {total}" if i >= 0 else f"{total} match{'es' if len(matches) != 1 else ''}"
        if self.wrapped and i >= 0:
            text += " (wrapped)"
        self.count.setText(text)


class QGotoDialog(QDialog):
    """Asks for ``#N`` or ``id N``; says at once what is wrong with a query."""

    def __init__(self, parent: QWidget | None, check: Callable[[str], str | None], last: str = "") -> None:
        super().__init__(parent)
        self.setWindowTitle("Go to Token")
        self._check = check
        layout = QVBoxLayout(self)
        layout.addWidget(QLabel("Token at position #N, or a token with id N:"))
        self.edit = QLineEdit(last)
        self.edit.setPlaceholderText("#12 or id 450")
        self.edit.selectAll()
        layout.addWidget(self.edit)
        self.error = QLabel("")
        self.error.setWordWrap(True)
        self.error.setStyleSheet("color: #e8403a;")
        layout.addWidget(self.error)
        self.buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel)
        self.buttons.button(QDialogButtonBox.StandardButton.Ok).setText("Go")
        self.buttons.accepted.connect(self._try_accept)
        self.buttons.rejected.connect(self.reject)
        layout.addWidget(self.buttons)
        self.edit.textChanged.connect(lambda _t: self.error.setText(""))

    def _try_accept(self) -> None:
        problem = self._check(self.edit.text())
        if problem is None:
            self.accept()
        else:
            self.error.setText(problem)

    @property
    def query(self) -> str:
        return self.edit.text()


def ask_goto(parent: QWidget, check: Callable[[str], str | None], last: str) -> str | None:
    """The query typed (``check`` returned None for it), or None if cancelled."""
    dlg = QGotoDialog(parent, check, last)
    return dlg.query if dlg.exec() == QDialog.DialogCode.Accepted else None


class FindController(QObject):
    """The find bar and Go to Token for one editor."""

    def __init__(self, editor: QTokenEditor, menu: QMenu, analysis: Callable[[], Analysis | None],
                 show_tokens: Callable[[int, int], None]) -> None:
        super().__init__(editor)
        self.editor = editor
        self._analysis = analysis
        self._show_tokens = show_tokens
        self._last_goto = ""
        self.bar = QFindBar(editor)
        holder = editor.parentWidget()
        box = holder.layout() if holder is not None else None
        if isinstance(box, QBoxLayout) and box.indexOf(editor) >= 0:
            box.insertWidget(box.indexOf(editor), self.bar)  # above the editor: it hides no text
        else:
            self.bar.setParent(editor)  # (an editor on its own: the bar floats at its top)
        window = editor.window()
        self.act_find = self._action(window, "&Find…", FIND_SHORTCUT, self.bar.open_bar,
                                     "Find text in the editor (Ctrl+F)")
        # (F3 and Shift+F3 spelled out: the desktop's FindNext is Ctrl+G on GNOME and macOS, which is Go to Token here)
        self.act_find_next = self._action(window, "Find &Next", "F3",
                                          lambda: self.bar.find_next(), "Next match (F3)")
        self.act_find_prev = self._action(window, "Find Pre&vious", "Shift+F3",
                                          lambda: self.bar.find_next(backward=True), "Previous match (Shift+F3)")
        self.act_goto = self._action(window, "&Go to Token…", GOTO_SHORTCUT, self.goto_dialog,
                                     "Select the token at position #N or with id N (Ctrl+G)")
        menu.addSeparator()
        menu.addActions([self.act_find, self.act_find_next, self.act_find_prev, self.act_goto])

    def _action(self, owner: QWidget, text: str, key: str | QKeySequence.StandardKey, slot: Callable[[], object],
                tip: str) -> QAction:
        act = QAction(text, owner)
        act.setShortcut(QKeySequence(key))
        act.setShortcutContext(Qt.ShortcutContext.WindowShortcut)
        act.setToolTip(tip)
        act.triggered.connect(slot)
        owner.addAction(act)  # works with the menu bar hidden, from any widget of the window
        return act

    # ---- go to token -------------------------------------------------------------------

    def resolve(self, query: str) -> int:
        """The token index ``query`` names; ValueError with the reason."""
        a = self._analysis()
        if a is None:
            raise ValueError("No tokens yet: open a model first.")
        target = parse_goto(query)
        cur = self.editor.current_tokens
        return resolve_goto(target, a.ids, len(a.model), cur[0] if cur is not None else -1)

    def go_to(self, query: str) -> str | None:
        """Select the token ``query`` names; the reason when there is none."""
        try:
            k = self.resolve(query)
        except ValueError as e:
            return str(e)
        a = self._analysis()
        assert a is not None
        # (a byte token is shown with its group: the editor draws them as one)
        self._show_tokens(*a.token_range(k))
        self._last_goto = query
        return None

    def _check(self, query: str) -> str | None:
        try:
            self.resolve(query)
        except ValueError as e:
            return str(e)
        return None

    def goto_dialog(self) -> None:
        query = ask_goto(self.editor.window(), self._check, self._last_goto)
        if query is not None:
            self.go_to(query)


def install(editor: QTokenEditor, menu: QMenu, analysis: Callable[[], Analysis | None],
            show_tokens: Callable[[int, int], None]) -> FindController:
    """Add Find, Find Next/Previous and Go to Token to ``menu`` (the Edit
    menu) for ``editor``; ``analysis()`` gives the tokens on screen and
    ``show_tokens(first, last)`` selects tokens in every view."""
    return FindController(editor, menu, analysis, show_tokens)
