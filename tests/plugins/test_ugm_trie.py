"""The UGM piece trie (``plugins/ugm/trie.py``) answers every question a
``dict`` of every piece and every prefix of one would: the token of a piece,
-1 for a proper prefix, -2 for anything else; and it walks the way the
Viterbi pass walks it (``child``, ``token``, ``has_children``)."""

from __future__ import annotations

import random

from hypothesis import given, settings
from hypothesis import strategies as st
from librt.vecs import vec
from mypy_extensions import i64

from tokenprism.core.piece_codes import codes_of
from tokenprism.plugins.ugm.trie import NO_NODE, PieceTrie, build_trie, step_node


def _trie(pieces: list[str], first_below: int = 0x800) -> PieceTrie:
    ids = vec[i64](range(len(pieces)))
    codes = codes_of(pieces)
    return build_trie(codes, ids, 0x2581, first_below)[0]


def _prefix_dict(pieces: list[str]) -> dict[str, int]:
    ref: dict[str, int] = {}
    for p in pieces:
        for k in range(1, len(p)):
            ref.setdefault(p[:k], -1)
    for tid, p in enumerate(pieces):
        if p:
            ref[p] = tid
    return ref


def test_pieces_prefixes_and_misses() -> None:
    pieces = ["\u2581the", "\u2581th", "t", "he", "\u2581", "x\U0001F600y", "\U0010FFFF", "\0a"]
    trie = _trie(pieces)
    assert trie.lookup("\u2581the") == 0
    assert trie.lookup("\u2581th") == 1
    assert trie.lookup("\u2581t") == -1
    assert trie.lookup("\u2581") == 4
    assert trie.lookup("x") == -1
    assert trie.lookup("x\U0001F600") == -1
    assert trie.lookup("x\U0001F600y") == 5
    assert trie.lookup("\U0010FFFF") == 6
    assert trie.lookup("\0") == -1
    assert trie.lookup("\0a") == 7
    assert trie.lookup("h") == -1
    assert trie.lookup("the") == -2
    assert trie.lookup("") == -2
    assert trie.lookup("\u2581thex") == -2


def test_a_piece_listed_twice_keeps_the_last_id() -> None:
    # llama.cpp's trie overwrites the value of a piece inserted again
    trie = _trie(["ab", "a", "ab", "b", "ab"])
    assert trie.lookup("ab") == 4
    assert trie.lookup("a") == 1


def test_empty_pieces_match_nothing() -> None:
    trie = _trie(["", "a", ""])
    assert trie.lookup("a") == 1
    assert trie.lookup("") == -2


def test_walk_and_first_table() -> None:
    trie = _trie(["ab", "abc", "\u4e00"], first_below=0x80)
    a = trie.child(0, ord("a"))
    assert a != NO_NODE and trie.first[ord("a")] == trie.step(0, ord("a"))
    assert trie.token(a) == -1 and trie.has_children(a)
    ab = trie.child(a, ord("b"))
    assert trie.token(ab) == 0 and trie.has_children(ab)
    abc = trie.child(ab, ord("c"))
    assert trie.token(abc) == 1 and not trie.has_children(abc)
    assert trie.child(abc, ord("d")) == NO_NODE
    assert trie.first[ord("b")] == NO_NODE
    assert len(trie.first) == 0x80  # U+4E00 is found by a probe only
    assert trie.token(trie.child(0, 0x4E00)) == 2
    # step packs child, token and has_children
    for node, cp in ((0, ord("a")), (a, ord("b")), (ab, ord("c")), (0, 0x4E00)):
        r = trie.step(node, cp)
        kid = trie.child(node, cp)
        assert step_node(r) == kid
        assert (r >> 32) - 1 == trie.token(kid)
        assert (r >> 31) & 1 == int(trie.has_children(kid))
    assert trie.step(abc, ord("d")) == NO_NODE


def test_many_pieces_against_a_dict() -> None:
    rng = random.Random(5)
    alphabet = "ab\u2581\u00e9\u4e00\U0001F600z"
    pieces = ["".join(rng.choice(alphabet) for _ in range(rng.randint(1, 7))) for _ in range(3000)]
    trie = _trie(pieces)
    ref = _prefix_dict(pieces)
    for key, val in ref.items():
        assert trie.lookup(key) == val
    for _ in range(2000):
        q = "".join(rng.choice(alphabet) for _ in range(rng.randint(1, 8)))
        assert trie.lookup(q) == ref.get(q, -2)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.text(st.characters(blacklist_categories=("Cs",)), max_size=6), max_size=40),
       st.lists(st.text(st.characters(blacklist_categories=("Cs",)), min_size=1, max_size=6), max_size=20))
def test_any_pieces_against_a_dict(pieces: list[str], queries: list[str]) -> None:
    trie = _trie(pieces)
    ref = _prefix_dict(pieces)
    for key in list(ref) + queries:
        assert trie.lookup(key) == ref.get(key, -2)
