"""A fragment's tokens as a plugin finds them: three native int64 vectors
(compiled), handed to the core by a plugin's ``encode_columns`` without
an int object per value. Lists of ints made one object per offset, then
tuples, then freed them all again: most of the time and memory of
tokenizing long text once the words were in a cache."""

from __future__ import annotations

from typing import final

from librt.vecs import append, vec
from mypy_extensions import i64

from .tokenizer import FragmentResult


@final
class TokenColumns:
    """Token ids with their start and end offsets, appended in text order."""

    def __init__(self, capacity: i64 = 0) -> None:
        self.ids = vec[i64](capacity=capacity)
        self.starts = vec[i64](capacity=capacity)
        self.ends = vec[i64](capacity=capacity)

    def add(self, tid: i64, start: i64, end: i64) -> None:
        self.ids = append(self.ids, tid)
        self.starts = append(self.starts, start)
        self.ends = append(self.ends, end)

    def stretch_last(self, end: i64) -> None:
        """Move the last token's end to ``end`` (a merged unknown run)."""
        self.ends[len(self.ends) - 1] = end

    def columns(self) -> tuple[vec[i64], vec[i64], vec[i64]]:
        """What ``encode_columns`` returns."""
        return self.ids, self.starts, self.ends

    def result(self) -> FragmentResult:
        """What ``encode_fragment`` returns: the same, as lists."""
        return FragmentResult(list(self.ids), list(self.starts), list(self.ends))
