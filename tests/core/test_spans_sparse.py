"""The char spans from continuation-byte offsets (``span_columns``' path for
text with few non-ASCII characters) against the one-walk version and the
arrays, and the character walk it leaves dense text to."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from librt.vecs import vec
from mypy_extensions import i64

from tokenprism.core.spans import (
    _char_columns, _sparse_char_columns, assign_groups, byte_to_char_spans, continuation_bytes)

from tests.core.test_spans import span_columns

# mostly ASCII with some of every UTF-8 length and a lone surrogate (3 bytes)
_CHARS = st.sampled_from(["a", "b", " ", "\n", "é", "€", "😀", "\ud800"])


@st.composite
def mixed_text_and_spans(draw: st.DrawFn) -> tuple[str, list[int], list[int]]:
    """A text (empty, ASCII, mixed) and spans as tokenizers give them: a
    cover of its bytes in order, some cut inside characters (byte tokens),
    some empty (specials at either end, an inserted prefix), some
    overlapping the one before (a step back)."""
    text = "".join(draw(st.lists(_CHARS, max_size=40)))
    nb = len(text.encode("utf-8", "surrogatepass"))
    cuts = sorted(set(draw(st.lists(st.integers(0, nb), max_size=20))) | {0, nb})
    starts = cuts[:-1]
    ends = cuts[1:]
    if draw(st.booleans()):  # empty tokens at both ends (BOS/EOS-like)
        starts = [0, *starts, nb]
        ends = [0, *ends, nb]
    if starts and draw(st.booleans()):  # a token re-covering some of the one before
        k = draw(st.integers(0, len(starts) - 1))
        back = draw(st.integers(0, starts[k]))
        starts.insert(k + 1, back)
        ends.insert(k + 1, ends[k])
    return text, starts, ends


def _sparse(text: str, starts: list[int], ends: list[int]) -> tuple[list[int], list[int], list[int]] | None:
    cont = continuation_bytes(text)
    assert cont is not None
    out = _sparse_char_columns(cont, vec[i64](starts), vec[i64](ends))
    if out is None:
        return None
    groups = list(out[2]) if len(out[2]) else [-1] * len(starts)
    return list(out[0]), list(out[1]), groups


@settings(max_examples=500, deadline=None)
@given(mixed_text_and_spans())
def test_sparse_walk_matches_arrays_and_char_walk(case: tuple[str, list[int], list[int]]) -> None:
    text, starts, ends = case
    cs, ce = byte_to_char_spans(text, starts, ends)
    got = _sparse(text, starts, ends)
    assert got == (cs, ce, assign_groups(cs, ce))
    walk = _char_columns(text, vec[i64](starts), vec[i64](ends))
    assert walk is not None
    assert (list(walk[0]), list(walk[1])) == (cs, ce)
    cols = span_columns(text, vec[i64](starts), vec[i64](ends))
    assert cols == (tuple(cs), tuple(ce), tuple(starts), tuple(ends), tuple(assign_groups(cs, ce)))


@settings(max_examples=200, deadline=None)
@given(st.text(st.characters(codec="utf-8"), max_size=60))
def test_continuation_bytes_are_the_utf8_continuation_bytes(text: str) -> None:
    data = text.encode("utf-8")
    expected = [i for i, b in enumerate(data) if b & 0xC0 == 0x80]
    cont = continuation_bytes(text)
    assert cont is not None
    assert [int.from_bytes(cont[i:i + 8], "little") for i in range(0, len(cont), 8)] == expected


def test_continuation_bytes_over_the_limit_give_none() -> None:
    assert continuation_bytes("aé€", most=3) is not None  # 1 + 2 continuation bytes
    assert continuation_bytes("aé€", most=2) is None
    assert continuation_bytes("", most=0) == b""


def test_dense_text_takes_the_character_walk() -> None:
    # 70 000 CJK characters: 140 000 continuation bytes, past the default
    # limit, so span_columns walks the characters; same columns either way
    text = "漢字" * 35_000 + "ab"
    nb = 3 * 70_000 + 2
    assert continuation_bytes(text) is None
    starts = list(range(0, nb - 2, 3)) + [nb - 2, nb - 1]
    ends = [s + 3 for s in starts[:-2]] + [nb - 1, nb]
    # the last CJK character split in byte tokens, which share it
    starts[-3:-2] = [nb - 5, nb - 4, nb - 3]
    ends[-3:-2] = [nb - 4, nb - 3, nb - 2]
    cs, ce = byte_to_char_spans(text, starts, ends)
    cols = span_columns(text, vec[i64](starts), vec[i64](ends))
    assert cols[:2] == (tuple(cs), tuple(ce))
    assert cols[4] == tuple(assign_groups(cs, ce))
    assert tuple(cols[4][-5:]) == (69_999, 69_999, 69_999, -1, -1)  # the first byte token's index


def test_sparse_walk_out_of_order() -> None:
    text = "é" * 300
    cont = continuation_bytes(text)
    assert cont is not None
    # backwards through the text: the cursors step back, the answer holds
    offs = list(range(600, 0, -7))
    cs, ce = byte_to_char_spans(text, offs, offs)
    got = _sparse_char_columns(cont, vec[i64](offs), vec[i64](offs))
    assert got is not None and (list(got[0]), list(got[1])) == (cs, ce)
    # back and forth across the whole text: the walk would be quadratic,
    # so it gives up, and span_columns still gives the arrays' answer
    zigzag = [0, 600] * 50
    assert _sparse_char_columns(cont, vec[i64](zigzag), vec[i64](zigzag)) is None
    cs, ce = byte_to_char_spans(text, zigzag, zigzag)
    assert span_columns(text, vec[i64](zigzag), vec[i64](zigzag))[:2] == (tuple(cs), tuple(ce))


def test_mostly_ascii_text_with_a_few_non_ascii_characters() -> None:
    # the benchmark's shape: long ASCII stretches, a rare non-ASCII character
    text = ("x = 1  # ok\n" * 50 + "café ") * 20
    data = text.encode()
    starts = list(range(len(data)))
    ends = [s + 1 for s in starts]
    cs, ce = byte_to_char_spans(text, starts, ends)
    cols = span_columns(text, vec[i64](starts), vec[i64](ends))
    assert cols[:2] == (tuple(cs), tuple(ce))
    assert cols[4] == tuple(assign_groups(cs, ce))
