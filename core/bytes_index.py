"""Text -> index of the strings of an undecoded :class:`StringArray`, from
their bytes where the file holds them: a native hash table (compiled).

Decoding a large vocabulary's strings to key a dict by them is most of a
first encode: for gemma-4's 515k merges ~110 ms to decode and ~110 ms to
insert; for llama-bpe's pieces 111M of a 336M-instruction first encode of
0.11 MB; for bert-bge 26.5M (over a quarter). A :class:`BytesIndex` is made
instead in one pass over the length prefixes: each string's length and
first eight bytes make a key (:func:`key_of`), and the strings are chained
by key, no ``str`` made. A lookup keys the UTF-8 of the text's code points
where they lie (no slice, no encode) and compares them with each string of
that key. BPE ranks merges with it (the first of duplicates wins, as in
llama.cpp) and looks pieces up in it (the last duplicate wins, as
``token_to_id``; empty pieces are left out); WPM asks it for the longest
piece at a position (:meth:`BytesIndex.longest`).

Equal bytes are equal texts: the array decodes a string's bytes as UTF-8
with ``surrogateescape``, which maps distinct byte strings to distinct
texts; a query with surrogates is encoded back the same way and checked
(:meth:`BytesIndex.find_text`). The pure-Python build walks bytes ~50x
slower than compiled code: callers keep their dicts there
(:data:`NATIVE`), and :func:`piece_lookup` answers from one.
"""

from __future__ import annotations

import sys
from typing import Final, Optional, Sequence, final

from librt.strings import BytesWriter, read_i64_le, write_i64_le
from librt.vecs import append, extend, vec
from mypy_extensions import i32, i64

from .frozen import as_tuple
from .gil import offer_gil
from .piece_codes import PieceIndex
from .string_array import StringArray

_LITTLE: Final = sys.byteorder == "little"
"""Whether an array's native int64 offsets read as little-endian."""
NATIVE: Final = not __file__.endswith(".py")
"""Whether this module is compiled (see the module doc)."""
_M32: Final = 0xFFFFFFFF
_MUL: Final = 0x5BD1E995  # below 2**31: a 32-bit value times it stays below 2**63
_LOW7: Final = (1 << 56) - 1
"""Seven low bytes: shifted down for fewer (mypyc shifts a literal 1, even
``i64(1)``, as a 32-bit C int)."""
_LINK_BITS: Final = 24
_LINK_MASK: Final = (1 << 24) - 1
_TAG_SHIFT: Final = 25
"""A key's top seven bits, kept in its entry above the link (an entry is
then a positive ``i32``): a chain entry of another key is passed over
without reading its string (the region read was half of a lookup's time on
llama-bpe's 280k merges, each a cache miss)."""
_NO_I32: Final = memoryview(b"").cast("i")
_NO_I64: Final = memoryview(b"").cast("q")
"""Empty buffers a vector is made from to get its capacity unwritten:
``vec[...](capacity=n)`` zero-fills all ``n`` at once, and every page of
that is faulted in (~2 us each on a virtual machine) whether or not it is
ever used; made from a buffer, only what is written is touched."""


def key_of(buf: bytes, pos: i64, n: i64, size: i64) -> i64:
    """The 32-bit key of the ``n`` bytes at ``pos`` of ``buf`` (of ``size``
    bytes): their length and first eight bytes (fewer padded with zeros),
    mixed by multiplies and shifts. One read of the bytes, whatever their
    length: the word may run on into the next string's length prefix
    (masked off), or, at the very end of the buffer, is gathered byte by
    byte. Strings that share their length and first eight bytes share a
    key; a lookup compares the bytes."""
    first: i64 = 0
    if n >= 8:
        first = read_i64_le(buf, pos)
    elif n > 0:
        if pos + 8 <= size:
            first = read_i64_le(buf, pos) & (_LOW7 >> (8 * (7 - n)))
        else:
            first = key_first(buf, pos, n)
    return _mix(n, first & _M32, (first >> 32) & _M32)


