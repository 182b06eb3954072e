"""Merge ranks of a BPE vocabulary, loaded a bucket at a time.

Ranks are looked up by merge text (``"left right"``, see ``bpe.py``) in a
dict. Made at once for gemma-4's 515k merges, that dict took ~110 ms on top
of ~110 ms to decode the merges, twice what the rest of opening the file
costs, while a short text needs a few hundred of them. When the merges come
undecoded from the file (a :class:`StringArray`), they are grouped instead
by a hash of their first :data:`KEY_BYTES` bytes; a lookup that misses in a
group not loaded yet decodes that group's merges into the dict and looks
again. Equal texts have equal bytes (decoding with ``surrogateescape``
round-trips), hence the same group, so a miss after loading means what a
miss in the full dict meant. Within a group the merges are added in rank
order and only where absent: the first of duplicates wins, as in llama.cpp.
"""

from __future__ import annotations

import threading
from typing import Final, Optional, Sequence

import numpy as np
from librt.strings import read_i64_le
from librt.vecs import append, vec
from mypy_extensions import i64

from tokenprism.core.plugin_api import STEP, StringArray, distinct_sorted, offer_gil

KEY_BYTES: Final = 6
"""Bytes of a merge's text that choose its bucket: enough to keep apart
``"\u2581th"`` and ``"\u2581to"`` (three bytes of escaped space, then
letters), which one byte-level or escaped-space prefix would lump together
as a third of all merges."""
_KEY_MASK: Final = (1 << (8 * KEY_BYTES)) - 1
BUCKETS: Final = 65521  # a prime: key % BUCKETS mixes every byte of the key
_SLICE = 65536


def text_bucket(text: str) -> i64:
    """The bucket of a merge text (:func:`bucket_of`) from its bytes as
    ``surrogateescape`` encodes them; -1 when no decoded merge can have
    this text (a surrogate the decoder never makes).

    The bytes are worked out from the code points: this runs on every
    rank lookup that misses until all buckets are loaded, and encoding a
    slice of the text cost several times more."""
    # native i64 throughout (a tagged int checked every step cost half
    # of it): the key is 48 bits, the tail 16, the hash stays below 2**53
    key: i64 = 0
    nb: i64 = 0
    total: i64 = 0
    tail: i64 = 0
    n: i64 = len(text)
    i: i64 = 0
    while i < n:
        c: i64 = ord(text[i])
        i += 1
        if c < 0x80:
            # ASCII, most merge text: one byte
            total += 1
            tail = (tail >> 8) | (c << 8)
            if nb < KEY_BYTES:
                key |= c << (8 * nb)
                nb += 1
            continue
        enc: i64 = 0
        width: i64 = 0
        if c < 0x800:
            enc = (0xC0 | (c >> 6)) | ((0x80 | (c & 0x3F)) << 8)
            width = 2
        elif 0xD800 <= c < 0xE000:
            if not 0xDC80 <= c < 0xDD00:
                return -1
            enc = c - 0xDC00  # an undecodable byte, given back as itself
            width = 1
        elif c < 0x10000:
            enc = (0xE0 | (c >> 12)) | ((0x80 | ((c >> 6) & 0x3F)) << 8) | ((0x80 | (c & 0x3F)) << 16)
            width = 3
        else:
            enc = ((0xF0 | (c >> 18)) | ((0x80 | ((c >> 12) & 0x3F)) << 8) | ((0x80 | ((c >> 6) & 0x3F)) << 16)
                   | ((0x80 | (c & 0x3F)) << 24))
            width = 4
        total += width
        # the last two bytes, the later one high
        k: i64 = 0
        while k < width:
            tail = (tail >> 8) | (((enc >> (8 * k)) & 0xFF) << 8)
            k += 1
        if nb < KEY_BYTES:
            w = width
            e = enc
            if nb + w > KEY_BYTES:
                w = KEY_BYTES - nb
                e &= (i64(1) << (8 * w)) - 1
            key |= e << (8 * nb)
            nb += w
    return bucket_of(key, nb, tail, total)


