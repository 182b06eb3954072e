"""View ▸ Why: selecting tokens (a click or a selection in the token
table, the editor's cursor or selection) fills the panel with the stages, the slider
replays the merges one at a time, a Unigram lattice is drawn with its best
and runner-up paths, WordPiece attempts are listed, a tokenizer that cannot
trace says so, and a huge text is explained in a bounded window."""

from __future__ import annotations

import os
from typing import Any

import pytest

from tests.app.conftest import open_model_in, real_vocab, wait_result
from tokenprism.app.logic import why
from tokenprism.app.qt.qt_why import QWhyPanel
from tokenprism.core.explain import Alternative, Attempt, Candidate, Lattice, LatticeEdge, Merge, Symbols, Word
from tokenprism.core.library.resources import demo_models

TIMEOUT = 30_000
SHOTS = os.environ.get("TOKENPRISM_WHY_SHOTS")  # a folder: save a screenshot per vocabulary there


def show_why(qtbot: Any, window: Any, path: str, text: str) -> QWhyPanel:
    open_model_in(qtbot, window, path)
    wait_result(qtbot, window, lambda: window.editor.setPlainText(text))
    window.why_dock.toggleViewAction().trigger()
    assert window.why_dock.isVisible()
    panel: QWhyPanel = window.why_panel
    return panel


def select(qtbot: Any, window: Any, first: int, last: int) -> None:
    panel: QWhyPanel = window.why_panel
    with qtbot.waitSignal(panel.explained, timeout=TIMEOUT):
        window.table.select_tokens(first, last)  # as a click in the token table does
        window.show_tokens(first, last)
        window.table.tokensActivated.emit(first, last)


def shot(window: Any, name: str) -> None:
    if SHOTS:
        window.resize(1500, 860)
        window.grab().save(os.path.join(SHOTS, f"why-{name}.png"))


def test_selection_fills_the_story_and_the_slider_replays(qtbot, window) -> None:  # type: ignore[no-untyped-def]
    path = real_vocab("llama-spm")
    if path is None:
        pytest.skip("the llama-spm reference vocab is not available")
    open_model_in(qtbot, window, path)
    wait_result(qtbot, window, lambda: window.editor.setPlainText("Hello naïve world"))
    cursor = window.editor.textCursor()
    cursor.setPosition(14)  # in "world"
    window.editor.setTextCursor(cursor)
    panel: QWhyPanel = window.why_panel
    with qtbot.waitSignal(panel.explained, timeout=TIMEOUT):  # shown, it explains the cursor's token
        window.why_dock.toggleViewAction().trigger()
    assert panel.view is not None and [w.text for w in panel.view.words] == ["▁world"]
    select(qtbot, window, 0, 1)  # ▁Hello
    assert panel.view is not None and [w.text for w in panel.view.words] == ["▁Hello"]
    story = panel.story.toPlainText()
    for title in ("1. Special tokens", "2. Normalizer", "3. Pre-tokenizer", "4. Model (SPM)", "5. Post"):
        assert title in story
    assert "spaces become ▁" in story
    # SentencePiece's merges for ▁Hello, by score: e+l, ▁+H, l+o, el+lo, ▁H+ello
    assert panel.slider.maximum() == 5 and panel.shown_pieces() == ["▁Hello"]
    panel.slider.setValue(0)
    assert panel.shown_pieces() == ["▁", "H", "e", "l", "l", "o"]
    panel.slider.setValue(1)
    assert panel.shown_pieces() == ["▁", "H", "el", "l", "o"] and "'e' + 'l' → 'el'" in panel.step_label.text()
    panel.slider.setValue(4)
    assert panel.shown_pieces() == ["▁H", "ello"]
    select(qtbot, window, 1, 4)  # ▁na ï ve: one word of three tokens
    assert [w.text for w in panel.view.words] == ["▁naïve"] and panel.view.words[0].tokens == (1055, 30085, 345)
    shot(window, "llama-spm")


