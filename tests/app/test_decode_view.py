"""View ▸ Decode IDs…: valid ids, ids outside the vocabulary, words that
are not ids, JSON lists and pasted garbage, flagged in place, never a crash."""

from __future__ import annotations

import pytest
from tests.app.conftest import RESULT_TIMEOUT_MS, open_model_in
from tokenprism.app.qt.qt_decode import DecodeIds, QDecodeDialog, decode_ids
from tokenprism.core import open_model
from tokenprism.core.library.resources import demo_models


@pytest.fixture(scope="module")
def spm() -> str:
    path = demo_models().get("spm")
    if path is None:
        pytest.skip("no demo models bundled")
    return str(path)


def open_decode(qtbot, window) -> QDecodeDialog:  # type: ignore[no-untyped-def]
    cmd = window.findChild(DecodeIds)
    assert cmd is not None
    cmd.act.trigger()
    assert cmd.dialog is not None and cmd.dialog.isVisible()
    qtbot.addWidget(cmd.dialog)
    return cmd.dialog


def paste(qtbot, dialog: QDecodeDialog, text: str) -> None:  # type: ignore[no-untyped-def]
    dialog.set_ids_text(text)
    shown = dialog.input.toPlainText()  # Qt turns a lone surrogate into U+FFFD
    qtbot.waitUntil(lambda: not dialog.busy and dialog.decoded is not None
                    and dialog.decoded.source == shown, timeout=RESULT_TIMEOUT_MS)


def rows(dialog: QDecodeDialog) -> list[list[str]]:
    m = dialog.table_model
    return [[str(m.data(m.index(r, c))) for c in range(m.columnCount())] for r in range(m.rowCount())]


def test_menu_entry_and_shortcut(window) -> None:  # type: ignore[no-untyped-def]
    cmd = window.findChild(DecodeIds)
    assert cmd.act in window.menus["view"].actions()
    assert cmd.act.shortcut().toString() == "Ctrl+Shift+D"


@pytest.mark.parametrize("form", ["{} {} {}", "{},{},{}", "[{}, {}, {}]", " [ {},\n{} ,{} ] "])
def test_valid_ids_in_every_form(qtbot, window, spm: str, form: str) -> None:  # type: ignore[no-untyped-def]
    open_model_in(qtbot, window, spm)
    model = open_model(spm)
    ids = model.encode("Hello world", add_special=True).ids[:3]
    d = open_decode(qtbot, window)
    paste(qtbot, d, form.format(*ids))
    assert d.output.toPlainText() == model.decode(ids)
    assert [r[1] for r in rows(d)] == [str(i) for i in ids]
    assert [r[2] for r in rows(d)] == [model.display_piece(i).replace(" ", "␣") for i in ids]
    assert d.marked_ranges() == [] and "⚠" not in d.summary.text()


def test_bad_ids_are_flagged_in_place(qtbot, window, spm: str) -> None:  # type: ignore[no-untyped-def]
    open_model_in(qtbot, window, spm)
    model = open_model(spm)
    n = len(model)
    text = f"[1, abc, {n}, 5, -2, 1.5, {n - 1}]"
    d = open_decode(qtbot, window)
    paste(qtbot, d, text)
    marked = [text[s:e] for s, e in d.marked_ranges()]  # (ASCII: positions are str indices)
    assert marked == ["abc", str(n), "-2", "1.5"]
    table = rows(d)
    assert [r[2].startswith("⚠") for r in table] == [False, True, True, False, True, True, False]
    assert "not a token id" in table[1][2] and f"outside the vocabulary (0..{n - 1})" in table[2][2]
    summary = d.summary.text()
    assert "4 of 7 ids cannot be decoded" in summary and "'abc'" in summary and str(n) in summary
    assert d.output.toPlainText() == model.decode([1, 5, n - 1])  # the valid ids only


def test_pasted_garbage_never_breaks_the_view(qtbot, window, spm: str) -> None:  # type: ignore[no-untyped-def]
    open_model_in(qtbot, window, spm)
    d = open_decode(qtbot, window)
    garbage = "🙂🙂 12 \x00\u202e ９ 99999999999999999999999999999999999999 {\"a\": \"b\"} 13 \ud800"
    paste(qtbot, d, garbage)
    # document (UTF-16) positions line up after the emoji
    marked = d.marked_words()
    assert marked[0] == "🙂🙂" and "12" not in marked and "13" not in marked
    assert "９" in marked  # a full-width digit is not an id
    assert [it.value for it in d.decoded.items if it.value is not None] == [12, 13]
    assert d.output.toPlainText() == open_model(spm).decode([12, 13])
    paste(qtbot, d, "x " * 5000)
    assert len(d.marked_ranges()) == 5000 and "5,000 of 5,000" in d.summary.text()
    paste(qtbot, d, "")
    assert rows(d) == [] and d.output.toPlainText() == "" and "No ids yet" in d.summary.text()


def test_marks_follow_edits(qtbot, window, spm: str) -> None:  # type: ignore[no-untyped-def]
    open_model_in(qtbot, window, spm)
    d = open_decode(qtbot, window)
    paste(qtbot, d, "1 bad 2 worse")
    assert d.marked_words() == ["bad", "worse"]
    cur = d.input.textCursor()
    cur.setPosition(0)
    cur.insertText("123 ")  # before the result of the edit arrives, the marks move with the text
    assert d.marked_words() == ["bad", "worse"]
    qtbot.waitUntil(lambda: not d.busy and d.decoded.source == d.input.toPlainText(), timeout=RESULT_TIMEOUT_MS)
    assert d.marked_words() == ["bad", "worse"]


def test_row_click_selects_the_word(qtbot, window, spm: str) -> None:  # type: ignore[no-untyped-def]
    open_model_in(qtbot, window, spm)
    d = open_decode(qtbot, window)
    paste(qtbot, d, "1 oops 2")
    d.table.setCurrentIndex(d.table_model.index(1, 0))
    assert d.input.textCursor().selectedText() == "oops"
    assert d.input.toPlainText() == "1 oops 2"


def test_follows_the_window_model(qtbot, window, spm: str, test_vocab: str) -> None:  # type: ignore[no-untyped-def]
    d = open_decode(qtbot, window)
    assert "Open a model" in d.summary.text()
    open_model_in(qtbot, window, spm)
    n_spm = len(open_model(spm))
    paste(qtbot, d, f"{n_spm - 1}")
    assert d.decoded.bad == ()
    small = len(open_model(test_vocab))
    assert small < n_spm
    open_model_in(qtbot, window, test_vocab)
    qtbot.waitUntil(lambda: d.decoded is not None and len(d.decoded.model) == small, timeout=RESULT_TIMEOUT_MS)
    assert d.decoded.bad == (0,) and f"0..{small - 1}" in d.model_label.text().replace(",", "")


def test_special_option(qtbot, window, spm: str) -> None:  # type: ignore[no-untyped-def]
    open_model_in(qtbot, window, spm)
    model = open_model(spm)
    d = open_decode(qtbot, window)
    bos = model.config.special_ids["bos"]
    paste(qtbot, d, f"{bos} 300")
    assert d.output.toPlainText() == model.decode([bos, 300])
    d.special.setChecked(False)
    qtbot.waitUntil(lambda: d.output.toPlainText() == model.decode([bos, 300], special=False),
                    timeout=RESULT_TIMEOUT_MS)


def test_decode_ids_function(spm: str) -> None:
    model = open_model(spm)
    r = decode_ids(model, "[1, 2, x]")
    assert r.valid_ids == [1, 2] and r.bad == (2,) and r.problems[2] == "not a token id"
