"""Merge ranks of a BPE vocabulary: a native hash table over the merges'
undecoded bytes.

Ranks are looked up by merge text (``"left right"``, see ``bpe.py``). Made
as a dict, gemma-4's 515k merges cost ~110 ms to decode and ~110 ms to
insert, and even filled a bucket at a time (the merges grouped by a hash
of their first bytes, a group decoded on its first miss) the grouping and
the decoding of what a first 0.11 MB text needs were 100M instructions of
llama-bpe's 336M first encode. When the merges come undecoded from the
file (a :class:`StringArray`), this table is made instead in one compiled
pass over their bytes: each merge's bytes are hashed eight at a time
(:func:`bytes_hash`) into an open-addressing vector of ``hash << 31 |
rank + 1``, no ``str`` made (llama-bpe: ~15M instructions). A lookup
hashes the text's code points as the UTF-8 bytes ``surrogateescape``
would give (:func:`text_hash`, the same hash: equal texts have equal
bytes, decoding with ``surrogateescape`` round-trips), and a merge whose
hash matches is decoded and compared with the text, so a text that only
encodes to a merge's bytes (escaped bytes spelling valid UTF-8) is no
match. Merges go in in rank order and only where no equal one is: the
first of duplicates wins, as in llama.cpp.

The pure-Python build ranks every merge in a dict at once (hashing byte
by byte in the interpreter is slower than decoding them all).
"""

from __future__ import annotations

import threading
from typing import Final, Iterable, Optional, Sequence, cast, final

import numpy as np
from librt.strings import read_i64_le
from librt.vecs import vec
from mypy_extensions import i64

from tokenprism.core.plugin_api import StringArray, distinct_sorted, offer_gil

NATIVE_TABLES: Final = not __file__.endswith(".py")
"""Whether this module is compiled (see the module doc)."""
_M32: Final = 0xFFFFFFFF
_MUL: Final = 0x5BD1E995  # below 2**31: a 32-bit value times it stays below 2**63
_RANK_BITS: Final = 31
_RANK_MASK: Final = (1 << 31) - 1
_SLICE = 65536


def _step(h: i64, x: i64) -> i64:
    """The hash ``h`` (32 bits) with the 32-bit value ``x`` mixed in."""
    t = (h ^ x) * _MUL
    return (t ^ (t >> 29)) & _M32


_LOW7: Final = (1 << 56) - 1
"""Seven low bytes: shifted down for fewer (mypyc shifts a literal 1, even
``i64(1)``, as a 32-bit C int)."""


def bytes_hash(region: bytes, pos: i64, n: i64, size: i64) -> i64:
    """The 32-bit hash of the ``n`` bytes at ``pos`` of ``region`` (of
    ``size`` bytes): each eight bytes (the last ones padded with zeros) as
    two little-endian halves, then ``n`` (:func:`_step`, written out here:
    this runs once per merge and per piece). Words are read whole; the
    last one may run on into the next string's length prefix (masked
    off), or, at the very end of the region, is gathered byte by byte."""
    h: i64 = 0
    t: i64 = 0
    end = pos + n
    while pos + 8 <= end:
        w = read_i64_le(region, pos)
        t = (h ^ (w & _M32)) * _MUL
        h = (t ^ (t >> 29)) & _M32
        t = (h ^ ((w >> 32) & _M32)) * _MUL
        h = (t ^ (t >> 29)) & _M32
        pos += 8
    r = end - pos
    if r > 0:
        w = 0
        if pos + 8 <= size:
            w = read_i64_le(region, pos) & (_LOW7 >> (8 * (7 - r)))
        else:
            k: i64 = 0
            while k < r:
                w |= i64(region[pos + k]) << (8 * k)
                k += 1
        t = (h ^ (w & _M32)) * _MUL
        h = (t ^ (t >> 29)) & _M32
        t = (h ^ ((w >> 32) & _M32)) * _MUL
        h = (t ^ (t >> 29)) & _M32
    t = (h ^ n) * _MUL
    return (t ^ (t >> 29)) & _M32


def text_hash(s: str, a: i64, b: i64, c: i64, space: bool) -> i64:
    """:func:`bytes_hash` of the bytes ``surrogateescape`` encodes
    ``s[a:b]`` to, then a space if ``space``, then ``s[b:c]`` (a pair's
    merge text hashed where it lies: no slices, no concatenation); -1 when
    no decoded merge can hold it (a surrogate the decoder never makes)."""
    h: i64 = 0
    lo: i64 = 0
    hi: i64 = 0
    p: i64 = 0  # bytes in lo, hi
    total: i64 = 0
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
        enc: i64 = cp
        width: i64 = 1
        if cp >= 0x80:
            if cp < 0x800:
                enc = (0xC0 | (cp >> 6)) | ((0x80 | (cp & 0x3F)) << 8)
                width = 2
            elif 0xD800 <= cp < 0xE000:
                if not 0xDC80 <= cp < 0xDD00:
                    return -1
                enc = cp - 0xDC00  # an undecodable byte, given back as itself
            elif cp < 0x10000:
                enc = (0xE0 | (cp >> 12)) | ((0x80 | ((cp >> 6) & 0x3F)) << 8) | ((0x80 | (cp & 0x3F)) << 16)
                width = 3
            else:
                enc = ((0xF0 | (cp >> 18)) | ((0x80 | ((cp >> 12) & 0x3F)) << 8)
                       | ((0x80 | ((cp >> 6) & 0x3F)) << 16) | ((0x80 | (cp & 0x3F)) << 24))
                width = 4
        total += width
        k: i64 = 0
        while k < width:
            byte = (enc >> (8 * k)) & 0xFF
            if p < 4:
                lo |= byte << (8 * p)
            else:
                hi |= byte << (8 * (p - 4))
            p += 1
            if p == 8:
                h = _step(_step(h, lo), hi)
                lo = 0
                hi = 0
                p = 0
            k += 1
    if p > 0:
        h = _step(_step(h, lo), hi)
    return _step(h, total)