def test_lattice_is_drawn_with_best_and_runner_up(qtbot) -> None:  # type: ignore[no-untyped-def]
    # a hand-made Unigram word: "abc" as a+bc (best) or ab+c (runner-up)
    edges = (LatticeEdge(0, 1, 10, "a", -1.0), LatticeEdge(0, 2, 11, "ab", -3.0),
             LatticeEdge(1, 3, 12, "bc", -1.5), LatticeEdge(1, 2, 13, "b", -4.0),
             LatticeEdge(2, 3, 14, "c", -1.0))
    lat = Lattice("abc", edges)
    word = Word("abc", 0, 3, (10, 12), (lat,), (Alternative((10, 12), -2.5), Alternative((11, 14), -4.0)))
    assert why.path_edges(lat, (10, 12)) == (edges[0], edges[2])
    assert why.path_edges(lat, (11, 14)) == (edges[1], edges[4])
    assert why.path_edges(lat, (10, 13)) is None  # a+b does not reach the end
    from tokenprism.app.qt.qt_lattice import QLatticeView
    view = QLatticeView()
    qtbot.addWidget(view)
    view.set_lattice(lat, why.path_edges(lat, word.tokens) or (), why.path_edges(lat, (11, 14)) or ())
    view.show()
    qtbot.waitExposed(view)
    view.grab()  # paints
    assert view.drawn == {"best": 2, "runner_up": 2, "other": 1}


def test_wordpiece_attempts_and_unigram_alternatives_read(qtbot) -> None:  # type: ignore[no-untyped-def]
    word = Word("unaffable", 0, 9, (1, 2), (
        Attempt(0, (Candidate("unaffable", -1), Candidate("unaff", -1), Candidate("un", 1)), True),
        Attempt(2, (Candidate("##affable", 2),), True)))
    assert why.attempt_lines(word) == ["at 0: found 'un' after 2 longer tries ('unaffable', 'unaff')",
                                       "at 2: found '##affable'"]


def test_replay_steps() -> None:
    word = Word("abab", 0, 4, (7,), (Symbols(("a", "b", "a", "b"), (1, 2, 1, 2), ((97,), (98,), (97,), (98,))),
                                      Merge("a", "b", "ab", 5, 0, rank=0), Merge("a", "b", "ab", 5, 1, rank=0),
                                      Merge("ab", "ab", "abab", 7, 0, rank=3)))
    r = why.replay_for(word)
    assert r is not None and r.steps == 3
    assert [r.pieces_at(k) for k in range(4)] == [["a", "b", "a", "b"], ["ab", "a", "b"], ["ab", "ab"], ["abab"]]
    assert r.merged_at(2) == 1 and r.merged_at(0) == -1 and "rank 3" in r.describe(3)


def test_bounded_window_for_a_huge_selection() -> None:
    text = ("word " * 20 + "\n") * 20_000  # 2 MB, lines of 101 characters
    req = why.request_for(text, 10, len(text) - 10)
    assert req.sel_end - req.sel_start == why.SELECTION_CHARS and req.left_out > 0
    assert req.end - req.start <= why.SELECTION_CHARS + 2 * why.MARGIN_CHARS
    assert req.start == 0 and text[req.end - 1] == "\n"  # cut after a line break in the margin
    mid = why.request_for(text, 50_050, 50_060)
    assert text[mid.start - 1] == "\n" and text[mid.end - 1] == "\n" and mid.start < 50_050 < 50_060 < mid.end
    note = why.window_note(req, len(text))
    assert "its first 1,000 are explained" in note and "a window around the selection" in note
    short = why.request_for("hello", 1, 3, add_special=True)
    assert (short.start, short.end, short.add_special) == (0, 5, True) and why.window_note(short, 5) == ""


def test_no_capability_says_so(qtbot, window, test_vocab) -> None:  # type: ignore[no-untyped-def]
    panel = show_why(qtbot, window, test_vocab, "abc")
    assert getattr(window.model_info.model.tokenizer, "trace_fragment", None) is None
    select(qtbot, window, 0, 1)
    assert panel.note.text().startswith(why.NO_CAPABILITY) and panel.view is None
    assert not panel.words.isEnabled()


def real(name: str) -> str:
    path = real_vocab(name)
    if path is None:
        pytest.skip(f"the {name} reference vocab is not available")
    return path


