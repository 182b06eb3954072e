"""WPM (WordPiece, ``tokenizer.ggml.model`` = ``bert``): parity with
llama.cpp, configuration, spans and the Unicode tables.

Expected ids not taken from the reference files were produced by llama.cpp
(llama-cpp-python 0.3.36) on the same GGUF files these tests write.
"""

from __future__ import annotations

import os
import unicodedata
from pathlib import Path
from typing import Any, Sequence

import pytest

from tests.refdata import parity_params

gguf = pytest.importorskip("gguf")

from tokenprism.core import open_model  # noqa: E402
from tokenprism.core.model import Model  # noqa: E402
from tests.plugins import wpm_tables as ut  # noqa: E402
from tokenprism.plugins.wpm.wpm import (  # noqa: E402
    DROP, SPLIT, WORD, WS, CharClasses, WpmTokenizer, _ascii_class_bytes, build_wpm,
)


# ---- writing small bert GGUF files --------------------------------------------

def write_wpm_gguf(path: str | os.PathLike[str], tokens: Sequence[str], types: Sequence[int],
                   special: dict[str, int] | None = None, lowercase: bool | None = None,
                   strip_accents: bool | None = None, bools: dict[str, bool] | None = None) -> str:
    """A vocab-only ``bert`` GGUF that llama.cpp can load (``special``:
    ``{"unk": 100, "sep": 102, ...}``; ``None`` flags are left out)."""
    w = gguf.GGUFWriter(os.fspath(path), "bert")
    w.add_block_count(1)
    w.add_context_length(512)
    w.add_embedding_length(8)
    w.add_feed_forward_length(8)
    w.add_head_count(1)
    w.add_layer_norm_eps(1e-12)
    w.add_causal_attention(False)
    w.add_token_type_count(2)
    w.add_tokenizer_model("bert")
    w.add_tokenizer_pre("default")
    w.add_token_list(list(tokens))
    w.add_token_types(list(types))
    for name, tid in (special or {}).items():
        getattr(w, f"add_{name}_token_id")(tid)
    if lowercase is not None:
        w.add_bool("tokenizer.ggml.normalizer.lowercase", lowercase)
    if strip_accents is not None:
        w.add_bool("tokenizer.ggml.normalizer.strip_accents", strip_accents)
    for key, value in (bools or {}).items():
        w.add_bool(key, value)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    return os.fspath(path)


def small_vocab() -> tuple[list[str], list[int]]:
    """ids 0-103 as in BERT ([PAD], [unused*], [UNK]=100, [CLS]=101,
    [SEP]=102, [MASK]=103), then a few pieces (see SMALL)."""
    tokens = ["[PAD]"] + [f"[unused{i}]" for i in range(99)] + ["[UNK]", "[CLS]", "[SEP]", "[MASK]"]
    types = [3] * len(tokens)
    tokens += SMALL
    types += [1] * len(SMALL)
    return tokens, types


SMALL = [
    "▁hello", "▁world", "▁cafe", "▁un", "aff", "able", "▁,", "▁!", "▁中", "▁a",  # 104-113
    "b", "▁x", "y", "▁", "▁i", "s", "▁hel", "lo", "▁café", "▁Hello",           # 114-123
    "▁ı", "▁ᄒ", "▁한", "▁$", "▁+", "▁·", "▁`", "é", "▁e", "\u0301",               # 124-133
]


def sid(piece: str) -> int:
    return 104 + SMALL.index(piece)


@pytest.fixture(scope="module")
def small_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    d = tmp_path_factory.mktemp("wpm")
    tokens, types = small_vocab()
    write_wpm_gguf(d / "default.gguf", tokens, types)
    for lc in (True, False):
        for st in (True, False):
            write_wpm_gguf(d / f"lc{int(lc)}-st{int(st)}.gguf", tokens, types, lowercase=lc, strip_accents=st)
    write_wpm_gguf(d / "lc0.gguf", tokens, types, lowercase=False)
    write_wpm_gguf(d / "keys.gguf", tokens, types, special={"unk": 120, "sep": 121, "bos": 105},
                   bools={"tokenizer.ggml.add_bos_token": False})
    write_wpm_gguf(d / "tiny.gguf", ["[PAD]", "▁a", "b"], [3, 1, 1])
    return d


@pytest.fixture(scope="module")
def small(small_dir: Path) -> Model:
    return open_model(small_dir / "default.gguf")


# ---- parity with llama.cpp's reference tokenizations ----------------------------

@pytest.mark.parametrize("case", parity_params(["bert-bge"]))
def test_parity(case: Any, ref_model: Any) -> None:
    model = ref_model(case.vocab)
    assert model.encode(case.text, case.add_special, case.parse_special).ids == list(case.ids)


