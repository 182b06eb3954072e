"""Error types raised by TokenPrism.

Every problem caused by a model file (truncated, corrupted, hostile, or
simply a tokenizer type nobody handles) is a :class:`GGUFError`, so callers
need to catch one type to report a bad file cleanly.
"""

from __future__ import annotations


class TokenPrismError(Exception):
    """Base class of every error TokenPrism raises on purpose."""


class GGUFError(TokenPrismError):
    """A model file cannot be read or used.

    ``path``, ``offset`` (byte offset in the file, or ``None`` when the
    problem is not tied to one place) and ``field`` name where it happened.
    """

    def __init__(self, path: str, message: str, offset: int | None = None, field: str = "") -> None:
        self.path = path
        self.offset = offset
        self.field = field
        self.reason = message
        where = f" at byte {offset}" if offset is not None else ""
        what = f" ({field})" if field else ""
        super().__init__(f"{path}: {message}{where}{what}")


class UnsupportedTokenizerError(GGUFError):
    """No installed plugin handles the file's ``tokenizer.ggml.model``."""
