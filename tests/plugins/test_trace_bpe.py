"""The BPE plugin's trace (``plugins/bpe/trace.py``): merges replayed in
order reproduce every word's tokens, each merge is the lowest-ranked pair
left (by the file's merge list, read here on its own), and byte-level
symbols carry their bytes."""

from __future__ import annotations

from functools import lru_cache

import pytest

from tests.plugins.trace_replay import check_replays, replay
from tests.refdata import VOCAB_DIR, inp_out_cases, vocab_path
from tokenprism.core import Model, open_model
from tokenprism.core.explain import ByteFallback, Merge, PreTokenizeStage, Symbols

pytestmark = pytest.mark.skipif(VOCAB_DIR is None, reason="reference vocabs not found")

BPE = ["aquila", "command-r", "deepseek-coder", "deepseek-llm", "falcon", "gemma-4", "gpt-2", "gpt-neox", "llama-bpe",
       "mpt", "qwen2", "qwen35", "refact", "starcoder"]


@lru_cache(maxsize=None)
def _model(name: str) -> Model:
    return open_model(vocab_path(name))


@pytest.mark.parametrize("name", BPE)
def test_merges_replay_to_the_tokens(name: str) -> None:
    m = _model(name)
    merges = sum(check_replays(m, c.text) for c in inp_out_cases(name) if len(c.text) <= 4000)
    assert merges > 100


@pytest.mark.parametrize("name", ["gpt-2", "llama-bpe"])
def test_each_merge_is_the_lowest_rank_left(name: str) -> None:
    m = _model(name)
    rank: dict[str, int] = {}
    for r, line in enumerate(m.vocab.merges):
        rank.setdefault(line, r)
    text = "Hello world, naïve café 1234567 'll HTTPServer \U0001f600"
    for w in m.explain(text).stage("model").words:  # type: ignore[union-attr]
        symbols: list[str] = []
        for step in w.steps:
            if isinstance(step, Symbols):
                symbols = list(step.texts)
            elif isinstance(step, Merge):
                pairs = [rank.get(a + " " + b, -1) for a, b in zip(symbols, symbols[1:])]
                best = min(r for r in pairs if r >= 0)
                assert step.rank == best == rank[step.left + " " + step.right]
                assert pairs.index(best) == step.position  # the leftmost on a tie
                symbols[step.position:step.position + 2] = [step.result]
        # nothing left to merge
        assert all(rank.get(a + " " + b, -1) < 0 for a, b in zip(symbols, symbols[1:]))


def test_byte_level_symbols_are_bytes() -> None:
    (w,) = _model("gpt-2").explain("naïve").stage("model").words  # type: ignore[union-attr]
    sym = w.steps[0]
    assert isinstance(sym, Symbols)
    assert b"".join(bytes(b) for b in sym.byte_values) == "naïve".encode()
    assert sym.texts == ("n", "a", "Ã", "¯", "v", "e")  # GPT-2's glyphs of 0xC3 0xAF
    assert replay(w)[1] == _model("gpt-2").encode("naïve").ids


def test_digit_rule_cuts_numbers_in_threes() -> None:
    pre = _model("llama-bpe").explain("12345678").stage("pre_tokenize")
    assert isinstance(pre, PreTokenizeStage)
    (frag,) = pre.fragments
    assert len(frag.rules) == 1 and "\\p{N}{1,3}" in frag.rules[0].rule
    assert frag.rules[0].chunks == ((0, 3), (3, 6), (6, 8))
    words = _model("llama-bpe").explain("12345678").stage("model").words  # type: ignore[union-attr]
    assert [(w.start, w.end) for w in words] == [(0, 3), (3, 6), (6, 8)]


def test_gemma_byte_fallback() -> None:
    m = _model("gemma-4")
    text = "\U0001fae8"  # a character gemma-4 has no piece for
    (w,) = m.explain(text).stage("model").words  # type: ignore[union-attr]
    fb = [s for s in w.steps if isinstance(s, ByteFallback)]
    assert fb and fb[0].byte_values == tuple(text.encode())
    assert [m.vocab.pieces[t] for t in fb[0].tokens] == ["<0xF0>", "<0x9F>", "<0xAB>", "<0xA8>"]
    assert list(w.tokens) == m.encode(text).ids


def test_long_word_replays() -> None:
    # a word the encoder merges with its priority queue (48 symbols or more),
    # long enough that rescanning every pair per merge would take seconds
    m = _model("gpt-2")
    text = "abracadabra" * 300
    assert check_replays(m, text) > 1000
    assert [t for w in m.explain(text).stage("model").words for t in w.tokens] == m.encode(text).ids  # type: ignore[union-attr]