# Checked against llama.cpp on ggml-vocab-bert-bge.gguf (no normalizer keys:
# lowercase and strip_accents both on).
BGE_EXTRA = [
    # U+0130 lowercases to "i" (simple mapping); no final-sigma rule
    ("İstanbul ΣΊΣΥΦΟΣ straße", [9960, 1173, 18199, 29733, 29735, 29736, 29730, 29733, 2358, 27807]),
    # format controls, NUL and U+FFFD are dropped, so is a lone accent
    ("x\u200by \u0301a \x00\ufffd", [1060, 2100, 1037]),
    # NFD keeps only its first code point: a Hangul syllable becomes its
    # leading jamo; Devanagari vowel signs (Mc and Mn) are dropped
    ("안녕하세요 हिन्दी", [1463, 29992, 30005, 29997, 29999, 1339, 29863, 29861]),
    # classes come from the NFD: GREEK VARIA is "`" (an ASCII symbol)
    ("\u1fefx \u037e \u0387", [1036, 1060, 1025, 1087]),
    # llama.cpp's whitespace set; U+001C is a control, not whitespace
    ("a\u3000b\u2028c\x85d\x1ce", [1037, 1038, 1039, 2139]),
]


@pytest.mark.parametrize("text,ids", BGE_EXTRA)
def test_bge_extra(text: str, ids: list[int], ref_model: Any) -> None:
    assert ref_model("bert-bge").encode(text).ids == ids


# ---- configuration -------------------------------------------------------------

def test_registered_and_config(small: Model) -> None:
    assert small.spec.name == "wpm"
    assert isinstance(small.tokenizer, WpmTokenizer)
    cfg = small.config
    assert cfg.kind == "WPM"
    assert cfg.normalizes and cfg.clean_spaces and not cfg.add_space_prefix and not cfg.byte_level
    assert cfg.add_bos and not cfg.add_eos
    assert cfg.special_prefix == (101,) and cfg.special_suffix == (102,)
    assert {k: cfg.special_ids[k] for k in ("bos", "unk", "sep", "pad", "mask")} == \
        {"bos": 101, "unk": 100, "sep": 102, "pad": 0, "mask": 103}
    assert "eos" not in cfg.special_ids


def test_special_keys_override_defaults(small_dir: Path) -> None:
    m = open_model(small_dir / "keys.gguf")
    assert m.config.special_prefix == (105,) and m.config.special_suffix == (121,)
    assert not m.config.add_bos
    # llama.cpp adds bos and sep with add_special whatever add_bos_token says
    assert m.encode("hello zz", add_special=True).ids == [105, 104, 120, 121]


def test_defaults_outside_small_vocab(small_dir: Path) -> None:
    m = open_model(small_dir / "tiny.gguf")
    assert m.config.special_prefix == () and m.config.special_suffix == ()
    assert m.config.special_ids.get("pad") == 0
    assert m.encode("ab").ids == [1, 2]
    # no unknown token: llama.cpp would emit LLAMA_TOKEN_NULL (-1); the word is left out
    assert m.encode("ab zz ab").ids == [1, 2, 1, 2]


@pytest.mark.parametrize("name,lowercase,strip", [
    ("default", True, True), ("lc0", False, False), ("lc1-st1", True, True), ("lc1-st0", True, False),
    ("lc0-st1", False, True), ("lc0-st0", False, False),
])
def test_normalizer_flags(small_dir: Path, name: str, lowercase: bool, strip: bool) -> None:
    m = open_model(small_dir / f"{name}.gguf")
    tok = m.tokenizer
    assert isinstance(tok, WpmTokenizer)
    assert (tok.lowercase, tok.strip_accents) == (lowercase, strip)


# Checked against llama.cpp, per normalizer setting.
FLAG_CASES = {
    "default": [("Hello CAFÉ Café", [104, 106, 106]), ("İs", [118, 119]), ("I", [118]),
                ("한", [125]), ("cafe\u0301", [106])],
    "lc1-st0": [("Hello CAFÉ Café", [104, 122, 122]), ("İs", [118, 119]), ("한", [126]),
                ("cafe\u0301", [106, 133]), ("e\u0301", [132, 133]), ("\u0301", [117, 133])],
    "lc0-st1": [("Hello CAFÉ Café", [123, 100, 100]), ("hello cafe", [104, 106]),
                ("cafe\u0301", [106]), ("한", [125])],
    "lc0-st0": [("Hello CAFÉ café", [123, 100, 122]), ("한", [126]), ("e\u0301", [132, 133])],
    "lc0": [("Hello CAFÉ café", [123, 100, 122])],
}


