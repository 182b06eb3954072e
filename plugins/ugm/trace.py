"""Why Unigram cut a fragment the way it did (``Model.explain``): the
normalizer with each normalized character's source, then per word the
lattice (every piece starting at each position, with its score), the best
path and the next best segmentations.

Imported only when a trace is asked for (``UgmTokenizer.trace_fragment``),
and not compiled. llama.cpp runs one Viterbi pass over the whole
normalized fragment; every path goes through the start of each ``▁`` when
no piece holds a ``▁`` past its first character (``cut_on_space``), so
the fragment is shown a word (``▁`` + text) at a time. The pass is replayed
here over the tokenizer's own lattice, in its order, with llama.cpp's sums
(the best score so far plus the piece's, a later candidate winning only
when strictly better), so the best path is the one it takes.
"""

from __future__ import annotations

from typing import Protocol

from tokenprism.core.plugin_api import (Alternative, FragmentTrace, Lattice, LatticeEdge, NormalizedFragment,
                                        TokenizerConfig, Unknown, Vocab, Word)

from .charsmap import Normalizer


class WordEdges(Protocol):
    """``ugm.WordEdges``: the lattice of one word, edge by edge."""

    @property
    def frm(self) -> list[int]: ...
    @property
    def to(self) -> list[int]: ...
    @property
    def ids(self) -> list[int]: ...
    @property
    def scores(self) -> list[float]: ...


class UgmTokenizer(Protocol):
    """What the trace reads of ``ugm.UgmTokenizer`` (which imports this
    module on first use; this one does not import it back)."""

    @property
    def vocab(self) -> Vocab: ...
    @property
    def config(self) -> TokenizerConfig: ...
    @property
    def normalizer(self) -> Normalizer: ...
    @property
    def space(self) -> str: ...
    @property
    def cut_on_space(self) -> bool: ...
    @property
    def unk_id(self) -> int: ...
    def word_edges(self, word: str) -> WordEdges: ...

K_BEST = 5
"""Segmentations kept per word (best first)."""
NO_SCORE = -1.7976931348623157e308  # what the pass starts every position with (-DBL_MAX)


def trace_ugm(tok: UgmTokenizer, text: str, after_special: bool) -> FragmentTrace:
    """``tok.encode_fragment(text, after_special)`` replayed."""
    norm, sources = _normalize(tok, text)
    notes = _notes(tok)
    normalized = NormalizedFragment(0, len(text), text, norm, tuple(sources), notes)
    space = tok.space
    words: list[Word] = []
    base = 0.0  # the best score at the start of the word (llama.cpp sums over the fragment)
    a = 0
    n = len(norm)
    prev_unk = False
    while a < n:
        b = norm.find(space, a + 1) if tok.cut_on_space else -1
        if b < 0:
            b = n
        word, base = _word(tok, norm[a:b], base)
        tokens = _merge_unknown(word.tokens, tok.unk_id)
        if prev_unk and tokens and tokens[0] == tok.unk_id:
            # llama.cpp joins neighbouring unknown tokens, across words too:
            # this word's first one is the last word's
            tokens = tokens[1:]
        if tokens:
            prev_unk = tokens[-1] == tok.unk_id
        start = sources[a][0]
        end = max(sources[b - 1][1], start)
        words.append(Word(word.text, start, end, tokens, word.steps, word.alternatives))
        a = b
    return FragmentTrace("ugm", normalized, None, tuple(words))


def _notes(tok: UgmTokenizer) -> tuple[str, ...]:
    nz = tok.normalizer
    out: list[str] = []
    if nz.charsmap.n_values:
        out.append("the precompiled charsmap rewrites characters (NFKC-like)")
    if nz.merge_spaces:
        out.append("runs of spaces become one; leading and trailing spaces go")
    if nz.prepend_space:
        out.append("▁ put before the text (add_space_prefix)")
    if nz.space != " ":
        out.append("spaces become ▁")
    return tuple(out)


