"""A menu command that opens a window of its own, made on first use.

Compare Models, Check Against Source and Corpus Profile each add one
command (menu entry, shortcut, tooltip) to the main window, build their
window the first time it is asked for, bring it to the front after that,
and stop its background work when the main window closes.
:class:`WindowFeature` is that shared part; each feature says what its
window is and what the command does.
"""

from __future__ import annotations

from PySide6.QtCore import QEvent, QObject
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QWidget

from . import qt_compat  # noqa: F401  (guards against a PySide6 bug; see there)
from .window_parts import WindowParts


class WindowFeature(QObject):
    """One main window's command ``text`` (``shortcut``, ``tip``) in its
    ``menu`` ("view", "tokenize", …), after a separator when ``separate``.
    Subclasses connect ``act.triggered`` and implement :meth:`shutdown`
    (stop the feature's window's work; called when the main window closes)."""

    def __init__(self, window: WindowParts, name: str, text: str, shortcut: str, tip: str, menu: str,
                 separate: bool = False) -> None:
        super().__init__(window)
        self.setObjectName(name)
        self.window = window
        self.act = QAction(text, window)
        self.act.setShortcut(QKeySequence(shortcut))
        self.act.setToolTip(f"{tip} ({shortcut})")
        window.addAction(self.act)  # the shortcut works wherever the focus is
        m = window.menus[menu]
        m.setToolTipsVisible(True)
        if separate:
            m.addSeparator()
        m.addAction(self.act)
        window.installEventFilter(self)

    def eventFilter(self, obj: QObject, event: QEvent) -> bool:
        if obj is self.window and event.type() == QEvent.Type.Close:
            self.shutdown()
        return False

    def shutdown(self) -> None:
        raise NotImplementedError


def bring_up(view: QWidget) -> None:
    """Show a feature's window and give it the focus."""
    view.show()
    view.raise_()
    view.activateWindow()
