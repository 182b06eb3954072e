"""The Unigram plugin's trace (``plugins/ugm/trace.py``): the best of the
k best segmentations is the chosen path, its score is the sum of its
pieces' scores, the others are valid segmentations scoring no better, on
short words they are the k best of every segmentation listed here, and
the lattice holds every piece that starts at each position."""

from __future__ import annotations

from functools import lru_cache

import pytest

from tests.refdata import VOCAB_DIR, inp_out_cases, vocab_path
from tokenprism.core import Attr, Model, open_model
from tokenprism.core.explain import Lattice
from tokenprism.core.vocab import piece_index
from tokenprism.plugins.ugm.trace import K_BEST

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


def _all_segmentations(word: str, score_of: dict[str, float]) -> list[tuple[float, tuple[str, ...]]]:
    """Every way to cut ``word`` into pieces of ``score_of``, with the sum of
    their scores (2^(n-1) cuts at most: short words only)."""
    ends: list[list[tuple[float, tuple[str, ...]]]] = [[] for _ in range(len(word) + 1)]
    ends[0] = [(0.0, ())]
    for a in range(len(word)):
        for b in range(a + 1, len(word) + 1):
            s = score_of.get(word[a:b])
            if s is not None:
                ends[b] += [(total + s, cut + (word[a:b],)) for total, cut in ends[a]]
    return ends[len(word)]


def test_alternatives_are_the_k_best_of_every_segmentation() -> None:
    """On words of up to 12 characters, the reported segmentations are the
    K_BEST best of all of them, found here by listing every one (NORMAL
    pieces only: words touching a user-defined or unknown piece, scored by
    other rules, are left out)."""
    m = _model()
    v = m.vocab
    score_of = {p: float(s) for p, s, a in zip(v.pieces, v.scores, v.attrs) if a & Attr.NORMAL}
    other = {p for p, a in zip(v.pieces, v.attrs) if not a & Attr.NORMAL}
    text = " ".join(c.text for c in inp_out_cases("nomic-bert-moe")) + " unaffable naïveté tokenizers 12345 ça"
    checked = 0
    for w in m.explain(text).stage("model").words:  # type: ignore[union-attr]
        word = w.text
        subs = {word[a:b] for a in range(len(word)) for b in range(a + 1, len(word) + 1)}
        if not 2 <= len(word) <= 12 or subs & other or any(c not in score_of for c in word):
            continue
        every = _all_segmentations(word, score_of)
        every.sort(key=lambda x: -x[0])
        want = every[:K_BEST]
        got = w.alternatives
        assert len(got) == len(want), word
        assert [a.score for a in got] == pytest.approx([s for s, _ in want], abs=1e-9), word
        cuts = {cut for _, cut in every}
        for a in got:
            assert tuple(v.pieces[t] for t in a.tokens) in cuts
        # where no score ties the k-th, the k best are exactly those
        if len(every) <= K_BEST or every[K_BEST - 1][0] != every[K_BEST][0]:
            assert {tuple(v.pieces[t] for t in a.tokens) for a in got} == {cut for _, cut in want}, word
        checked += 1
    assert checked > 100
