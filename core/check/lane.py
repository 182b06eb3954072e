"""A source tokenizer's tokens as a view draws them: ids, pieces and
character spans into the original text, with tokens that split one
character (byte-level pieces, byte fallback) put in one group.

The two libraries report spans differently: ``tokenizers`` gives character
offsets and the same offsets to every byte-level piece of one character;
``sentencepiece`` gives UTF-8 byte offsets and puts a split character's
whole span on its last byte piece, the ones before it empty. Both end up
here as :class:`SourceTokens` in the shape of the GGUF side's
:class:`~tokenprism.core.Encoding` columns (``group`` is the index of the
group's first token, -1 for a token that shares no character).
"""

from __future__ import annotations

from bisect import bisect_right
from dataclasses import dataclass
from typing import Sequence

__all__ = ["SourceTokens", "from_byte_offsets", "from_char_offsets"]


@dataclass(frozen=True)
class SourceTokens:
    """One text as the source tokenizer cuts it."""

    text: str
    ids: list[int]
    pieces: list[str]
    starts: list[int]
    """``str`` index where each token's text starts (an added BOS/EOS has an
    empty span at its place)."""
    ends: list[int]
    groups: list[int]

    def byte_spans(self) -> tuple[list[int], list[int]]:
        """The spans as UTF-8 offsets."""
        if self.text.isascii():
            return list(self.starts), list(self.ends)
        at = [0]
        for ch in self.text:
            at.append(at[-1] + len(ch.encode("utf-8", "surrogatepass")))
        return [at[s] for s in self.starts], [at[e] for e in self.ends]


def _grouped(text: str, ids: Sequence[int], pieces: Sequence[str], starts: list[int],
             ends: list[int]) -> SourceTokens:
    n = len(ids)
    # an empty span at the text's start after real tokens is a token the
    # post-processor appended (EOS): it belongs at the end
    seen_text = False
    for i in range(n):
        if starts[i] < ends[i]:
            seen_text = True
        elif seen_text and starts[i] == 0 and ends[i] == 0:
            starts[i] = ends[i] = max(ends[:i], default=0)
    groups = [-1] * n
    for i in range(1, n):
        if starts[i] < ends[i] and starts[i] < ends[i - 1] and starts[i - 1] < ends[i - 1]:
            head = groups[i - 1] if groups[i - 1] >= 0 else i - 1
            groups[i - 1] = groups[i] = head
    return SourceTokens(text, list(ids), list(pieces), starts, ends, groups)


def from_char_offsets(text: str, ids: Sequence[int], pieces: Sequence[str],
                      offsets: Sequence[tuple[int, int]]) -> SourceTokens:
    """Tokens with ``str`` offsets (Hugging Face ``tokenizers``)."""
    n = len(text)
    starts = [max(0, min(int(a), n)) for a, _ in offsets]
    ends = [max(s, min(int(b), n)) for s, (_, b) in zip(starts, offsets)]
    return _grouped(text, ids, pieces, starts, ends)


def from_byte_offsets(text: str, ids: Sequence[int], pieces: Sequence[str],
                      offsets: Sequence[tuple[int, int]], is_byte: Sequence[bool]) -> SourceTokens:
    """Tokens with UTF-8 offsets (``sentencepiece``); a byte piece with an
    empty span takes the span of the piece that completes its character."""
    # the UTF-8 offset where each character starts, to map offsets back
    at = [0]
    for ch in text:
        at.append(at[-1] + len(ch.encode("utf-8", "surrogatepass")))

    def char(b: int) -> int:
        return max(0, min(bisect_right(at, b) - 1, len(text)))

    starts = [char(a) for a, _ in offsets]
    ends = [max(s, char(b)) for s, (_, b) in zip(starts, offsets)]
    n = len(ids)
    for i in range(n - 1, -1, -1):
        if starts[i] == ends[i] and is_byte[i] and i + 1 < n and starts[i + 1] == starts[i] < ends[i + 1]:
            ends[i] = ends[i + 1]
    return _grouped(text, ids, pieces, starts, ends)