def bucket_of(head: i64, nb: i64, tail: i64, total: i64) -> i64:
    """The bucket of a merge text whose UTF-8 bytes start with ``nb`` (at
    most :data:`KEY_BYTES`) bytes ``head`` (little-endian), end with the
    bytes of ``tail`` (the last one high; one byte: ``tail`` is that
    byte << 8) and number ``total``. The first bytes alone made buckets of
    hundreds of merges for common starts (gemma-4's ``"\u2581"`` + two
    letters), and a first encode decoded a quarter of all merges to find
    a few thousand; with the last bytes and the length in the hash, a
    bucket holds the merges that share all three."""
    h = (head | (nb << 48)) ^ (tail * 0x9E3779B1) ^ (min(total, 0xFFFF) * 0x85EBCA77)
    return h % BUCKETS


def bucket_keys(region: bytes, starts: np.ndarray, ends: np.ndarray) -> np.ndarray:
    """:func:`text_bucket` of every string of a :class:`StringArray`, from
    its bytes (the same hash: eight bytes of each string read as one
    word). A native loop: numpy's gather of each string's eight bytes
    (a fancy index into a sliding window view) took ~170 instructions a
    string, this ~30."""
    return _keys(region, _int_bytes(starts), _int_bytes(ends), 0, len(starts))


def _keys(region: bytes, sb: bytes, eb: bytes, shift: i64, n: i64) -> np.ndarray:
    """:func:`bucket_keys` of ``n`` strings whose starts are the int64s of
    ``sb`` and whose ends are those of ``eb`` from the ``shift``-th on (the
    rank table passes its starts, with the array's end appended, as
    both: no array of ends is made)."""
    size: i64 = len(region)
    out = vec[i64](capacity=n)
    i: i64 = 0
    while i < n:
        first: i64 = read_i64_le(sb, 8 * i) + 8
        end: i64 = read_i64_le(eb, 8 * (i + shift))
        total: i64 = end - first
        length: i64 = total
        if length > KEY_BYTES:
            length = KEY_BYTES
        if first + 8 <= size:
            # (not (1 << 8 * length) - 1: mypyc shifts the literal 1 as a
            # 32-bit C int)
            mask: i64 = _KEY_MASK >> (8 * (KEY_BYTES - length))
            head: i64 = read_i64_le(region, first) & mask
            # the string's last two bytes (the word before them is the
            # string's own length prefix at worst: end - 8 >= start)
            tail: i64 = (read_i64_le(region, end - 8) >> 48) & 0xFFFF
            if total < 2:
                tail = tail & 0xFF00 if total == 1 else 0
            h: i64 = (head | (length << 48)) ^ (tail * 0x9E3779B1) ^ (min(total, 0xFFFF) * 0x85EBCA77)
            out = append(out, h % BUCKETS)
        else:
            # a word running past the region's end: from the text
            out = append(out, text_bucket(region[first:end].decode("utf-8", "surrogateescape")))
        i += 1
    return np.frombuffer(memoryview(out), dtype=np.int64)


