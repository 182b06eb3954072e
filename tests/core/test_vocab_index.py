"""The piece → id table: built a slice at a time (the GIL is offered
between slices), with llama.cpp's rules for duplicates and empty pieces,
whether the pieces are decoded at open or stay undecoded (then the
native index answers lookups until the dict is asked for)."""

from __future__ import annotations

import random

import pytest

from tests.ggufmaker import string_array
from tokenprism.core.frozen import NATIVE, TokenIndex
from tokenprism.core.string_array import StringArray
from tokenprism.core.vocab import _index_pieces


def _index(raw: list[str], decode: bool) -> tuple[object, TokenIndex, int]:
    pieces, table, max_len = _index_pieces(string_array([p.encode() for p in raw]), decode)
    # undecoded only when asked and no piece is empty (those are renamed)
    assert isinstance(pieces, StringArray) == (not decode and "" not in raw)
    if isinstance(pieces, StringArray):
        assert pieces.decoded() is not NATIVE  # (pure: decoded for the dict the codes come from)
    return pieces, table, max_len


def _reference(raw: list[str]) -> tuple[list[str], dict[str, int]]:
    """llama.cpp's way: empty pieces renamed, the last of duplicates wins."""
    pieces = [p if p else f"[EMPTY_{i}]" for i, p in enumerate(raw)] if "" in raw else list(raw)
    table: dict[str, int] = {}
    for i, p in enumerate(pieces):
        table[p] = i
    return pieces, table


@pytest.mark.parametrize("decode", [True, False])
def test_duplicates_across_slices_keep_the_last_id(decode: bool) -> None:
    rng = random.Random(7)
    raw = [f"p{i}" for i in range(100_000)]  # several slices
    for i in rng.sample(range(100_000), 300):
        raw[i] = f"dup{i % 7}"  # the same few pieces, spread over every slice
    pieces, table, max_len = _index(raw, decode)
    want_pieces, want_table = _reference(raw)
    assert max_len == max(len(p) for p in raw)
    # lookups before the dict is built (the native index), then the dict
    for text in ["dup3", "p0", "p99999", "nope", ""]:
        assert table.get(text, -1) == want_table.get(text, -1)
        assert (text in table) == (text in want_table)
    assert table.built() is not NATIVE  # (pure: the dict answers)
    assert list(pieces) == want_pieces and dict(table) == want_table  # type: ignore[call-overload]


@pytest.mark.parametrize("decode", [True, False])
def test_empty_pieces_are_renamed_in_every_slice(decode: bool) -> None:
    raw = ["x"] * 70_000
    for i in (0, 32_767, 32_768, 69_999):
        raw[i] = ""
    pieces, table, _ = _index(raw, decode)
    want_pieces, want_table = _reference(raw)
    assert table["[EMPTY_32768]"] == 32_768 and table["x"] == 69_998 and "" not in table
    assert list(pieces) == want_pieces and dict(table) == want_table  # type: ignore[call-overload]