def _mix(n: i64, lo: i64, hi: i64) -> i64:
    """The key of ``n`` bytes whose first eight are ``lo`` (four low) and
    ``hi`` (the next four), zero-padded."""
    t = ((n & _M32) ^ lo) * _MUL
    h = (t ^ (t >> 29)) & _M32
    t = (h ^ hi) * _MUL
    return (t ^ (t >> 29)) & _M32


def key_first(buf: bytes, pos: i64, n: i64) -> i64:
    """The ``n`` (< 8) bytes at ``pos`` as a little-endian word, gathered
    one by one (at the very end of ``buf``)."""
    first: i64 = 0
    k: i64 = 0
    while k < n:
        first |= i64(buf[pos + k]) << (8 * k)
        k += 1
    return first


def _decode(raw: bytes) -> str:
    try:
        # the strict decoder's fast path: the same text whenever it
        # succeeds (naming an error handler takes the slow codec lookup)
        return raw.decode()
    except UnicodeDecodeError:
        return raw.decode("utf-8", "surrogateescape")


_ZERO_RUN: Final = 4096
_ZEROS: vec[i32] = vec[i32]()
_ZEROS64: vec[i64] = vec[i64]()


def reserved(capacity: i64) -> vec[i64]:
    """An empty vector with room for ``capacity`` values, none of its
    memory written (see :data:`_NO_I64`): for a vector appended to up to
    an estimate that may be far above what is used."""
    return vec[i64](_NO_I64, capacity=capacity)


def _zeros(size: i64) -> vec[i32]:
    """``size`` zeros: copied in from a run of zeros made once, into a
    vector with that room left unwritten (appended one at a time, they
    were a quarter of the table's instructions; numpy's zeros copied in
    touched twice the fresh memory; a zero-filled capacity wrote them
    twice)."""
    global _ZEROS
    run = _ZEROS
    if len(run) == 0:
        k: i64 = 0
        while k < _ZERO_RUN:
            run = append(run, 0)
            k += 1
        _ZEROS = run
    out = vec[i32](_NO_I32, capacity=size)
    done: i64 = 0
    while size - done >= _ZERO_RUN:
        out = extend(out, run)
        done += _ZERO_RUN
    return extend(out, run[0:size - done])


def zeros64(size: i64) -> vec[i64]:
    """``size`` zeros as :func:`_zeros` makes them, 64-bit: the entries,
    then stored in place (an ``append`` per string, a call into the vector
    library each, was a quarter of the table's instructions), and the pair
    cache's empty slots (a whole cache kept to copy from was 256 KB more
    fresh memory, faulted in page by page, in every first encode)."""
    global _ZEROS64
    run = _ZEROS64
    if len(run) == 0:
        k: i64 = 0
        while k < _ZERO_RUN:
            run = append(run, 0)
            k += 1
        _ZEROS64 = run
    out = reserved(size)
    done: i64 = 0
    while size - done >= _ZERO_RUN:
        out = extend(out, run)
        done += _ZERO_RUN
    return extend(out, run[0:size - done])


def _utf8(cp: i64) -> i64:
    """The UTF-8 bytes of code point ``cp`` (no surrogate), little-endian,
    with their count << 32."""
    if cp < 0x80:
        return cp | (1 << 32)
    if cp < 0x800:
        return (0xC0 | (cp >> 6)) | ((0x80 | (cp & 0x3F)) << 8) | (2 << 32)
    if cp < 0x10000:
        return ((0xE0 | (cp >> 12)) | ((0x80 | ((cp >> 6) & 0x3F)) << 8) | ((0x80 | (cp & 0x3F)) << 16)
                | (3 << 32))
    return ((0xF0 | (cp >> 18)) | ((0x80 | ((cp >> 12) & 0x3F)) << 8) | ((0x80 | ((cp >> 6) & 0x3F)) << 16)
            | ((0x80 | (cp & 0x3F)) << 24) | (4 << 32))


