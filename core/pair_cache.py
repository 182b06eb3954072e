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

The slots start few and grow as pairs are stored: a short text (the
command line's "Hello") stores a handful, and the full 256 KB of slots,
zeroed, was 64 fresh pages, ~0.2 ms on a virtual machine, before its
first merge.
"""

from __future__ import annotations

from typing import Final, final

from librt.vecs import vec
from mypy_extensions import i64

from .bytes_index import PieceFinder, zeros64

MISS: Final = -2
"""What :meth:`PairCache.get` gives for a pair it does not hold."""
SLOTS: Final = 1 << 15  # 256 KB of slots at most, a few times the pairs a text of one language meets
FIRST_SLOTS: Final = 1 << 9  # 4 KB: one page


@final
class PairCache:
    """Values from -1 to ``top`` for pairs of token ids below ``n_tokens``."""

    def __init__(self, n_tokens: int, top: int) -> None:
        self.n_tokens: i64 = n_tokens
        self.bits: i64 = (top + 3).bit_length()
        self.slots = vec[i64]()  # made on first use
        self.stored: i64 = 0  # stores since the slots were last made

    def get(self, lid: i64, rid: i64) -> i64:
        """The value kept for the pair (``lid``, ``rid``), or :data:`MISS`."""
        # (the mask comes from the vector read here: another thread may
        # swap in grown slots between two reads of the attribute)
        slots = self.slots
        if len(slots) == 0:
            return MISS
        e = slots[(lid * 1031 + rid) & (len(slots) - 1)]
        bits = self.bits
        if e == 0 or e >> bits != lid * self.n_tokens + rid:
            return MISS
        return (e & ((1 << bits) - 1)) - 2

    def joined(self, index: PieceFinder, text: str, start: i64, end: i64, lid: i64, rid: i64) -> i64:
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
        if len(slots) < SLOTS:
            # twice as many stores as slots: eight times the slots
            if len(slots) == 0 or self.stored >= 2 * len(slots):
                slots = self._grown(slots)
            self.stored += 1
        slots[(lid * 1031 + rid) & (len(slots) - 1)] = ((lid * self.n_tokens + rid) << self.bits) | (value + 2)

    def _grown(self, old: vec[i64]) -> vec[i64]:
        """New slots, :data:`FIRST_SLOTS` or eight times ``old``'s (at most
        :data:`SLOTS`), holding ``old``'s pairs (a clash keeps either)."""
        size: i64 = FIRST_SLOTS if len(old) == 0 else min(8 * len(old), SLOTS)
        slots = zeros64(size)  # (copied in from a run of zeros: see there)
        n = self.n_tokens
        bits = self.bits
        i: i64 = 0
        while i < len(old):
            e = old[i]
            if e != 0:
                key = e >> bits
                slots[((key // n) * 1031 + key % n) & (size - 1)] = e
            i += 1
        self.slots = slots
        self.stored = 0
        return slots
