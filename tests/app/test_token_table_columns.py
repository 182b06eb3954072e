"""The token table's optional columns (Rank for BPE, Word for WordPiece):
shown only for a model that has the values, filled from the encoding."""

from __future__ import annotations

from typing import Any

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QGuiApplication

from tokenprism.app.analysis import ModelInfo, tokenize
from tokenprism.app.qt_token_table import COL_RANK, COL_WORD, COLUMNS, QTokenTable
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
    from tokenprism.app.pieces import tooltip_html

    for kind, name, values in (("bpe", "merge rank", "ranks"), ("wpm", "word", "words")):
        table, enc = _table(qtbot, kind)
        a = table.token_model.analysis
        vals = getattr(enc, values)
        i = next(k for k, v in enumerate(vals) if v > 0)
        assert f"{name} {vals[i]}" in tooltip_html(a, i, i + 1)
    table, enc = _table(qtbot, "spm")
    tip = tooltip_html(table.token_model.analysis, 0, 1)
    assert "merge rank" not in tip and "word " not in tip