def _spells(region: bytes, p: i64, s: str, a: i64, b: i64, c: i64, space: bool) -> bool:
    """Whether the bytes at ``p`` (as many as the text has) are the UTF-8
    of ``s[a:b]``, a space if ``space``, ``s[b:c]`` (no surrogates)."""
    x = a
    pending = space
    while True:
        cp: i64 = 0
        if pending and x == b:
            cp = 0x20
            pending = False
        elif x < c:
            cp = ord(s[x])
            x += 1
        else:
            return True
        enc = _utf8(cp)
        width = enc >> 32
        k: i64 = 0
        while k < width:
            if i64(region[p]) != (enc >> (8 * k)) & 0xFF:
                return False
            p += 1
            k += 1


def indexable(n: i64, region_size: i64) -> bool:
    """Whether a :class:`BytesIndex` holds ``n`` strings in a region of
    ``region_size`` bytes (an entry packs a tag and a link)."""
    return n < _LINK_MASK and region_size < (1 << 31)


def offsets_of(region: bytes, first: i64, end: i64, n: i64) -> bytes:
    """The offsets of ``n`` length-prefixed strings from ``first`` (each an
    8-byte little-endian length and its bytes, all before ``end``), as
    8-byte little-endian values: what a :class:`StringArray` keeps as its
    ``starts``."""
    w = BytesWriter()
    p = first
    i: i64 = 0
    while i < n:
        if p < 0 or p + 8 > end:
            raise ValueError("string array shorter than its count")
        ln = read_i64_le(region, p)
        if ln < 0 or ln > end - p - 8:
            raise ValueError("string length past the array")
        write_i64_le(w, p)
        p += 8 + ln
        i += 1
    return w.getvalue()


