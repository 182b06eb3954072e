"""Files dropped on the window are opened, never moved: a drop that the
source offers as a move is taken as a copy or a link (app/qt/qt_editor.py
accept_file_drop), so a file manager never deletes the original."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import QMimeData, QPoint, QPointF, Qt, QUrl
from PySide6.QtGui import QDragEnterEvent, QDragMoveEvent, QDropEvent
from PySide6.QtWidgets import QApplication

Copy, Move, Link = Qt.DropAction.CopyAction, Qt.DropAction.MoveAction, Qt.DropAction.LinkAction


def _mime(path: str) -> QMimeData:
    mime = QMimeData()
    mime.setUrls([QUrl.fromLocalFile(path)])
    return mime


def _events(mime: QMimeData, actions: Any, mods: Any) -> list[QDropEvent]:
    return [QDragEnterEvent(QPoint(20, 20), actions, mime, Qt.MouseButton.LeftButton, mods),
            QDragMoveEvent(QPoint(20, 20), actions, mime, Qt.MouseButton.LeftButton, mods)]


@pytest.mark.parametrize("actions, mods, want", [
    (Copy | Move, Qt.KeyboardModifier.ShiftModifier, Copy),  # Shift proposes a move
    (Move | Link, Qt.KeyboardModifier.NoModifier, Link),
    (Move, Qt.KeyboardModifier.NoModifier, None),  # a move or nothing: nothing
    (Copy | Move | Link, Qt.KeyboardModifier.NoModifier, Copy),
])
def test_drags_of_files_are_taken_as_copy_or_link(window: Any, tmp_path: Path, test_vocab: str,
                                                  actions: Any, mods: Any, want: Any) -> None:
    text = tmp_path / "notes.txt"
    text.write_text("notes\n")
    for target, path in ((window.editor.viewport(), str(text)), (window.editor.viewport(), test_vocab),
                         (window, test_vocab)):
        mime = _mime(path)  # (an event does not keep its mime data alive)
        # (the window takes the enter; Qt then accepts its moves for it)
        for ev in _events(mime, actions, mods)[:1 if target is window else 2]:
            QApplication.sendEvent(target, ev)
            if want is None:
                assert not ev.isAccepted()
            else:
                assert ev.isAccepted() and ev.dropAction() == want, (target, path, ev)


def _drop(target: Any, ev: QDropEvent) -> None:
    """Deliver ``ev`` as Qt does: after the drag entered ``target``."""
    enter = QDragEnterEvent(ev.position().toPoint(), ev.possibleActions(), ev.mimeData(), ev.buttons(),
                            ev.modifiers())
    QApplication.sendEvent(target, enter)
    QApplication.sendEvent(target, ev)


def test_a_drop_offered_as_move_opens_as_copy(qtbot: Any, window: Any, tmp_path: Path, test_vocab: str) -> None:
    text = tmp_path / "notes.txt"
    text.write_text("dropped notes\n")
    mime = _mime(str(text))
    ev = QDropEvent(QPointF(20, 20), Move | Link, mime, Qt.MouseButton.LeftButton,
                    Qt.KeyboardModifier.NoModifier)
    assert ev.proposedAction() == Move
    _drop(window.editor.viewport(), ev)
    assert ev.isAccepted() and ev.dropAction() == Link
    assert window.editor.token_text() == "dropped notes\n" and text.exists()
    # only a move offered: refused, nothing opened
    other = tmp_path / "other.txt"
    other.write_text("other\n")
    mime2 = _mime(str(other))
    ev = QDropEvent(QPointF(20, 20), Move, mime2, Qt.MouseButton.LeftButton,
                    Qt.KeyboardModifier.NoModifier)
    _drop(window.editor.viewport(), ev)
    assert not ev.isAccepted() and window.editor.token_text() == "dropped notes\n"
    # a model dropped on the window (outside the editor) as a move: loaded, as a copy
    mime3 = _mime(test_vocab)
    ev = QDropEvent(QPointF(5, 5), Copy | Move, mime3, Qt.MouseButton.LeftButton,
                    Qt.KeyboardModifier.ShiftModifier)
    assert ev.proposedAction() == Move
    with qtbot.waitSignal(window.loader.loaded, timeout=20_000):
        _drop(window, ev)
    assert ev.isAccepted() and ev.dropAction() == Copy
