"""The BPE plugin's data: the pre-tokenizer table and the Unicode tables
are checked against llama.cpp's sources when those are at hand
(``TOKENPRISM_LLAMA_CPP_SRC`` = llama.cpp's ``src/`` folder), and the regex
translation is checked on hand-picked cases."""

from __future__ import annotations

import re

import numpy as np
import pytest

from tests.refdata import LLAMA_CPP_SRC, needs_llama_src
from tokenprism.plugins.bpe import pretokenize as P
from tokenprism.core import unicode_data as ud
from tokenprism.core.unicode_ranges import flag_ranges, merged
from tokenprism.plugins.bpe.pretokenizers import PRE_NAMES, PRE_TYPES

SRC = LLAMA_CPP_SRC
needs_src = needs_llama_src


def _c_string(body: str) -> str:
    esc = {"n": "\n", "r": "\r", "t": "\t", "\\": "\\", '"': '"', "'": "'"}
    return re.sub(r"\\(.)", lambda m: esc[m.group(1)], body)


@needs_src
def test_unicode_tables_match_llama_cpp() -> None:
    assert SRC is not None
    src = (SRC / "unicode-data.cpp").read_text()
    part = src[src.index("unicode_ranges_flags ="):src.index("unicode_set_whitespace =")]
    flags = [int(x, 16) for pair in re.findall(r"\{0x([0-9A-F]+), 0x([0-9A-F]+)\}", part) for x in pair]
    assert tuple(flags) == ud.FLAG_RANGES
    part = src[src.index("unicode_set_whitespace ="):src.index("unicode_map_lowercase =")].split("{", 1)[1]
    assert tuple(int(x, 16) for x in re.findall(r"0x([0-9A-F]+)", part)) == ud.WHITESPACE
    part = src[src.index("unicode_map_lowercase ="):src.index("unicode_map_uppercase =")]
    low = [int(x, 16) for pair in re.findall(r"\{0x([0-9A-F]+), 0x([0-9A-F]+)\}", part) for x in pair]
    assert tuple(low) == ud.LOWERCASE
    part = src[src.index("unicode_ranges_nfd ="):]
    part = part[:part.index("};")]
    # (llama.cpp's table opens with a {0, 0, 0} row, its sentinel)
    rows = [tuple(int(x, 16) for x in row)
            for row in re.findall(r"\{0x([0-9A-F]+), 0x([0-9A-F]+), 0x([0-9A-F]+)\}", part)]
    nfd = [x for row in rows if row != (0, 0, 0) for x in row]
    assert tuple(nfd) == ud.NFD


@needs_src
def test_pre_types_match_llama_cpp() -> None:
    assert SRC is not None
    src = (SRC / "llama-vocab.cpp").read_text()
    ctor = src[src.index("llm_tokenizer_bpe(const llama_vocab & vocab) {"):
               src.index("std::vector<std::string> regex_exprs;\n    bool byte_encode")]
    found: dict[str, tuple[tuple[str, ...], bool]] = {}
    for block in re.split(r"\n\s*break;", ctor):
        cases = re.findall(r"case LLAMA_VOCAB_PRE_TYPE_(\w+):", block)
        if "default:" in block:
            cases.append("DEFAULT")
        if "regex_exprs = {" not in block:
            continue
        body = block[block.index("regex_exprs = {"):]
        body = body[:body.index("};")]
        regexes = tuple(_c_string(m.group(1)) for line in body.split("\n")
                        if (m := re.match(r'\s*"((?:[^"\\]|\\.)*)"', line)))
        for c in cases:
            found[c] = (regexes, "byte_encode = false" not in block)
    assert set(found) == set(PRE_TYPES)
    for name, (regexes, byte_encode) in found.items():
        assert PRE_TYPES[name].regexes == regexes, name
        assert PRE_TYPES[name].byte_encode == byte_encode, name


