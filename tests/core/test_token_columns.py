"""The optional per-token columns: BPE merge rank and WordPiece word index
(Encoding.ranks / Encoding.words, Token.rank / Token.word)."""

from __future__ import annotations

from typing import Any

import pytest

from tests.refdata import VOCAB_DIR
from tokenprism.core import open_model
from tokenprism.core.library.resources import demo_models
from tokenprism.core.vocab import Attr

needs_vocabs = pytest.mark.skipif(VOCAB_DIR is None, reason="reference vocabs not found")


def _merge_lines(path: str) -> list[str]:
    """tokenizer.ggml.merges as the file stores them (the raw metadata, not
    the tokenizer's tables)."""
    from tokenprism.core import read_gguf

    return list(read_gguf(path).metadata["tokenizer.ggml.merges"].value)


@needs_vocabs
def test_gpt2_ranks_are_the_merge_lines(ref_model: Any) -> None:
    model = ref_model("gpt-2")
    merges = _merge_lines(model.path)
    enc = model.encode("Hello the world<|endoftext|> é and tokenization", parse_special=True)
    assert enc.ranks is not None and len(enc.ranks) == len(enc)
    pieces = [model.vocab.pieces[t] for t in enc.ids]
    assert pieces[:3] == ["Hello", "Ġthe", "Ġworld"]
    first_line: dict[str, int] = {}
    for i, m in enumerate(merges):
        first_line.setdefault(m.replace(" ", "", 1), i)
    # "Ġthe" is made by the merge "Ġt he", the 7th line of the file
    assert merges[6] == "Ġt he" and enc.ranks[1] == 6
    for piece, rank, tid in zip(pieces, enc.ranks, enc.ids):
        if not model.vocab.attrs[tid] & Attr.NORMAL:
            assert rank == -1, piece  # <|endoftext|>
            continue
        if len(piece) == 1:
            assert rank == -1, piece  # a single byte glyph is no merge
            continue
        left, right = merges[rank].split(" ", 1)
        assert left + right == piece
        # the lowest such line, and its parts were made by earlier merges
        assert first_line[piece] == rank
        for part in (left, right):
            part_rank = model.merge_ranks()[model.vocab.token_to_id[part]]
            assert part_rank < rank
    assert enc.tokens[1].rank == 6 and enc.token(3).rank == -1


@needs_vocabs
def test_gemma4_ranks_on_escaped_spaces(ref_model: Any) -> None:
    model = ref_model("gemma-4")
    enc = model.encode("Hello world")
    assert enc.ranks is not None
    merges = _merge_lines(model.path)
    for tid, rank in zip(enc.ids, enc.ranks):
        piece = model.vocab.pieces[tid]
        if rank >= 0:
            k = merges[rank].find(" ", 1)
            assert merges[rank][:k] + merges[rank][k + 1:] == piece


@needs_vocabs
def test_bert_word_indices(ref_model: Any) -> None:
    model = ref_model("bert-bge")
    enc = model.encode("hello worlds, unaffable[SEP]x  y", add_special=True, parse_special=True)
    pieces = [model.vocab.pieces[t] for t in enc.ids]
    assert pieces == ["[CLS]", "▁hello", "▁worlds", "▁,", "▁una", "ffa", "ble", "[SEP]", "▁x", "▁y", "[SEP]"]
    # worked out by hand: hello worlds , unaffable | x y (CLS/SEP are no word)
    assert enc.words == (-1, 0, 1, 2, 3, 3, 3, -1, 4, 5, -1)
    assert [t.word for t in enc.tokens] == list(enc.words)
    assert enc.ranks is None and enc.tokens[1].rank == -1


@needs_vocabs
def test_bert_word_indices_follow_word_starts(ref_model: Any) -> None:
    """Every word starts with a ▁ piece or is one unknown token, on mixed text."""
    model = ref_model("bert-bge")
    text = "Ünïcödé straße 東京 don't C++ x^2 ¿qué? \u2028 a\x0bb émoji 😀 " * 3
    enc = model.encode(text)
    words = enc.words
    assert words is not None and words[0] == 0
    unk = model.config.special_ids["unk"]
    for i in range(1, len(enc)):
        piece = model.vocab.pieces[enc.token_ids[i]]
        starts_word = piece.startswith("▁") or enc.token_ids[i] == unk
        assert words[i] == words[i - 1] + (1 if starts_word else 0), (i, piece)


def test_models_without_such_values() -> None:
    for kind in ("spm", "ugm"):
        enc = open_model(demo_models()[kind]).encode("hello world")
        assert enc.ranks is None and enc.words is None
        assert all(t.rank == -1 and t.word == -1 for t in enc.tokens)
    assert open_model(demo_models()["bpe"]).encode("hello").words is None
    assert open_model(demo_models()["wpm"]).encode("hello").ranks is None


def test_a_plugin_without_the_methods(char_model_path: Any) -> None:
    """A third-party tokenizer that offers neither method still works."""
    model = open_model(char_model_path)
    assert not hasattr(model.tokenizer, "merge_ranks") and not hasattr(model.tokenizer, "word_indices")
    enc = model.encode("ab", add_special=True)
    assert enc.ranks is None and enc.words is None and enc.token(0).rank == -1


def test_encoding_stays_small_until_asked() -> None:
    """Nothing is computed while encoding; asking fills a per-encoding cache."""
    model = open_model(demo_models()["wpm"])
    enc = model.encode("hello worlds")
    assert enc._extras == {}
    first = enc.words
    assert enc.words is first and "words" in enc._extras
    assert enc == model.encode("hello worlds")  # the cache does not take part in equality
