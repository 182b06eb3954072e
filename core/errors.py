"""Error types raised by TokenPrism.

Every problem caused by a model file (truncated, corrupted, hostile, or
simply a tokenizer type nobody handles) is a :class:`GGUFError`, so callers
need to catch one type to report a bad file cleanly. A file whose structure
does not hold together is a :class:`DamagedFileError`, whose message leads
with what that means to a person before the technical detail.

Messages quote what they read from a file (key names, misread strings) only
as a short escaped excerpt: a misread length can turn megabytes of a file
into one "key name", and a message must stay a line a person can read.
"""

from __future__ import annotations

EXCERPT_CHARS = 80
"""How much of a string read from a file a message quotes, at most."""
REASON_CHARS = 240
"""The longest reason a :class:`GGUFError` keeps (longer ones are cut)."""


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


def excerpt(text: str, limit: int = EXCERPT_CHARS) -> str:
    """``text`` made :func:`printable` and cut to at most ``limit``
    characters of that (an escape is never cut in half); a cut text ends in
    ``…`` and says how long it was.

    >>> excerpt("a\\nb")
    'a\\\\nb'
    >>> excerpt("x" * 1000, 5)
    'xxxxx… (1,000 characters in all)'
    """
    if len(text) <= limit and text.isprintable():
        return text
    out: list[str] = []
    used = 0
    # one character at a time, so a megabyte-long text costs no more than
    # the few characters shown
    for c in text:
        shown = c if c.isprintable() else printable(c)
        if used + len(shown) > limit:
            return "".join(out) + f"… ({len(text):,} characters in all)"
        out.append(shown)
        used += len(shown)
    return "".join(out)


class TokenPrismError(Exception):
    """Base class of every error TokenPrism raises on purpose."""


class GGUFError(TokenPrismError):
    """A model file cannot be read or used.

    ``path``, ``offset`` (byte offset in the file, or ``None`` when the
    problem is not tied to one place) and ``field`` name where it happened.
    ``detail`` is the message as given (printable, at most
    :data:`REASON_CHARS` long); ``reason`` is what a person reads first:
    :attr:`summary` followed by the detail, or the detail alone when the
    class has no summary.
    """

    summary = ""
    """A plain sentence saying what the error means, led with; empty when
    the detail already says it plainly (``not a GGUF file``)."""

    def __init__(self, path: str, message: str, offset: int | None = None, field: str = "") -> None:
        self.path = path
        self.offset = offset
        self.field = field
        # a message may quote what a misread file holds (and the raw field
        # is kept for callers): both are bounded and escaped here, once,
        # so every caller shows a short printable line
        detail = excerpt(message, REASON_CHARS)
        lead = self.summary
        if lead and detail.startswith(lead):  # re-raised with its own reason (model.py gives the path)
            detail = detail[len(lead):].lstrip(": ")
        self.detail = detail
        self.reason = f"{lead}: {detail}" if lead else detail
        super().__init__(f"{path}: {self.reason}{self.location}")

    @property
    def location(self) -> str:
        """`` at byte N (field)``, or what of it is known."""
        where = f" at byte {self.offset}" if self.offset is not None else ""
        # the field is often a key name read from the file: never shown raw
        what = f" ({excerpt(self.field)})" if self.field else ""
        return where + what

    def lines(self) -> list[str]:
        """The message as a person should read it: the file and what the
        problem means first, then the technical detail on its own line
        (one line when there is no summary)."""
        if not self.summary:
            return [str(self)]
        return [f"{self.path}: {self.summary}", f"{self.detail}{self.location}"]


class DamagedFileError(GGUFError):
    """The file's structure does not hold together: a count or length runs
    past its end, a value has no known type, a key appears twice. Most often
    an incomplete download or copy."""

    summary = "the file looks truncated or damaged"


class UnsupportedTokenizerError(GGUFError):
    """No installed plugin handles the file's ``tokenizer.ggml.model``."""