@needs_src
def test_pre_names_match_llama_cpp() -> None:
    assert SRC is not None
    src = (SRC / "llama-vocab.cpp").read_text()
    chain = src[src.index('} else if (tokenizer_pre == "default") {'):
                src.index("} else if (type == LLAMA_VOCAB_TYPE_SPM) {")]
    seen = set()
    for branch in chain.split("} else if (")[1:]:
        names = re.findall(r'tokenizer_pre == "([^"]+)"', branch)
        ptype = re.search(r"pre_type = LLAMA_VOCAB_PRE_TYPE_(\w+);", branch)
        assert names and ptype
        opts = {k: m.group(1) == "true" for k in ("ignore_merges", "clean_spaces", "add_bos", "escape_whitespaces")
                if (m := re.search(k + r" = (true|false);", branch))}
        for n in names:
            seen.add(n)
            pre = PRE_NAMES[n]
            assert pre.pre_type == ptype.group(1), n
            assert pre.ignore_merges == opts.get("ignore_merges", False), n
            assert pre.clean_spaces == opts.get("clean_spaces", True), n
            assert pre.add_bos == opts.get("add_bos", False), n
            assert pre.escape_whitespaces == opts.get("escape_whitespaces", False), n
            assert pre.bos_none == ("special_bos_id = LLAMA_TOKEN_NULL" in branch), n
    assert seen == set(PRE_NAMES)


def test_tables_are_consistent() -> None:
    assert len(PRE_NAMES) >= 90
    assert all(p.pre_type in PRE_TYPES for p in PRE_NAMES.values())
    assert ud.FLAG_RANGES[0] == 0 and ud.FLAG_RANGES[-2] == 0x110000
    for t in PRE_TYPES.values():
        P.Splitter(t.regexes)  # every regex translates and compiles


def _split(regexes: tuple[str, ...], text: str) -> list[str]:
    return P.Splitter(regexes).split(text)


def test_gpt2_splitter() -> None:
    gpt2 = PRE_TYPES["GPT2"].regexes
    assert _split(gpt2, "Hello world's  end") == ["Hello", " world", "'s", " ", " end"]
    assert _split(gpt2, "a \t\n b") == ["a", " \t\n", " b"]
    # U+3000 is whitespace in llama.cpp's table; U+200B is not
    assert _split(gpt2, "x\u3000\u3000y\u200bz") == ["x", "\u3000", "\u3000", "y", "\u200b", "z"]
    assert _split(gpt2, "x  ") == ["x", "  "]


def test_llama3_splitter() -> None:
    llama3 = PRE_TYPES["LLAMA3"].regexes
    assert _split(llama3, "I'M 12345 ok\r\n\n  x") == ["I", "'M", " ", "123", "45", " ok", "\r\n\n", " ", " x"]
    assert _split(llama3, "!!'s\n") == ["!!'", "s", "\n"]


def test_std_regex_whitespace() -> None:
    # std::regex \s is the C locale's six; non-ASCII whitespace only counts
    # because llama.cpp replaced it by \v first
    assert P.Splitter(("\\s+",)).split("a\x1c\u3000 b") == ["a\x1c", "\u3000 ", "b"]
    # a non-ASCII whitespace char in a class never matches (it became \v)
    assert P.Splitter(("[\u3000-\u3002]+",)).split("\u3000\u3001") == ["\u3000", "\u3001"]


def test_collapsed_categories() -> None:
    # \p{N} covers non-ASCII digits; \p{P} and ASCII punctuation per llama.cpp's map
    assert _split(("\\p{N}",), "a\u0663\u00bd") == ["a", "\u0663", "\u00bd"]
    assert _split(PRE_TYPES["DEFAULT"].regexes, "x$+y,,1234") == ["x", "$+", "y", ",,", "123", "4"]


