"""Byte spans to character spans: the one-walk version used by
``Model.encode`` against the array version, and groups."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from librt.vecs import vec
from mypy_extensions import i64

from tokenprism.core.encoding import IntColumn
from tokenprism.core.columns import as_column
from tokenprism.core.spans import assign_groups, byte_to_char_spans, char_columns, char_spans

# one character of every UTF-8 length, plus a lone surrogate (3 bytes with surrogatepass)
_CHARS = st.sampled_from(["a", " ", "é", "€", "😀", "\ud800"])


@st.composite
def text_and_spans(draw: st.DrawFn) -> tuple[str, list[int], list[int]]:
    text = "".join(draw(st.lists(_CHARS, max_size=30)))
    nb = len(text.encode("utf-8", "surrogatepass"))
    k = draw(st.integers(0, 12))
    starts = draw(st.lists(st.integers(0, nb), min_size=k, max_size=k))
    ends = draw(st.lists(st.integers(0, nb), min_size=k, max_size=k))
    if draw(st.booleans()):  # the usual case: in text order
        starts.sort()
        ends.sort()
    return text, starts, ends


@settings(max_examples=400, deadline=None)
@given(text_and_spans())
def test_char_spans_matches_arrays(case: tuple[str, list[int], list[int]]) -> None:
    text, starts, ends = case
    assert char_spans(text, list(starts), list(ends)) == byte_to_char_spans(text, starts, ends)


def test_char_spans_widen_partial_characters() -> None:
    # "a€b": € is bytes 1..4; its three byte tokens all cover character 1
    assert char_spans("a€b", [0, 1, 2, 3, 4], [1, 2, 3, 4, 5]) == ([0, 1, 1, 1, 2], [1, 2, 2, 2, 3])


def test_char_spans_far_out_of_order() -> None:
    text = "é" * 300
    offs = list(range(600, 0, -7))
    assert char_spans(text, offs, offs) == byte_to_char_spans(text, offs, offs)


def test_groups() -> None:
    # tokens 1-3 share character 1; token 4 is empty (a BOS-like token)
    assert assign_groups([0, 1, 1, 1, 2, 2], [1, 2, 2, 2, 3, 2]) == [-1, 1, 1, 1, -1, -1]


def span_columns(text: str, bstarts: vec[i64], bends: vec[i64]) -> tuple[object, ...]:
    """An encoding's five span columns as ``pipeline.encode_segments``
    makes them: the byte spans' columns, then :func:`char_columns`."""
    bs, be = as_column(bstarts), as_column(bends)
    cs, ce, groups = char_columns(text, bstarts, bends, bs, be)
    return cs, ce, bs, be, groups


@settings(max_examples=400, deadline=None)
@given(text_and_spans())
def test_span_columns_are_char_spans_byte_spans_and_groups(case: tuple[str, list[int], list[int]]) -> None:
    text, starts, ends = case
    cs, ce = byte_to_char_spans(text, starts, ends)
    cols = span_columns(text, vec[i64](starts), vec[i64](ends))
    assert cols == (tuple(cs), tuple(ce), tuple(starts), tuple(ends), tuple(assign_groups(cs, ce)))
    assert cols[4] == tuple(_reference_groups(cs, ce))
    # int64 arrays filled without an int object per value (groups: one
    # shared -1 when there are none); ASCII char spans are the byte spans
    assert all(type(c) is IntColumn for c in cols[:4])
    assert type(cols[4]) in (tuple, IntColumn)
    assert not text.isascii() or (cols[0] is cols[2] and cols[1] is cols[3])


def _reference_groups(starts: list[int], ends: list[int]) -> list[int]:
    """Groups written another way: a token overlapping the last non-empty
    one joins that one's group, or starts one there."""
    groups = [-1] * len(starts)
    last = -1
    for i, (s, e) in enumerate(zip(starts, ends)):
        if s >= e:
            continue
        if last >= 0 and s < ends[last]:
            if groups[last] < 0:
                groups[last] = last
            groups[i] = groups[last]
        last = i
    return groups


def test_span_columns_group_partial_tokens() -> None:
    # "x😀y": the emoji's four byte tokens share character 1, ASCII or not
    cols = span_columns("x😀y", vec[i64]([0, 1, 2, 3, 4, 5]), vec[i64]([1, 2, 3, 4, 5, 6]))
    assert cols[:2] == ((0, 1, 1, 1, 1, 2), (1, 2, 2, 2, 2, 3))
    assert cols[4] == (-1, 1, 1, 1, 1, -1)
    assert span_columns("ab", vec[i64]([0, 0, 1]), vec[i64]([1, 1, 2]))[4] == (0, 0, -1)
