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
from typing import Sequence

import numpy as np

# (the ignores are for running mypy on the source tree, where the
# ``tokenprism`` namespace only exists once installed)
from tokenprism.core.gil import STEP, offer_gil  # type: ignore[import-not-found, unused-ignore]
from tokenprism.core.string_array import StringArray  # type: ignore[import-not-found, unused-ignore]

KEY_BYTES = 6
"""Bytes of a merge's text that choose its bucket: enough to keep apart
``"\u2581th"`` and ``"\u2581to"`` (three bytes of escaped space, then
letters), which one byte-level or escaped-space prefix would lump together
as a third of all merges."""
BUCKETS = 1 << 16
_GOLDEN = 0x9E3779B97F4A7C15  # Fibonacci hashing: the top bits of key * this spread well
_M64 = (1 << 64) - 1
# the low ``k`` bytes of a 64-bit word, k = 0..KEY_BYTES
_MASKS = np.array([(1 << (8 * k)) - 1 for k in range(KEY_BYTES + 1)], dtype=np.uint64)
_SLICE = 65536


def text_bucket(text: str) -> int:
    """The bucket of a merge text; -1 when no decoded merge can have this
    text (a surrogate that ``surrogateescape`` does not produce)."""
    try:
        head = text[:KEY_BYTES].encode("utf-8", "surrogateescape")[:KEY_BYTES]
    except UnicodeEncodeError:
        return -1
    # the first bytes, little-endian, and how many there are (for texts
    # shorter than the key)
    key = int.from_bytes(head, "little") | (len(head) << 48)
    return ((key * _GOLDEN) & _M64) >> 48


def bucket_keys(region: bytes, starts: np.ndarray, ends: np.ndarray) -> np.ndarray:
    """:func:`text_bucket` of every string of a :class:`StringArray`, from
    its bytes (the same hash, vectorised: eight bytes of each string read
    as one word)."""
    n = len(starts)
    if n == 0:
        return np.zeros(0, dtype=np.int64)
    buf = np.frombuffer(region, dtype=np.uint8)
    first = starts + 8
    # the last string's word may run past the region: it is hashed on its
    # own below (padding a copy of the region would cost more)
    full = n - 1 if int(first[-1]) + 8 > len(buf) else n
    words = np.lib.stride_tricks.sliding_window_view(buf, 8)[first[:full]].view("<u8").ravel()
    length = np.minimum(ends[:full] - first[:full], KEY_BYTES)
    key = (words & _MASKS[length]) | (length.astype(np.uint64) << np.uint64(48))
    out = np.empty(n, dtype=np.int64)
    out[:full] = (key * np.uint64(_GOLDEN)) >> np.uint64(48)
    if full < n:
        last = region[int(first[-1]):int(ends[-1])].decode("utf-8", "surrogateescape")
        out[-1] = text_bucket(last)
    return out


class RankTable:
    """Merge text -> rank of a vocabulary's merges (see the module doc).

    ``ranks`` only grows; a reader that misses calls :meth:`miss`, which
    loads the text's bucket if needed (several threads may encode with one
    tokenizer: loads take a lock; a dict read needs none)."""

    ranks: dict[str, int]
    complete: bool

    def __init__(self, merges: Sequence[str]) -> None:
        self.ranks = {}
        self.complete = True
        self._lock = threading.Lock()
        self._region = b""
        self._merge_starts = np.zeros(0, dtype=np.int64)
        self._merge_ends = np.zeros(0, dtype=np.int64)
        self._order = np.zeros(0, dtype=np.int64)
        self._bounds = np.zeros(1, dtype=np.int64)
        self._loaded = bytearray()
        self._pending = 0
        if isinstance(merges, StringArray) and not merges.decoded() and len(merges) > 0:
            self._index(merges)
        else:
            self.ranks = rank_dict(merges)

    def _index(self, merges: StringArray) -> None:
        starts = merges.starts
        ends = merges.ends()
        keys = bucket_keys(merges.region, starts, ends)
        counts = np.bincount(keys, minlength=BUCKETS)
        bounds = np.zeros(BUCKETS + 1, dtype=np.int64)
        np.cumsum(counts, out=bounds[1:])
        # stable: each bucket lists its merges in rank order
        self._order = np.argsort(keys.astype(np.uint16), kind="stable")
        self._bounds = bounds
        self._region = merges.region
        self._merge_starts = starts
        self._merge_ends = ends
        self._loaded = bytearray((counts == 0).astype(np.uint8).tobytes())
        self._pending = int(np.count_nonzero(counts))
        self.complete = self._pending == 0

    def miss(self, text: str) -> int:
        """The rank of ``text`` once its bucket is loaded, or -1."""
        if self.complete:
            return -1
        b = text_bucket(text)
        if b < 0 or self._loaded[b]:
            return -1
        with self._lock:
            if not self._loaded[b]:
                self._load(b)
        return self.ranks.get(text, -1)

    def _load(self, b: int) -> None:
        idx = self._order[int(self._bounds[b]):int(self._bounds[b + 1])]
        order: list[int] = idx.tolist()
        starts: list[int] = self._merge_starts[idx].tolist()
        ends: list[int] = self._merge_ends[idx].tolist()
        region = self._region
        ranks = self.ranks
        for j in range(len(order)):
            if j % STEP == STEP - 1:
                offer_gil()  # only a hostile file makes a bucket this big
            m = region[starts[j] + 8:ends[j]].decode("utf-8", "surrogateescape")
            if m not in ranks:
                ranks[m] = order[j]
        self._loaded[b] = 1
        self._pending -= 1
        if self._pending == 0:
            self.complete = True

    def load_all(self) -> None:
        """Load every bucket (tests compare the result with :func:`rank_dict`)."""
        with self._lock:
            for b in range(BUCKETS):
                if not self._loaded[b]:
                    self._load(b)


def rank_of(table: RankTable, ranks: dict[str, int], text: str) -> int:
    """The rank of merge text ``text`` in ``table`` (whose dict is
    ``ranks``), or -1."""
    r = ranks.get(text, -1)
    if r < 0 and not table.complete:
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
    if not isinstance(merges, StringArray) or merges.decoded():
        return [m for m in merges if sub in m]
    starts = merges.starts
    needle = sub.encode("utf-8", "surrogateescape")
    if not needle:
        return list(merges)
    if len(merges.region) < len(needle):
        return []
    # positions of the needle's first byte, narrowed byte by byte: one
    # vectorised pass instead of bytes.find, slow on gemma-4's 9 MB of
    # merges where a space (the needle's start) is in every line
    buf = np.frombuffer(merges.region, dtype=np.uint8)
    hits = np.flatnonzero(buf[:len(buf) - len(needle) + 1] == needle[0])
    for k in range(1, len(needle)):
        hits = hits[buf[hits + k] == needle[k]]
    if len(hits) == 0:
        return []
    which: list[int] = np.unique(np.searchsorted(starts, hits, side="right") - 1).tolist()
    out: list[str] = []
    for i in which:
        m = merges.decode_one(i)
        # a hit can straddle a length prefix; the decoded text decides
        if sub in m:
            out.append(m)
    return out
