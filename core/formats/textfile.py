"""Text files for the editor: decoded for display, saved back byte-exact.

A file is decoded as UTF-8 (or UTF-16 when it starts with a UTF-16 BOM).
What cannot be shown as it is becomes a *run*: one character in the
editor text that stands for some original bytes —

* bytes that are not valid in the encoding show as one U+FFFD per invalid
  sequence (Python's "replace" rule), and
* a line break written differently from the file's usual one (a lone
  ``\\r`` in a CRLF file, U+2029) shows as ``\\n``, because the editor only
  holds ``\\n``.

The editor text always uses ``\\n``; the file's usual line break
(``newline``) is written back for every ``\\n``. :class:`RunTracker` moves
the runs along with edits; :func:`encode` writes the original bytes of
every run still in place, so a file opened and saved without edits is
byte-identical, and edits elsewhere keep the invalid bytes. A U+FFFD run
the user edited through cannot be written back as it was: :func:`encode`
raises :class:`EditedInvalidBytes` unless the caller chose to write
U+FFFD instead (the app asks the user).

>>> tf = decode(b"caf\\xe9\\r\\n")
>>> tf.text, tf.invalid_bytes, tf.newline
('caf\\ufffd\\n', 1, '\\r\\n')
>>> encode(tf, tf.text, tf.positions())
b'caf\\xe9\\r\\n'
"""

from __future__ import annotations

import bisect
import codecs
import os
import re
import threading
from dataclasses import dataclass
from typing import Sequence

from ..errors import TokenPrismError
from ..gil import offer_gil

REPLACEMENT = "\ufffd"
BOMS = ((codecs.BOM_UTF8, "utf-8"), (codecs.BOM_UTF16_LE, "utf-16-le"), (codecs.BOM_UTF16_BE, "utf-16-be"))
_BREAK = re.compile("\r\n|\r|\n|\u2029")
_ERRORS = "tokenprism-textfile"
_local = threading.local()


class EditedInvalidBytes(TokenPrismError):
    """Saving would replace invalid bytes the user edited through by U+FFFD."""

    def __init__(self, count: int) -> None:
        super().__init__(f"{count} replaced invalid byte sequence(s) were edited; "
                         "their original bytes can no longer be written back")
        self.count = count


@dataclass(frozen=True)
class Run:
    """One editor character that stands for original bytes of the file."""

    start: int
    """Character offset in :attr:`TextFile.text` (as decoded)."""
    raw: bytes
    invalid: bool
    """True: bytes that are not text (shown as U+FFFD); False: a line break."""

    @property
    def shown(self) -> str:
        return REPLACEMENT if self.invalid else "\n"


@dataclass(frozen=True)
class TextFile:
    """A decoded file: the editor text and what it takes to write it back."""

    text: str
    encoding: str
    """"utf-8", "utf-16-le" or "utf-16-be"."""
    bom: bytes
    newline: str
    """The line break written for each ``\\n``: "\\n", "\\r\\n" or "\\r"."""
    runs: tuple[Run, ...]
    size: int
    """Bytes in the file."""

    @property
    def invalid_runs(self) -> int:
        return sum(1 for r in self.runs if r.invalid)

    @property
    def invalid_bytes(self) -> int:
        """How many bytes of the file are shown as U+FFFD."""
        return sum(len(r.raw) for r in self.runs if r.invalid)

    @property
    def mixed_newlines(self) -> bool:
        return any(not r.invalid for r in self.runs)

    def positions(self) -> list[int | None]:
        """Where each run is in the unedited text (what :func:`encode` takes)."""
        return [r.start for r in self.runs]

    def describe(self) -> str:
        """The encoding and line breaks in words ("UTF-8 with BOM, CRLF")."""
        name = {"utf-8": "UTF-8", "utf-16-le": "UTF-16 LE", "utf-16-be": "UTF-16 BE"}[self.encoding]
        if self.bom and self.encoding == "utf-8":
            name += " with BOM"
        nl = {"\n": "LF", "\r\n": "CRLF", "\r": "CR"}[self.newline]
        return f"{name}, {nl}" + (" (mixed)" if self.mixed_newlines else "")


