"""The piece → id table: built a slice at a time (the GIL is offered
between slices), with llama.cpp's rules for duplicates and empty pieces."""

from __future__ import annotations

import random

from tokenprism.core.vocab import _index_pieces


def _reference(raw: list[str]) -> tuple[list[str], dict[str, int]]:
    """llama.cpp's way: empty pieces renamed, the last of duplicates wins."""
    pieces = [p if p else f"[EMPTY_{i}]" for i, p in enumerate(raw)] if "" in raw else list(raw)
    table: dict[str, int] = {}
    for i, p in enumerate(pieces):
        table[p] = i
    return pieces, table


def test_duplicates_across_slices_keep_the_last_id() -> None:
    rng = random.Random(7)
    raw = [f"p{i}" for i in range(100_000)]  # several slices
    for i in rng.sample(range(100_000), 300):
        raw[i] = f"dup{i % 7}"  # the same few pieces, spread over every slice
    pieces, table, max_len = _index_pieces(tuple(raw))
    want_pieces, want_table = _reference(raw)
    assert list(pieces) == want_pieces and dict(table) == want_table
    assert max_len == max(len(p) for p in raw)


def test_empty_pieces_are_renamed_in_every_slice() -> None:
    raw = ["x"] * 70_000
    for i in (0, 32_767, 32_768, 69_999):
        raw[i] = ""
    pieces, table, _ = _index_pieces(tuple(raw))
    want_pieces, want_table = _reference(raw)
    assert list(pieces) == want_pieces and dict(table) == want_table
    assert table["[EMPTY_32768]"] == 32_768 and table["x"] == 69_998