@final
class BytesIndex:
    """Text -> index of ``n`` strings stored as in a :class:`StringArray`
    (each an 8-byte little-endian length and its bytes, the first at
    ``first``, all before ``end``; ``offsets``: where each one starts, as
    the array's ``starts`` hold them, else found here): see the module
    doc. ``pieces``: the last of duplicates wins and empty strings are
    left out (a vocabulary's pieces), else the first wins (merges). Never
    changed once made: threads read it without a lock.

    Chained by key: ``heads`` holds, per slot, the first string (+ 1) of
    the slot's chain, and ``ents`` each string's key's top bits and the
    next string in the chain: ``tag << 24 | link + 1``. A chain runs from
    the string that wins among duplicates (the last piece, the first
    merge: the strings are chained in that order), so a lookup stops at
    its first match (walking on past it for an earlier merge was a miss
    per entry). Made in one walk over the offsets, storing one entry per
    string in place and touching one slot. Fresh memory is what it costs
    most on a virtual machine (each page faulted in): the array's offsets
    are read where they are (a copy of them and a key per string were ~3
    ms of llama-bpe's ~12 ms of tables), so this holds 4 bytes a string
    and 2-4 a slot.

    ``table``: answers from a dict instead (the pure-Python build's piece
    lookup, :func:`piece_lookup`; the bytes are then not indexed)."""

    def __init__(self, region: bytes, first: i64, end: i64, n: i64, pieces: bool,
                 table: Optional[dict[str, int]] = None, offsets: Optional[bytes] = None) -> None:
        if not indexable(n, len(region)):
            raise ValueError("string array too large to index")
        if end > len(region):
            raise ValueError("string array past its bytes")
        self.region = region
        self.pieces = pieces
        self.table = table
        if table is not None:
            n = 0
            offsets = b""
        elif offsets is None:
            offsets = offsets_of(region, first, end, n)
        elif len(offsets) < 8 * n:
            raise ValueError("string array shorter than its count")
        self.offsets: bytes = offsets
        size: i64 = 16
        while 2 * size < n:
            size *= 2
        self.mask: i64 = size - 1
        self.heads = _zeros(size)
        self.ents = _zeros(n)
        self._fill(n, end)

    def _fill(self, n: i64, end: i64) -> None:
        region = self.region
        offsets = self.offsets
        size: i64 = len(region)
        heads = self.heads
        ents = self.ents
        mask = self.mask
        pieces = self.pieces
        # chained last first: pieces in order (the last duplicate ends up at
        # the head), merges backwards (the first does)
        i: i64 = 0 if pieces else n - 1
        step: i64 = 1 if pieces else -1
        done: i64 = 0
        while done < n:
            p = read_i64_le(offsets, i << 3)
            if p < 0 or p > end - 8:
                raise ValueError("string offset past the array")
            a = p + 8
            ln = read_i64_le(region, p)
            if ln < 0 or ln > end - a:
                raise ValueError("string length past the array")
            if ln > 0 or not pieces:
                # key_of(region, a, ln, size), written out: a call per
                # string was a tenth of the table
                first: i64 = 0
                if ln >= 8:
                    first = read_i64_le(region, a)
                elif a + 8 <= size:
                    first = read_i64_le(region, a) & (_LOW7 >> (8 * (7 - ln)))
                elif ln > 0:
                    first = key_first(region, a, ln)
                t = ((ln & _M32) ^ (first & _M32)) * _MUL
                h = (t ^ (t >> 29)) & _M32
                t = (h ^ ((first >> 32) & _M32)) * _MUL
                key = (t ^ (t >> 29)) & _M32
                s = key & mask
                ents[i] = i32(i64(heads[s]) | ((key >> _TAG_SHIFT) << _LINK_BITS))
                heads[s] = i32(i + 1)
            i += step
            done += 1
            if done & 0x3FFF == 0:
                offer_gil()  # built when the first text needs it, maybe in a worker

    def get(self, s: str, start: i64, end: i64) -> i64:
        """The index of the string ``s[start:end]``, or -1."""
        table = self.table
        if table is not None:
            return table.get(s[start:end], -1) if end > start else -1
        return self.find(s, start, end, end, False)

    def find(self, s: str, a: i64, b: i64, c: i64, space: bool) -> i64:
        """The index of the string ``s[a:b] + " " + s[b:c]`` (``space``)
        or ``s[a:c]``, or -1: keyed and compared from the code points where
        they lie (slicing, joining and encoding the text were half of a
        pair's lookup); a text with surrogates goes the long way."""
        lo: i64 = 0  # the first eight bytes
        hi: i64 = 0
        n: i64 = 0
        x = a
        pending = space
        while True:
            cp: i64 = 0
            if pending and x == b:
                cp = 0x20
                pending = False
            elif x < c:
                cp = ord(s[x])
                x += 1
            else:
                break
            if 0xD800 <= cp < 0xE000:
                return self.find_text(s[a:b] + " " + s[b:c] if space else s[a:c])
            enc = _utf8(cp)
            width = enc >> 32
            k: i64 = 0
            while k < width:
                if n < 4:
                    lo |= ((enc >> (8 * k)) & 0xFF) << (8 * n)
                elif n < 8:
                    hi |= ((enc >> (8 * k)) & 0xFF) << (8 * (n - 4))
                n += 1
                k += 1
        # the chain walked here, as in _walk (a call per lookup was a sixth
        # of BPE's pair lookups)
        region = self.region
        offsets = self.offsets
        ents = self.ents
        t = ((n & _M32) ^ lo) * _MUL  # _mix(n, lo, hi), written out
        h = (t ^ (t >> 29)) & _M32
        t = (h ^ hi) * _MUL
        key = (t ^ (t >> 29)) & _M32
        tag = key >> _TAG_SHIFT
        j: i64 = i64(self.heads[key & self.mask]) - 1
        while j >= 0:
            e = i64(ents[j])
            if e >> _LINK_BITS == tag:
                pos = read_i64_le(offsets, j << 3)
                if read_i64_le(region, pos) == n and _spells(region, pos + 8, s, a, b, c, space):
                    return j
            j = (e & _LINK_MASK) - 1
        return -1

    def _walk(self, key: i64, n: i64, s: str, a: i64, b: i64, c: i64, space: bool) -> i64:
        """The index of the ``n``-byte string of key ``key`` that spells
        the text :meth:`find` describes, or -1. A chain runs from the
        string that wins among duplicates: the first match is the answer."""
        region = self.region
        offsets = self.offsets
        ents = self.ents
        tag = (key & _M32) >> _TAG_SHIFT
        j: i64 = i64(self.heads[key & self.mask]) - 1
        while j >= 0:
            e = i64(ents[j])
            if e >> _LINK_BITS == tag:
                pos = read_i64_le(offsets, j << 3)
                if read_i64_le(region, pos) == n and _spells(region, pos + 8, s, a, b, c, space):
                    return j
            j = (e & _LINK_MASK) - 1
        return -1

    def longest(self, s: str, start: i64, stop: i64) -> i64:
        """The longest string ``s[start:j]`` with ``start < j <= stop``, as
        ``j << 32 | index`` (-1: none). One pass over the characters gives
        every prefix's byte count and the first eight bytes, which is all a
        prefix's key needs: each candidate end is then a key and a chain
        (asking :meth:`get` for each end walked the same characters again,
        ~11 lookups a new word on bert-bge)."""
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
        counts = vec[i64](capacity=stop - start)
        lo: i64 = 0
        hi: i64 = 0
        n: i64 = 0
        j = start
        while j < stop:
            cp: i64 = ord(s[j])
            if 0xD800 <= cp < 0xE000:
                break
            enc = _utf8(cp)
            width = enc >> 32
            k: i64 = 0
            while k < width and n < 8:
                if n < 4:
                    lo |= ((enc >> (8 * k)) & 0xFF) << (8 * n)
                else:
                    hi |= ((enc >> (8 * k)) & 0xFF) << (8 * (n - 4))
                n += 1
                k += 1
            n += width - k
            counts = append(counts, n)
            j += 1
        # the prefixes through a surrogate (j stopped there): the long way
        e = stop
        while e > j:
            r = self.find_text(s[start:e])
            if r >= 0:
                return (e << 32) | r
            e -= 1
        m: i64 = len(counts)
        while m > 0:
            nb = counts[m - 1]
            end = start + m
            r = -1
            if nb >= 8:
                r = self._walk(_mix(nb, lo, hi), nb, s, start, end, end, False)
            elif nb > 4:
                r = self._walk(_mix(nb, lo, hi & (_LOW7 >> (8 * (11 - nb)))), nb, s, start, end, end, False)
            else:
                r = self._walk(_mix(nb, lo & (_LOW7 >> (8 * (7 - nb))), 0), nb, s, start, end, end, False)
            if r >= 0:
                return (end << 32) | r
            m -= 1
        return -1

    def find_text(self, text: str) -> i64:
        """The index of the string ``text``, or -1."""
        table = self.table
        if table is not None:
            return table.get(text, -1) if text else -1
        escaped = False
        try:
            q = text.encode()
        except UnicodeEncodeError:
            # surrogates: the bytes the array's decoder gives them back as,
            # if any (others match no string)
            try:
                q = text.encode("utf-8", "surrogateescape")
            except UnicodeEncodeError:
                return -1
            escaped = True
        n: i64 = len(q)
        region = self.region
        offsets = self.offsets
        ents = self.ents
        j: i64 = i64(self.heads[key_of(q, 0, n, n) & self.mask]) - 1
        while j >= 0:
            e = i64(ents[j])
            pos = read_i64_le(offsets, j << 3)
            if read_i64_le(region, pos) == n and region[pos + 8:pos + 8 + n] == q:
                # equal bytes are equal texts, unless the text's escaped
                # bytes spell valid UTF-8 (which the decoder gives back as
                # characters)
                if escaped and _decode(q) != text:
                    return -1
                return j
            j = (e & _LINK_MASK) - 1
        return -1


