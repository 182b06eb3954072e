"""Merge ranks of a BPE vocabulary, and its pieces' ids, from their
undecoded bytes: a native hash table.

Ranks are looked up by merge text (``"left right"``, see ``bpe.py``). Made
as a dict, gemma-4's 515k merges cost ~110 ms to decode and ~110 ms to
insert, and even filled a bucket at a time (the merges grouped by a hash
of their first bytes, a group decoded on its first miss) the grouping and
the decoding of what a first 0.11 MB text needs were 100M instructions of
llama-bpe's 336M first encode. When the merges come undecoded from the
file (a :class:`StringArray`), a :class:`BytesIndex` is made instead in
one compiled pass over their bytes: each merge's length and first eight
bytes make a key (:func:`key_of`), and the merges are chained by key, no
``str`` made. A lookup encodes the text as the array's decoder would have
given it (UTF-8, ``surrogateescape``: equal texts have equal bytes), keys
those bytes the same way and compares them with each merge of that key,
keeping the first of duplicates as llama.cpp does. The same table over
the pieces (the last duplicate winning) stands in for the vocabulary's
piece index while encoding.

The pure-Python build ranks every merge in a dict at once (a loop over
every merge in the interpreter is slower than decoding them all).
"""

from __future__ import annotations

import threading
from typing import Final, Optional, Sequence, final

import numpy as np
from librt.strings import read_i64_le
from librt.vecs import append, extend, vec
from mypy_extensions import i32, i64

from tokenprism.core.plugin_api import StringArray, distinct_sorted, offer_gil

NATIVE_TABLES: Final = not __file__.endswith(".py")
"""Whether this module is compiled (see the module doc)."""
_M32: Final = 0xFFFFFFFF
_MUL: Final = 0x5BD1E995  # below 2**31: a 32-bit value times it stays below 2**63
_LOW7: Final = (1 << 56) - 1
"""Seven low bytes: shifted down for fewer (mypyc shifts a literal 1, even
``i64(1)``, as a 32-bit C int)."""
_SLICE = 65536


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
    t = ((n & _M32) ^ (first & _M32)) * _MUL
    h = (t ^ (t >> 29)) & _M32
    t = (h ^ ((first >> 32) & _M32)) * _MUL
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


def _zeros(size: i64) -> vec[i32]:
    """``size`` (a power of two) zeros: copied in from a run of zeros made
    once, into a vector made with that capacity (appended one at a time,
    they were a quarter of the table's instructions; numpy's zeros copied
    in touched twice the fresh memory)."""
    global _ZEROS
    run = _ZEROS
    if len(run) == 0:
        k: i64 = 0
        while k < _ZERO_RUN:
            run = append(run, 0)
            k += 1
        _ZEROS = run
    out = vec[i32](capacity=size)
    if size < _ZERO_RUN:
        return extend(out, run[0:size])
    done: i64 = 0
    while done < size:
        out = extend(out, run)
        done += _ZERO_RUN
    return out


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


_LINK_BITS: Final = 27
_LINK_MASK: Final = (1 << 27) - 1


def indexable(n: i64, region_size: i64) -> bool:
    """Whether a :class:`BytesIndex` holds ``n`` strings in a region of
    ``region_size`` bytes (an entry packs an offset and a link)."""
    return n < _LINK_MASK and region_size < (1 << (63 - _LINK_BITS))