def test_afmoe_digits_and_kimi() -> None:
    stage = P.Splitter(("\\p{AFMoE_digits}",))
    assert stage.split("ab12345c") == ["ab12", "345", "c"]
    kimi = P.Splitter(("\\p{Han}+",))
    assert kimi.split("你好world's 123456 x") == ["你好", "world's", " ", "123", "456", " x"]


def test_regex_mixing_categories_and_non_ascii_is_rejected() -> None:
    with pytest.raises(ValueError):
        P.translate_regex("\\p{L}\u00e9")


def _rows(bit: int) -> list[tuple[int, int]]:
    """The code points of one category, row by row of the flag table (the
    plain loop the tables were first built with)."""
    data = ud.FLAG_RANGES
    starts, flags = data[0::2], data[1::2]
    return merged([(starts[k], starts[k + 1] - 1) for k in range(len(starts) - 1) if flags[k] & bit])


@pytest.mark.parametrize("bit", [ud.NUMBER, ud.LETTER, ud.PUNCTUATION, ud.ACCENT_MARK, ud.SYMBOL, ud.CONTROL])
def test_category_ranges_equal_the_row_loop(bit: int) -> None:
    assert flag_ranges(bit) == _rows(bit)
    if bit != ud.CONTROL:
        assert P.tables().categories()[bit] == _rows(bit)


def _painted(runs: list[tuple[int, int, int]]) -> np.ndarray:
    out = bytearray(range(128)) + bytes([P.COLLAPSED_REP[0xD0]]) * (P.MAX_CP + 1 - 128)
    for lo, hi, rep in runs:
        out[lo:hi + 1] = bytes([rep]) * (hi - lo + 1)
    return np.frombuffer(bytes(out), dtype=np.uint8)


def test_collapse_table_equals_painting_each_class() -> None:
    tab = P.tables()
    runs = [(lo, hi, P.COLLAPSED_REP[val]) for val, part in tab.collapsed_classes().items() for lo, hi in part]
    runs += [(lo, hi, P.COLLAPSED_REP[0x0B]) for lo, hi in tab.nonascii_ws]
    table = tab.collapse_bytes()
    assert table.dtype == np.uint8 and len(table) == P.MAX_CP + 1
    assert np.array_equal(table, _painted(runs))
    # spot checks against the classes themselves
    assert table[ord("a")] == ord("a") and table[0x3000] == P.COLLAPSED_REP[0x0B]
    assert table[ord("é")] == P.COLLAPSED_REP[0xD2] and table[0x0660] == P.COLLAPSED_REP[0xD1]


@pytest.mark.parametrize("runs", [
    [(0x80, 0x100, 0x82), (0x90, 0x95, 0x83), (0x101, P.MAX_CP, 0x81)],  # overlap: the later run wins
    [(0x80, 0x100, 0x82), (0x200, P.MAX_CP, 0x83)],  # a gap keeps the default class
    [(0x80, P.MAX_CP, 0x84), (0x80, 0x80, 0x85)],  # same start, later one wins
])
def test_collapse_table_of_runs_that_do_not_tile(runs: list[tuple[int, int, int]]) -> None:
    assert np.array_equal(P._paint_runs(runs), _painted(runs))


@pytest.mark.parametrize("text", ["ab  \n", "ab", "", "\U0010ffff \ud800", "x\n y"])
def test_anchors_translate_to_text_ends(text: str) -> None:
    end = re.compile(P.translate_regex("\\s+$")[0])
    start = re.compile(P.translate_regex("^\\S")[0])
    want_end = re.search(r"\s+\Z", text)
    got = end.search(text)
    assert (got and got.span()) == (want_end and want_end.span())
    assert [m.span() for m in start.finditer(text)] == [m.span() for m in re.finditer(r"\A\S", text)]
    # and inside a window, as the splitter runs it on pieces
    if len(text) > 2:
        got = end.search(text, 0, 2)
        want = re.compile(r"\s+\Z").search(text, 0, 2)
        assert (got and got.span()) == (want and want.span())