def test_byte_level_merges_read_as_bytes(qtbot, window) -> None:  # type: ignore[no-untyped-def]
    panel = show_why(qtbot, window, real("gpt-2"), "Hello naïve 12345 world")
    select(qtbot, window, 1, 2)  # Ġnaïve, one token
    word = panel.current_word()
    assert word is not None and word.text == " naïve" and panel.pages.currentIndex() == 1
    panel.slider.setValue(0)
    # ï is two bytes (two glyphs Ã ¯ in the vocabulary): shown as bytes, not glyphs
    assert panel.replay is not None
    assert panel.replay.labels_at(0) == ["␣", "n", "a", "\\xc3", "\\xaf", "v", "e"]
    assert panel.replay.labels_at(panel.replay.steps) == ["␣naïve"]
    panel.slider.setValue(1)
    assert panel.step_label.text().startswith("merge 1 of 6: ") and "(rank " in panel.step_label.text()
    story = panel.story.toPlainText()
    assert "3. Pre-tokenizer (gpt-2)" in story and "\\p{N}+" in story
    panel.slider.setValue(panel.slider.maximum())
    shot(window, "gpt-2")


def test_wordpiece_attempts_listed(qtbot, window) -> None:  # type: ignore[no-untyped-def]
    panel = show_why(qtbot, window, real("bert-bge"), "Hello unaffable naïve")
    select(qtbot, window, 1, 4)  # ▁una ffa ble
    word = panel.current_word()
    assert word is not None and word.text == "▁unaffable" and panel.pages.currentIndex() == 3
    lines = [panel.attempts.item(i).text() for i in range(panel.attempts.count())]
    assert lines[0].startswith("at 0: found '▁una' after 6 longer tries ('▁unaffable'")
    assert lines[1:] == ["at 4: found 'ffa' after 3 longer tries ('ffable', 'ffabl', 'ffab')", "at 7: found 'ble'"]
    assert "lowercased" in panel.story.toPlainText()
    shot(window, "bert-bge")


# the bundled Unigram demo (nomic-bert-moe's 250k pieces take ~5 s to open in pure Python: screenshots only)
@pytest.mark.parametrize("vocab", ["demo"] + (["nomic-bert-moe"] if SHOTS else []))
def test_unigram_lattice_in_the_window(qtbot, window, vocab: str) -> None:  # type: ignore[no-untyped-def]
    path = str(demo_models()["ugm"]) if vocab == "demo" else real(vocab)
    panel = show_why(qtbot, window, path, "Hello unaffable world")
    a = window.analysis
    k = next(i for i in range(len(a)) if a.model.display_piece(a.encoding.ids[i]).startswith("▁un"))
    select(qtbot, window, k, k + 1)
    word = panel.current_word()
    assert word is not None and panel.pages.currentIndex() == 2 and word.alternatives
    assert word.alternatives[0].tokens == word.tokens
    panel.lattice.grab()  # paint it
    assert panel.lattice.drawn["best"] == len(word.tokens) and panel.lattice.drawn["other"] > 0
    if len(word.alternatives) > 1:
        assert panel.lattice.drawn["runner_up"] == len(word.alternatives[1].tokens)
    assert panel.alternatives.text().startswith("1. ") and "(best)" in panel.alternatives.text()
    shot(window, vocab)


def test_editor_selection_and_a_long_text_window(qtbot, window) -> None:  # type: ignore[no-untyped-def]
    """A selection in the editor explains every token it touches; in a text
    over the whole-text bound, a window around it is explained and the
    panel says which."""
    line = "The naïve cat sat on 12345 mats.\n"
    text = line * 400  # 13 200 characters
    panel = show_why(qtbot, window, real("llama-spm"), text)
    at = len(line) * 200 + 4  # "naïve cat" on line 200
    cursor = window.editor.textCursor()
    cursor.setPosition(at)
    cursor.setPosition(at + 9, cursor.MoveMode.KeepAnchor)
    with qtbot.waitSignal(panel.explained, timeout=TIMEOUT):
        window.editor.setTextCursor(cursor)
    assert panel.view is not None
    assert [w.text for w in panel.view.words] == ["▁naïve", "▁cat"]
    note = panel.note.text()
    assert "a window around the selection" in note and f"of {len(text):,}" in note
    req = panel.request
    assert req is not None and panel.view.explanation.text == text[req.start:req.end]
    assert req.start % len(line) == 0 and req.end % len(line) == 0  # whole lines around the selection
    assert req.start < at and at + 9 < req.end and req.end - req.start <= 9 + 2 * why.MARGIN_CHARS