def _normalize(tok: UgmTokenizer, text: str) -> tuple[str, list[tuple[int, int]]]:
    """The normalized text and, per normalized character, the original
    characters it came from."""
    sn = tok.normalizer.normalize_str(text)
    if sn is not None:
        return sn.text, list(zip(sn.src_start, sn.src_end))
    # the byte path: sources are UTF-8 offsets, turned into characters
    bn = tok.normalizer.normalize_bytes(text.encode("utf-8", "surrogatepass"))
    char_at: list[int] = []
    for i, c in enumerate(text):
        char_at.extend([i] * len(c.encode("utf-8", "surrogatepass")))
    char_at.append(len(text))
    norm = bn.data.decode("utf-8", "replace")
    sources: list[tuple[int, int]] = []
    at = 0
    for c in norm:
        w = len(c.encode("utf-8"))
        lo, hi = bn.src_start[at], bn.src_end[min(at + w, len(bn.src_end)) - 1]
        sources.append((char_at[lo], char_at[hi - 1] + 1 if hi > lo else char_at[lo]))
        at += w
    return norm, sources


def _word(tok: UgmTokenizer, word: str, base: float) -> tuple[Word, float]:
    """One word's lattice and its ``K_BEST`` segmentations (offsets inside
    the word; the caller places it), and the best score at its end."""
    pieces = tok.vocab.pieces
    e = tok.word_edges(word)
    edges = [LatticeEdge(e.frm[k], e.to[k], e.ids[k], pieces[e.ids[k]], e.scores[k]) for k in range(len(e.frm))]
    m = len(word)
    # per position, up to K_BEST entries (sum from the fragment's start,
    # sum over the word, edge index, entry index at the edge's start),
    # best first; among equal sums the one found first stays first, as
    # llama.cpp's strict comparison keeps it
    best: list[list[tuple[float, float, int, int]]] = [[] for _ in range(m + 1)]
    best[0] = [(base, 0.0, -1, -1)]
    for k, ed in enumerate(edges):
        here = best[ed.start]
        if not here:
            continue
        cands = best[ed.end] + [(s + ed.score, loc + ed.score, k, r) for r, (s, loc, _, _) in enumerate(here)]
        cands.sort(key=lambda c: -c[0])  # stable: earlier entries first on a tie
        best[ed.end] = cands[:K_BEST * 2]
    alternatives: list[Alternative] = []
    seen: set[tuple[int, ...]] = set()
    for r in range(len(best[m])):
        path = _path(best, edges, m, r)
        tokens = _merge_unknown(tuple(edges[k].token for k in path), tok.unk_id)
        if tokens in seen:
            continue  # (unknown tokens joined: the same ids by another cut)
        seen.add(tokens)
        local = best[m][r][1]
        alternatives.append(Alternative(tokens, local, alternatives[0].score - local if alternatives else 0.0))
        if len(alternatives) == K_BEST:
            break
    best_path = _path(best, edges, m, 0)
    steps: list[Lattice | Unknown] = [Lattice(word, tuple(edges))]
    for k in best_path:
        ed = edges[k]
        if ed.token == tok.unk_id and ed.piece != word[ed.start:ed.end]:
            steps.append(Unknown(tok.unk_id, f"no piece covers {word[ed.start:ed.end]!r} alone at {ed.start}: "
                                             f"the unknown token, scored {ed.score:g} (lowest score - 10)"))
    tokens = alternatives[0].tokens if alternatives else ()
    return Word(word, 0, 0, tokens, tuple(steps), tuple(alternatives)), best[m][0][0]


def _path(best: list[list[tuple[float, float, int, int]]], edges: list[LatticeEdge], m: int, r: int) -> list[int]:
    """The edges of entry ``r`` at position ``m``, first to last."""
    out: list[int] = []
    pos = m
    while pos > 0:
        _, _, k, r = best[pos][r]
        out.append(k)
        pos = edges[k].start
    out.reverse()
    return out


def _merge_unknown(tokens: tuple[int, ...], unk: int) -> tuple[int, ...]:
    """llama.cpp's one unknown token for a run of them."""
    out: list[int] = []
    for t in tokens:
        if t == unk and out and out[-1] == unk:
            continue
        out.append(t)
    return tuple(out)
