"""chunk_text: pieces within the budget that concatenate back to the text."""

from __future__ import annotations

from functools import lru_cache

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tokenprism.core import Model, open_model
from tokenprism.core.chat import ChunkError, chunk_text
from tokenprism.core.chat.chunk import cut_points
from tests.refdata import vocab_path


@lru_cache(maxsize=None)
def _model(name: str) -> Model:
    return open_model(vocab_path(name))


# byte-fallback (llama-spm: CJK and emoji become <0x..> groups), byte-level
# BPE (qwen2: pieces that cut a character) and unigram with a prefix space
VOCABS = ["llama-spm", "qwen2", "gemma-4"]
TEXT = st.text(st.sampled_from(list("ab cé\n日本🙂\u0301.,'")) | st.characters(codec="utf-8"), max_size=80)


@pytest.mark.parametrize("vocab", VOCABS)
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=TEXT, budget=st.integers(4, 12))
def test_pieces_concatenate_and_fit(vocab: str, text: str, budget: int) -> None:
    model = _model(vocab)
    enc = model.encode(text)
    points = set(cut_points(enc))
    try:
        pieces = chunk_text(model, text, budget)
    except ChunkError:
        # only when an uncuttable stretch alone exceeds the budget
        ordered = sorted(points)
        assert any(len(model.encode(text[a:b])) > budget for a, b in zip(ordered, ordered[1:]))
        return
    assert "".join(p.text for p in pieces) == text
    for p in pieces:
        assert p.text == text[p.start:p.end] and p.start in points and p.end in points
        assert p.tokens == len(model.encode(p.text)) <= budget
    assert [p.start for p in pieces[1:]] == [p.end for p in pieces[:-1]]


def test_never_cuts_inside_a_byte_fallback_group() -> None:
    model = _model("llama-spm")
    text = "ab 🙂𝔘 cd"
    enc = model.encode(text)
    assert sum(enc.groups[i] >= 0 for i in range(len(enc))) == 8  # two characters of 4 byte tokens each
    pieces = chunk_text(model, text, 5)
    assert "".join(p.text for p in pieces) == text
    # ▁ab ▁ <4 bytes of 🙂> <4 bytes of 𝔘> ▁cd: no cut among a character's byte tokens
    assert cut_points(enc) == [0, 2, 3, 4, 5, 8]
    assert {p.end for p in pieces} <= {2, 3, 4, 5, 8}
    # alone, each is its 4 byte tokens after the prefix space SentencePiece adds
    assert [p.tokens for p in pieces if p.text in ("🙂", "𝔘")] == [5, 5]
    assert all(p.tokens <= 5 for p in pieces)
    # a budget below one character's byte tokens cannot be met
    with pytest.raises(ChunkError, match="cannot be cut"):
        chunk_text(model, "🙂", 3)


def test_overlap() -> None:
    model = _model("qwen2")
    text = "one two three four five six seven eight nine ten eleven twelve"
    pieces = chunk_text(model, text, 4, overlap=2)
    assert all(p.tokens <= 4 for p in pieces)
    assert pieces[0].start == 0 and pieces[-1].end == len(text)
    for a, b in zip(pieces, pieces[1:]):
        assert a.start < b.start < a.end  # overlapping, and moving on
    with pytest.raises(ChunkError):
        chunk_text(model, text, 4, overlap=4)
