"""Open addressing for the plugins' native caches (compiled).

A cache that finds an entry by its key where the key lies in the text (the
BPE word cache by a word's bytes, the UGM chunk cache by a chunk's
characters) hashes the key natively and keeps its entries, keys and
values, in lists of its own; this is the index over them: a native vector
of slots, each ``hash << 32 | entry + 1`` (0: empty), at most half full,
doubled by placing every entry again from its stored hash. A hash is at
most 31 bits. The cache compares keys itself: :func:`next_match` from
``s = hash`` gives a slot holding an entry of that hash, :func:`entry_at`
its entry, and a key that differs goes on from the slot after.

An entry is stored (its key and value appended) before :func:`with_entry`
points a slot at it, and a grown index is a new vector, so a thread
reading the old lists and slots finishes on them.
"""

from __future__ import annotations

from typing import Final

from librt.vecs import vec
from mypy_extensions import i64

from .bytes_index import zeros64

FIRST_SLOTS: Final = 4096
_M32: Final = 0xFFFFFFFF


def next_match(slots: vec[i64], h: i64, s: i64) -> i64:
    """The first slot from ``s`` on (wrapping around) that holds an entry
    of hash ``h``, or -1 when an empty slot comes first or there are no
    slots. A lookup starts at ``s = h``."""
    size: i64 = len(slots)
    if size == 0:
        return -1
    mask = size - 1
    s = s & mask
    while True:
        e = slots[s]
        if e == 0:
            return -1
        if e >> 32 == h:
            return s
        s = (s + 1) & mask


def entry_at(slots: vec[i64], s: i64) -> i64:
    """The entry slot ``s`` points at."""
    return (slots[s] & _M32) - 1


def with_entry(slots: vec[i64], h: i64, j: i64) -> vec[i64]:
    """``slots`` with a slot pointing at entry ``j`` (hash ``h``), the
    entries before it ``0 .. j - 1``: the same vector, or a grown one
    when it would be more than half full."""
    if 2 * (j + 1) > len(slots):
        slots = _grown(slots)
    mask: i64 = len(slots) - 1
    s = h & mask
    while slots[s] != 0:
        s = (s + 1) & mask
    slots[s] = (h << 32) | (j + 1)
    return slots


def _grown(slots: vec[i64]) -> vec[i64]:
    """Twice the slots (at first :data:`FIRST_SLOTS`), every entry placed
    again from its stored hash."""
    size: i64 = 2 * len(slots) if len(slots) else FIRST_SLOTS
    out = zeros64(size)
    mask = size - 1
    for e in slots:
        if e != 0:
            s = (e >> 32) & mask
            while out[s] != 0:
                s = (s + 1) & mask
            out[s] = e
    return out
