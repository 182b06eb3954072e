"""Why WordPiece cut a fragment the way it did (``Model.explain``): the
normalizer (lowercasing, accents stripped, punctuation split off) with each
normalized character's source, then per word the greedy longest-match
attempts, and why a word became the unknown token.

Imported only when a trace is asked for (``WpmTokenizer.trace_fragment``),
and not compiled. llama.cpp marks a word's start with ``▁`` where BERT's
own files mark the other pieces with ``##``: a piece without ``▁`` is a
``##`` continuation. The search is replayed here as llama.cpp writes it
(every length from the longest piece's down); the tokens are the
tokenizer's own.
"""

from __future__ import annotations

from typing import Protocol

from librt.vecs import vec
from mypy_extensions import i64

from tokenprism.core.plugin_api import (Attempt, Candidate, FragmentTrace, NormalizedFragment, Step, Unknown, Vocab,
                                        Word, piece_index)

WORD_MARK = "\u2581"


class Piece(Protocol):
    """``wpm.Piece``: a piece's tokens (id, start, end each in ``cols``)
    and its normalized word."""

    @property
    def cols(self) -> vec[i64]: ...
    @property
    def n(self) -> i64: ...
    @property
    def word(self) -> str: ...


class WpmTokenizer(Protocol):
    """What the trace reads of ``wpm.WpmTokenizer`` (which imports this
    module on first use; this one does not import it back)."""

    @property
    def vocab(self) -> Vocab: ...
    @property
    def lowercase(self) -> bool: ...
    @property
    def strip_accents(self) -> bool: ...
    @property
    def whitespace_chars(self) -> str: ...
    @property
    def unk_id(self) -> int: ...
    def split_pieces(self, text: str) -> list[str]: ...
    def piece_tokens(self, p: str) -> Piece: ...
    def kept(self, c: str) -> bool: ...


def trace_wpm(tok: WpmTokenizer, text: str, after_special: bool) -> FragmentTrace:
    """``tok.encode_fragment(text, after_special)`` replayed."""
    words: list[Word] = []
    norm: list[str] = []
    sources: list[tuple[int, int]] = []
    at = 0
    for p in tok.split_pieces(text):
        piece = tok.piece_tokens(p)
        core = p.lstrip(tok.whitespace_chars)
        start = at + len(p) - len(core)
        word = piece.word
        if word:
            kept = [start + j for j, c in enumerate(core) if tok.kept(c)]
            if norm:
                norm.append(" ")
                sources.append((sources[-1][1], start))
            norm.append(word)
            sources.extend((k, k + 1) for k in kept)
            ids = tuple(piece.cols[3 * t] for t in range(piece.n))
            words.append(Word(WORD_MARK + word, start, at + len(p), ids, tuple(attempts(tok, word))))
        at += len(p)
    notes = [n for n, on in (("lowercased", tok.lowercase), ("accents stripped (first code point of the NFD, "
                                                               "marks dropped)", tok.strip_accents)) if on]
    notes += ["control characters dropped", "punctuation, ASCII symbols and CJK ideographs are words of their own",
              "words are split at whitespace"]
    normalized = NormalizedFragment(0, len(text), text, "".join(norm), tuple(sources), tuple(notes))
    return FragmentTrace("wpm", normalized, None, tuple(words))


def attempts(tok: WpmTokenizer, word: str) -> list[Step]:
    """llama.cpp's longest-match-first search over ``▁`` + ``word``: at each
    position, the candidates tried, longest first, down to the one found;
    a position where none is found makes the whole word unknown."""
    index = piece_index(tok.vocab)
    w1 = WORD_MARK + word
    n = len(w1)
    steps: list[Step] = []
    i = 0
    while i < n:
        tried: list[Candidate] = []
        j = min(i + tok.vocab.max_piece_chars, n)
        found = -1
        while j > i:
            found = index.find(w1[i:j])
            tried.append(Candidate(w1[i:j], found))
            if found >= 0:
                break
            j -= 1
        steps.append(Attempt(i, tuple(tried), found >= 0))
        if found < 0:
            what = "the word's start" if i == 0 else f"{w1[i:]!r} (a ## continuation)"
            steps.append(Unknown(tok.unk_id, f"no vocabulary piece begins {what} at position {i}: llama.cpp "
                                             "then makes the whole word one unknown token"))
            break
        i = j
    return steps
