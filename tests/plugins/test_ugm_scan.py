"""The UGM plugin's table scans against the regular expressions and numpy
conversions they stand in for: ``stop_starts`` finds exactly where the
chunk stop pattern matches, ``_to_bytes`` gives UTF-8 byte offsets."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tokenprism.core import open_model
from tokenprism.plugins.ugm.charsmap import match_starts, stop_starts
from tokenprism.plugins.ugm.ugm import UgmTokenizer, _to_bytes

VOCAB = Path("/work/shared/llama-vocab/ggml-vocab-nomic-bert-moe.gguf")
_tok: list[UgmTokenizer] = []


def _nomic() -> UgmTokenizer:
    if not VOCAB.exists():
        pytest.skip("reference vocab absent")
    if not _tok:
        t = open_model(VOCAB).tokenizer
        assert isinstance(t, UgmTokenizer)
        _tok.append(t)
    return _tok[0]


def _sample_text(seed: int) -> str:
    rng = random.Random(seed)
    pool = ("abc XYZ 12 ", "\u00e9\u00c5\uff21\uff41", "\u2581", "\u3000 \u00a0", "\u1100\u1161\uac00",
            "\u0627\u0644\u0639", "\u4f60\u597d", "\U0001F44D\U0001F3FD", "\ufb01 \u2126 \u212b", "\t\n",
            "\u0301\u0065\u0301", "\U0001D400\U00020000")
    return "".join(rng.choice(pool) for _ in range(400))


@pytest.mark.parametrize("seed", range(6))
def test_stop_table_matches_the_stop_pattern(seed: int) -> None:
    tok = _nomic()
    flags = tok.normalizer.look_flags(tok.space)
    text = _sample_text(seed)
    assert stop_starts(flags, text) == match_starts(tok.chunk_stop_re, text, 0, len(text))


@settings(max_examples=60, deadline=None)
@given(st.text(st.characters(blacklist_categories=("Cs",)), max_size=60))
def test_stop_table_on_any_text(text: str) -> None:
    tok = _nomic()
    flags = tok.normalizer.look_flags(tok.space)
    assert stop_starts(flags, text) == match_starts(tok.chunk_stop_re, text, 0, len(text))


def _byte_offsets(text: str, offsets: list[int]) -> list[int]:
    return [len(text[:k].encode("utf-8", "surrogatepass")) for k in offsets]


@settings(max_examples=80, deadline=None)
@given(st.text(max_size=30), st.data())
def test_to_bytes(text: str, data: st.DataObject) -> None:
    pos = st.integers(0, len(text))
    starts = data.draw(st.lists(pos, max_size=12))
    ends = sorted(data.draw(st.lists(pos, max_size=12)))
    bs, be = _to_bytes(text, starts, ends)
    assert bs == _byte_offsets(text, starts)
    assert be == _byte_offsets(text, ends)
