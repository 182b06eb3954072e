"""File ▸ Export Tokens… and Import Tokens…: files parsed back with the
standard modules, a failed write keeps the old file and says so, and an
import restores text, options and model and checks the model's tokens."""

from __future__ import annotations

import csv
import io
import json
import os
from pathlib import Path

import pytest
from PySide6.QtWidgets import QFileDialog

from tests.app.conftest import RESULT_TIMEOUT_MS, is_current, open_model_in, wait_result
from tokenprism.app.qt.qt_export import FILTERS, TokenFiles, find_model, path_and_format
from tokenprism.core import open_model
from tokenprism.core.formats.export import load_json, render, token_list
from tokenprism.core.library.resources import demo_models

TEXT = 'Hi "there", =SUM(1) 🙂 naïve\n<s> end'
CSV_TEXT = 'x=SUM(1)+2-3@home, "quoted",\n-neg +pos @at =eq'


@pytest.fixture(scope="module")
def demo() -> dict[str, str]:
    models = demo_models()
    if not models:
        pytest.skip("no demo models bundled")
    return {k: str(p) for k, p in models.items()}


def files_of(window) -> TokenFiles:  # type: ignore[no-untyped-def]
    tf = window.findChild(TokenFiles)
    assert tf is not None
    return tf


def show_text(qtbot, window, text: str, add_special: bool = False, parse_special: bool = False):  # type: ignore[no-untyped-def]
    def act() -> None:
        window.act_add_special.setChecked(add_special)
        window.act_parse_special.setChecked(parse_special)
        window.editor.setPlainText(text)
    return wait_result(qtbot, window, act)


def test_menu_entries_and_shortcuts(window) -> None:  # type: ignore[no-untyped-def]
    tf = files_of(window)
    file_menu = window.menus["file"].actions()
    assert tf.act_export in file_menu and tf.act_import in file_menu
    assert file_menu.index(tf.act_import) < file_menu.index(window.act_quit)
    assert tf.act_export.shortcut().toString() == "Ctrl+Shift+S"
    assert tf.act_import.shortcut().toString() == "Ctrl+Shift+I"
    keys = [a.shortcut().toString() for a in window.actions() if not a.shortcut().isEmpty()]
    assert len(keys) == len(set(keys)), "two actions share a shortcut"


def test_format_follows_extension_or_filter() -> None:
    assert path_and_format("/x/t.csv", FILTERS["json"]) == ("/x/t.csv", "csv")
    assert path_and_format("/x/t", FILTERS["jsonl"]) == ("/x/t.jsonl", "jsonl")
    assert path_and_format("/x/t.data", FILTERS["ids"]) == ("/x/t.data.txt", "ids")


def test_export_csv_through_the_dialog(qtbot, window, demo, tmp_path: Path,  # type: ignore[no-untyped-def]
                                       monkeypatch: pytest.MonkeyPatch) -> None:
    open_model_in(qtbot, window, demo["bpe"])
    a = show_text(qtbot, window, CSV_TEXT, add_special=True)
    target = tmp_path / "tokens"  # no extension: the CSV filter adds it
    monkeypatch.setattr(QFileDialog, "getSaveFileName",
                        staticmethod(lambda *args, **kw: (str(target), FILTERS["csv"])))
    tf = files_of(window)
    with qtbot.waitSignal(tf.exported, timeout=RESULT_TIMEOUT_MS) as sig:
        tf.act_export.trigger()
    path = Path(sig.args[0])
    assert path == tmp_path / "tokens.csv" and sig.args[1] == len(a)
    rows = list(csv.DictReader(io.StringIO(path.read_text("utf-8-sig"))))
    model = open_model(demo["bpe"])
    expected = model.encode(CSV_TEXT, add_special=True)
    assert [int(r["id"]) for r in rows] == expected.ids
    pieces = [model.display_piece(i) for i in expected.ids]  # the piece column shows "Ġ" as a space
    # the text is made so that this BPE vocab cuts pieces a spreadsheet would run as formulas
    assert {p[:1] for p in pieces} >= set("=+-@")
    for r, piece in zip(rows, pieces):
        # OWASP's formula triggers: = + - @ and tab, CR, LF
        assert r["piece"] == ("'" + piece if piece[:1] in "=+-@\t\r\n" else piece)
    assert any("," in p or '"' in p for p in pieces)  # and pieces the CSV quoting must carry whole
    assert "Exported" in window.stats.busy_label.text()
    # the dialog starts in the same folder, with the same format, next time
    seen: list[tuple[object, ...]] = []
    monkeypatch.setattr(QFileDialog, "getSaveFileName",
                        staticmethod(lambda *args, **kw: (seen.append(args), ("", ""))[1]))
    tf.export_dialog()
    assert os.path.dirname(str(seen[0][2])) == str(tmp_path) and seen[0][4] == FILTERS["csv"]


