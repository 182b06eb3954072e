"""The token table's context menu: copy ids and pieces, export the
selected tokens, find a token in the vocabulary."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import QTimer
from PySide6.QtGui import QContextMenuEvent, QGuiApplication
from PySide6.QtWidgets import QApplication, QFileDialog, QMenu

from tests.app.conftest import RESULT_TIMEOUT_MS, open_model_in, wait_result
from tokenprism.app.qt.qt_export import TokenFiles
from tokenprism.core.formats.export import load_json
from tokenprism.core.library.resources import demo_models
from tokenprism.core.library.vocab_query import search_text

TEXT = "Hello world 🙂 again & again"


@pytest.fixture
def shown(qtbot: Any, window: Any) -> Any:
    open_model_in(qtbot, window, str(demo_models()["spm"]))
    return wait_result(qtbot, window, lambda: window.editor.setPlainText(TEXT))


def _action(menu: QMenu, start: str) -> Any:
    found = [a for a in menu.actions() if a.text().startswith(start)]
    assert len(found) == 1, [a.text() for a in menu.actions()]
    return found[0]


def test_right_click_opens_the_menu_on_the_clicked_row(qtbot: Any, window: Any, shown: Any) -> None:
    t = window.table
    opened: list[QMenu] = []

    def close_popup() -> None:  # the menu runs its own event loop: look at it, then close it
        popup = QApplication.activePopupWidget()
        if isinstance(popup, QMenu):
            opened.append(popup)
            popup.close()
        else:
            QTimer.singleShot(20, close_popup)

    QTimer.singleShot(20, close_popup)
    row = 2
    pos = t.visualRect(t.model().index(row, 1)).center()
    t.contextMenuEvent(QContextMenuEvent(QContextMenuEvent.Reason.Mouse, pos, t.viewport().mapToGlobal(pos)))
    assert len(opened) == 1
    assert t.selected_range() == shown.token_range(row)
    texts = [a.text() for a in opened[0].actions() if not a.isSeparator()]
    assert texts[:2] == ["Copy ID", "Copy Piece"] and any("in Vocabulary" in x for x in texts)
    # the editor follows, as with a left click
    first, last = shown.token_range(row)
    cur = window.editor.textCursor()
    assert (cur.selectionStart(), cur.selectionEnd()) == (shown.encoding.starts[first], shown.encoding.ends[last - 1])


def test_no_menu_without_tokens(qtbot: Any, window: Any) -> None:
    assert window.table.context_menu() is None


def test_copy_ids_and_pieces(qtbot: Any, window: Any, shown: Any) -> None:
    t = window.table
    ids = list(shown.encoding.token_ids)
    t.select_tokens(1, 4)
    window.act_fmt_json.setChecked(True)  # the window's Token ID Format
    _action(t.context_menu(), "Copy IDs").trigger()
    assert json.loads(QGuiApplication.clipboard().text()) == ids[1:4]
    window.act_fmt_space.setChecked(True)
    _action(t.context_menu(), "Copy IDs").trigger()
    assert QGuiApplication.clipboard().text() == " ".join(map(str, ids[1:4]))
    _action(t.context_menu(), "Copy Pieces").trigger()
    m = shown.model
    from tokenprism.app.logic.pieces import piece_label
    assert QGuiApplication.clipboard().text().split("\n") == [piece_label(m, i) for i in ids[1:4]]


def test_export_selection(qtbot: Any, window: Any, shown: Any, tmp_path: Path,
                          monkeypatch: pytest.MonkeyPatch) -> None:
    t = window.table
    enc = shown.encoding
    n = len(shown)
    first, last = 1, n - 2
    t.select_tokens(first, last)
    path = tmp_path / "part.json"
    monkeypatch.setattr(QFileDialog, "getSaveFileName", staticmethod(lambda *a, **k: (str(path), "")))
    tf = window.findChild(TokenFiles)
    with qtbot.waitSignal(tf.exported, timeout=RESULT_TIMEOUT_MS) as sig:
        _action(t.context_menu(), f"Export {last - first:,} tokens").trigger()
    assert sig.args == [str(path), last - first]
    [tl] = load_json(path)
    assert list(tl.ids) == list(enc.token_ids[first:last])
    assert tl.text == TEXT[enc.starts[first]:max(enc.ends[first:last])] and tl.starts[0] == 0


def test_find_in_vocabulary(qtbot: Any, window: Any, shown: Any) -> None:
    t = window.table
    enc = shown.encoding
    row = next(i for i in range(len(shown)) if shown.model.display_piece(enc.token_ids[i]).strip("▁") == "again")
    tid = enc.token_ids[row]
    t.select_tokens(row, row + 1)
    act = _action(t.context_menu(), "Find “")
    assert "again" in act.text()
    browser = window.vocab_browser
    act.trigger()
    assert window.vocab_dock.isVisible()
    qtbot.waitUntil(lambda: browser.current_id() == tid, timeout=RESULT_TIMEOUT_MS)
    piece = search_text(shown.model.display_piece(tid))
    shown_ids = browser.table_model.ids.tolist()
    assert tid in shown_ids
    assert all(search_text(shown.model.display_piece(i)) == piece for i in shown_ids)
    assert browser.details.toPlainText()  # the token's details show
    # a piece with regex characters is matched literally
    special = next(i for i in range(len(shown.model)) if "<" in shown.model.display_piece(i))
    window.table.findInVocabularyRequested.emit(special)
    qtbot.waitUntil(lambda: browser.current_id() == special, timeout=RESULT_TIMEOUT_MS)
    assert not browser.error.isVisible()
