"""What opening a vocabulary needs to know of its pieces, read from their
undecoded bytes (a :class:`~tokenprism.core.string_array.StringArray`
straight from the file): whether one is empty, the longest one's length
in code points, and the ids of the few texts the load-time fix-ups look
up.

Answering these from the pieces' code points (``core.piece_codes``) made
the code points of every piece at open: ~1.8 ms of bert-bge's ~9 ms first
open, for three facts that the byte lengths nearly give. The code points
are still made when a tokenizer first needs its piece index. Compiled:
each answer is a native pass or two over the length prefixes, nothing
allocated per piece (in numpy, with its temporaries and a Python
comparison per candidate, these took 1-3 ms on bert-bge).
"""

from __future__ import annotations

from typing import Final, Iterable

from mypy_extensions import i64

from .piece_codes import _length_at, _sequence_at
from .string_array import StringArray


def facts(pieces: StringArray) -> tuple[bool, int] | None:
    """Whether some piece is empty, and the longest piece's length in code
    points (as ``len`` of the piece decoded with ``surrogateescape``),
    counted only in the pieces whose byte length could beat the longest
    so far; None when the pieces are decoded already."""
    raw = pieces.raw()
    if raw is None or not len(pieces):
        return None
    region, starts, end = raw
    first: i64 = int(starts[0])
    n: i64 = len(pieces)
    longest: i64 = first  # where the longest piece in bytes starts (its prefix)
    most: i64 = -1
    pos = first
    i: i64 = 0
    while i < n:
        ln = _length_at(region, pos, end)
        if ln == 0:
            return True, 0
        if ln > most:
            longest, most = pos, ln
        pos += 8 + ln
        i += 1
    best = _count(region, longest + 8, longest + 8 + most)
    # a piece of more bytes than that has code points can have more of them
    pos = first
    i = 0
    while i < n:
        ln = _length_at(region, pos, end)
        if ln > best:
            best = max(best, _count(region, pos + 8, pos + 8 + ln))
        pos += 8 + ln
        i += 1
    return False, int(best)


def _count(buf: bytes, pos: i64, stop: i64) -> i64:
    """The code points ``buf[pos:stop]`` decodes to with
    ``surrogateescape``: as ``piece_codes.codes_from_bytes`` steps, a byte
    that starts no valid sequence is one (escaped) code point."""
    n: i64 = 0
    while pos < stop:
        b0: i64 = buf[pos]
        if b0 < 0x80:
            pos += 1
        else:
            cp = _sequence_at(buf, pos, stop, b0)
            pos += 1 if cp < 0 else 2 if cp < 0x800 else 3 if cp < 0x10000 else 4
        n += 1
    return n


def ids_of(pieces: StringArray, texts: Iterable[str]) -> dict[str, int] | None:
    """The id of each of ``texts`` that is a piece (the last one, of
    duplicate pieces, as llama.cpp's ``token_to_id`` keeps); None when the
    pieces are decoded already. One native pass over the length prefixes;
    a piece is compared only when its length and end bytes match some
    text's (:func:`_key`)."""
    raw = pieces.raw()
    if raw is None:
        return None
    region, starts, end = raw
    by_bytes = {t.encode("utf-8", "surrogateescape"): t for t in texts if t}
    found: dict[str, int] = {}
    if not by_bytes or not len(pieces):
        return found
    marks = bytearray(_KEYS)
    for b in by_bytes:
        marks[_key(b, 0, len(b))] = 1
    keys = bytes(marks)
    pos: i64 = int(starts[0])
    stop: i64 = end
    n: i64 = len(pieces)
    i: i64 = 0
    while i < n:
        ln = _length_at(region, pos, stop)
        pos += 8
        if ln > 0 and keys[_key(region, pos, ln)] != 0:
            text = by_bytes.get(region[pos:pos + ln])
            if text is not None:
                found[text] = int(i)  # ids ascend: a later duplicate wins
        pos += ln
        i += 1
    return found


_KEYS: Final = 0x10000


def _key(buf: bytes, pos: i64, n: i64) -> i64:
    """A 16-bit key of the ``n`` (> 0) bytes at ``pos``: their length and
    first two and last bytes (the first two alone put most of an SPM or
    WPM vocabulary, its pieces starting with the 3 bytes of ``▁``, on
    one key)."""
    h: i64 = n * 31 + buf[pos]
    h = h * 31 + (buf[pos + 1] if n > 1 else 0)
    h = h * 31 + buf[pos + n - 1]
    return (h ^ (h >> 16)) & 0xFFFF
