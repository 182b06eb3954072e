"""View ▸ Vocabulary on the 262 144-token gemma-4 vocabulary: filters and
sorts give the rows plain Python gives, a click shows the token's details,
Ctrl+C copies ids, bad patterns say why, and the browser follows the
window's model."""

from __future__ import annotations

import numpy as np
import pytest
import regex
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication

from tests.app.conftest import open_model_in, real_vocab
from tokenprism.app.logic.pieces import readable, type_name
from tokenprism.app.qt.qt_vocab import COL_BYTES, COL_ID, COL_PIECE, COL_TYPE, QVocabBrowser, VocabTableModel, count_text
from tokenprism.core import open_model
from tokenprism.core.library.resources import demo_models
from tokenprism.core.library.vocab_query import VocabIndex, kind_code

TIMEOUT = 30_000


@pytest.fixture
def gemma_window(qtbot, window):  # type: ignore[no-untyped-def]
    path = real_vocab("gemma-4")
    if path is None:
        pytest.skip("the gemma-4 reference vocab is not available")
    return show_browser(qtbot, window, path)


@pytest.fixture
def small_window(qtbot, window, spm_vocab):  # type: ignore[no-untyped-def]
    return show_browser(qtbot, window, spm_vocab)


def show_browser(qtbot, window, path: str):  # type: ignore[no-untyped-def]
    open_model_in(qtbot, window, path)
    browser: QVocabBrowser = window.vocab_browser
    assert browser.index is None  # nothing is built before the browser is shown
    with qtbot.waitSignal(browser.queryFinished, timeout=TIMEOUT):
        window.vocab_dock.toggleViewAction().trigger()
    return window


def run(qtbot, browser: QVocabBrowser, action) -> None:  # type: ignore[no-untyped-def]
    with qtbot.waitSignal(browser.queryFinished, timeout=TIMEOUT):
        action()
        browser.run_query()  # skip the typing delay


def shown_ids(browser: QVocabBrowser) -> list[int]:
    m = browser.table_model
    return [int(m.data(m.index(r, COL_ID))) for r in range(m.rowCount())]


