"""Splitting special-token text out of the input, before any algorithm runs.

Matches llama.cpp's ``tokenizer_st_partition``: special tokens are taken in
order of decreasing text length; each one is searched left to right in every
fragment that is still plain text; a token with the LSTRIP (RSTRIP)
attribute swallows the ASCII whitespace to its left (right) within that
fragment. User-defined tokens are always split out; control and unknown
tokens only when ``parse_special`` is on.

Instead of rescanning the whole text once per special token (gemma-4 has
thousands), all occurrences of all special texts are found in one pass with
a prefix set, then llama.cpp's order is replayed on those occurrences.
"""


from typing import NamedTuple

from .vocab import Attr, Vocab

_C_SPACE = " \t\n\v\f\r"  # C isspace() in the "C" locale
# more distinct first characters than this, and one look at each character
# of the text beats one str.find pass over it per first character
_FIND_MAX = 32


class Fragment(NamedTuple):
    """``[start, end)`` of the text; ``token`` is the special token id, or
    -1 for plain text handed to the tokenizer. A named tuple: a frozen
    dataclass took 0.5 us to make, and gpt-neox cuts 100 KB of code into
    ~10 000 fragments (its runs of spaces are tokens of their own)."""

    start: int
    end: int
    token: int


class Segment(NamedTuple):
    """What the pipeline hands the model stage: ``[start, end)`` of the
    text, a fragment or part of one; ``token`` as in :class:`Fragment`;
    ``after_special``: whether the plugin sees it as text that follows a
    special token or the start of the text (SPM then adds its space
    prefix), which only a fragment's first part can be."""

    start: int
    end: int
    token: int
    after_special: bool


def segments(frags: list[Fragment]) -> list[Segment]:
    """``frags`` as the model stage takes them: a plain fragment comes after
    a special token when it is first or follows a special fragment."""
    out: list[Segment] = []
    after = True
    for f in frags:
        if f.token >= 0:
            out.append(Segment(f.start, f.end, f.token, False))
            after = True
        else:
            out.append(Segment(f.start, f.end, -1, after))
            after = False
    return out


class SpecialMatcher:
    """Finds special tokens in text for one vocabulary and one
    ``parse_special`` setting."""

    def __init__(self, vocab: Vocab, parse_special: bool) -> None:
        self.order: dict[int, int] = {}
        self.text_of: dict[int, str] = {}
        self.strip: dict[int, int] = {}
        self.by_text: dict[str, int] = {}
        self.prefixes: set[str] = set()
        first: set[str] = set()
        for rank, tid in enumerate(vocab.special_tokens):
            attr = vocab.attrs[tid]
            if not parse_special and attr & (Attr.CONTROL | Attr.UNKNOWN):
                continue
            text = vocab.pieces[tid]
            if not text:
                continue
            self.order[tid] = rank
            self.text_of[tid] = text
            self.strip[tid] = attr & (Attr.LSTRIP | Attr.RSTRIP)
            # several ids may share a text; the first in llama.cpp's order
            # matches first and leaves nothing for the others
            if text not in self.by_text:
                self.by_text[text] = tid
            for k in range(1, len(text)):
                self.prefixes.add(text[:k])
            first.add(text[0])
        self.first_chars = first

    def occurrences(self, text: str) -> dict[int, list[int]]:
        """Every position of every special text, overlapping ones included."""
        found: dict[int, list[int]] = {}
        if not self.by_text:
            return found
        prefixes = self.prefixes
        by_text = self.by_text
        n = len(text)
        first = self.first_chars
        if len(first) > _FIND_MAX:
            for i in range(n):
                if text[i] in first:
                    _match_at(text, i, by_text, prefixes, found)
            return found
        # str.find jumps between the (few) characters a special text can
        # start with instead of a set lookup per character of the text
        # (6-12 ms on 0.5 MB for most vocabs); each token's positions still
        # come in text order, since all its matches start with one character
        for c in first:
            i = text.find(c)
            while i >= 0:
                _match_at(text, i, by_text, prefixes, found)
                i = text.find(c, i + 1)
        return found

    def partition(self, text: str) -> list[Fragment]:
        """Split ``text`` into plain and special fragments, in order."""
        if not text:
            return []
        occ = self.occurrences(text)
        if not occ:
            return [Fragment(0, len(text), -1)]
        # llama.cpp's order replayed on the occurrences: a token's match
        # counts when none of its characters is taken yet (it then lies in
        # one plain fragment), and what it takes ends at taken characters.
        # One flag per character: a list of plain intervals split in the
        # middle per match is quadratic in the matches (gpt-neox's runs of
        # spaces are tokens: ~25 000 matches in 100 KB of code).
        n = len(text)
        taken = bytearray(n)
        specials: list[tuple[int, int, int]] = []
        for tid in sorted(occ, key=lambda t: self.order[t]):
            ln = len(self.text_of[tid])
            strip = self.strip[tid]
            for p in occ[tid]:
                # (the ends first: most matches that fail, fail there)
                if taken[p] or taken[p + ln - 1] or (ln > 2 and taken.find(1, p + 1, p + ln - 1) >= 0):
                    continue
                left_end = p
                if strip & Attr.LSTRIP:
                    while left_end > 0 and not taken[left_end - 1] and text[left_end - 1] in _C_SPACE:
                        left_end -= 1
                right_start = p + ln
                if strip & Attr.RSTRIP:
                    while right_start < n and not taken[right_start] and text[right_start] in _C_SPACE:
                        right_start += 1
                taken[left_end:right_start] = _TAKEN * (right_start - left_end)
                # the special token's span takes the whitespace it swallowed,
                # so every character of the text still belongs to a token
                specials.append((left_end, right_start, tid))
        specials.sort()
        frags: list[Fragment] = []
        at = 0
        for a, b, t in specials:
            if a > at:
                frags.append(Fragment(at, a, -1))
            frags.append(Fragment(a, b, t))
            at = b
        if at < n:
            frags.append(Fragment(at, n, -1))
        return frags


_TAKEN = b"\x01"


def _match_at(text: str, i: int, by_text: dict[str, int], prefixes: set[str],
              found: dict[int, list[int]]) -> None:
    """Record every special text that starts at ``text[i]``."""
    n = len(text)
    j = i + 1
    while True:
        piece = text[i:j]
        tid = by_text.get(piece, -1)
        if tid >= 0:
            found.setdefault(tid, []).append(i)
        if j >= n or piece not in prefixes:
            break
        j += 1
