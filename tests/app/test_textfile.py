"""File ▸ Open Text / Save Text: visible replacement, byte-exact saving,
unsaved-change prompts, drops, big files (app/qt/qt_textfile.py)."""

from __future__ import annotations

import codecs
from pathlib import Path

import pytest
from PySide6.QtCore import QMimeData, QPointF, Qt, QUrl
from PySide6.QtGui import QCloseEvent, QDropEvent, QKeySequence
from PySide6.QtWidgets import QApplication

from tests.app.conftest import open_model_in, type_text, wait_result
from tokenprism.app.qt import qt_textfile
from tokenprism.app.qt.qt_menus import SHORTCUTS

BAD = "Hello wörld, caf".encode() + b"\xe9 and \xff\xfe junk.\r\nSecond \xc3 line.\r\n"


@pytest.fixture
def answers(monkeypatch):  # type: ignore[no-untyped-def]
    """Scripted replies to the module's dialogs; a dialog nobody scripted fails the test."""
    replies: dict[str, list[object]] = {"open": [], "save": [], "unsaved": [], "replace": [], "model": []}
    asked: list[str] = []

    def reply(kind: str):  # type: ignore[no-untyped-def]
        def answer(*_args):  # type: ignore[no-untyped-def]
            asked.append(kind)
            assert replies[kind], f"unexpected {kind} dialog"
            return replies[kind].pop(0)
        return answer

    monkeypatch.setattr(qt_textfile, "ask_open_name", reply("open"))
    monkeypatch.setattr(qt_textfile, "ask_save_name", reply("save"))
    monkeypatch.setattr(qt_textfile, "ask_unsaved", reply("unsaved"))
    monkeypatch.setattr(qt_textfile, "ask_replace_edited", reply("replace"))
    monkeypatch.setattr(qt_textfile, "ask_open_as_model", reply("model"))
    replies["asked"] = asked  # type: ignore[assignment]
    return replies


def _files(window):  # type: ignore[no-untyped-def]
    return window.text_files


def _open(qtbot, window, path: Path) -> None:  # type: ignore[no-untyped-def]
    _files(window).open_path(str(path))
    qtbot.waitUntil(lambda: _files(window).path == str(path), timeout=10_000)


def _type_at(window, pos: int, text: str) -> None:  # type: ignore[no-untyped-def]
    c = window.editor.textCursor()
    c.setPosition(pos)
    window.editor.setTextCursor(c)
    type_text(window.editor, text)