@final
class PieceFinder:
    """The id of a piece's text (a slice of a ``str``, no slice made), or
    -1: from a :class:`BytesIndex` over the file's undecoded pieces when
    the vocabulary still has them, else from its :class:`PieceIndex`
    (``core.vocab.piece_finder`` chooses). Made from the bytes, a 32k
    vocabulary's index is ~0.3 ms and no fresh page; from code points,
    2.8 ms and 294 pages, which an SPM command line paid to look up
    "Hello"."""

    def __init__(self, raw: Optional[BytesIndex], index: Optional[PieceIndex]) -> None:
        if raw is None and index is None:
            raise ValueError("a piece finder needs an index")
        self.raw = raw
        self.index = index

    def get(self, s: str, start: i64, end: i64) -> i64:
        """The id of the piece ``s[start:end]``, or -1."""
        raw = self.raw
        if raw is not None:
            return raw.find(s, start, end, end, False)  # (get, less its check for a dict)
        index = self.index
        assert index is not None
        return index.get(s, start, end)

    def find(self, text: str) -> i64:
        """The id of the piece ``text``, or -1."""
        raw = self.raw
        if raw is not None:
            return raw.find_text(text)
        index = self.index
        assert index is not None
        return index.find(text)

    def char(self, cp: i64) -> i64:
        """The id of the one-character piece ``chr(cp)``, or -1."""
        raw = self.raw
        if raw is not None:
            return raw.find_text(chr(cp))
        index = self.index
        assert index is not None
        return index.char(cp)


