"""Both token tables answer headerData alike: names, tooltips (the
vocabulary browser's say the column sorts), text columns left, numbers
right, nothing for vertical headers or columns out of range."""

from __future__ import annotations

from PySide6.QtCore import Qt

from tokenprism.app.qt import qt_token_table as tt
from tokenprism.app.qt import qt_vocab as qv

_H, _V = Qt.Orientation.Horizontal, Qt.Orientation.Vertical
_D, _T, _A = Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.ToolTipRole, Qt.ItemDataRole.TextAlignmentRole
LEFT = int(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter)
RIGHT = int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)


def test_token_table_headers(qapp) -> None:  # type: ignore[no-untyped-def]
    m = tt.QTokenTableModel()
    assert m.headerData(tt.COL_PIECE, _H, _D) == "Piece"
    assert m.headerData(tt.COL_ID, _H, _T) == tt.COLUMN_HELP[tt.COL_ID]
    assert m.headerData(tt.COL_PIECE, _H, _A) == LEFT
    assert m.headerData(tt.COL_TYPE, _H, _A) == LEFT
    assert m.headerData(tt.COL_BYTES, _H, _A) == RIGHT
    assert m.headerData(0, _V, _D) is None
    assert m.headerData(len(tt.COLUMNS), _H, _D) is None
    assert m.headerData(-1, _H, _D) is None


def test_vocab_browser_headers(qapp) -> None:  # type: ignore[no-untyped-def]
    m = qv.VocabTableModel()
    assert m.headerData(qv.COL_SCORE, _H, _D) == "Score"
    assert m.headerData(qv.COL_ID, _H, _T) == "Token id (click to sort)"
    assert m.headerData(qv.COL_PIECE, _H, _A) == LEFT
    assert m.headerData(qv.COL_TYPE, _H, _A) == LEFT
    assert m.headerData(qv.COL_SCORE, _H, _A) == RIGHT
    assert m.headerData(0, _V, _D) is None
    assert m.headerData(len(qv.COLUMNS), _H, _T) is None
