"""The WordPiece plugin's trace (``plugins/wpm/trace.py``): the longest
match first, at each position, and why a word became [UNK]."""

from __future__ import annotations

import pytest

from tests.refdata import VOCAB_DIR, inp_out_cases, vocab_path
from tokenprism.core import open_model
from tokenprism.core.explain import Attempt, NormalizeStage, Unknown

pytestmark = pytest.mark.skipif(VOCAB_DIR is None, reason="reference vocabs not found")


def test_attempts_are_longest_first_and_give_the_tokens() -> None:
    m = open_model(vocab_path("bert-bge"))
    for case in inp_out_cases("bert-bge"):
        for w in m.explain(case.text).stage("model").words:  # type: ignore[union-attr]
            found = []
            for s in w.steps:
                if isinstance(s, Attempt):
                    lens = [len(c.text) for c in s.candidates]
                    assert lens == sorted(lens, reverse=True) and len(set(lens)) == len(lens)
                    assert all(c.token < 0 for c in s.candidates[:-1])
                    if s.found:
                        found.append(s.candidates[-1].token)
            if not any(isinstance(s, Unknown) for s in w.steps):
                assert found == list(w.tokens)


def test_unknown_word_says_why() -> None:
    m = open_model(vocab_path("bert-bge"))
    text = "ok \U0001fae8x"
    words = m.explain(text).stage("model").words  # type: ignore[union-attr]
    assert [w.text for w in words] == ["\u2581ok", "\u2581\U0001fae8x"]
    last = words[-1]
    assert last.tokens == (100,)  # [UNK]
    unknown = [s for s in last.steps if isinstance(s, Unknown)]
    assert len(unknown) == 1 and "position 0" in unknown[0].reason and "unknown token" in unknown[0].reason
    assert [t for w in words for t in w.tokens] == m.encode(text).ids


def test_normalizer_maps_back_to_the_original() -> None:
    norm = open_model(vocab_path("bert-bge")).explain("Naïve,X").stage("normalize")
    assert isinstance(norm, NormalizeStage)
    (f,) = norm.fragments
    assert f.normalized == "naive , x"
    assert f.sources == ((0, 1), (1, 2), (2, 3), (3, 4), (4, 5), (5, 5), (5, 6), (6, 6), (6, 7))
