"""The core's index over undecoded strings (``core/bytes_index.py``)
against dicts of the decoded texts: merges (the first duplicate wins, empty
strings kept), pieces (the last wins, empty ones left out), texts looked up
in place, with a space between two parts, whole, and the longest prefix;
for any bytes a file may hold (invalid UTF-8 decodes escaped) and for
pieces already decoded."""

from __future__ import annotations

from typing import Callable

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.ggufmaker import string_array
from tokenprism.core import Model
from tokenprism.core.bytes_index import NATIVE, BytesIndex, indexable, key_of, piece_lookup, raw_index
from tokenprism.core.piece_codes import PieceIndex, codes_of

# UTF-8 of every length, bytes that are never valid (escaped on decoding),
# a surrogate's bytes, ▁'s three, a space and ASCII
_EDGE = [b"a", b"b", b" ", b"\x00", b"\xe2\x96\x81", b"\xc3\xa9", b"\xf0\x9f\x99\x82", b"\x80", b"\xff",
         b"\xc3", b"\xed\xa0\x80", b"\xe2\x96", b"abcdefgh"]
raw_string = st.lists(st.sampled_from(_EDGE), max_size=5).map(b"".join)
# queries: characters no string can hold among the rest (a lone surrogate
# that is no escaped byte; escaped bytes that spell valid UTF-8 together)
_PROBE = "ab \x00▁é\U0001f642\udc80\udcff\udcc3\udca9\ud800\u00ffh"


def _first(texts: list[str]) -> dict[str, int]:
    out: dict[str, int] = {}
    for i, t in enumerate(texts):
        out.setdefault(t, i)
    return out


def _last(texts: list[str]) -> dict[str, int]:
    return {t: i for i, t in enumerate(texts) if t}


def _longest(want: dict[str, int], s: str, start: int, stop: int) -> int:
    """The longest prefix found in the dict, as ``end << 32 | index``."""
    for j in range(stop, start, -1):
        if s[start:j] in want:
            return j << 32 | want[s[start:j]]
    return -1


def _index(items: list[bytes], lead: bytes, pieces: bool) -> BytesIndex:
    region, starts, end = string_array(items, lead).raw()  # type: ignore[misc]
    return BytesIndex(region, int(starts[0]) if len(starts) else 0, end, len(items), pieces)


@settings(max_examples=250, deadline=None)
@given(st.lists(raw_string, max_size=40), st.lists(st.text(alphabet=_PROBE, max_size=11), max_size=15),
       st.binary(max_size=3), st.booleans())
def test_answers_as_a_dict_of_the_decoded_texts(items: list[bytes], probes: list[str], lead: bytes,
                                                pieces: bool) -> None:
    texts = [b.decode("utf-8", "surrogateescape") for b in items]
    want = _last(texts) if pieces else _first(texts)
    ix = _index(items, lead, pieces)
    queries = texts + probes + [t[1:] for t in texts] + [t[:-1] for t in texts]
    for q in queries:
        expected = want.get(q, -1)
        assert ix.find_text(q) == expected, q
        s = "x" + q + "y"  # in place, inside a longer text
        assert ix.get(s, 1, 1 + len(q)) == expected, q
        assert ix.longest(s, 1, 1 + len(q)) == _longest(want, s, 1, 1 + len(q)), q
        # a text and a space and a text, the way a merge is looked up
        k = len(q) // 2
        joined = q[:k] + " " + q[k:]
        assert ix.find("<" + q + ">", 1, 1 + k, 1 + len(q), True) == want.get(joined, -1), joined
    assert ix.longest("abc", 2, 2) == -1


@settings(max_examples=150, deadline=None)
@given(st.lists(raw_string, max_size=40), st.lists(st.text(alphabet=_PROBE, max_size=11), max_size=15))
def test_piece_lookup_of_undecoded_and_decoded_pieces_agree(items: list[bytes], probes: list[str]) -> None:
    """Over the file's bytes or the decoded pieces encoded again (or the
    pure build's dict), as the core's code-point index answers."""
    texts = [b.decode("utf-8", "surrogateescape") for b in items]
    want = _last(texts)
    undecoded = piece_lookup(string_array(items))
    decoded = piece_lookup(tuple(texts))
    core = PieceIndex(codes_of(texts))
    for q in texts + probes:
        expected = want.get(q, -1)
        assert undecoded.get(q, 0, len(q)) == decoded.get(q, 0, len(q)) == core.find(q) == expected, q
        s = q + "z"
        assert undecoded.longest(s, 0, len(s)) == decoded.longest(s, 0, len(s)) == _longest(want, s, 0, len(s))


def test_duplicates_first_or_last_and_empty_strings() -> None:
    items = [b"a b", b"", b"c", b"a b", b"", b"c"]
    merges = _index(items, b"", False)
    pieces = _index(items, b"", True)
    assert [merges.find_text(t) for t in ("a b", "", "c")] == [0, 1, 2]
    assert [pieces.find_text(t) for t in ("a b", "", "c")] == [3, -1, 5]
    assert merges.find("xab", 1, 2, 3, True) == 0 and pieces.find("xab", 1, 2, 3, True) == 3
    assert pieces.longest("a bc", 0, 4) == (3 << 32 | 3) and pieces.longest("cab", 0, 3) == (1 << 32 | 5)


