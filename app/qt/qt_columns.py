"""Column headers and cell alignment shared by the token table and the
vocabulary browser: text columns left, number columns right."""

from __future__ import annotations

from collections.abc import Collection, Sequence

from PySide6.QtCore import Qt

from . import qt_compat  # noqa: F401  (guards against a PySide6 bug; see there)

ALIGN_RIGHT = int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
ALIGN_LEFT = int(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter)


def column_header(section: int, orientation: Qt.Orientation, role: int, names: Sequence[str],
                  tips: Sequence[str], text_columns: Collection[int]) -> object:
    """``headerData`` of a table whose columns are ``names`` with tooltips
    ``tips``; ``text_columns`` are aligned left."""
    if orientation != Qt.Orientation.Horizontal or not 0 <= section < len(names):
        return None
    if role == Qt.ItemDataRole.DisplayRole:
        return names[section]
    if role == Qt.ItemDataRole.ToolTipRole:
        return tips[section]
    if role == Qt.ItemDataRole.TextAlignmentRole:
        return ALIGN_LEFT if section in text_columns else ALIGN_RIGHT
    return None
