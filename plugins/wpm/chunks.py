"""The WPM tokenizer's remembered chunks (compiled): space-free stretches
of text and their tokens, found from the text's code points where they lie.

A text is mostly chunks seen before (bert-bge's first 0.11 MB encode:
15 600 chunks, 3 300 distinct). Cutting the text into chunk strings
(``str.split``) and looking each up in a dict made a string, hashed it
(SipHash) and freed it again per chunk: ~1 000 instructions a chunk, a
third of that first encode. The tokenizer keeps its chunks in the core's
``TextCache`` instead, keyed by a hash of a chunk's code points read
straight from the text in the same pass that finds the spaces
(``chunk_end``), a candidate's code points compared with its stored text;
only a chunk not seen before becomes a string.
"""

from __future__ import annotations

from librt.vecs import vec
from mypy_extensions import i64


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
