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

:class:`TextCache` is that index with ``str`` keys and a value each (UGM's
chunk paths, WPM's chunks), hashed by :func:`text_hash`, or by
:func:`chunk_end` in the scan that finds a chunk's end.
"""

from __future__ import annotations

from typing import Final, Generic, Optional, TypeVar, final

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


_MUL: Final = 0x5BD1E995  # below 2**31: a 32-bit value times it stays below 2**63


def text_hash(s: str, a: i64, b: i64) -> i64:
    """A 31-bit hash of the code points of ``s[a:b]``, as :class:`TextCache`
    takes it (and :func:`chunk_end` gives it)."""
    h: i64 = 0
    x = a
    while x < b:
        t = (h ^ ord(s[x])) * _MUL
        h = (t ^ (t >> 29)) & _M32
        x += 1
    return h >> 1


def chunk_end(text: str, a: i64, n: i64) -> tuple[i64, i64]:
    """The end of the chunk starting at ``text[a]`` (the next space, or
    ``n``) and its :func:`text_hash`, in one scan (a chunk is a few
    characters: ``str.find`` and a second pass cost more)."""
    h: i64 = 0
    x = a
    while x < n:
        c: i64 = ord(text[x])
        if c == 32:
            break
        t = (h ^ c) * _MUL
        h = (t ^ (t >> 29)) & _M32
        x += 1
    return x, h >> 1


V = TypeVar("V")


@final
class _Kept(Generic[V]):
    """One generation of a :class:`TextCache`: keys and values at the same
    numbers, the slots over the keys."""

    def __init__(self) -> None:
        self.keys: list[str] = []
        self.values: list[V] = []
        self.slots = vec[i64]()  # made on the first key


@final
class TextCache(Generic[V]):
    """Text -> value for a cache whose keys are found where they lie in a
    longer text (a chunk between spaces: UGM's chunk paths, WPM's chunks),
    at most ``limit`` keys, then emptied.

    Keys and values sit in lists at the same numbers, the slots over the
    keys (:func:`with_entry`). The three are one generation: emptying puts
    a new one in place in one store, so a reader holding the old one
    finishes on it and never pairs a number from one generation with the
    other's values; a value and its key are appended before a slot points
    at them."""

    def __init__(self, limit: i64) -> None:
        self.limit = limit
        self._kept: _Kept[V] = _Kept()

    def __len__(self) -> int:
        return len(self._kept.keys)

    @property
    def keys(self) -> list[str]:
        return self._kept.keys

    @property
    def values(self) -> list[V]:
        return self._kept.values

    def clear(self) -> None:
        self._kept = _Kept()

    def find(self, text: str, a: i64, b: i64, h: i64) -> Optional[V]:
        """The value kept for ``text[a:b]`` (its hash ``h``: :func:`text_hash`
        or :func:`chunk_end`), or None."""
        kept = self._kept
        slots = kept.slots
        keys = kept.keys
        s = next_match(slots, h, h)
        while s >= 0:
            j = entry_at(slots, s)
            if j < len(keys) and _same(keys[j], text, a, b):
                return kept.values[j]
            s = next_match(slots, h, s + 1)
        return None

    def get(self, key: str) -> Optional[V]:
        """The value kept for ``key``, or None."""
        return self.find(key, 0, len(key), text_hash(key, 0, len(key)))

    def add(self, key: str, value: V, h: i64 = -1) -> None:
        """Keep ``value`` for ``key`` (not held yet; its hash ``h``, -1: not
        known yet). Past the limit, the cache is emptied first."""
        kept = self._kept
        if len(kept.keys) >= self.limit:
            kept = _Kept()
            self._kept = kept
        if h < 0:
            h = text_hash(key, 0, len(key))
        j: i64 = len(kept.keys)
        kept.values.append(value)
        kept.keys.append(key)
        kept.slots = with_entry(kept.slots, h, j)


def _same(key: str, text: str, a: i64, b: i64) -> bool:
    """Whether ``key`` is ``text[a:b]``."""
    n: i64 = len(key)
    if n != b - a:
        return False
    k: i64 = 0
    while k < n:
        if ord(key[k]) != ord(text[a + k]):
            return False
        k += 1
    return True
