"""A fragment's tokens as a plugin finds them: three native int64 vectors
(compiled), and the helpers the core uses on such vectors, handed to the core by a plugin's ``encode_columns`` without
an int object per value. Lists of ints made one object per offset, then
tuples, then freed them all again: most of the time and memory of
tokenizing long text once the words were in a cache."""

from __future__ import annotations

from typing import final

from librt.vecs import append, vec
from mypy_extensions import i64

from .bytes_index import reserved
from .int_column import IntColumn
from .special import Segment
from .tokenizer import FragmentResult, Tokenizer, columns_method


@final
class TokenColumns:
    """Token ids with their start and end offsets, appended in text order."""

    def __init__(self, capacity: i64 = 0) -> None:
        # room left unwritten: a tokenizer reserves for the most tokens a
        # text may give, and a zero-filled capacity faulted in every page
        # of it (62 MB for a 5.2 MB text that needs ~36)
        self.ids = reserved(capacity)
        self.starts = reserved(capacity)
        self.ends = reserved(capacity)

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


def packed(ids: list[int], starts: list[int], ends: list[int]) -> vec[i64]:
    """Tokens as one vector: id, start, end of each in turn. What a plugin
    keeps per cached word: one native vector, not three lists of int
    objects (those were most of the fresh memory, a page fault per 4 KB,
    of a first encode of text with many distinct words)."""
    n: i64 = len(ids)
    cols = vec[i64](capacity=3 * n)
    for t in range(n):
        cols = append(cols, ids[t])
        cols = append(cols, starts[t])
        cols = append(cols, ends[t])
    return cols


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


def segments_columns(tokenizer: Tokenizer, text: str,
                     segs: list[Segment]) -> tuple[vec[i64], vec[i64], vec[i64]]:
    """The model stage over consecutive ``segs`` of ``text``: token ids and
    UTF-8 byte spans counted from the first segment's start. A special
    segment is its token; a plain one is tokenized. One plain segment that
    is the whole text gives the plugin's own vectors (the caller copies
    before appending); otherwise they are new vectors of this call's own.
    Compiled: some vocabularies cut text into thousands of fragments
    (gpt-neox's runs of spaces are tokens of their own)."""
    encode = columns_method(tokenizer)
    if len(segs) == 1 and segs[0].token < 0 and segs[0].start == 0 and segs[0].end == len(text):
        return encode(text, segs[0].after_special)
    ids = vec[i64]()
    bstarts = vec[i64]()
    bends = vec[i64]()
    ascii_text = text.isascii()
    char_pos: i64 = segs[0].start if segs else 0
    byte_pos: i64 = 0
    for seg in segs:
        start: i64 = seg.start
        end: i64 = seg.end
        if start > char_pos:
            byte_pos += utf8_len(text, char_pos, start, ascii_text)
            char_pos = start
        nbytes = utf8_len(text, start, end, ascii_text)
        if seg.token >= 0:
            ids = append(ids, seg.token)
            bstarts = append(bstarts, byte_pos)
            bends = append(bends, byte_pos + nbytes)
        else:
            f_ids, f_starts, f_ends = encode(text[start:end], seg.after_special)
            ids = extend_shifted(ids, f_ids, 0)
            bstarts = extend_shifted(bstarts, f_starts, byte_pos)
            bends = extend_shifted(bends, f_ends, byte_pos)
        char_pos = end
        byte_pos += nbytes
    return ids, bstarts, bends


def utf8_len(text: str, start: i64, end: i64, ascii_text: bool = False) -> i64:
    """UTF-8 length of ``text[start:end]`` (``ascii_text``: ``text`` is known to be ASCII)."""
    if ascii_text:
        return end - start
    piece = text[start:end]
    return len(piece) if piece.isascii() else len(piece.encode("utf-8"))
