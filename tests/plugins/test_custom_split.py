"""The hand-written splitters (``plugins/bpe/custom_split.py``) give the
pieces the translated regexes give (``pretokenize``'s ``re`` path, itself
checked against llama.cpp by the parity tests), on random mixed-script
text and on pieces cut out of it; the module's Python source is loaded
beside the compiled one and checked too."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tokenprism.plugins.bpe import custom_split as cs
from tokenprism.plugins.bpe import pretokenize as P
from tokenprism.plugins.bpe.pretokenizers import PRE_TYPES

CUSTOM = {"gpt2": P.GPT2_REGEX, "llama3": P.LLAMA3_REGEX, "llama3-orig": P.LLAMA3_REGEX_ORIG,
          "qwen2": P.QWEN2_REGEX, "qwen35": P.QWEN35_REGEX}

# what the rules turn on: apostrophes and contraction letters of both cases,
# digit runs, \r\n, blanks before letters and punctuation, spaces of every
# kind, combining marks, non-ASCII letters and numbers, non-BMP, controls
_INTERESTING = list("'''sStTmMdDrReEvVlLx   \t\n\r\r\n\x0b\x0c\x1c\x85\xa0\u1680\u2028\u3000"
                    "0123456789\u0663\u00bd\u00b2\u2460.,!?-_()/\"#$\u2019\u00e9\u00df\u0301\u0308\u064b"
                    "\u4f60\u0e01\u0e34\U0001d400\U0001f600\U0001f999\U00010107\ue000\x00\x7f\u00ad\u200d")
_CHARS = st.one_of(st.sampled_from(_INTERESTING), st.sampled_from(_INTERESTING), st.characters(codec="utf-8"))
# runs the rules count or look ahead over
_SNIPPETS = st.sampled_from(["1234567", "12", "\u0663\u0663\u0663\u0663", "'s", "'d", "'D", "'m", "'t", "'re",
                             "'Re", "'ve", "'ll", "'LL", "'x", " 's", "\r\n", "\n\n ", "   ", " \t ", "...",
                             " !!\r\n", "ab", " Ab", "e\u0301\u0301", "\u00a0x"])
TEXT = st.lists(st.one_of(_CHARS, _SNIPPETS), max_size=40).map("".join)
SETTINGS = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _source_module() -> ModuleType:
    """``custom_split.py`` run as Python, whatever the install compiled."""
    # (from the source tree: a compiled module's __file__ names where mypyc
    # built it, which an editable install need not have)
    source = Path(__file__).resolve().parents[2] / "plugins" / "bpe" / "custom_split.py"
    spec = importlib.util.spec_from_file_location("custom_split_source", source)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


SOURCE = _source_module()


def _by_regex(regexes: tuple[str, ...], text: str) -> list[str]:
    return P.Splitter(regexes, custom=False).split(text)


def _by_custom(regexes: tuple[str, ...], text: str) -> list[str]:
    sp = P.Splitter(regexes, custom=True)
    assert any(s.kind == P.STAGE_CUSTOM for s in sp.stages)
    return sp.split(text)


@pytest.mark.parametrize("name", sorted(CUSTOM))
@SETTINGS
@given(text=TEXT)
def test_custom_split_equals_the_regex_on_whole_texts(name: str, text: str) -> None:
    regexes = (CUSTOM[name],)
    want = _by_regex(regexes, text)
    assert _by_custom(regexes, text) == want
    # the Python source gives the same
    kind = P.make_stage(CUSTOM[name], custom=True).custom
    data = P.Splitter(regexes).collapsed_bytes(text)
    assert SOURCE.split_words(kind, P.CLASS_TABLE, data, text) == want


@pytest.mark.parametrize("name", sorted(CUSTOM))
@SETTINGS
@given(text=TEXT, data=st.data())
def test_custom_split_equals_the_regex_inside_a_piece(name: str, text: str, data: st.DataObject) -> None:
    """A later stage splits ``text[a:b]`` in place: what lies outside is
    never seen (a lookahead at ``b`` sees the end)."""
    a = data.draw(st.integers(0, len(text)))
    b = data.draw(st.integers(a, len(text)))
    tab = P.tables()
    ctext = P.collapse_text(tab.collapse_bytes(), text)
    regex_stage = P.make_stage(CUSTOM[name])
    custom_stage = P.make_stage(CUSTOM[name], custom=True)
    sp = P.Splitter(())
    want: list[int] = [a]
    sp.split_piece(regex_stage, ctext, a, b, want)
    got: list[int] = [a]
    sp.split_piece(custom_stage, ctext, a, b, got)
    assert got == want
    source: list[int] = [a]
    SOURCE.split_ends(custom_stage.custom, P.CLASS_TABLE, ctext.encode("latin-1"), a, b, 0, source)
    assert source == want


@pytest.mark.parametrize("pre", ["STARCODER", "FALCON", "DEFAULT", "CHAMELEON", "LAGUNA"])
@settings(SETTINGS, max_examples=100)
@given(text=TEXT)
def test_custom_split_equals_the_regex_in_stage_lists(pre: str, text: str) -> None:
    regexes = PRE_TYPES[pre].regexes
    assert _by_custom(regexes, text) == _by_regex(regexes, text)


# pieces worked out by hand from the regexes (llama.cpp gives the same)
EXPECTED = [
    ("gpt2", "He's  here:\t42 'll'LL!!\n\n x", ["He", "'s", " ", " here", ":", "\t", "42", " '", "ll", "'", "LL",
                                               "!!", "\n\n", " x"]),
    ("gpt2", "caf\u00e9\u0301 \u0663\u0663 ", ["caf\u00e9", "\u0301", " \u0663\u0663", " "]),
    ("llama3", "He'S 12345 (word) ..\r\n  \n x ", ["He", "'S", " ", "123", "45", " (", "word", ")", " ..\r\n",
                                                  "  \n", " x", " "]),
    ("qwen2", "a1234 b", ["a", "1", "2", "3", "4", " b"]),
    ("qwen35", "e\u0301t\u00e9 \u0301x", ["e\u0301t\u00e9", " \u0301x"]),
    ("llama3", "e\u0301t", ["e", "\u0301t"]),
]


@pytest.mark.parametrize("name,text,pieces", EXPECTED)
def test_custom_split_known_pieces(name: str, text: str, pieces: list[str]) -> None:
    assert "".join(pieces) == text
    assert _by_custom((CUSTOM[name],), text) == pieces
    assert _by_regex((CUSTOM[name],), text) == pieces


def test_the_class_table_sees_what_the_regexes_see() -> None:
    """Each byte of the collapsed text is in exactly the classes the
    translated ``\\p{L}``, ``\\p{N}``, ``\\s`` and ``\\p{M}`` hold."""
    import re

    def cls(regex: str) -> re.Pattern[str]:
        py, collapsed, _ = P.translate_regex(regex)
        assert collapsed
        return re.compile(py)

    letter, number, mark, other = cls("\\p{L}"), cls("\\p{N}"), cls("\\p{M}"), cls("[^\\s\\p{L}\\p{N}]")
    for b in [*range(0x80), *P.COLLAPSED_REP.values()]:
        c = chr(b)
        want = ((cs.LETTER if letter.fullmatch(c) else 0) | (cs.NUMBER if number.fullmatch(c) else 0)
                | (cs.MARK if mark.fullmatch(c) else 0))
        if not want & (cs.LETTER | cs.NUMBER) and not other.fullmatch(c):
            want |= cs.SPACE
        assert P.CLASS_TABLE[b] == want, hex(b)


def test_a_char_at_a_time_collapse_equals_the_table() -> None:
    """``UnicodeTables.collapse`` classes a short text's chars one by one;
    the class of every flag range's ends and every space is the table's."""
    tab = P.UnicodeTables()
    table = P.tables().collapse_bytes()
    cps = {c for s in tab.starts for c in (s - 1, s, s + 1) if 0x80 <= c <= P.MAX_CP} | {
        c for c in tab.whitespace if c >= 0x80}
    for c in sorted(cps):
        assert tab.collapsed_rep(c) == table[c], hex(c)
    assert tab._collapse_bytes is None  # (not made for that)


@settings(SETTINGS, max_examples=150)
@given(text=TEXT)
def test_collapse_of_a_text_equals_the_table(text: str) -> None:
    long = (text or "a") * (4096 // max(len(text), 1) + 1)  # long enough for the char-at-a-time path
    fresh = P.UnicodeTables()  # no table yet
    assert fresh.collapse(long) == P.collapse_text(P.tables().collapse_bytes(), long).encode("latin-1")
    assert fresh._collapse_bytes is None  # (it took that path)
    assert fresh.collapse(text) == P.collapse_text(P.tables().collapse_bytes(), text).encode("latin-1")
