"""Typing in the window: the table, the editor's boundaries and the toggles
always match ``model.encode`` of the editor text."""

from __future__ import annotations

import json

from PySide6.QtCore import Qt
from PySide6.QtGui import QGuiApplication, QTextCharFormat, QTextCursor, QTextOption

from tests.app.conftest import is_current, open_model_in, type_text, wait_result
from tokenprism.app.logic.analysis import Style
from tokenprism.app.qt.qt_token_table import COL_ID, COL_PIECE, COL_TYPE


def table_ids(window) -> list[int]:  # type: ignore[no-untyped-def]
    m = window.table.token_model
    return [m.data(m.index(r, COL_ID)) for r in range(m.rowCount())]


def set_text(qtbot, window, text: str):  # type: ignore[no-untyped-def]
    return wait_result(qtbot, window, lambda: window.editor.setPlainText(text))


def utf16(s: str) -> int:
    return len(s.encode("utf-16-le")) // 2


def test_typing_shows_the_models_ids(qtbot, window, spm_vocab, models) -> None:  # type: ignore[no-untyped-def]
    open_model_in(qtbot, window, spm_vocab)
    window.editor.clear()
    window.editor.setFocus()
    text = "Hello world, the quick fox 🙂 日本"
    wait_result(qtbot, window, lambda: type_text(window.editor, text))
    assert window.editor.token_text() == text
    model = models(spm_vocab)
    assert table_ids(window) == model.encode(text).ids
    a = window.analysis
    assert window.stats.counts_label.text().startswith(f"<b>{len(a)}</b> tokens")
    assert window.stats.model_label.toolTip().startswith(f"{model.name} · {model.kind}")
    assert window.stats.time_label.text().endswith(" ms")
    assert "tokenization took" in window.stats.time_label.toolTip()


def test_ascii_typing_with_keyclicks(qtbot, window, spm_vocab, models) -> None:  # type: ignore[no-untyped-def]
    """``qtbot.keyClicks`` into a real model (llama-spm, else the SPM demo)."""
    open_model_in(qtbot, window, spm_vocab)
    assert window.model_info.kind == "SPM"
    window.editor.clear()
    wait_result(qtbot, window, lambda: qtbot.keyClicks(window.editor, "the lazy dog"))
    assert table_ids(window) == models(spm_vocab).encode("the lazy dog").ids


def drawn_spans(window):  # type: ignore[no-untyped-def]
    """What the editor draws: block formats and extra selections read back
    from Qt, plus the line breaks painted as parts of tokens."""
    window.editor.viewport().repaint()
    styled = window.editor.styled_spans()
    marks = [(pos, pos + 1, None) for pos, _ in window.editor.newline_marks]
    return sorted(styled + marks, key=lambda t: t[0])


def test_boundaries_cover_exactly_the_token_spans(qtbot, window, spm_vocab, models) -> None:  # type: ignore[no-untyped-def]
    open_model_in(qtbot, window, spm_vocab)
    text = "The quick brown fox\n\tjumps over 🙂 the lazy dog.\nCafé 日本語 <s> done\n\nend"
    a = set_text(qtbot, window, text)
    drawn = drawn_spans(window)
    enc = models(spm_vocab).encode(text)
    # the union of the drawn spans is exactly the union of the token spans
    covered = {p for i in range(len(enc)) for p in range(utf16(text[:enc.starts[i]]), utf16(text[:enc.ends[i]]))}
    drawn_cover = [p for s, e, _ in drawn for p in range(s, e)]
    assert len(drawn_cover) == len(set(drawn_cover)), "spans overlap"
    assert set(drawn_cover) == covered
    # every token (outside groups) starts where a drawn span starts
    starts = {s for s, _, _ in drawn}
    for i in range(len(enc)):
        if enc.groups[i] < 0 and enc.starts[i] < enc.ends[i]:
            assert utf16(text[:enc.starts[i]]) in starts
    # neighbouring normal spans alternate between two tints
    styled = [(s, e, f.background().color().name()) for s, e, f in drawn if f is not None]
    for (s0, e0, c0), (s1, e1, c1) in zip(styled, styled[1:]):
        k0, k1 = a.span_at(s0), a.span_at(s1)
        if e0 == s1 and k0 != k1 and a.span_style[k0] == a.span_style[k1] == Style.NORMAL:
            assert c0 != c1


