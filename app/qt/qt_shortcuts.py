"""Window-wide shortcuts that work whatever widget has the focus.

Before Qt runs a shortcut it asks the focus widget, with a
``ShortcutOverride`` event, whether it wants the key itself. Text boxes say
yes to their editing keys, and under the X11 key scheme (Linux desktops)
those include Emacs-style ones: ``Ctrl+E`` (end of line), ``Ctrl+K``,
``Ctrl+U`` and ``Ctrl+Shift+A`` (deselect). So with a filter box focused,
Ctrl+E (Focus Editor) only moved the filter's cursor, and the user went on
typing into the filter. :class:`WindowShortcuts` watches the widgets of the
window that take the focus and, for a key that one of the window's actions
has as its shortcut, answers "no" for the widget, so the action runs. The
keys a text box needs for its own text (clipboard, undo, select all, plain
typing and navigation) are never taken from it.
"""

from __future__ import annotations

from PySide6.QtCore import QEvent, QObject, Qt
from PySide6.QtGui import QAction, QKeyEvent, QKeySequence
from PySide6.QtWidgets import QApplication, QDialog, QWidget

from . import qt_compat  # noqa: F401  (guards against a PySide6 bug; see there)

COMMAND_MODIFIERS = (Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.AltModifier
                     | Qt.KeyboardModifier.MetaModifier)
# what a focused text box keeps even when a window action has the same key
OWN_KEYS = (QKeySequence.StandardKey.Copy, QKeySequence.StandardKey.Cut, QKeySequence.StandardKey.Paste,
            QKeySequence.StandardKey.Undo, QKeySequence.StandardKey.Redo, QKeySequence.StandardKey.SelectAll,
            QKeySequence.StandardKey.DeleteStartOfWord, QKeySequence.StandardKey.DeleteEndOfWord)


def _is_command_key(event: QKeyEvent) -> bool:
    """A Ctrl/Alt/Meta chord on a character key, or a function key: keys a
    text box never needs to type text or to move its cursor (arrows, Home,
    End, Page keys, Backspace and Delete are none of these)."""
    key = event.key()
    if Qt.Key.Key_F1.value <= key <= Qt.Key.Key_F35.value:
        return True
    return bool(event.modifiers() & COMMAND_MODIFIERS) and key < Qt.Key.Key_Escape.value


class WindowShortcuts(QObject):
    """Keeps ``window``'s action shortcuts working from every widget in it
    (docks included, floating or not; its dialogs have their own keys)."""

    def __init__(self, window: QWidget) -> None:
        super().__init__(window)
        self._window = window
        self.last_reclaimed = ""
        """The last key taken back from a focused widget (for tests)."""
        app = QApplication.instance()
        if isinstance(app, QApplication):
            app.focusChanged.connect(self._on_focus)

    def _belongs(self, widget: QWidget) -> bool:
        top = widget.window()
        if top is self._window:
            return True
        if isinstance(top, QDialog):
            return False
        # a floating dock is its own window, still a child of ours
        parent = top.parentWidget()
        return parent is not None and parent.window() is self._window

    def _on_focus(self, _old: QWidget | None, new: QWidget | None) -> None:
        # watch widgets as they get the focus: panels made later (or
        # widgets swapped in) are covered without walking the window
        if new is not None and self._belongs(new):
            new.installEventFilter(self)  # again is harmless: Qt keeps one

    def action_for(self, sequence: QKeySequence) -> QAction | None:
        """The window's enabled action whose shortcut is ``sequence``."""
        for act in self._window.findChildren(QAction):
            if act.shortcutContext() == Qt.ShortcutContext.WidgetShortcut or not act.isEnabled():
                continue  # a widget's own shortcut: nothing window-wide to keep
            for s in act.shortcuts():
                if s.matches(sequence) == QKeySequence.SequenceMatch.ExactMatch:
                    return act
        return None

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if event.type() != QEvent.Type.ShortcutOverride or not isinstance(event, QKeyEvent):
            return False
        if not _is_command_key(event) or any(event.matches(k) for k in OWN_KEYS):
            return False
        if not isinstance(watched, QWidget) or not self._belongs(watched):
            return False
        seq = QKeySequence(event.keyCombination())
        if self.action_for(seq) is None:
            return False
        # not accepted: the widget does not override it, so the shortcut runs
        event.ignore()
        self.last_reclaimed = seq.toString()
        return True


def install(window: QWidget) -> WindowShortcuts:
    return WindowShortcuts(window)
