"""WPM's first piece -> id index: a hash index over the pieces' UTF-8
bytes as the file holds them (compiled).

The dict lookups that cut a fresh tokenizer's first few thousand words
(``WpmTokenizer._greedy_dict``) only ask "which id has this text?". The
core's :class:`~tokenprism.core.piece_codes.PieceIndex` answers that over
the pieces' code points, decoded from the file first: for bert-bge
~26.5M instructions (decoding 14.3M of them), over a quarter of the first
encode of the 0.11 MB benchmark text. Hashing the undecoded bytes where
they lie costs a few instructions a byte and nothing per piece but its
slot; a query is hashed as the UTF-8 of its characters instead.

Equal bytes are equal pieces: a piece's text is its bytes decoded with
``surrogateescape``, which maps distinct byte strings to distinct texts,
and :func:`_units` encodes a query's characters back the same way (an
escaped byte U+DC80..U+DCFF is that byte; any other surrogate is in no
piece). The last of duplicate pieces wins, as in llama.cpp's
``token_to_id``; empty pieces are left out (as ``PieceIndex`` does).
"""

from __future__ import annotations

from typing import Final, Sequence, final

from librt.strings import BytesWriter, read_i64_le, write_i64_le
from librt.vecs import append, vec
from mypy_extensions import i64

from tokenprism.core.plugin_api import StringArray, as_tuple, offer_gil

# whether this module runs compiled: the interpreter hashes a byte at a
# time ~50x slower, so the pure-Python build answers from a dict instead
# (as the core's piece index does there, core.frozen.NATIVE)
NATIVE: Final = not __file__.endswith(".py")

_HASH_MASK: Final = 0xFFFFFFFFFFFF  # 48 bits: h * 31 + b never overflows an i64
_ID_MASK: Final = 0xFFFFFFFF


def _slot_of(h: i64, mask: i64) -> i64:
    x = (h ^ (h >> 21)) & 0x7FFFFFFF
    return ((x * 0x9E3779B1) >> 15) & mask


def _tag_of(h: i64) -> i64:
    return (h >> 17) & 0x7FFFFFFF


def _units(cp: i64) -> i64:
    """The bytes of code point ``cp`` as a piece holds them, packed low
    byte first with their count in the top byte (0: in no piece)."""
    if cp < 0x80:
        return (1 << 56) | cp
    if cp < 0x800:
        return (2 << 56) | (0xC0 | (cp >> 6)) | ((0x80 | (cp & 0x3F)) << 8)
    if 0xD800 <= cp <= 0xDFFF:
        if 0xDC80 <= cp <= 0xDCFF:
            return (1 << 56) | (cp - 0xDC00)  # a byte decoding escaped
        return 0
    if cp < 0x10000:
        return ((3 << 56) | (0xE0 | (cp >> 12)) | ((0x80 | ((cp >> 6) & 0x3F)) << 8)
                | ((0x80 | (cp & 0x3F)) << 16))
    return ((4 << 56) | (0xF0 | (cp >> 18)) | ((0x80 | ((cp >> 12) & 0x3F)) << 8)
            | ((0x80 | ((cp >> 6) & 0x3F)) << 16) | ((0x80 | (cp & 0x3F)) << 24))