def _record_error(exc: UnicodeError) -> tuple[str, int]:
    if not isinstance(exc, UnicodeDecodeError):
        raise exc
    _local.errors.append((exc.start, exc.end))
    return REPLACEMENT, exc.end


codecs.register_error(_ERRORS, _record_error)


def _decode_pieces(body: bytes, encoding: str) -> list[str | bytes]:
    """Valid text (str) and invalid byte sequences (bytes), in file order.

    UTF-8 is decoded a slice at a time, with the GIL offered in between:
    one ``decode`` of a 10 MB file holds it for tens of milliseconds, and
    the file is read on a worker thread while the window paints."""
    pieces: list[str | bytes] = []
    if encoding != "utf-8":
        _decode_slice(body, encoding, pieces)
        return pieces
    at = 0
    while at < len(body):
        end = _utf8_cut(body, at + _DECODE_SLICE)
        _decode_slice(body[at:end], encoding, pieces)
        at = end
        offer_gil()
    return pieces


_DECODE_SLICE = 1 << 20


def _utf8_cut(body: bytes, pos: int) -> int:
    """A position at or after ``pos`` where UTF-8 decoding can restart
    without changing a thing: after a line feed (so "\\r\\n" stays
    whole), else before the next byte that is not a continuation byte."""
    if pos >= len(body):
        return len(body)
    nl = body.find(b"\n", pos, pos + _DECODE_SLICE // 4)
    if nl >= 0:
        return nl + 1
    while pos < len(body) and (body[pos] & 0xC0 == 0x80 or (body[pos] == 0x0A and body[pos - 1] == 0x0D)):
        pos += 1
    return pos


def _decode_slice(body: bytes, encoding: str, pieces: list[str | bytes]) -> None:
    errors: list[tuple[int, int]] = []
    _local.errors = errors
    try:
        text = body.decode(encoding, _ERRORS)
    finally:
        _local.errors = []
    if not errors:
        if text:
            pieces.append(text)
        return
    at = 0
    for start, end in errors:
        if start > at:
            pieces.append(body[at:start].decode(encoding))
        pieces.append(body[start:end])
        at = end
    if at < len(body):
        pieces.append(body[at:].decode(encoding))


def decode(data: bytes) -> TextFile:
    """Decode a file's bytes for the editor (never fails)."""
    encoding, bom = "utf-8", b""
    for mark, enc in BOMS:
        if data.startswith(mark):
            encoding, bom = enc, mark
            break
    pieces = _decode_pieces(data[len(bom):], encoding)
    # per text piece, how many of each line break it holds (str methods: a
    # loop over the line breaks of a 10 MB file held the GIL for ~0.1 s)
    breaks = [_breaks(p) if isinstance(p, str) else _NO_BREAKS for p in pieces]
    counts = {k: sum(b[k] for b in breaks) for k in ("\r\n", "\n", "\r")}
    # ties go to LF: what the editor holds anyway
    newline = max(("\n", "\r\n", "\r"), key=lambda k: counts[k])
    out: list[str] = []
    runs: list[Run] = []
    length = 0
    for p, b in zip(pieces, breaks):
        if isinstance(p, bytes):
            runs.append(Run(length, p, True))
            out.append(REPLACEMENT)
            length += 1
            continue
        if all(n == 0 for k, n in b.items() if k != newline):
            # every break is the usual one (the usual case)
            p = p.replace(newline, "\n") if newline != "\n" else p
            out.append(p)
            length += len(p)
            offer_gil()
            continue
        at = 0
        for m in _BREAK.finditer(p):
            out.append(p[at:m.start()])
            length += m.start() - at
            if m.group() != newline:
                runs.append(Run(length, m.group().encode(encoding), False))
            out.append("\n")
            length += 1
            at = m.end()
        out.append(p[at:])
        length += len(p) - at
    return TextFile("".join(out), encoding, bom, newline, tuple(runs), len(data))


def _breaks(p: str) -> dict[str, int]:
    """How many of each line break ``p`` holds, as ``_BREAK`` finds them."""
    crlf = p.count("\r\n")
    return {"\r\n": crlf, "\n": p.count("\n") - crlf, "\r": p.count("\r") - crlf, "\u2029": p.count("\u2029")}


_NO_BREAKS = {"\r\n": 0, "\n": 0, "\r": 0, "\u2029": 0}


def read_text_file(path: str | os.PathLike[str]) -> tuple[TextFile, bytes]:
    """The decoded file and its bytes (OSError passes through)."""
    with open(path, "rb") as f:
        data = f.read()
    return decode(data), data


def edited_runs(tf: TextFile, text: str, positions: Sequence[int | None]) -> list[int]:
    """Indices of the invalid-byte runs that are no longer in place."""
    return [i for i, (r, p) in enumerate(zip(tf.runs, positions))
            if r.invalid and (p is None or text[p:p + 1] != REPLACEMENT)]


def encode(tf: TextFile, text: str, positions: Sequence[int | None], replace_edited: bool = False) -> bytes:
    """The bytes of the edited ``text`` for the file ``tf`` was read from.

    ``positions[i]`` is where run ``i`` is in ``text`` now, or None when an
    edit removed it (:class:`RunTracker` keeps them). Runs in place are
    written as their original bytes; ``\\n`` as the file's line break.
    Raises :class:`EditedInvalidBytes` when an invalid-byte run is gone,
    unless ``replace_edited`` (then any U+FFFD left is written as U+FFFD).
    """
    if not replace_edited:
        gone = edited_runs(tf, text, positions)
        if gone:
            raise EditedInvalidBytes(len(gone))
    keep = sorted((p, r.raw) for r, p in zip(tf.runs, positions)
                  if p is not None and text[p:p + 1] == r.shown)
    nl = tf.newline
    enc = tf.encoding

    def plain(s: str) -> bytes:
        # the editor cannot hold lone surrogates, so "replace" never fires there
        return (s.replace("\n", nl) if nl != "\n" else s).encode(enc, "replace")

    out = [tf.bom]
    at = 0
    for p, raw in keep:
        out.append(plain(text[at:p]))
        out.append(raw)
        at = p + 1
    out.append(plain(text[at:]))
    return b"".join(out)


class RunTracker:
    """Positions of a file's runs while the editor text changes.

    Every run is one character, so a change ``(pos, removed, added)`` moves
    the runs after the removed part, keeps those before it and drops those
    inside it (a dropped run stays at ``pos``, so positions stay sorted).
    The shift of the runs after the last edit is kept pending (a movable
    gap, as in a gap buffer), so typing at one place costs O(log n) however
    many runs the file has.
    """

    def __init__(self, tf: TextFile) -> None:
        self._pos = [r.start for r in tf.runs]
        self._alive = [True] * len(self._pos)
        self._gap = len(self._pos)  # runs from here on are _delta further on
        self._delta = 0

    def _at(self, i: int) -> int:
        return self._pos[i] + (self._delta if i >= self._gap else 0)

    def _first_at_or_after(self, pos: int, lo: int = 0) -> int:
        hi = len(self._pos)
        while lo < hi:
            mid = (lo + hi) // 2
            if self._at(mid) < pos:
                lo = mid + 1
            else:
                hi = mid
        return lo

    def _move_gap(self, to: int) -> None:
        p, d = self._pos, self._delta
        if to < self._gap:
            for i in range(to, self._gap):
                p[i] -= d
        else:
            for i in range(self._gap, to):
                p[i] += d
        self._gap = to

    def change(self, pos: int, removed: int, added: int) -> None:
        """The text changed: ``removed`` characters at ``pos`` became ``added``."""
        if not self._pos or (removed == 0 and added == 0):
            return
        lo = self._first_at_or_after(pos)
        hi = self._first_at_or_after(pos + removed, lo)
        self._move_gap(hi)
        for i in range(lo, hi):
            self._pos[i] = pos
            self._alive[i] = False
        self._delta += added - removed

    def positions(self) -> list[int | None]:
        """Where each run is now; None for runs an edit removed."""
        return [self._at(i) if a else None for i, a in enumerate(self._alive)]

    def alive_in(self, begin: int, end: int) -> list[int]:
        """Positions of the runs still in place within ``[begin, end)``."""
        out: list[int] = []
        i = self._first_at_or_after(begin)
        n = len(self._pos)
        while i < n:
            p = self._at(i)
            if p >= end:
                break
            if self._alive[i]:
                out.append(p)
            i += 1
        return out
