"""The SPM plugin's trace (``plugins/spm/trace.py``): merges by score,
replayed, reproduce every word's tokens; each is the best-scoring pair left
(leftmost on a tie); byte fallback spells a missing character in bytes."""

from __future__ import annotations

import pytest

from tests.plugins.trace_replay import check_replays
from tests.refdata import VOCAB_DIR, inp_out_cases, vocab_path
from tokenprism.core import open_model
from tokenprism.core.explain import ByteFallback, Merge, Symbols

pytestmark = pytest.mark.skipif(VOCAB_DIR is None, reason="reference vocabs not found")


@pytest.mark.parametrize("name", ["llama-spm", "phi-3", "baichuan"])
def test_merges_replay_to_the_tokens(name: str) -> None:
    m = open_model(vocab_path(name))
    assert sum(check_replays(m, c.text) for c in inp_out_cases(name)) > 100


def test_each_merge_is_the_best_score_left_and_byte_fallback() -> None:
    m = open_model(vocab_path("llama-spm"))
    ids = {p: i for i, p in enumerate(m.vocab.pieces)}
    scores = m.vocab.scores
    text = "Hello naïve world \U0001fae8"
    words = m.explain(text).stage("model").words  # type: ignore[union-attr]
    for w in words:
        symbols: list[str] = []
        for step in w.steps:
            if isinstance(step, Symbols):
                symbols = list(step.texts)
            elif isinstance(step, Merge):
                pairs = [scores[ids[a + b]] if a + b in ids else None for a, b in zip(symbols, symbols[1:])]
                best = max(s for s in pairs if s is not None)
                assert step.score == best == scores[step.result_id]
                assert pairs.index(best) == step.position
                symbols[step.position:step.position + 2] = [step.result]
    last = words[-1]
    fb = [s for s in last.steps if isinstance(s, ByteFallback)]
    assert fb[0].text == "\U0001fae8"
    assert [m.vocab.pieces[t] for t in fb[0].tokens] == ["<0xF0>", "<0x9F>", "<0xAB>", "<0xA8>"]
    assert [t for w in words for t in w.tokens] == m.encode(text).ids


def test_long_word_replays() -> None:
    m = open_model(vocab_path("llama-spm"))
    assert check_replays(m, "abracadabra" * 300) > 1000