class RankTable:
    """Merge text -> rank of a vocabulary's merges (see the module doc).

    Readers take ``ranks`` and look up in it; one that misses calls
    :func:`rank_of`, which loads the text's bucket if needed. Several
    threads may encode with one tokenizer: loads take a lock, a dict read
    needs none. ``ranks`` only grows, except that :meth:`complete_all`
    swaps in the full dict (built at once, which is faster than loading
    every bucket); ``done`` is that full dict, once there is one, so a
    reader still holding the partial dict knows to look again."""

    ranks: dict[str, int]
    done: Optional[dict[str, int]]
    complete: bool

    def __init__(self, merges: Sequence[str]) -> None:
        self.ranks = {}
        self.done = None
        self.complete = True
        self._lock = threading.Lock()
        self._region = b""
        self._merges: Optional[StringArray] = None
        # little-endian int64s in bytes, read natively (read_i64_le): 515k
        # ints as objects took 40 MB, numpy's per-call overhead on a
        # bucket's slice cost more than decoding its 8 merges on average,
        # and an array.array's items are read through the generic
        # subscript, a boxed int each (~700 instructions a merge loaded)
        self._starts = b""
        self._order = b""
        self._bounds = b""
        # per bucket, 1 once its merges are in the dict (a set of the
        # empty ones cost more to make than the rest of the index)
        self._loaded = bytearray()
        self._pending = 0
        raw = None
        if isinstance(merges, StringArray) and len(merges) > 0:
            raw = merges.raw()
            if raw is not None:
                self._index(merges, raw[0], raw[1], raw[2])
        if raw is None:
            self.ranks = rank_dict(merges)
        if self.complete:
            self.done = self.ranks

    def _index(self, merges: StringArray, region: bytes, starts: np.ndarray, end: int) -> None:
        # so that string i ends where string i + 1 starts
        sb = _int_bytes(np.append(starts, end))
        keys = _keys(region, sb, sb, 1, len(starts))
        counts = np.bincount(keys, minlength=BUCKETS)
        bounds = np.zeros(BUCKETS + 1, dtype=np.int64)
        np.cumsum(counts, out=bounds[1:])
        # stable: each bucket lists its merges in rank order
        self._order = _int_bytes(np.argsort(keys.astype(np.uint16), kind="stable"))
        self._bounds = _int_bytes(bounds)
        self._region = region
        self._merges = merges
        self._starts = sb
        # (an empty bucket counts as loaded)
        self._loaded = bytearray((counts == 0).astype(np.uint8).tobytes())
        self._pending = int(np.count_nonzero(counts))
        self.complete = self._pending == 0

    def miss(self, text: str) -> int:
        """The rank of ``text`` once its bucket is loaded, or -1."""
        if self.complete:
            return self.ranks.get(text, -1)
        b = text_bucket(text)
        loaded = self._loaded  # (emptied when another thread completes the table)
        if b < 0 or (b < len(loaded) and loaded[b]):
            return -1
        with self._lock:
            if not self.complete and not self._loaded[b]:
                self._load(b)
        return self.ranks.get(text, -1)

    def _load(self, b: int) -> None:
        order = self._order
        starts = self._starts
        region = self._region
        ranks = self.ranks
        step: i64 = STEP  # (a global of another module: looked up by name each time)
        j: i64 = read_i64_le(self._bounds, 8 * b)
        stop: i64 = read_i64_le(self._bounds, 8 * b + 8)
        while j < stop:
            if j % step == step - 1:
                offer_gil()  # only a hostile file makes a bucket this big
            i: i64 = read_i64_le(order, 8 * j)
            raw = region[read_i64_le(starts, 8 * i) + 8:read_i64_le(starts, 8 * i + 8)]
            try:
                # the strict decoder's fast path: the same text whenever it
                # succeeds (naming an error handler takes the slow codec
                # lookup, ~1000 instructions a merge)
                m = raw.decode()
            except UnicodeDecodeError:
                m = raw.decode("utf-8", "surrogateescape")
            # the first of duplicates wins
            ranks.setdefault(m, int(i))
            j += 1
        self._loaded[b] = 1
        self._pending -= 1
        if self._pending == 0:
            self._finish(self.ranks)

    def _finish(self, full: dict[str, int]) -> None:
        self.ranks = full
        self.done = full
        self.complete = True
        # the index and the bytes are no longer needed
        self._order = b""
        self._starts = b""
        self._bounds = b""
        self._region = b""
        self._merges = None
        self._loaded = bytearray()

    def complete_all(self) -> None:
        """Rank every merge now. Decoding all merges in one pass and
        building a new dict (outside the lock, offering the GIL) is several
        times faster than loading the buckets one by one, whose merges lie
        all over the file's bytes."""
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
        """Load every bucket (tests compare the result with :func:`rank_dict`)."""
        with self._lock:
            for b in range(BUCKETS):
                if self.complete:
                    return
                if not self._loaded[b]:
                    self._load(b)


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