def _decode(raw: bytes) -> str:
    try:
        # the strict decoder's fast path: the same text whenever it
        # succeeds (naming an error handler takes the slow codec lookup)
        return raw.decode()
    except UnicodeDecodeError:
        return raw.decode("utf-8", "surrogateescape")


@final
class BytesIndex:
    """Text -> index of the strings of an undecoded :class:`StringArray`
    (see the module doc): merge text -> rank, the first of duplicates
    winning, or, made with ``pieces``, piece text -> id as the
    vocabulary's piece index answers (the last of duplicates wins, empty
    pieces are left out). Never changed once made: threads read it
    without a lock."""

    def __init__(self, region: bytes, starts: np.ndarray, end: int, pieces: bool) -> None:
        n: i64 = len(starts)
        # string i's bytes run from its prefix + 8 to string i + 1's prefix
        self.bounds = _int_bytes(np.append(starts, end))
        self.region = region
        size: i64 = 16
        while size < n + (n >> 1):
            size *= 2
        self.mask: i64 = size - 1
        # zeros copied in from a buffer at once (appended one by one, they
        # were a third of the table's cost; a vec made with a capacity is
        # zeroed too, then copied into)
        self.slots = vec[i64](cast(Iterable[i64], np.zeros(size, dtype=np.int64)))
        self._fill(n, pieces)

    def _fill(self, n: i64, pieces: bool) -> None:
        region = self.region
        size: i64 = len(region)
        bounds = self.bounds
        slots = self.slots
        mask = self.mask
        i: i64 = 0
        while i < n:
            a = read_i64_le(bounds, 8 * i) + 8
            e = read_i64_le(bounds, 8 * i + 8)
            if e > a or not pieces:
                h = bytes_hash(region, a, e - a, size)
                s = h & mask
                while True:
                    v = slots[s]
                    if v == 0:
                        slots[s] = (h << _RANK_BITS) | (i + 1)
                        break
                    if v >> _RANK_BITS == h and self._same_bytes((v & _RANK_MASK) - 1, a, e):
                        if pieces:
                            slots[s] = (h << _RANK_BITS) | (i + 1)
                        break
                    s = (s + 1) & mask
            i += 1
            if i & 0x3FFF == 0:
                offer_gil()  # built when the first text needs it, maybe in a worker

    def get(self, s: str, start: i64, end: i64) -> i64:
        """The index of the string ``s[start:end]``, or -1."""
        return self.find(s, start, end, end, False)

    def find_text(self, text: str) -> i64:
        """The index of the string ``text``, or -1."""
        n: i64 = len(text)
        return self.find(text, 0, n, n, False)

    def _same_bytes(self, j: i64, a: i64, e: i64) -> bool:
        bounds = self.bounds
        ja = read_i64_le(bounds, 8 * j) + 8
        je = read_i64_le(bounds, 8 * j + 8)
        return je - ja == e - a and self.region[ja:je] == self.region[a:e]

    def find(self, s: str, a: i64, b: i64, c: i64, space: bool) -> i64:
        """The index of the string ``s[a:b] + " " + s[b:c]`` (``space``)
        or ``s[a:c]``, or -1."""
        h = text_hash(s, a, b, c, space)
        if h < 0:
            return -1
        slots = self.slots
        mask = self.mask
        p = h & mask
        while True:
            v = slots[p]
            if v == 0:
                return -1
            if v >> _RANK_BITS == h:
                j = (v & _RANK_MASK) - 1
                if self._holds(j, s, a, b, c, space):
                    return j
            p = (p + 1) & mask

    def _holds(self, j: i64, s: str, a: i64, b: i64, c: i64, space: bool) -> bool:
        """Whether string ``j``, decoded as the array decodes it, is the text."""
        bounds = self.bounds
        m = _decode(self.region[read_i64_le(bounds, 8 * j) + 8:read_i64_le(bounds, 8 * j + 8)])
        if len(m) != c - a + (1 if space else 0):
            return False
        k: i64 = 0
        x = a
        while x < b:
            if ord(m[k]) != ord(s[x]):
                return False
            k += 1
            x += 1
        if space:
            if ord(m[k]) != 0x20:
                return False
            k += 1
        while x < c:
            if ord(m[k]) != ord(s[x]):
                return False
            k += 1
            x += 1
        return True


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
                if NATIVE_TABLES:
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


def _int_bytes(values: np.ndarray) -> bytes:
    return values.astype("<i8", copy=False).tobytes()


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
    # positions of the needle's first byte, narrowed byte by byte: one
    # vectorised pass instead of bytes.find, slow on gemma-4's 9 MB of
    # merges where a space (the needle's start) is in every line; only
    # the array's own bytes (the region can hold the whole file)
    buf = np.frombuffer(region, dtype=np.uint8, count=end, offset=0)
    hits = np.flatnonzero(buf[lo:end - len(needle) + 1] == needle[0]) + lo
    for k in range(1, len(needle)):
        hits = hits[buf[hits + k] == needle[k]]
    if len(hits) == 0:
        return []
    which: list[int] = distinct_sorted(np.searchsorted(starts, hits, side="right") - 1).tolist()
    out: list[str] = []
    for i in which:
        m = StringArray.decode_at(region, starts, end, i)
        # a hit can straddle a length prefix; the decoded text decides
        if sub in m:
            out.append(m)
    return out