def test_window_never_starts_at_the_selection() -> None:
    text = ("x" * 99 + "\n") * 100
    req = why.request_for(text, 5000, 5003)  # a selection at a line's start
    assert req.start < 5000 - 50 and text[req.start - 1] == "\n" and text[req.end - 1] == "\n"


def test_switching_models_frees_the_explained_one(qtbot, window, test_vocab) -> None:  # type: ignore[no-untyped-def]
    from tests.app.test_model_release import _switch_and_wait_freed

    panel = show_why(qtbot, window, str(demo_models()["spm"]), "Hello world")
    select(qtbot, window, 0, 1)
    assert panel.view is not None
    _switch_and_wait_freed(qtbot, window, test_vocab)
    assert panel.view is None and panel.note.text().startswith("Select tokens")


def _shown_panel(qtbot: Any, window: Any) -> QWhyPanel:
    """llama-spm's "Hello naïve world" in the window, the Why dock open on
    the editor's cursor (at the end: ▁world)."""
    path = real_vocab("llama-spm")
    if path is None:
        pytest.skip("the llama-spm reference vocab is not available")
    open_model_in(qtbot, window, path)
    wait_result(qtbot, window, lambda: window.editor.setPlainText("Hello naïve world"))
    cursor = window.editor.textCursor()
    cursor.setPosition(17)
    window.editor.setTextCursor(cursor)
    window.show()
    qtbot.waitExposed(window)
    panel: QWhyPanel = window.why_panel
    with qtbot.waitSignal(panel.explained, timeout=TIMEOUT):
        window.why_dock.toggleViewAction().trigger()
    return panel


def _words(panel: QWhyPanel) -> list[tuple[str, tuple[int, ...]]]:
    assert panel.view is not None
    return [(w.text, tuple(w.tokens)) for w in panel.view.words]


def test_a_click_or_a_selection_in_the_token_table_fills_it(qtbot, window) -> None:  # type: ignore[no-untyped-def]
    from PySide6.QtCore import QItemSelection, QItemSelectionModel, Qt

    panel = _shown_panel(qtbot, window)
    assert _words(panel) == [("▁world", (3186,))]
    table = window.table
    # a real mouse click on the first row (▁Hello), through the view's event handling
    with qtbot.waitSignal(panel.explained, timeout=TIMEOUT):
        qtbot.mouseClick(table.viewport(), Qt.MouseButton.LeftButton,
                         pos=table.visualRect(table.model().index(0, 1)).center())
    assert _words(panel) == [("▁Hello", (15043,))]
    # rows 2..3 (ï ve) selected through the selection model, as a shift-click or the keyboard does:
    # the panel explains the word they are cut from
    model = table.model()
    with qtbot.waitSignal(panel.explained, timeout=TIMEOUT):
        table.selectionModel().select(QItemSelection(model.index(2, 0), model.index(3, 0)),
                                      QItemSelectionModel.SelectionFlag.ClearAndSelect
                                      | QItemSelectionModel.SelectionFlag.Rows)
    assert _words(panel) == [("▁naïve", (1055, 30085, 345))]


def test_the_editor_cursor_and_selection_fill_it(qtbot, window) -> None:  # type: ignore[no-untyped-def]
    from PySide6.QtCore import Qt

    panel = _shown_panel(qtbot, window)
    assert _words(panel) == [("▁world", (3186,))]  # the cursor sits at the end of the text
    editor = window.editor
    # a real click inside "Hello" moves the cursor there
    cursor = editor.textCursor()
    cursor.setPosition(2)
    at = editor.cursorRect(cursor).center()
    with qtbot.waitSignal(panel.explained, timeout=TIMEOUT):
        qtbot.mouseClick(editor.viewport(), Qt.MouseButton.LeftButton, pos=at)
    assert editor.textCursor().position() in (2, 3) and _words(panel) == [("▁Hello", (15043,))]
    # a selection from inside "Hello" to inside "naïve": every token it touches
    cursor.setPosition(3)
    cursor.setPosition(8, cursor.MoveMode.KeepAnchor)
    with qtbot.waitSignal(panel.explained, timeout=TIMEOUT):
        editor.setTextCursor(cursor)
    assert _words(panel) == [("▁Hello", (15043,)), ("▁naïve", (1055, 30085, 345))]
    if SHOTS:
        window.grab().save(os.path.join(SHOTS, "why-editor-selection.png"))