def test_table_tints_match_the_editors(qtbot, window, spm_vocab) -> None:  # type: ignore[no-untyped-def]
    """A token's Piece cell has the tint the editor draws the token in where
    it starts (tints alternate afresh on every line), on every line."""
    open_model_in(qtbot, window, spm_vocab)
    text = "The quick brown fox\n\tjumps over 🙂 the lazy dog.\nCafé 日本語 done\n\nend of it all\n"
    a = set_text(qtbot, window, text)
    m = window.table.token_model
    checked = 0
    for s, _e, fmt in drawn_spans(window):
        k = a.span_at(s)
        if fmt is None or k < 0 or int(a.span_start16[k]) != s:
            continue  # a line break mark, or a span's part on a later line
        cell = m.data(m.index(int(a.span_first[k]), COL_PIECE), Qt.ItemDataRole.BackgroundRole)
        assert cell == fmt.background().color(), (s, k)
        checked += 1
    assert checked >= 20


def test_byte_fallback_group_is_one_span(qtbot, window, spm_vocab) -> None:  # type: ignore[no-untyped-def]
    open_model_in(qtbot, window, spm_vocab)
    text = "smile 🙂 ok"
    a = set_text(qtbot, window, text)
    start = utf16(text[:text.index("🙂")])
    group = [x for x in drawn_spans(window) if x[0] <= start < x[1]]
    assert len(group) == 1
    s, e, fmt = group[0]
    assert (s, e) == (start, start + 2)
    k = a.span_at(start)
    assert a.span_style[k] == Style.BYTES
    assert a.span_last[k] - a.span_first[k] == 4  # four <0xNN> tokens, one box
    assert fmt.underlineStyle() != QTextCharFormat.UnderlineStyle.NoUnderline
    m = window.table.token_model
    first = int(a.span_first[k])
    assert m.data(m.index(first, COL_PIECE)) == "<0xF0>   🙂  1/4"
    assert m.data(m.index(first, COL_TYPE)) == "byte"


def test_one_huge_line_is_styled_with_selections(qtbot, window, test_vocab) -> None:  # type: ignore[no-untyped-def]
    open_model_in(qtbot, window, test_vocab)
    text = "the fox and the dog " * 2000  # one 40 000-character block
    a = set_text(qtbot, window, text)
    sels = window.editor.extraSelections()
    assert 0 < len(sels) < len(a.span_start16)
    first = sels[0]
    assert (first.cursor.selectionStart(), first.cursor.selectionEnd()) == (0, 3)


def test_add_special_toggle_adds_and_removes_bos(qtbot, window, spm_vocab, models) -> None:  # type: ignore[no-untyped-def]
    open_model_in(qtbot, window, spm_vocab)
    model = models(spm_vocab)
    bos = model.config.special_ids["bos"]
    set_text(qtbot, window, "hello world")
    assert window.act_add_special.isChecked() is False
    assert table_ids(window)[0] != bos
    wait_result(qtbot, window, lambda: window.act_add_special.setChecked(True))
    assert table_ids(window) == model.encode("hello world", add_special=True).ids
    assert table_ids(window)[0] == bos
    # BOS covers no text: it is drawn as a marker, not as a span
    assert window.analysis.empty_tokens.tolist()[0] == 0
    wait_result(qtbot, window, lambda: window.act_add_special.setChecked(False))
    assert table_ids(window) == model.encode("hello world").ids