@pytest.mark.parametrize("name,text,ids", [(n, t, i) for n, cases in FLAG_CASES.items() for t, i in cases])
def test_normalizer_behaviour(small_dir: Path, name: str, text: str, ids: list[int]) -> None:
    assert open_model(small_dir / f"{name}.gguf").encode(text).ids == ids


# ---- the algorithm ---------------------------------------------------------------

def test_greedy_longest_first(small: Model) -> None:
    assert small.encode("unaffable").ids == [sid("▁un"), sid("aff"), sid("able")]
    assert small.encode("hello hel").ids == [sid("▁hello"), sid("▁hel")]
    assert small.encode("hellolo").ids == [sid("▁hello"), sid("lo")]


def test_unknown_word_is_one_token(small: Model) -> None:
    # "▁hel" and "lo" match, "z" does not: the whole word is one [UNK]
    assert small.encode("hellz world").ids == [100, sid("▁world")]


def test_word_mark_alone(small: Model) -> None:
    # "▁b" is not in the vocab but "▁" and "b" are
    enc = small.encode("a b")
    assert enc.ids == [sid("▁a"), sid("▁"), sid("b")]
    assert (enc.byte_starts[1], enc.byte_ends[1]) == (2, 2)
    assert (enc.byte_starts[2], enc.byte_ends[2]) == (2, 3)


def test_splitting(small: Model) -> None:
    assert small.encode("hello,world!").ids == [sid("▁hello"), sid("▁,"), sid("▁world"), sid("▁!")]
    assert small.encode("a中b").ids == [sid("▁a"), sid("▁中"), sid("▁"), sid("b")]
    assert small.encode("x$y+x").ids == [sid("▁x"), sid("▁$"), sid("▁"), sid("y"), sid("▁+"), sid("▁x")]


def test_special_text_is_plain_without_parse_special(small: Model) -> None:
    assert small.encode("[CLS]hello").ids == [100, 100, 100, sid("▁hello")]
    assert small.encode("[CLS]hello", parse_special=True).ids == [101, sid("▁hello")]
    assert small.encode("hello", add_special=True).ids == [101, sid("▁hello"), 102]


def test_normalized_and_words(small: Model) -> None:
    tok = small.tokenizer
    assert isinstance(tok, WpmTokenizer)
    assert small.normalized("  Héllo,\tWORLD!\u200b 中文 ") == "hello , world ! 中 文"
    assert tok.words("İı ǅ") == ["iı", "ǆ"]
    assert tok.word_indices("hello unaffable, x") == [0, 1, 1, 1, 2, 3]


def test_piece_bytes_and_decode(small: Model) -> None:
    assert small.tokenizer.piece_bytes(sid("▁hello")) == b" hello"
    assert small.tokenizer.piece_bytes(sid("aff")) == b"aff"
    ids = small.encode("hello, unaffable world!").ids
    assert small.decode(ids) == " hello, unaffable world!"
    assert small.decode([101, sid("▁hello"), 102]) == "[CLS] hello[SEP]"


# ---- spans ---------------------------------------------------------------------------

def spans(model: Model, text: str) -> list[tuple[int, str]]:
    enc = model.encode(text)
    return [(tid, text[s:e]) for tid, s, e in zip(enc.token_ids, enc.starts, enc.ends)]


def test_spans_cover_original_characters(small: Model) -> None:
    assert spans(small, "Café, CAFÉ!") == [
        (sid("▁cafe"), "Café"), (sid("▁,"), ","), (sid("▁cafe"), "CAFÉ"), (sid("▁!"), "!")]
    # a decomposed accent belongs to the letter before it
    assert spans(small, "Cafe\u0301 x") == [(sid("▁cafe"), "Cafe\u0301"), (sid("▁x"), "x")]
    assert spans(small, "unaff\u0301able") == [
        (sid("▁un"), "un"), (sid("aff"), "aff\u0301"), (sid("able"), "able")]
    # dropped characters inside and at the start of a word
    assert spans(small, "\u200bhel\u200blo") == [(sid("▁hello"), "\u200bhel\u200blo")]
    assert spans(small, "hel\u200blo") == [(sid("▁hello"), "hel\u200blo")]
    assert spans(small, "hello\u200b\x00 x") == [(sid("▁hello"), "hello\u200b\x00"), (sid("▁x"), "x")]
    # a word of dropped characters gives no token
    assert spans(small, "x \u200b\u0301 x") == [(sid("▁x"), "x"), (sid("▁x"), "x")]
    # an unknown word covers the whole word
    assert spans(small, " Zürich, ") == [(100, "Zürich"), (sid("▁,"), ",")]