def test_export_json_is_exact_and_reimportable(qtbot, window, demo, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    open_model_in(qtbot, window, demo["bpe"])
    a = show_text(qtbot, window, TEXT, parse_special=True)
    tf = files_of(window)
    with qtbot.waitSignal(tf.exported, timeout=RESULT_TIMEOUT_MS):
        tf.export_to(str(tmp_path / "t.json"), "json")
    doc = json.loads((tmp_path / "t.json").read_text("utf-8"))
    assert doc["ids"] == a.encoding.ids and doc["text"] == TEXT and doc["parse_special"] is True
    assert load_json(tmp_path / "t.json") == [token_list(a.model, a.encoding)]


def test_export_jsonl_one_token_a_line(qtbot, window, demo, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    open_model_in(qtbot, window, demo["spm"])
    a = show_text(qtbot, window, TEXT)
    tf = files_of(window)
    with qtbot.waitSignal(tf.exported, timeout=RESULT_TIMEOUT_MS):
        tf.export_to(str(tmp_path / "t.jsonl"), "jsonl")
    lines = (tmp_path / "t.jsonl").read_text("utf-8").splitlines()
    objs = [json.loads(line) for line in lines]
    expected = open_model(demo["spm"]).encode(TEXT)
    tokens = [o for o in objs if "id" in o]
    assert len(tokens) == len(expected) == len(a)
    assert [o["id"] for o in tokens] == expected.ids
    assert [o["piece"] for o in tokens] == [t.piece for t in expected.tokens]
    assert [(o["start"], o["end"]) for o in tokens] == [(t.start, t.end) for t in expected.tokens]


def test_export_of_text_not_yet_tokenized(qtbot, window, demo, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    open_model_in(qtbot, window, demo["wpm"])
    window.editor.setPlainText("typed just now")  # exported before the live result arrives
    tf = files_of(window)
    with qtbot.waitSignal(tf.exported, timeout=RESULT_TIMEOUT_MS):
        tf.export_to(str(tmp_path / "t.txt"), "ids")
    expected = open_model(demo["wpm"]).encode("typed just now").ids
    assert json.loads((tmp_path / "t.txt").read_text()) == expected


def test_failed_export_keeps_the_old_file_and_says_so(qtbot, window, demo, tmp_path: Path,  # type: ignore[no-untyped-def]
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    open_model_in(qtbot, window, demo["spm"])
    show_text(qtbot, window, TEXT)
    (tmp_path / "out").mkdir()
    target = tmp_path / "out" / "t.json"
    target.write_text("the previous export")

    def disk_full(*args: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", disk_full)
    tf = files_of(window)
    with qtbot.waitSignal(tf.exportFailed, timeout=RESULT_TIMEOUT_MS) as sig:
        tf.export_to(str(target), "json")
    monkeypatch.undo()
    assert "No space left on device" in sig.args[0]
    assert window.banner.isVisible() and "t.json" in window.banner.text and "unchanged" in window.banner.text
    assert target.read_text() == "the previous export"
    assert [p.name for p in target.parent.iterdir()] == ["t.json"]  # no temporary file left


def test_export_without_a_model(window, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    assert files_of(window).export_to(str(tmp_path / "x.json"), "json") is False
    assert window.banner.isVisible() and "Open a model first" in window.banner.text
    assert not (tmp_path / "x.json").exists()


def export_file(path: Path, model_path: str, text: str, add: bool, parse: bool) -> None:
    tl = token_list(open_model(model_path), text=text, add_special=add, parse_special=parse)
    path.write_text(render([tl], "json"), "utf-8")


def test_import_restores_text_options_and_model(qtbot, window, demo, tmp_path: Path,  # type: ignore[no-untyped-def]
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    f = tmp_path / "spm.json"
    export_file(f, demo["spm"], TEXT, True, True)
    open_model_in(qtbot, window, demo["bpe"])
    monkeypatch.setattr(QFileDialog, "getOpenFileName", staticmethod(lambda *a, **k: (str(f), "")))
    tf = files_of(window)
    with qtbot.waitSignal(tf.verified, timeout=RESULT_TIMEOUT_MS) as sig:
        tf.act_import.trigger()
    assert sig.args == [True]
    assert window.model_info.path == os.path.abspath(demo["spm"])
    assert window.editor.token_text() == TEXT
    assert window.act_add_special.isChecked() and window.act_parse_special.isChecked()
    qtbot.waitUntil(lambda: is_current(window), timeout=RESULT_TIMEOUT_MS)
    assert window.analysis.encoding.ids == list(load_json(f)[0].ids)
    assert "same tokens" in window.stats.busy_label.text()


def test_import_with_the_model_already_open(qtbot, window, demo, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    f = tmp_path / "ugm.json"
    export_file(f, demo["ugm"], "hello world", False, False)
    open_model_in(qtbot, window, demo["ugm"])
    show_text(qtbot, window, "hello world")  # the same text already on screen
    tf = files_of(window)
    with qtbot.waitSignal(tf.verified, timeout=RESULT_TIMEOUT_MS) as sig:
        tf.import_from(str(f))
    assert sig.args == [True]


def test_import_names_a_missing_model_and_shows_the_text(qtbot, window, demo, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    f = tmp_path / "gone.json"
    export_file(f, demo["spm"], "text from elsewhere", False, False)
    doc = json.loads(f.read_text("utf-8"))
    doc["model"]["path"] = "/nowhere/llama-7b.gguf"
    f.write_text(json.dumps(doc), "utf-8")
    open_model_in(qtbot, window, demo["wpm"])
    tf = files_of(window)
    with qtbot.waitSignal(tf.imported, timeout=RESULT_TIMEOUT_MS):
        tf.import_from(str(f))
    msg = window.banner.text
    assert window.banner.isVisible() and "/nowhere/llama-7b.gguf" in msg and "SPM" in msg and "1,500 tokens" in msg
    assert window.editor.token_text() == "text from elsewhere"
    assert window.model_info.path == os.path.abspath(demo["wpm"])  # the open model stays
    wait_result(qtbot, window, lambda: None)


def test_import_reports_tokens_that_differ(qtbot, window, demo, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    f = tmp_path / "edited.json"
    export_file(f, demo["spm"], "Hello world", False, False)
    doc = json.loads(f.read_text("utf-8"))
    doc["tokens"][1]["id"] = doc["ids"][1] = 7  # as if another version of the model made them
    f.write_text(json.dumps(doc), "utf-8")
    tf = files_of(window)
    with qtbot.waitSignal(tf.verified, timeout=RESULT_TIMEOUT_MS) as sig:
        tf.import_from(str(f))
    assert sig.args == [False]
    msg = window.banner.text
    assert "differently" in msg and "token #1" in msg and "id 7" in msg


def test_relative_model_path_is_found_beside_the_file(demo, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    model = Path(demo["wpm"])
    (tmp_path / model.name).write_bytes(model.read_bytes())
    assert find_model(model.name, str(tmp_path / "t.json")) == str(tmp_path / model.name)
    assert find_model("missing.gguf", str(tmp_path / "t.json")) is None


@pytest.mark.parametrize("content, words", [
    (b"not json", "not valid JSON"),
    (b'{"hello": 1}', "has no \u201cformat\u201d"),
    (b"\x00\xff" * 100, "not UTF-8"),
])
def test_broken_import_shows_an_error_and_keeps_the_text(qtbot, window, demo, tmp_path: Path,  # type: ignore[no-untyped-def]
                                                        content: bytes, words: str) -> None:
    open_model_in(qtbot, window, demo["spm"])
    show_text(qtbot, window, "keep me")
    f = tmp_path / "bad.json"
    f.write_bytes(content)
    tf = files_of(window)
    with qtbot.waitSignal(tf.importFailed, timeout=RESULT_TIMEOUT_MS):
        tf.import_from(str(f))
    assert window.banner.isVisible() and "bad.json" in window.banner.text and words in window.banner.text
    assert window.editor.token_text() == "keep me"


def test_import_of_a_comparison_uses_the_first_list(qtbot, window, demo, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    lists = [token_list(open_model(demo[k]), text="compare me") for k in ("ugm", "bpe")]
    f = tmp_path / "cmp.json"
    f.write_text(render(lists, "json"), "utf-8")
    tf = files_of(window)
    with qtbot.waitSignal(tf.verified, timeout=RESULT_TIMEOUT_MS) as sig:
        tf.import_from(str(f))
    assert sig.args == [True]
    assert window.model_info.path == os.path.abspath(demo["ugm"])
    assert "compares 2 models" in window.banner.text


@pytest.mark.parametrize("fmt", ["jsonl", "csv", "ids"])
def test_every_export_format_imports_back(qtbot, window, demo, tmp_path: Path, fmt: str,  # type: ignore[no-untyped-def]
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    # the window's own export, then File > Import Tokens on it (a JSON Lines
    # file used to fail with "not valid JSON: Extra data (line 2, column 1)")
    open_model_in(qtbot, window, demo["spm"])
    show_text(qtbot, window, TEXT, add_special=True, parse_special=True)
    expected = list(window.analysis.encoding.ids)
    tf = files_of(window)
    f = tmp_path / f"mine.{fmt}"
    with qtbot.waitSignal(tf.exported, timeout=RESULT_TIMEOUT_MS):
        tf.export_to(str(f), fmt)
    show_text(qtbot, window, "something else")
    window.act_add_special.setChecked(False)
    window.act_parse_special.setChecked(False)
    monkeypatch.setattr(QFileDialog, "getOpenFileName", staticmethod(lambda *a, **k: (str(f), "")))
    with qtbot.waitSignal(tf.verified, timeout=RESULT_TIMEOUT_MS) as sig:
        tf.act_import.trigger()
    assert sig.args == [True], window.banner.text
    assert window.editor.token_text() == TEXT
    assert window.act_add_special.isChecked() and window.act_parse_special.isChecked()
    qtbot.waitUntil(lambda: is_current(window), timeout=RESULT_TIMEOUT_MS)
    assert list(window.analysis.encoding.ids) == expected
    assert "keeps no text" in window.banner.text and "rebuilt" in window.banner.text


def test_a_rows_file_without_a_model_says_what_to_do(qtbot, make_window, demo, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    w = make_window()
    f = tmp_path / "t.jsonl"
    f.write_text(render([token_list(open_model(demo["wpm"]), text="hi there")], "jsonl"), "utf-8")
    tf = files_of(w)
    with qtbot.waitSignal(tf.importFailed, timeout=RESULT_TIMEOUT_MS) as sig:
        tf.import_from(str(f))
    assert "JSON Lines" in sig.args[0] and "Open the model" in sig.args[0]
    assert w.banner.isVisible()


def test_an_unknown_file_names_the_formats_that_import(qtbot, window, demo, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    f = tmp_path / "notes.md"
    f.write_text("# some notes\n", "utf-8")
    tf = files_of(window)
    with qtbot.waitSignal(tf.importFailed, timeout=RESULT_TIMEOUT_MS):
        tf.import_from(str(f))
    assert "JSON Lines (.jsonl), CSV (.csv)" in window.banner.text
