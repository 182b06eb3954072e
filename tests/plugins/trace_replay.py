"""Replaying a word's trace steps independently of the plugins' trace
code (tests for ``Model.explain``): the merges applied one by one to the
first symbols, then each final symbol's token, or its byte fallback."""

from __future__ import annotations

from tokenprism.core import Model
from tokenprism.core.explain import ByteFallback, Merge, Symbols, Word


def replay(word: Word) -> tuple[list[str], list[int]]:
    """The final symbols and the tokens the steps of ``word`` make."""
    symbols: list[str] = []
    ids: list[int] = []
    fallbacks: list[ByteFallback] = []
    for step in word.steps:
        if isinstance(step, Symbols):
            symbols, ids = list(step.texts), list(step.ids)
        elif isinstance(step, Merge):
            p = step.position
            assert symbols[p:p + 2] == [step.left, step.right], (word.text, step)
            assert step.result == step.left + step.right
            symbols[p:p + 2] = [step.result]
            ids[p:p + 2] = [step.result_id]
        elif isinstance(step, ByteFallback):
            fallbacks.append(step)
    tokens: list[int] = []
    for s, t in zip(symbols, ids):
        if t >= 0:
            tokens.append(t)
        else:
            fb = fallbacks.pop(0)
            assert fb.text == s
            tokens.extend(fb.tokens)
    assert not fallbacks
    return symbols, tokens


def check_replays(model: Model, text: str) -> int:
    """Every word of ``text``'s explanation replays to its tokens, and each
    merge's result is the vocabulary's piece of that id; returns the
    number of merges seen."""
    pieces = model.vocab.pieces
    merges = 0
    for w in model.explain(text).stage("model").words:  # type: ignore[union-attr]
        symbols, tokens = replay(w)
        assert tokens == list(w.tokens), (text, w)
        for step in w.steps:
            if isinstance(step, Merge):
                merges += 1
                assert pieces[step.result_id] == step.result
    return merges