def test_filters_sorts_details_and_copy(qtbot, gemma_window) -> None:  # type: ignore[no-untyped-def]
    w = gemma_window
    b: QVocabBrowser = w.vocab_browser
    model = w.model_info.model
    n = len(model)
    assert n == 262_144 and b.table_model.rowCount() == n
    assert b.count.text() == f"{count_text(n)} of {count_text(n)} tokens"
    hay = [model.display_piece(i).replace("▁", " ") for i in range(n)]

    # substring (a typed space finds ▁), case-insensitive by default
    run(qtbot, b, lambda: b.filter.setText(" hello"))
    want = [i for i in range(n) if " hello" in hay[i].lower()]
    assert shown_ids(b) == want and want
    assert b.count.text() == f"{count_text(len(want))} of {count_text(n)} tokens"

    # sort by bytes, descending, by clicking the header twice
    header = b.table.horizontalHeader()
    run(qtbot, b, lambda: header.setSortIndicator(COL_BYTES, Qt.SortOrder.AscendingOrder))
    run(qtbot, b, lambda: header.setSortIndicator(COL_BYTES, Qt.SortOrder.DescendingOrder))
    lengths = {i: len(model.token_bytes(i)) for i in want}
    assert shown_ids(b) == sorted(want, key=lambda i: (-lengths[i], i))

    # regex with a type filter, sorted by piece
    run(qtbot, b, lambda: header.setSortIndicator(COL_PIECE, Qt.SortOrder.AscendingOrder))
    run(qtbot, b, lambda: b.mode.setCurrentIndex(b.mode.findData("regex")))
    run(qtbot, b, lambda: b.filter.setText("^ing"))
    run(qtbot, b, lambda: b.kind.setCurrentIndex(b.kind.findData(kind_code("normal"))))
    rx = regex.compile("^ing", regex.IGNORECASE)
    want = sorted((i for i in range(n) if rx.search(hay[i]) and type_name(model.vocab.attrs[i]) == "normal"),
                  key=lambda i: model.display_piece(i))
    assert shown_ids(b) == want and want

    # id range
    run(qtbot, b, lambda: b.kind.setCurrentIndex(0))
    run(qtbot, b, lambda: b.mode.setCurrentIndex(b.mode.findData("ids")))
    run(qtbot, b, lambda: b.filter.setText("262140-, 7"))
    run(qtbot, b, lambda: header.setSortIndicator(COL_ID, Qt.SortOrder.AscendingOrder))
    assert shown_ids(b) == [7, 262140, 262141, 262142, 262143]

    # a click shows the details; merges once they are read
    run(qtbot, b, lambda: b.filter.setText(str(model.vocab.token_to_id["▁about"])))
    qtbot.waitUntil(lambda: b.index is not None and b.index.merges_ready, timeout=TIMEOUT)
    rect = b.table.visualRect(b.table_model.index(0, COL_PIECE))
    qtbot.mouseClick(b.table.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    text = b.details.toPlainText()
    tid = model.vocab.token_to_id["▁about"]
    assert f"id {tid}" in text and "▁about" in text and "20 61 62 6F 75 74" in text
    assert "merge #" in text and "▁ab + out" in text

    # Ctrl+C copies the selected ids
    run(qtbot, b, lambda: b.filter.setText("10-12"))
    b.table.selectAll()
    qtbot.keyClick(b.table, Qt.Key.Key_C, Qt.KeyboardModifier.ControlModifier)
    assert QApplication.clipboard().text() == "10 11 12"
    b.table.copy_pieces()
    assert QApplication.clipboard().text() == "\n".join(readable(model.display_piece(i)) for i in (10, 11, 12))


def test_bad_pattern_and_range_say_why(qtbot, small_window) -> None:  # type: ignore[no-untyped-def]
    b: QVocabBrowser = small_window.vocab_browser
    run(qtbot, b, lambda: b.mode.setCurrentIndex(b.mode.findData("regex")))
    run(qtbot, b, lambda: b.filter.setText("(unclosed"))
    assert b.error.isVisible() and "invalid regular expression" in b.error.text()
    run(qtbot, b, lambda: b.filter.setText("unclosed"))
    assert not b.error.isVisible()
    run(qtbot, b, lambda: b.mode.setCurrentIndex(b.mode.findData("ids")))
    run(qtbot, b, lambda: b.filter.setText("20-10"))
    assert b.error.isVisible() and "ends before it starts" in b.error.text()
    run(qtbot, b, lambda: b.filter.setText("abc"))
    assert b.error.isVisible() and "not an id or a range" in b.error.text()


def test_stale_queries_are_dropped(qtbot, small_window) -> None:  # type: ignore[no-untyped-def]
    b: QVocabBrowser = small_window.vocab_browser
    b.mode.setCurrentIndex(b.mode.findData("regex"))
    for text in ("(?<=a)b", "(?<=e)s", "x"):  # each replaces the one before
        b.filter.setText(text)
        b.run_query()
    qtbot.waitUntil(lambda: not b._queries.busy, timeout=TIMEOUT)
    hay = [b.index.display[i].replace("▁", " ") for i in range(b.index.size)]
    assert shown_ids(b) == [i for i in range(len(hay)) if "x" in hay[i].lower()]


def test_follows_the_window_model(qtbot, small_window, test_vocab) -> None:  # type: ignore[no-untyped-def]
    w = small_window
    b: QVocabBrowser = w.vocab_browser
    assert b.index is not None
    w.vocab_dock.toggleViewAction().trigger()  # hidden: a new model costs nothing
    open_model_in(qtbot, w, test_vocab)
    # nothing is built, and the old model's index is let go (it held the old model)
    assert b.index is None and b.table_model.index_data is None
    with qtbot.waitSignal(b.queryFinished, timeout=TIMEOUT):
        w.vocab_dock.toggleViewAction().trigger()
    assert b.index is not None and b.index.model is w.model_info.model
    assert b.table_model.rowCount() == len(w.model_info.model)
    assert np.array_equal(b.table_model.ids, np.arange(len(w.model_info.model)))


def test_type_column_names_match_the_token_table(qtbot) -> None:  # type: ignore[no-untyped-def]
    for kind in ("spm", "wpm"):
        model = open_model(demo_models()[kind])
        index = VocabIndex(model)
        m = VocabTableModel()
        m.set_rows(index, index.ids)
        assert [m.data(m.index(r, COL_TYPE)) for r in range(len(model))] == \
            [type_name(a) for a in model.vocab.attrs]
        assert m.data(m.index(5, COL_PIECE)) == readable(model.display_piece(5))


def test_can_produce_mode_lists_find_tokens(qtbot, window) -> None:  # type: ignore[no-untyped-def]
    """"Can produce…" lists every token that find-tokens lists for the
    text (a scan of the vocabulary here), says what starts and ends it, and
    honours the type filter."""
    path = real_vocab("llama-spm")
    if path is None:
        pytest.skip("the llama-spm reference vocab is not available")
    show_browser(qtbot, window, path)
    browser: QVocabBrowser = window.vocab_browser
    model = open_model(path)
    browser.mode.setCurrentIndex(browser.mode.findData("produce"))
    text = "naïve"
    data = text.encode()
    literal = {i for i in range(len(model)) if (b := model.token_bytes(i)) and b in data}
    # word-start pieces that start the word: their ▁ is the space SentencePiece puts before it
    want = literal | {model.vocab.token_to_id["▁na"], model.vocab.token_to_id["▁n"]}
    run(qtbot, browser, lambda: browser.filter.setText(text))
    assert set(shown_ids(browser)) == want and shown_ids(browser) == sorted(want)
    assert browser.produce_note.isVisible()
    note = browser.produce_note.text()
    assert f"{len(literal)} tokens can produce part of it" in note and "1055 ▁na" in note
    assert "2 more start it as a word start" in note
    byte_code = browser.kind.findData(kind_code("byte"))
    run(qtbot, browser, lambda: browser.kind.setCurrentIndex(byte_code))
    assert [model.vocab.pieces[i] for i in shown_ids(browser)] == ["<0x61>", "<0x65>", "<0x6E>", "<0x76>",
                                                                    "<0xAF>", "<0xC3>"]
    browser.table.selectRow(0)
    assert "Can produce part of" in browser.details.toPlainText()
    run(qtbot, browser, lambda: browser.mode.setCurrentIndex(browser.mode.findData("substring")))
    assert not browser.produce_note.isVisible()
