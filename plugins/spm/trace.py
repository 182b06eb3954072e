"""Why SPM cut a fragment the way it did (``Model.explain``): the space
handling, then per word the merges by score and the byte fallback.

Imported only when a trace is asked for (``SpmTokenizer.trace_fragment``),
and not compiled: the merge loop is replayed here in plain Python, the way
llama.cpp's ``llm_tokenizer_spm`` runs it (best score first, leftmost on a
tie: ``merge_order``), recording each merge; the tokens are the tokenizer's own.
"""

from __future__ import annotations

from typing import Protocol

from tokenprism.core.plugin_api import (ByteFallback, FragmentResult, FragmentTrace, Merge, NormalizedFragment, Step,
                                        Symbols, Vocab, Word, merge_order, piece_index)

SPACE_MARK = "\u2581"


class SpmTokenizer(Protocol):
    """What the trace reads of ``spm.SpmTokenizer`` (which imports this
    module on first use; this one does not import it back)."""

    @property
    def vocab(self) -> Vocab: ...
    @property
    def add_space_prefix(self) -> bool: ...
    def encode_fragment(self, text: str, after_special: bool) -> FragmentResult: ...
    def cut_points(self, text: str, lo: int, hi: int) -> list[int]: ...


def trace_spm(tok: SpmTokenizer, text: str, after_special: bool) -> FragmentTrace:
    """``tok.encode_fragment(text, after_special)`` replayed."""
    prefix = tok.add_space_prefix and after_special and bool(text)
    norm = (SPACE_MARK if prefix else "") + text.replace(" ", SPACE_MARK)
    sources = ((0, 0),) * prefix + tuple((i, i + 1) for i in range(len(text)))
    notes = ["spaces become ▁"]
    if prefix:
        notes.append("▁ put before the fragment (add_space_prefix, first fragment or after a special token)")
    normalized = NormalizedFragment(0, len(text), text, norm, sources, tuple(notes))
    # the encoder merges each word on its own when no piece can cross a
    # word start (SpmTokenizer.by_word); its cut points are those starts
    cuts = [0, *tok.cut_points(text, 1, len(text)), len(text)] if text else []
    words: list[Word] = []
    for k in range(len(cuts) - 1):
        a, b = cuts[k], cuts[k + 1]
        first = k == 0 and prefix
        ids = tok.encode_fragment(text[a:b], first).ids
        wtext = (SPACE_MARK if first else "") + text[a:b].replace(" ", SPACE_MARK)
        words.append(Word(wtext, a, b, tuple(ids), tuple(merge_steps(tok, wtext, ids))))
    return FragmentTrace("spm", normalized, None, tuple(words))


def merge_steps(tok: SpmTokenizer, word: str, ids: list[int]) -> list[Step]:
    """The symbols of ``word`` (normalized), each merge in order with the
    score of the piece it makes, then the byte fallback of each final
    symbol that is no piece (whose byte tokens are taken from ``ids``)."""
    index = piece_index(tok.vocab)
    scores = tok.vocab.scores
    syms = list(word)
    sids = [index.find(c) for c in syms]
    steps: list[Step] = [Symbols(tuple(syms), tuple(sids), tuple(tuple(c.encode("utf-8")) for c in syms))]

    def priority(left: str, right: str) -> float | None:
        # the best score first (a -inf pair still merges, last)
        t = index.find(left + right)
        return None if t < 0 else -float(scores[t])

    for pos, left, right, neg in merge_order(syms, priority):
        steps.append(Merge(left, right, left + right, index.find(left + right), pos, score=-neg))
    sids = [index.find(s) for s in syms]
    at = 0
    for s, t in zip(syms, sids):
        if t >= 0:
            at += 1
            continue
        data = s.encode("utf-8")
        steps.append(ByteFallback(s, tuple(data), tuple(ids[at:at + len(data)])))
        at += len(data)
    return steps
