"""A cache of one int per pair of token ids, for the merge loops of the
SPM and BPE plugins (compiled; plugins reach it through ``plugin_api``).

Two tokens spell one pair text (piece texts are distinct), so what a merge
loop looks up by the pair's text (its token, its merge rank) can be kept
by the two ids instead: a hit costs no slicing, hashing or lookup of a
string. The cache is direct-mapped (a clash evicts the older pair) and a
slot is one int, ``key << bits | value + 2`` (0: empty), written in one store: a
thread never reads one pair's key with another pair's value, so several
threads may share a cache without a lock. The slots are a native int64
vector: a list of ints made an int object per store and cost a second
cache miss (the object) per lookup.
"""

from __future__ import annotations

from typing import Final, final

from librt.vecs import vec
from mypy_extensions import i64

from .bytes_index import zeros64
from .piece_codes import PieceIndex

MISS: Final = -2
"""What :meth:`PairCache.get` gives for a pair it does not hold."""
SLOTS: Final = 1 << 15  # 256 KB of slots, a few times the pairs a text of one language meets


@final
class PairCache:
    """Values from -1 to ``top`` for pairs of token ids below ``n_tokens``."""

    def __init__(self, n_tokens: int, top: int) -> None:
        self.n_tokens: i64 = n_tokens
        self.bits: i64 = (top + 3).bit_length()
        self.slots = vec[i64]()  # made on first use

    def get(self, lid: i64, rid: i64) -> i64:
        """The value kept for the pair (``lid``, ``rid``), or :data:`MISS`."""
        slots = self.slots
        if len(slots) == 0:
            return MISS
        e = slots[(lid * 1031 + rid) & (SLOTS - 1)]
        bits = self.bits
        if e == 0 or e >> bits != lid * self.n_tokens + rid:
            return MISS
        return (e & ((1 << bits) - 1)) - 2

    def joined(self, index: PieceIndex, text: str, start: i64, end: i64, lid: i64, rid: i64) -> i64:
        """The token of ``text[start:end]``, the join of two symbols whose
        tokens are ``lid`` and ``rid`` (-1: not a token), or -1: looked up
        in ``index`` and kept here by the two ids when both are tokens.
        The SPM and BPE merge loops ask this for every pair they meet."""
        if lid < 0 or rid < 0:
            return index.get(text, start, end)
        t = self.get(lid, rid)
        if t == MISS:
            t = index.get(text, start, end)
            self.put(lid, rid, t)
        return t

    def put(self, lid: i64, rid: i64, value: i64) -> None:
        slots = self.slots
        if len(slots) == 0:
            slots = zeros64(SLOTS)  # (copied in from a run of zeros: see there)
            self.slots = slots
        slots[(lid * 1031 + rid) & (SLOTS - 1)] = ((lid * self.n_tokens + rid) << self.bits) | (value + 2)