def test_parse_special_toggle(qtbot, window, spm_vocab, models) -> None:  # type: ignore[no-untyped-def]
    open_model_in(qtbot, window, spm_vocab)
    model = models(spm_vocab)
    text = "a <s> b"
    set_text(qtbot, window, text)
    bos = model.config.special_ids["bos"]
    assert bos not in table_ids(window)
    wait_result(qtbot, window, lambda: window.act_parse_special.trigger())
    assert table_ids(window) == model.encode(text, parse_special=True).ids
    assert bos in table_ids(window)
    a = window.analysis
    k = a.span_at(text.index("<s>"))
    assert a.span_style[k] == Style.CONTROL


def test_show_whitespace_toggle(qtbot, window, test_vocab) -> None:  # type: ignore[no-untyped-def]
    open_model_in(qtbot, window, test_vocab)
    flag = QTextOption.Flag.ShowTabsAndSpaces
    assert not window.editor.document().defaultTextOption().flags() & flag
    window.act_show_ws.trigger()
    assert window.editor.document().defaultTextOption().flags() & flag
    window.act_show_ws.trigger()
    assert not window.editor.document().defaultTextOption().flags() & flag


def test_copy_ids_in_both_formats(qtbot, window, test_vocab, models) -> None:  # type: ignore[no-untyped-def]
    open_model_in(qtbot, window, test_vocab)
    set_text(qtbot, window, "the fox")
    ids = models(test_vocab).encode("the fox").ids
    window.act_copy_ids.trigger()
    assert QGuiApplication.clipboard().text() == " ".join(map(str, ids))
    window.act_fmt_json.trigger()
    window.act_copy_ids.trigger()
    assert json.loads(QGuiApplication.clipboard().text()) == ids
    assert "Copied" in window.stats.busy_label.text()


def test_fast_typing_ends_with_the_latest_text(qtbot, window, test_vocab, models) -> None:  # type: ignore[no-untyped-def]
    open_model_in(qtbot, window, test_vocab)
    window.editor.clear()
    shown: list[str] = []
    window.live.resultReady.connect(lambda a: shown.append(a.text))
    text = "the quick brown fox jumps over the lazy dog " * 3
    for i, ch in enumerate(text):
        type_text(window.editor, ch)
        if i % 7 == 0:
            qtbot.wait(1)  # let some jobs start and finish mid-typing
    qtbot.waitUntil(lambda: is_current(window), timeout=10_000)
    assert window.editor.token_text() == text
    assert table_ids(window) == models(test_vocab).encode(text).ids
    assert shown[-1] == text
    assert len(shown) < len(text)  # debounced and coalesced, not one job per key


def test_edit_in_the_middle_restyles(qtbot, window, test_vocab, models) -> None:  # type: ignore[no-untyped-def]
    open_model_in(qtbot, window, test_vocab)
    set_text(qtbot, window, "the fox and the dog")
    c = window.editor.textCursor()
    c.setPosition(4)
    window.editor.setTextCursor(c)

    def edit() -> None:
        window.editor.textCursor().insertText("lazy ")
    wait_result(qtbot, window, edit)
    assert window.editor.token_text() == "the lazy fox and the dog"
    assert table_ids(window) == models(test_vocab).encode("the lazy fox and the dog").ids
    c = window.editor.textCursor()
    c.movePosition(QTextCursor.MoveOperation.End)
    assert window.editor.shown_spans[1] == len(window.analysis.span_start16)


def test_spans_move_with_an_edit_before_the_new_result(qtbot, window, test_vocab) -> None:  # type: ignore[no-untyped-def]
    open_model_in(qtbot, window, test_vocab)
    set_text(qtbot, window, "the fox and the dog")
    before = [(s, e) for s, e, _ in window.editor.styled_spans()]
    window.live._timer.setInterval(10_000)  # hold the next tokenization back
    c = window.editor.textCursor()
    c.setPosition(0)
    c.insertText("a ")
    assert window.editor.stale
    after = [(s, e) for s, e, _ in window.editor.styled_spans()]
    assert after == [(s + 2, e + 2) for s, e in before]
    window.live._timer.setInterval(30)
    wait_result(qtbot, window, window.live.refresh)
