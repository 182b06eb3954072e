"""Error types raised by TokenPrism.

Every problem caused by a model file (truncated, corrupted, hostile, or
simply a tokenizer type nobody handles) is a :class:`GGUFError`, so callers
need to catch one type to report a bad file cleanly.
"""

from __future__ import annotations


def printable(text: str) -> str:
    """``text`` on one printable line: line breaks, escape codes and other
    control or invisible characters become ``\\n``/``\\x1b``-style escapes,
    so a hostile key name or file name cannot move a terminal's cursor,
    recolour it or forge a second line of output."""
    if text.isprintable():
        return text
    out: list[str] = []
    for c in text:
        if c.isprintable():
            out.append(c)
        elif c == "\n":
            out.append("\\n")
        elif c == "\r":
            out.append("\\r")
        elif c == "\t":
            out.append("\\t")
        else:
            cp = ord(c)
            out.append(f"\\x{cp:02x}" if cp <= 0xFF else f"\\u{cp:04x}" if cp <= 0xFFFF else f"\\U{cp:08x}")
    return "".join(out)


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
        # the field is often a key name read from the file: never shown raw
        what = f" ({printable(field)})" if field else ""
        super().__init__(f"{path}: {message}{where}{what}")


class UnsupportedTokenizerError(GGUFError):
    """No installed plugin handles the file's ``tokenizer.ggml.model``."""
