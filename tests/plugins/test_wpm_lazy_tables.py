"""The WPM plugin's character tables fill one code point at a time, as
texts bring them: every code point must get the class and normalized form
that the Unicode-wide tables (``CharClasses``, ``_translate_table``,
built range by range from llama.cpp's flag and NFD tables) give it, in all
four normalizer settings."""

from __future__ import annotations

import pytest

from tokenprism.plugins.wpm.wpm import SPLIT, WORD, WS, CharClasses, _class_bytes, _Tables, _translate_table

# every code point, lone surrogates included (a str can hold them)
_ALL = "".join(map(chr, range(0x110000)))


@pytest.mark.parametrize("strip_accents", [True, False])
@pytest.mark.parametrize("lowercase", [True, False])
def test_lazy_tables_equal_the_unicode_wide_ones(lowercase: bool, strip_accents: bool) -> None:
    lazy = _Tables(lowercase, strip_accents)
    # nothing beyond ASCII is made before a text needs it
    assert max(lazy.norm(), default=0) < 0x80
    assert lazy.kinds(_ALL) == _class_bytes(CharClasses(strip_accents))
    wide = _translate_table(lowercase, strip_accents)
    assert lazy.norm() == {cp: n for cp, n in wide.items() if n != cp}


def test_a_text_fills_only_its_own_code_points() -> None:
    lazy = _Tables(True, True)
    assert list(lazy.kinds("Ça ,")) == [WORD, WORD, WS, SPLIT]
    # 'Ç' (NFD: 'C' + cedilla, lowercased: 'c'), and no other non-ASCII
    assert {cp: n for cp, n in lazy.norm().items() if cp >= 0x80} == {ord("Ç"): ord("c")}
    assert lazy.kinds("abc") == bytes([WORD, WORD, WORD])