def test_invalid_utf8_is_shown_replaced_with_a_warning(qtbot, window, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    p = tmp_path / "bad.txt"
    p.write_bytes(BAD)
    _open(qtbot, window, p)
    text = window.editor.token_text()
    assert text == "Hello wörld, caf\ufffd and \ufffd\ufffd junk.\nSecond \ufffd line.\n"
    assert window.banner.isVisible()
    assert "bad.txt" in window.banner.text and "4 bytes" in window.banner.text
    assert _files(window).note.isVisible() and "4 invalid bytes" in _files(window).note.text()
    # every replacement in view is outlined
    assert sorted(_files(window).visible_replacements()) == [i for i, c in enumerate(text) if c == "\ufffd"]
    assert not window.isWindowModified() and "bad.txt" in window.windowTitle()


def test_open_and_save_without_edits_keeps_every_byte(qtbot, window, tmp_path: Path, answers) -> None:  # type: ignore[no-untyped-def]
    p = tmp_path / "bad.txt"
    p.write_bytes(BAD)
    _open(qtbot, window, p)
    assert _files(window).save()
    assert p.read_bytes() == BAD
    assert answers["asked"] == []


def test_edits_elsewhere_keep_the_invalid_bytes(qtbot, window, tmp_path: Path, answers) -> None:  # type: ignore[no-untyped-def]
    p = tmp_path / "bad.txt"
    p.write_bytes(BAD)
    _open(qtbot, window, p)
    _type_at(window, 0, ">> ")
    end = len(window.editor.token_text())
    _type_at(window, end, "new line\n")
    assert window.isWindowModified()
    assert _files(window).save()
    assert p.read_bytes() == b">> " + BAD + b"new line\r\n"
    assert not window.isWindowModified()
    assert answers["asked"] == []


def test_editing_through_replaced_bytes_asks(qtbot, window, tmp_path: Path, answers) -> None:  # type: ignore[no-untyped-def]
    p = tmp_path / "bad.txt"
    p.write_bytes(BAD)
    _open(qtbot, window, p)
    at = window.editor.token_text().index("\ufffd\ufffd")
    c = window.editor.textCursor()
    c.setPosition(at)
    c.setPosition(at + 1, c.MoveMode.KeepAnchor)
    c.insertText("X")  # types over the first of the two
    answers["replace"].append(False)
    assert not _files(window).save()
    assert p.read_bytes() == BAD and window.isWindowModified()
    answers["replace"].append(True)
    assert _files(window).save()
    assert p.read_bytes() == BAD.replace(b"\xff\xfe", b"X\xfe")
    assert answers["asked"] == ["replace", "replace"]


def test_bom_and_line_endings_are_kept(qtbot, window, tmp_path: Path, answers) -> None:  # type: ignore[no-untyped-def]
    cases = {
        "bom8.txt": codecs.BOM_UTF8 + b"bom\r\nline\r\n",
        "utf16.txt": codecs.BOM_UTF16_LE + "sixteen \U0001F600\r\nz".encode("utf-16-le"),
        "utf16be.txt": codecs.BOM_UTF16_BE + "be\n".encode("utf-16-be"),
        "mixed.txt": b"a\r\nb\nc\rd\r\n",
    }
    for name, data in cases.items():
        p = tmp_path / name
        p.write_bytes(data)
        _open(qtbot, window, p)
        assert "\r" not in window.editor.token_text()
        assert _files(window).save()
        assert p.read_bytes() == data, name
    p = tmp_path / "bom8.txt"
    _open(qtbot, window, p)
    _type_at(window, 0, "X\n")
    assert _files(window).save()
    assert p.read_bytes() == codecs.BOM_UTF8 + b"X\r\nbom\r\nline\r\n"


def test_unsaved_edits_are_never_lost(qtbot, window, tmp_path: Path, answers) -> None:  # type: ignore[no-untyped-def]
    a, b = tmp_path / "a.txt", tmp_path / "b.txt"
    a.write_bytes(b"first file\n")
    b.write_bytes(b"second file\n")
    _open(qtbot, window, a)
    _type_at(window, 0, "edit ")
    assert window.isWindowModified() and window.windowTitle().startswith("a.txt[*]")
    # open another: Cancel keeps everything
    answers["unsaved"].append(qt_textfile.CANCEL)
    _files(window).open_path(str(b))
    assert _files(window).path == str(a) and window.editor.token_text() == "edit first file\n"
    # Save writes the edit, then the other file opens
    answers["unsaved"].append(qt_textfile.SAVE)
    answers["open"].append(str(b))
    _files(window).open_dialog()
    qtbot.waitUntil(lambda: _files(window).path == str(b))
    assert a.read_bytes() == b"edit first file\n"
    assert window.editor.token_text() == "second file\n" and not window.isWindowModified()
    # closing with unsaved edits: Cancel keeps the window open, Discard closes it
    _type_at(window, 0, "more ")
    answers["unsaved"].append(qt_textfile.CANCEL)
    ev = QCloseEvent()
    QApplication.sendEvent(window, ev)
    assert not ev.isAccepted() and window.isVisible()
    answers["unsaved"].append(qt_textfile.DISCARD)
    assert window.close()
    assert b.read_bytes() == b"second file\n"
    assert answers["asked"] == ["unsaved", "unsaved", "open", "unsaved", "unsaved"]


def test_scratch_text_asks_before_a_file_replaces_it(qtbot, window, tmp_path: Path, answers) -> None:  # type: ignore[no-untyped-def]
    p = tmp_path / "f.txt"
    p.write_bytes(b"file\n")
    _type_at(window, 0, "typed by hand ")
    answers["unsaved"].append(qt_textfile.SAVE)
    answers["save"].append(str(tmp_path / "scratch.txt"))
    _files(window).open_path(str(p))
    qtbot.waitUntil(lambda: _files(window).path == str(p))
    assert (tmp_path / "scratch.txt").read_text(encoding="utf-8").startswith("typed by hand ")


def test_a_failed_write_keeps_the_text_and_says_why(qtbot, window, tmp_path: Path, answers) -> None:  # type: ignore[no-untyped-def]
    _type_at(window, 0, "keep me ")
    answers["save"].append(str(tmp_path / "no-such-folder" / "x.txt"))
    assert not _files(window).save_as()
    assert window.banner.isVisible() and "x.txt" in window.banner.text
    assert window.editor.token_text().startswith("keep me ") and window.editor.document().isModified()


def _drop(window, path: Path) -> None:  # type: ignore[no-untyped-def]
    mime = QMimeData()
    mime.setUrls([QUrl.fromLocalFile(str(path))])
    ev = QDropEvent(QPointF(20, 20), Qt.DropAction.CopyAction, mime, Qt.MouseButton.LeftButton,
                    Qt.KeyboardModifier.NoModifier)
    window.editor.dropEvent(ev)


def test_dropping_a_text_file_opens_it_and_a_gguf_loads_it(qtbot, window, tmp_path: Path,  # type: ignore[no-untyped-def]
                                                           test_vocab: str) -> None:
    p = tmp_path / "dropped.md"
    p.write_bytes(b"# dropped\n")
    _drop(window, p)
    assert _files(window).path == str(p) and window.editor.token_text() == "# dropped\n"
    renamed = tmp_path / "model.bin"  # a model without the .gguf name is still a model
    renamed.write_bytes(Path(test_vocab).read_bytes())
    with qtbot.waitSignal(window.loader.loaded, timeout=20_000):
        _drop(window, renamed)
    assert window.editor.token_text() == "# dropped\n"


def test_open_text_on_a_gguf_offers_to_open_the_model(qtbot, window, tmp_path: Path,  # type: ignore[no-untyped-def]
                                                      test_vocab: str, answers) -> None:
    window.editor.setPlainText("kept text")
    window.editor.document().setModified(False)
    # declined: nothing opens, the text stays
    answers["open"].append(test_vocab)
    answers["model"].append(False)
    window.text_files.act_open.trigger()
    assert answers["asked"] == ["open", "model"]
    assert window.editor.token_text() == "kept text" and _files(window).path is None
    assert window.model_info is None or window.model_info.path != test_vocab
    # accepted: the model loads, the text stays
    answers["open"].append(test_vocab)
    answers["model"].append(True)
    with qtbot.waitSignal(window.loader.loaded, timeout=20_000):
        window.text_files.act_open.trigger()
    assert window.model_info is not None and window.model_info.path == test_vocab
    assert window.editor.token_text() == "kept text" and _files(window).path is None
    # a text file is not asked about
    p = tmp_path / "plain.txt"
    p.write_bytes(b"plain\n")
    answers["open"].append(str(p))
    window.text_files.act_open.trigger()
    qtbot.waitUntil(lambda: _files(window).path == str(p))
    assert answers["asked"] == ["open", "model", "open", "model", "open"]


def test_big_file_is_read_in_the_background(qtbot, window, tmp_path: Path, test_vocab: str,  # type: ignore[no-untyped-def]
                                            models) -> None:
    open_model_in(qtbot, window, test_vocab)
    p = tmp_path / "big.txt"
    line = "the quick brown fox \xe9\n".encode("latin-1")  # invalid UTF-8 on every line
    p.write_bytes(line * (qt_textfile.BACKGROUND_BYTES // len(line) + 10))
    _files(window).open_path(str(p))
    assert _files(window).path is None  # not yet: the read runs off the GUI thread
    qtbot.waitUntil(lambda: _files(window).path == str(p), timeout=20_000)
    text = window.editor.token_text()
    assert text.count("\ufffd") == p.read_bytes().count(b"\xe9")
    a = wait_result(qtbot, window, lambda: None, timeout=60_000)
    assert a.encoding.ids == models(test_vocab).encode(text).ids
    assert _files(window).save()
    qtbot.waitUntil(lambda: not window.isWindowModified() and not _files(window)._writer.busy, timeout=20_000)
    assert p.read_bytes() == line * (qt_textfile.BACKGROUND_BYTES // len(line) + 10)


def test_pasted_lone_surrogates_never_reach_the_tokenizer(qtbot, window) -> None:  # type: ignore[no-untyped-def]
    """What a user pasting broken UTF-16 produces: Qt's document holds no
    lone surrogate (the reason core.model.sanitize_text's choice is safe)."""
    mime = QMimeData()
    try:
        mime.setText("a\ud800b\udc00c")
    except (UnicodeError, RuntimeError):
        return  # PySide refuses such a string: it cannot be pasted at all
    window.editor.selectAll()
    window.editor.insertFromMimeData(mime)
    text = window.editor.token_text()
    assert not any("\ud800" <= ch <= "\udfff" for ch in text)
    assert text.startswith("a") and text.endswith("c")


def test_shortcuts_are_listed_and_unique(window) -> None:  # type: ignore[no-untyped-def]
    files = _files(window)
    listed = " ".join(k for k, _ in SHORTCUTS)
    for act in (files.act_open, files.act_save, files.act_save_as):
        assert act.shortcut().toString() in listed
    seen: dict[str, str] = {}
    for act in window.actions():
        for seq in act.shortcuts():
            key = seq.toString(QKeySequence.SequenceFormat.PortableText)
            assert key not in seen, f"{key}: {seen.get(key)} and {act.text()}"
            seen[key] = act.text()
