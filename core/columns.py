"""A fragment's tokens as a plugin finds them: three native int64 vectors
(compiled), and the helpers the core uses on such vectors, handed to the core by a plugin's ``encode_columns`` without
an int object per value. Lists of ints made one object per offset, then
tuples, then freed them all again: most of the time and memory of
tokenizing long text once the words were in a cache."""

from __future__ import annotations

from typing import final

from librt.vecs import append, vec
from mypy_extensions import i64

from .encoding import IntColumn
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


def as_column(v: vec[i64]) -> IntColumn:
    """``v``'s values in an :class:`IntColumn`: one copy of its memory."""
    out = IntColumn()
    out.frombytes(memoryview(v).cast("B"))
    return out


def extend_shifted(dst: vec[i64], src: vec[i64], delta: i64) -> vec[i64]:
    """``dst`` with every value of ``src`` plus ``delta`` appended. ``dst``
    must be the caller's own vector: an append may fill its spare room,
    which another vector made from the same one would share."""
    i: i64 = 0
    n: i64 = len(src)
    while i < n:
        dst = append(dst, src[i] + delta)
        i += 1
    return dst


def filled(n: i64, value: i64) -> vec[i64]:
    """A vector of ``n`` times ``value``."""
    out = vec[i64](capacity=n)
    j: i64 = 0
    while j < n:
        out = append(out, value)
        j += 1
    return out


def with_tail(v: vec[i64], tail: vec[i64]) -> vec[i64]:
    """A new vector: ``v``'s values, then ``tail``'s (``v`` may be a
    plugin's own, which :func:`extend_shifted` must not append to)."""
    return extend_shifted(extend_shifted(vec[i64](capacity=len(v) + len(tail)), v, 0), tail, 0)
