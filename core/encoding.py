"""The result of tokenization: :class:`Encoding` and its :class:`Token` s.

An encoding keeps its tokens as parallel arrays (ids, spans, groups), the
way Hugging Face ``tokenizers`` does, so a megabyte of text does not create
a quarter of a million Python objects; :class:`Token` objects are made on
request.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Iterator

import numpy as np

if TYPE_CHECKING:
    from .model import Model


@dataclass(frozen=True)
class Token:
    """One token with its spans into the ORIGINAL text.

    ``start``/``end`` are ``str`` indices, ``byte_start``/``byte_end`` UTF-8
    offsets. Tokens that hold only part of a character (byte fallback, or a
    byte-level piece cutting a character) carry the whole character's span
    and share a ``group`` (the index of the group's first token; ``-1`` when
    the token shares no character with another). Tokens that cover no text
    (BOS/EOS, an inserted prefix space) have an empty span at their place.
    """

    index: int
    id: int
    piece: str
    score: float
    type: int
    attr: int
    start: int
    end: int
    byte_start: int
    byte_end: int
    group: int

    @property
    def is_partial(self) -> bool:
        return self.group >= 0


@dataclass(frozen=True)
class Encoding:
    """Tokens of one text by one model.

    >>> enc = model.encode("Hello world")
    >>> enc.ids, enc.tokens[0].piece
    ([15043, 3186], '▁Hello')
    """

    text: str
    model: Model
    token_ids: tuple[int, ...]
    starts: tuple[int, ...]
    ends: tuple[int, ...]
    byte_starts: tuple[int, ...]
    byte_ends: tuple[int, ...]
    groups: tuple[int, ...]
    add_special: bool = False
    parse_special: bool = False

    # ---- access -----------------------------------------------------------

    @property
    def ids(self) -> list[int]:
        """The token ids, as a new list."""
        return list(self.token_ids)

    def __len__(self) -> int:
        return len(self.token_ids)

    def token(self, i: int) -> Token:
        tid = self.token_ids[i]
        v = self.model.vocab
        return Token(i, tid, v.pieces[tid], v.scores[tid], v.types[tid], v.attrs[tid],
                     self.starts[i], self.ends[i], self.byte_starts[i], self.byte_ends[i],
                     self.groups[i])

    @property
    def tokens(self) -> tuple[Token, ...]:
        return tuple(self.token(i) for i in range(len(self.token_ids)))

    def __iter__(self) -> Iterator[Token]:
        for i in range(len(self.token_ids)):
            yield self.token(i)

    # ---- lookups ----------------------------------------------------------

    def token_at(self, char_index: int) -> int:
        """Index of the first token whose span holds ``char_index``, or -1."""
        lo, hi = 0, len(self.token_ids)
        while lo < hi:
            mid = (lo + hi) // 2
            if self.ends[mid] <= char_index:
                lo = mid + 1
            else:
                hi = mid
        while lo < len(self.token_ids):
            if self.starts[lo] <= char_index < self.ends[lo]:
                return lo
            if self.starts[lo] > char_index:
                break
            lo += 1
        return -1

    def group_range(self, i: int) -> tuple[int, int]:
        """``[first, last + 1)`` token indices of the group holding token ``i``."""
        g = self.groups[i]
        if g < 0:
            return i, i + 1
        j = i + 1
        while j < len(self.groups) and self.groups[j] == g:
            j += 1
        return g, j


def byte_to_char_spans(text: str, starts: list[int], ends: list[int]) -> tuple[list[int], list[int]]:
    """Turn UTF-8 byte spans into ``str`` spans, widening a span that starts
    or ends inside a character to that whole character."""
    if text.isascii():
        return list(starts), list(ends)
    data = np.frombuffer(text.encode("utf-8", "surrogatepass"), dtype=np.uint8)
    is_start = np.empty(len(data) + 1, dtype=np.bool_)
    is_start[:-1] = (data & 0xC0) != 0x80
    is_start[-1] = True
    cum = np.cumsum(is_start)
    s = np.asarray(starts, dtype=np.int64)
    e = np.asarray(ends, dtype=np.int64)
    cs = cum[s] - 1
    ce = np.where(is_start[e], cum[e] - 1, cum[e])
    return cs.tolist(), ce.tolist()


def assign_groups(starts: list[int], ends: list[int]) -> list[int]:
    """Group consecutive tokens that share a character: each token of a
    group gets the index of the group's first token; others get -1."""
    n = len(starts)
    groups = [-1] * n
    prev = -1  # last token with a non-empty span
    for i in range(n):
        if starts[i] >= ends[i]:
            continue
        if prev >= 0 and starts[i] < ends[prev]:
            g = groups[prev]
            if g < 0:
                g = prev
                groups[prev] = g
            groups[i] = g
        prev = i
    return groups
