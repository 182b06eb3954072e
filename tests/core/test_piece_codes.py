"""Pieces as native code points and the hash index over them
(``core/piece_codes.py``): decoded from GGUF string bytes exactly as
``bytes.decode("utf-8", "surrogateescape")`` decodes them, whatever the
bytes, and looked up as a dict in id order (the last duplicate wins)
answers."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.ggufmaker import string_array
from tokenprism.core.frozen import DictIndex
from tokenprism.core.piece_codes import PieceCodes, PieceIndex, codes_from_bytes, codes_of, last_ids

# bytes that make UTF-8 interesting: lead bytes of every length, the
# bounds of each second-byte range (overlongs, surrogates, > U+10FFFF),
# continuation bytes, bytes that are never valid, and ▁'s three
_EDGE_BYTES = [0x41, 0x00, 0x7F, 0x80, 0x8F, 0x90, 0x9F, 0xA0, 0xBF, 0xC0, 0xC1, 0xC2, 0xDF, 0xE0, 0xE1,
               0xEC, 0xED, 0xEE, 0xEF, 0xF0, 0xF1, 0xF3, 0xF4, 0xF5, 0xF8, 0xFE, 0xFF, 0xE2, 0x96, 0x81]

piece_bytes = st.one_of(
    st.binary(max_size=10),
    st.lists(st.sampled_from(_EDGE_BYTES), max_size=10).map(bytes),
    st.text(max_size=6).map(lambda s: s.encode("utf-8", "surrogatepass")),
)


def _texts(codes: PieceCodes) -> list[str]:
    return [codes.text(i) for i in range(len(codes))]


@settings(max_examples=400, deadline=None)
@given(st.lists(piece_bytes, max_size=25), st.binary(max_size=3))
def test_codes_decode_like_surrogateescape(items: list[bytes], lead: bytes) -> None:
    arr = string_array(items, lead)
    codes = arr.codes()
    want = [b.decode("utf-8", "surrogateescape") for b in items]
    assert _texts(codes) == want
    # the same code points from the decoded strings
    again = codes_of(want)
    assert list(again.cps) == list(codes.cps) and list(again.offs) == list(codes.offs)
    assert codes.max_length() == max((len(s) for s in want), default=0)
    assert codes.has_empty() == ("" in want)
    # and once the array is decoded, from its strings
    assert arr.totuple() == tuple(want)
    assert _texts(arr.codes()) == want


@settings(max_examples=300, deadline=None)
@given(st.lists(st.text(alphabet="ab▁é\U0001f642\udcff<>", max_size=4), max_size=60),
       st.lists(st.text(alphabet="ab▁é\U0001f642\udcff<>", max_size=5), max_size=20))
def test_index_answers_as_a_dict_in_id_order(pieces: list[str], probes: list[str]) -> None:
    index = PieceIndex(codes_of(pieces))
    last: dict[str, int] = {}
    for i, p in enumerate(pieces):
        if p:  # empty pieces are left out
            last[p] = i
    for text in pieces + probes:
        want = last.get(text, -1)
        assert index.find(text) == want
        # a slice of a longer text, looked up in place
        assert index.get("x" + text + "y", 1, 1 + len(text)) == want
        if len(text) == 1:
            assert index.char(ord(text)) == want
    # the pure build's stand-in answers the same
    alike = DictIndex(last)
    for text in pieces + probes:
        assert alike.find(text) == index.find(text)
        assert alike.get("x" + text + "y", 1, 1 + len(text)) == index.find(text)
        if len(text) == 1:
            assert alike.char(ord(text)) == index.char(ord(text))


@settings(max_examples=300, deadline=None)
@given(st.lists(st.text(alphabet="<|e▁\U0001f642>", max_size=4), max_size=80),
       st.lists(st.text(alphabet="<|e▁\U0001f642>", max_size=4), max_size=12))
def test_last_ids_find_what_the_index_finds(pieces: list[str], texts: list[str]) -> None:
    want = {t: i for t in texts if (i := PieceIndex(codes_of(pieces)).find(t)) >= 0}
    assert last_ids(codes_of(pieces), texts) == want


def test_index_with_many_pieces_and_clashing_hashes() -> None:
    # more pieces than any tag can tell apart: every lookup still compares
    pieces = [f"{i:x}" for i in range(70_000)] + ["", "\x00", "\x00\x00", "\x1f", "\x1f\x00"]
    index = PieceIndex(codes_of(pieces))
    assert all(index.find(p) == (i if p else -1) for i, p in enumerate(pieces))
    assert index.find("fffff") == -1 and index.find("\x00\x00\x00") == -1
    assert len(index) == len(pieces)


def test_lengths_that_do_not_add_up_are_errors() -> None:
    arr = string_array([b"ab", b"cde"])
    region, starts, end = arr.raw()  # type: ignore[misc]
    with pytest.raises(ValueError):
        codes_from_bytes(region, int(starts[0]), end, 3)  # one string too many
    with pytest.raises(ValueError):
        codes_from_bytes(region, int(starts[0]), end, 1)  # bytes left over
    with pytest.raises(ValueError):
        codes_from_bytes(region[:-1], int(starts[0]), end - 1, 2)  # the last one cut short