@final
class BytesIndex:
    """Text -> index of the strings of an undecoded :class:`StringArray`
    (see the module doc): merge text -> rank, the first of duplicates
    winning, or, made with ``pieces``, piece text -> id as the
    vocabulary's piece index answers (the last of duplicates wins, empty
    pieces are left out). Never changed once made: threads read it
    without a lock.

    Chained by key: ``heads`` holds, per slot, the last string (+ 1) of
    the slot's chain, and ``ents`` each string's offset in the region and
    the string before it in the chain: ``offset << 27 | link + 1``.
    Made in one walk over the length prefixes, appending one entry per
    string and touching one slot. Fresh memory is what it costs most on a
    virtual machine (each page faulted in): the bytes of a copy of the
    array's offsets and of a key per string were ~3 ms of llama-bpe's
    ~12 ms of tables; this holds 8 bytes a string and 2 a slot."""

    def __init__(self, region: bytes, starts: np.ndarray, end: int, pieces: bool) -> None:
        n: i64 = len(starts)
        if not indexable(n, len(region)):
            raise ValueError("string array too large to index")
        self.region = region
        self.pieces = pieces
        size: i64 = 16
        while 2 * size < n:
            size *= 2
        self.mask: i64 = size - 1
        self.heads = _zeros(size)
        self.ents = vec[i64](capacity=max(n, 1))
        self._fill(n, int(starts[0]) if n > 0 else 0, end)

    def _fill(self, n: i64, first_at: i64, end: i64) -> None:
        region = self.region
        size: i64 = len(region)
        heads = self.heads
        ents = self.ents
        mask = self.mask
        pieces = self.pieces
        p = first_at
        i: i64 = 0
        while i < n:
            if p + 8 > end:
                raise ValueError("string array shorter than its count")
            a = p + 8
            ln = read_i64_le(region, p)
            if ln < 0 or ln > end - a:
                raise ValueError("string length past the array")
            link: i64 = 0
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
                s = ((t ^ (t >> 29)) & _M32) & mask
                link = i64(heads[s])
                heads[s] = i32(i + 1)
            ents = append(ents, (p << _LINK_BITS) | link)
            p = a + ln
            i += 1
            if i & 0x3FFF == 0:
                offer_gil()  # built when the first text needs it, maybe in a worker
        self.ents = ents

    def get(self, s: str, start: i64, end: i64) -> i64:
        """The index of the string ``s[start:end]``, or -1."""
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
        t = ((n & _M32) ^ lo) * _MUL
        h = (t ^ (t >> 29)) & _M32
        t = (h ^ hi) * _MUL
        key = (t ^ (t >> 29)) & _M32
        region = self.region
        ents = self.ents
        last_wins = self.pieces
        found: i64 = -1
        j: i64 = i64(self.heads[key & self.mask]) - 1
        while j >= 0:
            e = ents[j]
            pos = e >> _LINK_BITS
            if read_i64_le(region, pos) == n and _spells(region, pos + 8, s, a, b, c, space):
                found = j
                if last_wins:
                    return j
            j = (e & _LINK_MASK) - 1
        return found

    def find_text(self, text: str) -> i64:
        """The index of the string ``text``, or -1."""
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
        ents = self.ents
        last_wins = self.pieces
        found: i64 = -1
        # a chain runs from the latest string back: the last duplicate is
        # met first, the first one last
        j: i64 = i64(self.heads[key_of(q, 0, n, n) & self.mask]) - 1
        while j >= 0:
            e = ents[j]
            pos = e >> _LINK_BITS
            if read_i64_le(region, pos) == n and region[pos + 8:pos + 8 + n] == q:
                # equal bytes are equal texts, unless the text's escaped
                # bytes spell valid UTF-8 (which the decoder gives back as
                # characters)
                if escaped and _decode(q) != text:
                    return -1
                found = j
                if last_wins:
                    return j
            j = (e & _LINK_MASK) - 1
        return found


