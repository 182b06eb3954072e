"""The Unigram plugin's trace (``plugins/ugm/trace.py``): the best of the
k best segmentations is the chosen path, its score is the sum of its
pieces' scores, the others are valid segmentations scoring no better, and
the lattice holds every piece that starts at each position."""

from __future__ import annotations

from functools import lru_cache

import pytest

from tests.refdata import VOCAB_DIR, inp_out_cases, vocab_path
from tokenprism.core import Model, open_model
from tokenprism.core.explain import Lattice
from tokenprism.core.vocab import piece_index

pytestmark = pytest.mark.skipif(VOCAB_DIR is None, reason="reference vocabs not found")


@lru_cache(maxsize=None)
def _model() -> Model:
    return open_model(vocab_path("nomic-bert-moe"))


def test_best_alternative_is_the_path_and_scores_sum() -> None:
    m = _model()
    pieces = m.vocab.pieces
    scores = m.vocab.scores
    unk = m.config.special_ids["unk"]
    seen = 0
    for case in inp_out_cases("nomic-bert-moe"):
        for w in m.explain(case.text).stage("model").words:  # type: ignore[union-attr]
            alts = w.alternatives
            assert alts and alts[0].tokens == w.tokens
            assert [a.score for a in alts] == sorted((a.score for a in alts), reverse=True)
            assert len({a.tokens for a in alts}) == len(alts) <= 5
            for a in alts:
                if unk in a.tokens:
                    continue
                seen += 1
                # a segmentation of the word, scored by the file's scores
                assert "".join(pieces[t] for t in a.tokens) == w.text
                total = 0.0
                for t in a.tokens:
                    total += scores[t]
                assert a.score == total  # summed in the same order: exactly
                assert a.gap == alts[0].score - a.score
    assert seen > 100


def test_lattice_lists_every_piece_at_each_position() -> None:
    m = _model()
    index = piece_index(m.vocab)
    (w,) = m.explain("hello").stage("model").words  # type: ignore[union-attr]
    lat = w.steps[0]
    assert isinstance(lat, Lattice) and lat.text == "\u2581hello"
    got = {(e.start, e.end, e.token) for e in lat.edges}
    want = {(i, j, index.find(lat.text[i:j])) for i in range(len(lat.text))
            for j in range(i + 1, len(lat.text) + 1) if index.find(lat.text[i:j]) >= 0}
    assert got == want