def test_byte_spans(small: Model) -> None:
    text = "中 Café,\u3000hello"
    enc = small.encode(text)
    raw = text.encode()
    pieces = [raw[s:e].decode() for s, e in zip(enc.byte_starts, enc.byte_ends)]
    assert pieces == ["中", "Café", ",", "hello"]


def test_spans_on_reference_vocab(ref_model: Any) -> None:
    m = ref_model("bert-bge")
    text = "Le Café naïve\u0301 — 東京 İstanbul\tdéjà-vu!"
    enc = m.encode(text)
    last = 0
    for s, e in zip(enc.starts, enc.ends):
        assert last <= s <= e
        last = e
    covered = "".join(text[s:e] for s, e in zip(enc.starts, enc.ends))
    assert covered == text.replace(" ", "").replace("\t", "")


# ---- character classes and tables --------------------------------------------------

def test_char_classes() -> None:
    strip, keep = CharClasses(True), CharClasses(False)
    for cp, s_cls, k_cls in [
        (0x20, WS, WS), (0x09, WS, WS), (0x85, WS, WS), (0x3000, WS, WS), (0x1C, DROP, DROP),
        (0x00, DROP, DROP), (0xFFFD, DROP, DROP), (0x200B, DROP, DROP), (0xE000, DROP, DROP),
        (0x0301, DROP, WORD), (0x093F, DROP, WORD), (0x20DD, DROP, WORD),
        (0x2C, SPLIT, SPLIT), (0x24, SPLIT, SPLIT), (0x60, SPLIT, SPLIT), (0x4E2D, SPLIT, SPLIT),
        (0x2B81F, SPLIT, SPLIT), (0x2B820, WORD, WORD), (0x2B920, SPLIT, SPLIT),
        (0x1FEF, SPLIT, WORD),  # GREEK VARIA: NFD is "`"
        (0x00A2, WORD, WORD),  # non-ASCII symbols stay in words
        (0x11B00, SPLIT, SPLIT), (0x13439, DROP, DROP), (0x0CF3, DROP, WORD),  # Unicode 15.0
        (0x0378, WORD, WORD),  # unassigned
        (0x41, WORD, WORD), (0xC9, WORD, WORD),
    ]:
        assert (strip.char_class(cp), keep.char_class(cp)) == (s_cls, k_cls), hex(cp)


def test_ascii_classes_match_the_unicode_wide_ones() -> None:
    # ASCII text is split with a 128-entry table made without the NFD
    # moves; it must agree with the full classes in both settings
    ascii_cls = _ascii_class_bytes()
    for strip in (True, False):
        cc = CharClasses(strip)
        assert [cc.char_class(c) for c in range(0x80)] == list(ascii_cls), strip


def test_lower_table_is_simple_mapping() -> None:
    lower = dict(ut.LOWER)
    assert lower[0x130] == 0x69
    assert lower[0x41] == 0x61 and 0x61 not in lower
    assert lower[0x1E9E] == 0xDF
    assert all(not (0xD800 <= a < 0xE000) for a in lower)


def test_tables_reproducible() -> None:
    """llama.cpp's tables are Python's unicodedata plus the listed
    differences (on a Python whose Unicode is not newer than llama.cpp's)."""
    if tuple(int(x) for x in unicodedata.unidata_version.split(".")[:2]) > (15, 1):
        pytest.skip("Python's Unicode is newer than llama.cpp's tables")
    derived = ut.derive()
    for key, value in ut.ours().items():
        assert value == derived[key], key


def test_tables_match_llama_cpp() -> None:
    """With llama.cpp's sources at hand (TOKENPRISM_LLAMA_CPP_SRC), the tables equal its unicode-data.cpp."""
    from tests.refdata import LLAMA_CPP_SRC

    if LLAMA_CPP_SRC is None:
        pytest.skip("llama.cpp sources not found (set TOKENPRISM_LLAMA_CPP_SRC)")
    theirs = ut.from_llama_cpp(os.path.join(str(LLAMA_CPP_SRC), "unicode-data.cpp"))
    for key, value in ut.ours().items():
        assert value == theirs[key], key


def test_build_wpm_returns_tokenizer(small: Model) -> None:
    tok = build_wpm(small.vocab)
    assert tok.encode_fragment("hello world", True).ids == [sid("▁hello"), sid("▁world")]
    assert tok.encode_fragment("", True).ids == []
    assert tok.encode_fragment(" \t\n ", False).ids == []