class RankTable:
    """Merge text -> rank of a vocabulary's merges (see the module doc).

    Readers take ``ranks`` and look up in it; one that misses calls
    :func:`rank_of`, which asks the native table (:class:`BytesIndex`)
    while there is one, or :meth:`pair_rank` asks it directly. ``ranks``
    starts empty and keeps the texts :meth:`miss` found, until
    :meth:`complete_all` swaps in the full dict; ``done`` is that full
    dict, once there is one, so a reader still holding the partial dict
    knows to look again. Several threads may encode with one tokenizer:
    the native table is made before anyone reads it and never changes."""

    ranks: dict[str, int]
    done: Optional[dict[str, int]]
    complete: bool

    def __init__(self, merges: Sequence[str]) -> None:
        self.ranks = {}
        self.done = None
        self.complete = True
        self._lock = threading.Lock()
        self._merges: Optional[StringArray] = None
        self._native: Optional[BytesIndex] = None
        raw = None
        if isinstance(merges, StringArray) and len(merges) > 0:
            raw = merges.raw()
            if raw is not None:
                self._merges = merges
                if NATIVE_TABLES and indexable(len(merges), len(raw[0])):
                    self._native = BytesIndex(raw[0], raw[1], raw[2], False)
                    self.complete = False
                else:
                    # decoded on a copy: the array stays undecoded
                    self.ranks = rank_dict(StringArray(raw[0], raw[1], raw[2]).tolist())
        if raw is None:
            self.ranks = rank_dict(merges)
        if self.complete:
            self.done = self.ranks

    def miss(self, text: str) -> int:
        """The rank of ``text`` from the native table, or -1 (a hit is kept
        in ``ranks``, so the next reader of the same text finds it there)."""
        nat = self._native  # (None once another thread completed the table)
        if nat is None:
            return self.ranks.get(text, -1)
        n: i64 = len(text)
        r = nat.find(text, 0, n, n, False)
        if r >= 0:
            self.ranks.setdefault(text, int(r))
        return r

    def pair_rank(self, s: str, a: i64, b: i64, c: i64) -> i64:
        """The rank of the merge of ``s[a:b]`` and ``s[b:c]``, or -1,
        looked up where the symbols lie (no merge text made) while the
        native table answers."""
        nat = self._native
        if nat is not None:
            return nat.find(s, a, b, c, True)
        return self.ranks.get(s[a:b] + " " + s[b:c], -1)

    def _finish(self, full: dict[str, int]) -> None:
        self.ranks = full
        self.done = full
        self.complete = True
        # the table and the bytes are no longer needed
        self._native = None
        self._merges = None

    def complete_all(self) -> None:
        """Rank every merge in the dict now (for displays and the trace,
        which look merges up by text; the encoder's lookups need only the
        native table)."""
        if self.complete:
            return
        with self._lock:
            merges = self._merges
        if merges is None:
            return
        # decoded by the array itself, which keeps the strings: the dict's
        # keys are then the same objects a display of the merges shows
        texts = merges.tolist()
        full = rank_dict(texts)
        with self._lock:
            if not self.complete:
                self._finish(full)

    def load_all(self) -> None:
        """:meth:`complete_all` (tests compare the result with :func:`rank_dict`)."""
        self.complete_all()


def rank_of(table: RankTable, ranks: dict[str, int], text: str) -> int:
    """The rank of merge text ``text`` in ``table`` (whose dict was
    ``ranks`` when the caller took it), or -1."""
    r = ranks.get(text, -1)
    if r < 0 and ranks is not table.done:
        r = table.miss(text)
    return r



def rank_dict(merges: Sequence[str]) -> dict[str, int]:
    """Merge text -> rank of decoded merges, the first of duplicates
    winning as in llama.cpp.

    Filled a slice at a time: one dict(zip(...)) over gemma-4's 515k merges
    is a single call that holds the GIL for ~200 ms, and a worker thread
    building it froze the GUI thread that long."""
    items = list(merges)
    n = len(items)
    r: dict[str, int] = {}
    for a in range(0, n, _SLICE):
        b = min(n, a + _SLICE)
        r.update(zip(items[a:b], range(a, b)))
        offer_gil()
    if len(r) != n:  # duplicates: a later one overwrote the first; redo backwards
        r = {}
        for b in range(n, 0, -_SLICE):
            a = max(0, b - _SLICE)
            r.update(zip(reversed(items[a:b]), range(b - 1, a - 1, -1)))
            offer_gil()
    return r


def merges_containing(merges: Sequence[str], sub: str) -> list[str]:
    """The merges whose text contains ``sub``, in rank order; from the raw
    bytes when undecoded (a search of the bytes, then a decode of the few
    merges it finds)."""
    raw = merges.raw() if isinstance(merges, StringArray) else None
    if raw is None:
        return [m for m in merges if sub in m]
    region, starts, end = raw
    needle = sub.encode("utf-8", "surrogateescape")
    if not needle:
        return list(merges)
    lo = int(starts[0]) if len(starts) else end
    if end - lo < len(needle):
        return []
    # bytes.find, from hit to hit, in the array's own bytes (the region
    # can hold the whole file). A vectorised pass (the needle's first byte
    # compared everywhere, then narrowed) made temporaries of the bytes'
    # size, faulted in page by page in a fresh process: gemma-4's 9 MB of
    # merges took 16-22 ms that way, 8 ms so
    found: list[int] = []
    at = region.find(needle, lo, end)
    while at >= 0:
        found.append(at)
        if len(found) % _SLICE == 0:
            offer_gil()  # (a hostile file can hold the needle everywhere)
        at = region.find(needle, at + 1, end)
    if not found:
        return []
    hits = np.array(found, dtype=np.int64)
    which: list[int] = distinct_sorted(np.searchsorted(starts, hits, side="right") - 1).tolist()
    out: list[str] = []
    for i in which:
        m = StringArray.decode_at(region, starts, end, i)
        # a hit can straddle a length prefix; the decoded text decides
        if sub in m:
            out.append(m)
    return out
