"""WPM's first piece index, over the pieces' undecoded bytes
(``plugins/wpm/piece_bytes.py``), answers as the core's code-point index
and as a dict in id order: for any bytes a file may hold (invalid UTF-8
decodes escaped), for decoded pieces, and for the longest-match search the
dict-lookup cut makes."""

from __future__ import annotations

from typing import Callable

from hypothesis import given, settings
from hypothesis import strategies as st

from tests.ggufmaker import string_array
from tokenprism.core import Model
from tokenprism.core.piece_codes import PieceIndex, codes_of
from tokenprism.plugins.wpm.piece_bytes import NATIVE, PieceBytes, piece_bytes

# UTF-8 of every length, bytes that are never valid (escaped on decoding),
# a surrogate's bytes, ▁'s three and ASCII
_EDGE = [b"a", b"b", b"\x00", b"\xe2\x96\x81", b"\xc3\xa9", b"\xf0\x9f\x99\x82", b"\x80", b"\xff",
         b"\xc3", b"\xed\xa0\x80", b"\xe2\x96"]
raw_piece = st.lists(st.sampled_from(_EDGE), max_size=4).map(b"".join)
# queries: the pieces' texts, their slices, and characters no piece can hold
_PROBE = "ab\x00▁é\U0001f642\udc80\udcff\ud800\u00ff"


def _last(texts: list[str]) -> dict[str, int]:
    out: dict[str, int] = {}
    for i, t in enumerate(texts):
        if t:  # empty pieces are left out
            out[t] = i
    return out


def _longest_by_get(index: PieceBytes, s: str, start: int, stop: int) -> int:
    """``longest`` spelled out: every end from ``stop`` down."""
    for j in range(stop, start, -1):
        tid = index.get(s, start, j)
        if tid >= 0:
            return j << 32 | tid
    return -1


@settings(max_examples=300, deadline=None)
@given(st.lists(raw_piece, max_size=40), st.lists(st.text(alphabet=_PROBE, max_size=5), max_size=15),
       st.binary(max_size=3))
def test_bytes_index_answers_as_the_code_point_index(items: list[bytes], probes: list[str],
                                                       lead: bytes) -> None:
    texts = [b.decode("utf-8", "surrogateescape") for b in items]
    want = _last(texts)
    undecoded = piece_bytes(string_array(items, lead))
    decoded = piece_bytes(tuple(texts))
    core = PieceIndex(codes_of(texts))
    for q in texts + probes + [t[1:] for t in texts] + [t[:-1] for t in texts]:
        expected = want.get(q, -1)
        assert undecoded.get(q, 0, len(q)) == expected, q
        assert decoded.get(q, 0, len(q)) == expected, q
        assert core.find(q) == expected
        # inside a longer text, and the longest-match search over it
        s = "x" + q + "y"
        assert undecoded.get(s, 1, 1 + len(q)) == expected
        assert undecoded.longest(s, 1, 1 + len(q)) == _longest_by_get(undecoded, s, 1, 1 + len(q))


def test_unencodable_decoded_piece_is_never_found() -> None:
    # a lone surrogate no file's bytes decode to (texts never hold one)
    index = piece_bytes(("a", "\ud800", "b"))
    assert index.get("a", 0, 1) == 0 and index.get("b", 0, 1) == 2
    if NATIVE:  # (the pure build's dict holds it; no text asks)
        assert index.get("\ud800", 0, 1) == -1
    assert index.longest("ab", 0, 2) == (1 << 32 | 0)
    assert index.longest("ab", 0, 0) == -1


def test_bert_bge_pieces_found_at_their_last_id(ref_model: Callable[[str], Model]) -> None:
    model = ref_model("bert-bge")
    pieces = model.vocab.pieces
    index = piece_bytes(pieces)
    texts = list(pieces)
    want = _last(texts)
    assert all(index.get(t, 0, len(t)) == want[t] for t in texts if t)
    assert index.get("▁nosuchpiecehere", 0, 16) == -1
    # the longest piece at the start of a word, as the dict-lookup cut asks it
    w = "▁tokenizers"
    hit = index.longest(w, 0, len(w))
    assert (hit >> 32, texts[hit & 0xFFFFFFFF]) == (6, "▁token")