@final
class PieceBytes:
    """Piece text -> id over the pieces' bytes: piece ``i``'s bytes are
    ``region[at[i]:at[i] + length]``, the length in the 8 bytes before."""

    def __init__(self, region: bytes, first: i64, end: i64, n: i64,
                 table: dict[str, int] | None = None) -> None:
        self.region = region
        # the pure-Python build's answers (then the slots stay empty)
        self.table = table
        if table is not None:
            n = 0
        size: i64 = 16
        while size < 2 * n:
            size *= 2
        self.mask: i64 = size - 1
        slots = vec[i64](capacity=size)
        k: i64 = 0
        while k < size:
            slots = append(slots, 0)
            k += 1
        at = vec[i64](capacity=n)
        pos: i64 = first
        i: i64 = 0
        while i < n:
            if pos + 8 > end:
                raise ValueError("string array shorter than its count")
            ln = read_i64_le(region, pos)
            a = pos + 8
            b = a + ln
            if ln < 0 or b > end:
                raise ValueError("string length past the array")
            at = append(at, a)
            if ln > 0:
                h: i64 = 0
                j = a
                while j < b:
                    # (the hash step written out: mypyc calls are not inlined)
                    h = ((h * 31) ^ i64(region[j])) & _HASH_MASK
                    j += 1
                tag = _tag_of(h)
                s = _slot_of(h, self.mask)
                while True:
                    e = slots[s]
                    # a duplicate takes the earlier one's slot: the later id wins
                    if e == 0 or (e >> 32 == tag and self._same(at, (e & _ID_MASK) - 1, a, ln)):
                        break
                    s = (s + 1) & self.mask
                slots[s] = (tag << 32) | (i + 1)
            pos = b
            i += 1
            if i & 0x3FFF == 0:
                offer_gil()
        self.slots = slots
        self.at = at

    def _same(self, at: vec[i64], tid: i64, a: i64, ln: i64) -> bool:
        """Whether piece ``tid`` is the ``ln`` bytes at ``a``."""
        region = self.region
        c = at[tid]
        if read_i64_le(region, c - 8) != ln:
            return False
        k: i64 = 0
        while k < ln:
            if region[c + k] != region[a + k]:
                return False
            k += 1
        return True

    def get(self, s: str, start: i64, end: i64) -> i64:
        """The id of the piece ``s[start:end]``, or -1."""
        if self.table is not None:
            return self.table.get(s[start:end], -1) if end > start else -1
        h: i64 = 0
        nb: i64 = 0
        j = start
        while j < end:
            cp: i64 = ord(s[j])
            j += 1
            if cp < 0x80:
                h = ((h * 31) ^ cp) & _HASH_MASK
                nb += 1
                continue
            u = _units(cp)
            if u == 0:
                return -1
            m = u >> 56
            nb += m
            t: i64 = 0
            while t < m:
                h = ((h * 31) ^ ((u >> (8 * t)) & 0xFF)) & _HASH_MASK
                t += 1
        if nb == 0:
            return -1
        slots = self.slots
        mask = self.mask
        tag = _tag_of(h)
        slot = _slot_of(h, mask)
        region = self.region
        while True:
            e = slots[slot]
            if e == 0:
                return -1
            if e >> 32 == tag:
                tid = (e & _ID_MASK) - 1
                c = self.at[tid]
                if read_i64_le(region, c - 8) == nb and self._matches(c, s, start, end):
                    return tid
            slot = (slot + 1) & mask

    def longest(self, s: str, start: i64, stop: i64) -> i64:
        """The longest piece ``s[start:j]`` with ``j <= stop``, as
        ``j << 32 | id`` (-1: none): :meth:`get` of every end from ``stop``
        down, with the hash of each prefix made in one pass over it (the
        hash is a running one), where asking each length anew hashed the
        same characters again (~11 lookups a new word on bert-bge)."""
        if stop <= start:
            return -1
        table = self.table
        if table is not None:
            while stop > start:
                tid = table.get(s[start:stop], -1)
                if tid >= 0:
                    return (stop << 32) | tid
                stop -= 1
            return -1
        hs = vec[i64](capacity=stop - start + 1)
        ns = vec[i64](capacity=stop - start + 1)
        h: i64 = 0
        nb: i64 = 0
        j = start
        while j < stop:
            cp: i64 = ord(s[j])
            if cp < 0x80:
                h = ((h * 31) ^ cp) & _HASH_MASK
                nb += 1
            else:
                u = _units(cp)
                if u == 0:
                    break  # no piece holds this character: nor any longer prefix
                m = u >> 56
                nb += m
                t: i64 = 0
                while t < m:
                    h = ((h * 31) ^ ((u >> (8 * t)) & 0xFF)) & _HASH_MASK
                    t += 1
            hs = append(hs, h)
            ns = append(ns, nb)
            j += 1
        slots = self.slots
        mask = self.mask
        region = self.region
        k: i64 = len(hs)
        while k > 0:
            h = hs[k - 1]
            nb = ns[k - 1]
            tag = _tag_of(h)
            slot = _slot_of(h, mask)
            while True:
                e = slots[slot]
                if e == 0:
                    break
                if e >> 32 == tag:
                    tid = (e & _ID_MASK) - 1
                    c = self.at[tid]
                    if read_i64_le(region, c - 8) == nb and self._matches(c, s, start, start + k):
                        return ((start + k) << 32) | tid
                slot = (slot + 1) & mask
            k -= 1
        return -1

    def _matches(self, c: i64, s: str, start: i64, end: i64) -> bool:
        """Whether the bytes at ``c`` are those of ``s[start:end]`` (their
        count already checked)."""
        region = self.region
        j = start
        while j < end:
            cp: i64 = ord(s[j])
            if cp < 0x80:
                if i64(region[c]) != cp:
                    return False
                c += 1
                j += 1
                continue
            u = _units(cp)
            m = u >> 56
            t: i64 = 0
            while t < m:
                if i64(region[c]) != (u >> (8 * t)) & 0xFF:
                    return False
                c += 1
                t += 1
            j += 1
        return True


def piece_bytes(pieces: Sequence[str]) -> PieceBytes:
    """The index of a vocabulary's pieces: over the file's own bytes while
    they are undecoded, else over the pieces encoded again."""
    n: i64 = len(pieces)
    if not NATIVE:
        # (decoded in one go; the last duplicate wins)
        table = {p: i for i, p in enumerate(as_tuple(pieces)) if p}
        return PieceBytes(b"", 0, 0, 0, table)
    raw = pieces.raw() if isinstance(pieces, StringArray) else None
    if raw is not None and n > 0:
        region, starts, end = raw
        return PieceBytes(region, int(starts[0]), end, n)
    w = BytesWriter()
    for p in pieces:
        try:
            data = p.encode("utf-8", "surrogateescape")
        except UnicodeEncodeError:
            # a surrogate no file's bytes decode to: no text holds one
            # (Model.encode replaces them), so the piece is never asked for
            data = b""
        write_i64_le(w, len(data))
        w.write(data)
    buf = w.getvalue()
    return PieceBytes(buf, 0, len(buf), n)
