"""The WPM tokenizer's remembered chunks (compiled): space-free stretches
of text and their tokens, found from the text's code points where they lie.

A text is mostly chunks seen before (bert-bge's first 0.11 MB encode:
15 600 chunks, 3 300 distinct). Cutting the text into chunk strings
(``str.split``) and looking each up in a dict made a string, hashed it
(SipHash) and freed it again per chunk: ~1 000 instructions a chunk, a
third of that first encode. :class:`ChunkTable` keys a chunk by a
hash of its code points, read straight from the text in the same pass
that finds the spaces (the core's ``chunk_end``, as UGM's chunk cache
does), and compares the code points of a candidate with its stored text
(``TextIndex``); only a chunk not seen before becomes a string.
"""

from __future__ import annotations

from typing import Optional, final

from librt.vecs import vec
from mypy_extensions import i64

from tokenprism.core.plugin_api import TextIndex, text_hash


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


@final
class ChunkTable:
    """Chunk text -> :class:`Chunk`, at most ``limit`` of them (then it
    starts again empty): the texts in the core's :class:`TextIndex`, the
    chunks in a list at the same numbers. A chunk is in the list before
    the index numbers its text; :meth:`clear` puts new ones in place, so
    a reader holding the old ones finishes on them."""

    def __init__(self, limit: i64) -> None:
        self.limit = limit
        self.index = TextIndex()
        self.chunks: list[Chunk] = []

    def clear(self) -> None:
        self.index = TextIndex()
        self.chunks = []

    def __len__(self) -> int:
        return len(self.index)

    def find(self, s: str, a: i64, b: i64, h: i64) -> Optional[Chunk]:
        """The chunk of text ``s[a:b]``, whose hash is ``h`` (the core's
        ``chunk_end`` or ``text_hash``), or None."""
        index = self.index
        j = index.find(s, a, b, h)
        chunks = self.chunks
        # (emptied meanwhile by another thread: the number is the old index's)
        if j < 0 or self.index is not index or j >= len(chunks):
            return None
        return chunks[j]

    def get(self, c: str) -> Optional[Chunk]:
        """The chunk of text ``c``, or None."""
        return self.find(c, 0, len(c), text_hash(c, 0, len(c)))

    def add(self, c: str, ch: Chunk, h: i64 = -1) -> None:
        """Remember ``ch`` as the chunk of ``c`` (not there yet), whose
        hash is ``h`` (-1: not known yet)."""
        if len(self.index) >= self.limit:
            self.clear()
        if h < 0:
            h = text_hash(c, 0, len(c))
        self.chunks.append(ch)
        self.index.add(c, h)