def raw_index(strings: Sequence[str], pieces: bool) -> Optional[BytesIndex]:
    """A :class:`BytesIndex` over the bytes of ``strings`` while they are
    an undecoded :class:`StringArray` a table can address, else None."""
    if not isinstance(strings, StringArray) or len(strings) == 0:
        return None
    raw = strings.raw()
    if raw is None or not indexable(len(strings), len(raw[0])):
        return None
    region, starts, end = raw
    offsets = starts.obj
    if not (isinstance(offsets, bytes) and starts.nbytes == len(offsets) and _LITTLE):
        # (a view of part of some buffer: its offsets copied out)
        offsets = starts.tobytes()
    return BytesIndex(region, int(starts[0]), end, len(strings), pieces, None, offsets)


def piece_lookup(pieces: Sequence[str]) -> BytesIndex:
    """Piece text -> id of a vocabulary's pieces (the last duplicate
    wins, empty pieces left out): over the file's own bytes while they are
    undecoded, else over the pieces encoded again; from a dict in the
    pure-Python build (see the module doc)."""
    if not NATIVE:
        # (decoded in one go; the last duplicate wins)
        table = {p: i for i, p in enumerate(as_tuple(pieces)) if p}
        return BytesIndex(b"", 0, 0, 0, True, table)
    ix = raw_index(pieces, True)
    if ix is not None:
        return ix
    w = BytesWriter()
    for p in pieces:
        try:
            data = p.encode()
        except UnicodeEncodeError:
            # surrogates: left out unless they are escaped bytes that decode
            # back to the piece (else the bytes would answer for another
            # text); no text holds them (Model.encode replaces them)
            try:
                data = p.encode("utf-8", "surrogateescape")
            except UnicodeEncodeError:
                data = b""
            if _decode(data) != p:
                data = b""
        write_i64_le(w, len(data))
        w.write(data)
    buf = w.getvalue()
    return BytesIndex(buf, 0, len(buf), len(pieces), True)
