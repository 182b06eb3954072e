"""The token table's optional columns (Rank for BPE, Word for WordPiece):
shown only for a model that has the values, filled from the encoding."""

from __future__ import annotations

from typing import Any

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QGuiApplication

from tokenprism.app.logic.analysis import ModelInfo, tokenize
from tokenprism.app.qt.qt_token_table import (COL_CHARS, COL_ID, COL_INDEX, COL_PIECE, COL_RANK, COL_WORD, COLUMNS,
                                          QTokenTable)
from tokenprism.core import open_model
from tokenprism.core.library.resources import demo_models

TEXT = "hello worlds, unaffable x"


def _table(qtbot: Any, kind: str) -> tuple[QTokenTable, Any]:
    table = QTokenTable()
    qtbot.addWidget(table)
    a = tokenize(ModelInfo(open_model(demo_models()[kind])), TEXT, 0, False, False)
    assert a is not None
    table.set_analysis(a)
    return table, a.encoding


def _column(table: QTokenTable, c: int) -> list[Any]:
    m = table.model()
    return [m.data(m.index(r, c)) for r in range(m.rowCount())]


@pytest.mark.parametrize("kind,shown", [("bpe", COL_RANK), ("wpm", COL_WORD), ("spm", None), ("ugm", None)])
def test_optional_columns_follow_the_model(qtbot: Any, kind: str, shown: int | None) -> None:
    table, enc = _table(qtbot, kind)
    for c in (COL_RANK, COL_WORD):
        assert table.isColumnHidden(c) == (c != shown), (kind, COLUMNS[c])
    if shown == COL_RANK:
        assert enc.ranks is not None
        assert _column(table, COL_RANK) == ["" if r < 0 else r for r in enc.ranks]
        assert any(r == "" for r in _column(table, COL_RANK)) and any(r != "" for r in _column(table, COL_RANK))
    if shown == COL_WORD:
        # demo WordPiece vocab: hello | worlds | , | unaffable | x
        assert _column(table, COL_WORD) == list(enc.words)
        assert enc.words[0] == 0 and enc.words[-1] == 4


def test_switching_models_hides_and_shows(qtbot: Any) -> None:
    table, _ = _table(qtbot, "wpm")
    assert not table.isColumnHidden(COL_WORD)
    a = tokenize(ModelInfo(open_model(demo_models()["bpe"])), TEXT, 1, False, False)
    table.set_analysis(a)
    assert table.isColumnHidden(COL_WORD) and not table.isColumnHidden(COL_RANK)
    table.set_analysis(None)
    assert table.isColumnHidden(COL_WORD) and table.isColumnHidden(COL_RANK)


def test_copy_has_only_the_shown_columns(qtbot: Any) -> None:
    table, enc = _table(qtbot, "wpm")
    table.select_tokens(0, 2)
    table.copy_selection()
    lines = QGuiApplication.clipboard().text().split("\n")
    assert lines[0].split("\t") == ["#", "ID", "Piece", "Score", "Type", "Chars", "Bytes", "Word"]
    assert lines[1].split("\t")[-1] == str(enc.words[0])
    header = table.model().headerData(COL_WORD, Qt.Orientation.Horizontal, Qt.ItemDataRole.ToolTipRole)
    assert "word" in header


def test_tooltip_names_rank_and_word(qtbot: Any) -> None:
    from tokenprism.app.logic.pieces import tooltip_html

    for kind, name, values in (("bpe", "merge rank", "ranks"), ("wpm", "word", "words")):
        table, enc = _table(qtbot, kind)
        a = table.token_model.analysis
        vals = getattr(enc, values)
        i = next(k for k, v in enumerate(vals) if v > 0)
        assert f"{name} {vals[i]}" in tooltip_html(a, i, i + 1)
    table, enc = _table(qtbot, "spm")
    tip = tooltip_html(table.token_model.analysis, 0, 1)
    assert "merge rank" not in tip and "word " not in tip


# ---- column widths (a 1 MB text used to read "405…" and "1017376-10…") ------------------------

