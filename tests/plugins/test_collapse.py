"""The compiled build's one-pass collapse (``custom_split.collapse``) gives
the bytes of the whole collapse table (``UnicodeTables.collapse_bytes``)
looked up for every character: ASCII, ``?`` (the byte the latin-1 pass
gives characters above U+00FF), latin-1, astral and surrogate characters,
and past the memo's misses, where it switches to the table."""

from __future__ import annotations

import random

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from tokenprism.plugins.bpe import custom_split as cs
from tokenprism.plugins.bpe.pretokenize import UnicodeTables, tables

_TAB = tables()
_TABLE = _TAB.collapse_bytes()


def _expected(text: str) -> bytes:
    cps = np.frombuffer(text.encode("utf-32-le", "surrogatepass"), dtype=np.uint32)
    return bytes(_TABLE[cps].tobytes())


def _collapse(text: str, tab: UnicodeTables) -> bytes:
    return cs.collapse(text, tab._memo, tab.collapsed_rep, tab._table_raw, b"")


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet=st.one_of(st.sampled_from("?a \n\u00e9\u00ff\u0100\u3000\U0001f600\ud800"),
                                  st.characters()), max_size=60))
def test_collapse_equals_the_table(text: str) -> None:
    assert _collapse(text, _TAB) == _expected(text)


def test_many_distinct_characters_switch_to_the_table() -> None:
    rng = random.Random(31)
    text = "".join(chr(rng.randrange(0x80, 0x110000)) for _ in range(20_000)) + "a?\u00e9?"
    fresh = UnicodeTables()
    assert _collapse(text, fresh) == _expected(text)
    assert len(fresh._collapse_raw) == len(_TABLE)  # the misses asked for the whole table


def test_known_bytes() -> None:
    # ASCII stays, a real "?" stays, a letter above U+00FF is the letter class's byte
    got = _collapse("a?\u0436", _TAB)
    assert got[:2] == b"a?"
    assert got[2] == _TAB.collapsed_rep(0x436) != ord("?")
