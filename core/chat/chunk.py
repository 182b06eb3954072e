"""Cutting a long text into pieces that fit a token budget.

Cuts fall only between two tokens of the whole text's tokenization that
meet at a character boundary: never inside a character (a byte-fallback
group, or byte-level tokens sharing one character). Each piece is then
tokenized on its own and shrunk, cut by cut, until it fits: what a piece
costs is what it costs alone, which can differ from its share of the
whole (a prefix space, a merge across the cut)."""

from __future__ import annotations

import bisect
from dataclasses import dataclass

from tokenprism.core import Encoding, Model
from tokenprism.core.errors import TokenPrismError


class ChunkError(TokenPrismError):
    """The budget is smaller than a piece that cannot be cut."""


@dataclass(frozen=True)
class Chunk:
    #: span of the piece in the text (``str`` indices)
    start: int
    end: int
    text: str
    #: tokens of the piece tokenized alone
    tokens: int

    def record(self, index: int) -> dict[str, object]:
        """The piece as one line of ``tokenprism chunk --format jsonl``."""
        return {"index": index, "start": self.start, "end": self.end, "tokens": self.tokens, "text": self.text}


def cut_points(enc: Encoding) -> list[int]:
    """Character offsets where the text may be cut: 0, the end, and every
    boundary between two tokens that do not share a character."""
    n = len(enc)
    points = [0]
    for i in range(n - 1):
        end, nxt = enc.ends[i], enc.starts[i + 1]
        if end == nxt and (enc.groups[i + 1] < 0 or enc.groups[i + 1] != enc.groups[i]) and end > points[-1]:
            points.append(end)
    if len(enc.text) > points[-1]:
        points.append(len(enc.text))
    return points


def chunk_text(model: Model, text: str, max_tokens: int, overlap: int = 0,
               parse_special: bool = False) -> list[Chunk]:
    """``text`` cut into consecutive pieces of at most ``max_tokens`` tokens
    each (tokenized alone, no BOS/EOS). Without ``overlap`` the pieces'
    texts concatenate back to ``text``; with it, each piece after the first
    starts about ``overlap`` tokens before the previous one ended."""
    if max_tokens < 1:
        raise ChunkError("the token budget must be at least 1")
    if not 0 <= overlap < max_tokens:
        raise ChunkError("the overlap must be at least 0 and smaller than the budget")
    if not text:
        return []
    enc = model.encode(text, parse_special=parse_special)
    points = cut_points(enc)
    # token index where each cut point begins (tokens before it)
    token_at = [0]
    for i in range(len(enc) - 1):
        if len(token_at) < len(points) and enc.ends[i] == points[len(token_at)]:
            token_at.append(i + 1)
    while len(token_at) < len(points):
        token_at.append(len(enc))

    def cost(a: int, b: int) -> int:
        return len(model.encode(text[points[a]:points[b]], parse_special=parse_special))

    out: list[Chunk] = []
    a = 0
    last = len(points) - 1
    while a < last:
        # the furthest point within the budget by the whole text's tokens...
        b = bisect.bisect_right(token_at, token_at[a] + max_tokens) - 1
        b = max(b, a + 1)
        # ...then back, cut by cut, until the piece alone fits
        while cost(a, b) > max_tokens:
            if b == a + 1:
                raise ChunkError(f"the text at {points[a]}..{points[b]} is {cost(a, b)} tokens that cannot be "
                                 f"cut (one character or one token), more than the budget of {max_tokens}")
            b -= 1
        out.append(Chunk(points[a], points[b], text[points[a]:points[b]], cost(a, b)))
        if b == last:
            break
        nxt = b
        if overlap:
            want = token_at[b] - overlap
            nxt = max(a + 1, bisect.bisect_left(token_at, want))
        a = nxt
    return out
