"""The WPM tokenizer's remembered chunks (compiled): space-free stretches
of text and their tokens, found from the text's code points where they lie.

A text is mostly chunks seen before (bert-bge's first 0.11 MB encode:
15 600 chunks, 3 300 distinct). Cutting the text into chunk strings
(``str.split``) and looking each up in a dict made a string, hashed it
(SipHash) and freed it again per chunk: ~1 000 instructions a chunk, a
third of that first encode. :class:`ChunkTable` keys a chunk by a
multiplicative hash of its code points, read straight from the text in
the same pass that finds the spaces, and compares the code points of a
candidate with its stored text; only a chunk not seen before becomes a
string.
"""

from __future__ import annotations

from typing import Final, Optional, final

from librt.vecs import append, vec
from mypy_extensions import i64

from tokenprism.core.plugin_api import zeros64

# the hash of a text one code point longer is ((h * HASH_MUL) ^ cp) &
# HASH_MASK, from 0 (written out where text is scanned: a call per
# character). It stays below 2**38 and its factor below 2**24: the product
# fits an int64 (no overflow compiled, the same value in pure Python)
HASH_MASK: Final = (1 << 38) - 1
HASH_MUL: Final = 0x5BD1E9


class Chunk:
    """The tokens of one space-free stretch of text, with byte offsets
    relative to it: ``cols`` holds id, start, end of each token in turn.
    One native vector, not three lists of int objects: the cache of a
    100 KB code text holds ~4 000 chunks, and in lists they were 2.5 MB of
    fresh memory (a page fault per 4 KB) on the first encode."""

    def __init__(self, cols: vec[i64], nbytes: int) -> None:
        self.cols = cols
        self.nbytes: i64 = nbytes
        self.n: i64 = len(cols) // 3


def text_hash(s: str, a: i64, b: i64) -> i64:
    """The hash of ``s[a:b]`` (as :meth:`ChunkTable.find` takes it)."""
    h: i64 = 0
    k = a
    while k < b:
        h = ((h * HASH_MUL) ^ ord(s[k])) & HASH_MASK
        k += 1
    return h


@final
class ChunkTable:
    """Chunk text -> :class:`Chunk`, at most ``limit`` of them (then it
    starts again empty). Open addressing over ``slots`` (entry + 1, 0:
    empty), at most half full; ``hashes``, ``texts`` and ``chunks`` hold
    each entry. An entry is complete before a slot points at it."""

    def __init__(self, limit: i64) -> None:
        self.limit = limit
        self.slots: vec[i64] = vec[i64]()
        self.mask: i64 = 0
        self.hashes: vec[i64] = vec[i64]()
        self.texts: list[str] = []
        self.chunks: list[Chunk] = []
        self.clear()

    def clear(self) -> None:
        self.slots = zeros64(4096)
        self.mask = 4095
        self.hashes = vec[i64]()
        self.texts = []
        self.chunks = []

    def __len__(self) -> int:
        return len(self.texts)

    def find(self, s: str, a: i64, b: i64, h: i64) -> Optional[Chunk]:
        """The chunk of text ``s[a:b]``, whose hash is ``h``, or None."""
        slots = self.slots
        mask = self.mask
        hashes = self.hashes
        i = (h ^ (h >> 17)) & mask
        while True:
            e = slots[i] - 1
            if e < 0:
                return None
            if hashes[e] == h:
                t = self.texts[e]
                n: i64 = len(t)
                if n == b - a:
                    k: i64 = 0
                    while k < n and ord(t[k]) == ord(s[a + k]):
                        k += 1
                    if k == n:
                        return self.chunks[e]
            i = (i + 1) & mask

    def get(self, c: str) -> Optional[Chunk]:
        """The chunk of text ``c``, or None."""
        return self.find(c, 0, len(c), text_hash(c, 0, len(c)))

    def add(self, c: str, ch: Chunk, h: i64 = -1) -> None:
        """Remember ``ch`` as the chunk of ``c`` (not there yet), whose
        hash is ``h`` (-1: not known yet)."""
        if len(self.texts) >= self.limit:
            self.clear()
        if h < 0:
            h = text_hash(c, 0, len(c))
        e: i64 = len(self.texts)
        self.texts.append(c)
        self.chunks.append(ch)
        self.hashes = append(self.hashes, h)
        if 2 * (e + 1) > self.mask + 1:
            self._grow()
        else:
            _place(self.slots, self.mask, e, h)

    def _grow(self) -> None:
        """Twice the slots, every entry placed again (into a new vector:
        a reader holding the old one still finds what it held)."""
        size: i64 = 2 * (self.mask + 1)
        slots = zeros64(size)
        hashes = self.hashes
        for e in range(len(hashes)):
            _place(slots, size - 1, e, hashes[e])
        self.slots = slots
        self.mask = size - 1


def _place(slots: vec[i64], mask: i64, e: i64, h: i64) -> None:
    """Point the first free slot from ``h``'s at entry ``e``."""
    i = (h ^ (h >> 17)) & mask
    while slots[i] != 0:
        i = (i + 1) & mask
    slots[i] = e + 1