BIG = ("The quick brown fox jumps over the lazy dog 🙂 日本語 1234567890.\n" * 20_000)[:1_000_000]


def _cell_margin(table: QTokenTable) -> int:
    # QStyledItemDelegate draws text inside (focus frame margin + 1) on each side
    from PySide6.QtWidgets import QStyle
    return 2 * (table.style().pixelMetric(QStyle.PixelMetric.PM_FocusFrameHMargin, None, table) + 1)


def _assert_nothing_elided(table: QTokenTable, rows: list[int]) -> None:
    from PySide6.QtGui import QFontMetrics

    m = table.token_model
    margin = _cell_margin(table)
    for c in m.visible_columns():
        if c == COL_PIECE:
            continue  # the stretching column: long pieces are elided on purpose
        metrics = QFontMetrics(m.fixed_font) if c == COL_ID else table.fontMetrics()
        for r in rows:
            shown = str(m.data(m.index(r, c)))
            assert metrics.horizontalAdvance(shown) + margin <= table.columnWidth(c), (COLUMNS[c], r, shown)
        header = str(m.headerData(c, Qt.Orientation.Horizontal, Qt.ItemDataRole.DisplayRole))
        assert table.fontMetrics().horizontalAdvance(header) + margin <= table.columnWidth(c), COLUMNS[c]


@pytest.mark.parametrize("kind", ["spm", "bpe", "wpm"])
def test_columns_fit_the_widest_value_of_a_big_text(qtbot: Any, kind: str) -> None:
    table = QTokenTable()
    qtbot.addWidget(table)
    table.resize(900, 400)
    table.show()
    model = open_model(demo_models()[kind])
    a = tokenize(ModelInfo(model), BIG, 0, False, False)
    assert a is not None and len(a) > 100_000
    table.set_analysis(a)
    n = len(a)
    enc = a.encoding
    ids = list(enc.token_ids[n - 2000:])
    widest_id = n - 2000 + max(range(len(ids)), key=lambda i: ids[i])
    _assert_nothing_elided(table, [0, 1, n - 2, n - 1, widest_id])
    assert enc.ends[n - 1] == len(BIG)  # the last row holds the seven-digit span


def test_columns_follow_a_growing_text_but_keep_a_users_width(qtbot: Any) -> None:
    table = QTokenTable()
    qtbot.addWidget(table)
    info = ModelInfo(open_model(demo_models()["spm"]))
    table.set_analysis(tokenize(info, "short", 0, False, False))
    narrow = table.columnWidth(COL_CHARS)
    table.setColumnWidth(COL_INDEX, 200)  # the user drags a column wider
    table.set_analysis(tokenize(info, "short text", 1, False, False))
    assert table.columnWidth(COL_INDEX) == 200
    table.set_analysis(tokenize(info, "x " * 60_000, 2, False, False))
    assert table.columnWidth(COL_CHARS) > narrow


def test_default_window_shows_every_column_after_a_1mb_paste(qtbot: Any, make_window: Any) -> None:
    from tests.app.conftest import RESULT_TIMEOUT_MS, open_model_in, wait_result

    w = make_window(restore=True)  # fresh settings: the default size
    assert (w.width(), w.height()) == (1200, 760)
    open_model_in(qtbot, w, str(demo_models()["spm"]))
    t = w.table
    qtbot.waitUntil(lambda: t.horizontalScrollBar().maximum() == 0, timeout=RESULT_TIMEOUT_MS)
    a = wait_result(qtbot, w, lambda: w.editor.setPlainText(BIG), timeout=120_000)
    t.scrollToBottom()
    qtbot.wait(50)
    assert t.horizontalScrollBar().maximum() == 0 and not t.horizontalScrollBar().isVisible()
    assert t.columnWidth(COL_PIECE) >= t.piece_minimum()
    n = len(a)
    _assert_nothing_elided(t, [n - 1, n - 2])
    t.grab().save("/tmp/shots/table_1mb.png")
