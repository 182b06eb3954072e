"""The text of a Qt document exactly as it is tokenized.

``QPlainTextEdit.toPlainText`` rewrites characters (U+00A0 becomes a
space, U+2028 a line feed), so a model would be shown different text from
the one typed. Every editor whose text is tokenized reads it through
:func:`document_text` instead.
"""

from __future__ import annotations

from PySide6.QtGui import QTextDocument


def document_text(document: QTextDocument) -> str:
    """The raw text of ``document`` with its paragraph separators as ``\\n``.

    Nothing else is changed, so UTF-16 offsets into the result equal
    document positions.
    """
    return document.toRawText().replace("\u2029", "\n")