def test_escaped_bytes_that_spell_valid_utf8_are_not_that_text() -> None:
    # b"\xc3\xa9" decodes to "é"; "\udcc3\udca9" (its bytes, escaped) is
    # another text, in no array
    ix = _index([b"\xc3\xa9", b"\xff"], b"", True)
    assert ix.find_text("é") == 0 and ix.find_text("\udcc3\udca9") == -1
    assert ix.find_text("\udcff") == 1 and ix.get("a\udcffb", 1, 2) == 1
    assert ix.longest("\udcff\udcc3", 0, 2) == (1 << 32 | 1)
    decoded = piece_lookup(("é", "\udcc3\udca9", "\ud800", "b"))
    assert decoded.get("é", 0, 1) == 0 and decoded.get("b", 0, 1) == 3
    if NATIVE:  # (the pure build's dict holds them; no text asks: Model.encode replaces surrogates)
        assert decoded.get("\ud800", 0, 1) == -1 and decoded.get("\udcc3\udca9", 0, 2) == -1
    assert decoded.longest("bé", 0, 2) == (1 << 32 | 3) and decoded.longest("ab", 0, 0) == -1


@settings(max_examples=400, deadline=None)
@given(st.binary(max_size=19), st.binary(min_size=8, max_size=8))
def test_key_reads_past_the_bytes_only_to_mask_it_off(raw: bytes, after: bytes) -> None:
    """The key's word read whole (running on into other bytes, masked) or
    byte by byte (at the buffer's end) is the same; only the length and
    first eight bytes count."""
    want = key_of(raw, 0, len(raw), len(raw))
    assert key_of(b"xy" + raw + after, 2, len(raw), len(raw) + 10) == want
    assert key_of(raw[:8] + bytes(len(raw[8:])), 0, len(raw), len(raw)) == want


def test_arrays_an_entry_cannot_address_are_not_indexed() -> None:
    """An entry packs a string's offset, a tag and a link: arrays past
    either are left to the callers' dicts."""
    assert indexable(280_147, 8_000_000) and indexable((1 << 24) - 2, (1 << 31) - 1)
    assert not indexable(1 << 24, 100) and not indexable(10, 1 << 31)
    assert raw_index(("a", "b"), True) is None and raw_index(string_array([]), False) is None


def test_bert_bge_pieces_found_at_their_last_id(ref_model: Callable[[str], Model]) -> None:
    model = ref_model("bert-bge")
    pieces = model.vocab.pieces
    index = piece_lookup(pieces)
    texts = list(pieces)
    want = _last(texts)
    assert all(index.get(t, 0, len(t)) == want[t] for t in texts if t)
    assert index.get("▁nosuchpiecehere", 0, 16) == -1
    # the longest piece at the start of a word, as WPM's dict-lookup cut asks it
    w = "▁tokenizers"
    hit = index.longest(w, 0, len(w))
    assert (hit >> 32, texts[hit & 0xFFFFFFFF]) == (6, "▁token")


def test_crowded_chains_find_every_string_and_no_other() -> None:
    """Two strings a slot on average, all of one length: a chain is
    walked past entries of other keys (their tags differ) and of the same
    key (their bytes differ) to the one asked for."""
    items = [f"w{i:05d}".encode() for i in range(3000)] + [b"w00007"]
    index = _index(items, b"", False)
    texts = [b.decode() for b in items]
    assert [index.get(t, 0, len(t)) for t in texts[:3000]] == list(range(3000))
    assert index.get("w00007", 0, 6) == 7  # the first duplicate (merges)
    assert all(index.get(f"x{i:05d}", 0, 6) == -1 for i in range(3000))
    assert index.find("aw00012z", 1, 4, 7, False) == 12 and index.find("w00012", 0, 3, 6, True) == -1
    assert _index(items, b"", True).get("w00007", 0, 6) == 3000  # the last (pieces)


@settings(max_examples=150, deadline=None)
@given(st.lists(raw_string, max_size=40), st.binary(max_size=3), st.booleans())
def test_offsets_read_where_the_array_keeps_them(items: list[bytes], lead: bytes, pieces: bool) -> None:
    """Made over the array's own ``starts`` (``raw_index``: chained from
    the last string back for merges, so the first duplicate heads its
    chain) or over offsets found by a walk of the length prefixes: the
    same answers, the dict's."""
    texts = [b.decode("utf-8", "surrogateescape") for b in items]
    want = _last(texts) if pieces else _first(texts)
    walked = _index(items, lead, pieces)
    kept = raw_index(string_array(items, lead), pieces)
    assert (kept is None) == (not items)
    for ix in (walked, kept) if kept is not None else (walked,):
        for q in texts + [t[1:] for t in texts]:
            assert ix.find_text(q) == ix.get("<" + q + ">", 1, 1 + len(q)) == want.get(q, -1), q


def test_offsets_past_the_array_are_refused() -> None:
    region, starts, end = string_array([b"ab", b"cd"]).raw()  # type: ignore[misc]
    good = bytes(starts)
    BytesIndex(region, 0, end, 2, False, None, good)
    for bad in (good[:8] + (end - 4).to_bytes(8, "little"), good[:8] + (-1).to_bytes(8, "little", signed=True),
                good[:8]):
        with pytest.raises(ValueError):
            BytesIndex(region, 0, end, 2, False, None, bad)
    with pytest.raises(ValueError):  # a length prefix running past the end
        BytesIndex(region, 0, end - 1, 2, True)
