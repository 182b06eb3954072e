"""Odd text on every tokenizer type: the 4 demo models and one reference
vocab per type.

For any text — every Unicode plane, lone surrogates (from pasted or JSON
data), NUL, BOMs, RTL marks, long combining sequences, 10 000-character
words, only whitespace, only line breaks — ``Model.encode`` raises
nothing, its spans lie in the text in order, and every character is
covered by a token unless the model's normalizer removes it.

Which models read back exactly (``decode(encode(s)) == s``), and why the
others do not:

* SPM with byte fallback (demo-spm, llama-spm), byte-level BPE (demo-bpe,
  qwen2) and BPE that escapes whitespace as ▁ with byte fallback (gemma-4,
  the BPE plugin's escape-whitespace path) are lossless, with two
  documented exceptions:
  - SPM and gemma-4: U+2581 (▁) is the vocabulary's own space marker, so it
    reads back as a space;
  - BPE models with ``clean_spaces`` (demo-bpe, gemma-4, gpt-2, llama-bpe…) decode as
    llama.cpp does with clean_up_tokenization_spaces: " ." → ".", " 's" → "'s".
* UGM (demo-ugm, nomic-bert-moe) is not: the precompiled charsmap
  normalizes (NFKC-like: "Ａ" → "A", "½" → "1⁄2"), whitespace runs
  collapse, leading/trailing whitespace and some format characters (BOM)
  vanish, characters missing from the vocabulary become <unk>.
* WPM (demo-wpm, bert-bge) is not: BERT lowercases and strips accents,
  drops whitespace and control characters, turns unknown words into [UNK]
  and detokenizes with a space before every word.
* Everywhere: a lone surrogate has no UTF-8 form and is tokenized as
  U+FFFD (core.model.sanitize_text explains why), so it reads back as U+FFFD.
"""

from __future__ import annotations

from typing import Any, Callable

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tokenprism.core import Model, open_model
from tokenprism.core.model import clean_up_spaces, sanitize_text

DEMOS = ("spm", "bpe", "ugm", "wpm")
REFS = {"SPM": "llama-spm", "BPE": "qwen2", "UGM": "nomic-bert-moe", "WPM": "bert-bge"}
# gemma-4: BPE without byte-level glyphs: spaces escaped to ▁, byte fallback
ALL = [f"demo-{k}" for k in DEMOS] + [f"ref-{v}" for v in REFS.values()] + ["ref-gemma-4"]
SPACE_MARK = "\u2581"

_cache: dict[str, Model] = {}


@pytest.fixture
def get_model(request: pytest.FixtureRequest) -> Callable[[str], Model]:
    def get(name: str) -> Model:
        if name not in _cache:
            if name.startswith("demo-"):
                from tokenprism.core.library.resources import demo_models
                _cache[name] = open_model(demo_models()[name[5:]])
            else:
                request.getfixturevalue("vocab_dir")  # skips without the reference vocabs
                _cache[name] = request.getfixturevalue("ref_model")(name[4:])
        return _cache[name]
    return get


def escapes_spaces(model: Model) -> bool:
    """A BPE model whose vocabulary writes spaces as ▁ (gemma-4)."""
    return model.kind == "BPE" and bool(getattr(model.tokenizer, "escape", False))


def lossless(model: Model) -> bool:
    """True for the models that must read back what they were given."""
    byte_fallback = any(p.startswith("<0x") for p in model.vocab.pieces[:300])
    return model.kind == "BPE" and (model.config.byte_level or (escapes_spaces(model) and byte_fallback)) or (
        model.kind == "SPM" and byte_fallback)


def expected_readback(model: Model, text: str) -> str:
    """``text`` as a lossless model reads it back (the documented exceptions)."""
    out = sanitize_text(text)
    if model.kind == "SPM" or escapes_spaces(model):
        out = out.replace(SPACE_MARK, " ")
    if model.config.clean_spaces:
        out = clean_up_spaces(out.encode("utf-8")).decode("utf-8")
    return out


def _is_removed(model: Model, gap: str) -> bool:
    """The normalizer turns ``gap`` into nothing but whitespace."""
    return model.normalized(gap).replace(SPACE_MARK, " ").strip() == ""


def check(model: Model, text: str, add_special: bool = False, parse_special: bool = False) -> None:
    enc = model.encode(text, add_special=add_special, parse_special=parse_special)
    n = len(text)
    assert enc.text == sanitize_text(text) and len(enc.text) == n
    starts, ends = enc.starts, enc.ends
    assert len(starts) == len(ends) == len(enc.token_ids)
    covered_to = 0
    gaps: list[str] = []
    for i, (s, e) in enumerate(zip(starts, ends)):
        assert 0 <= s <= e <= n, (i, s, e)
        if i:
            assert s >= starts[i - 1] and e >= ends[i - 1], f"token {i} out of order"
        if s > covered_to:
            gaps.append(enc.text[covered_to:s])
        covered_to = max(covered_to, e)
    if covered_to < n:
        gaps.append(enc.text[covered_to:])
    if lossless(model):
        assert not gaps, f"uncovered text {gaps[:3]!r}"
    else:
        bad = [g for g in gaps if not _is_removed(model, g)]
        assert not bad, f"uncovered text the normalizer keeps: {bad[:3]!r}"
    for tid in enc.token_ids:
        assert 0 <= tid < len(model)
    decoded = model.decode(enc.token_ids)
    if lossless(model) and not add_special and not parse_special:
        assert decoded == expected_readback(model, text)


# ---- the listed odd inputs, each on every model -------------------------------------------------

ODD = {
    "empty": "", "nul": "\x00", "nuls": "a\x00\x00b\x00", "bom": "\ufeff", "bom-text": "\ufeffHello",
    "bom-mid": "a\ufeffb", "rtl-marks": "\u200fRTL\u200e mark \u202eevil\u202c \u2067iso\u2069 \u061c",
    "arabic-mixed": "abc \u0627\u0644\u0639\u0631\u0628\u064a\u0629 123",
    "combining-long": "e" + "\u0301" * 200 + " Z\u0351\u036b\u0343\u036a\u0302\u036b\u033d\u034f\u0334",
    "combining-alone": "\u0301\u0302 \u20dd",
    "word-10000-ascii": "a" * 10_000, "word-10000-cjk": "\u65e5" * 10_000, "word-10000-emoji": "\U0001F642" * 10_000,
    "word-10000-mixed": ("ab\u00e9\u65e5\U0001F600" * 2_000),
    "only-spaces": " " * 500, "only-whitespace": " \t\u00a0\u3000\u2003\u000b\u000c\u0085\u2028\u2029 ",
    "only-newlines": "\n" * 500, "only-crlf": "\r\n" * 200,
    "lone-high": "\ud800", "lone-low": "x\udfffy", "reversed-pair": "\udc00\ud800", "many-surrogates": "\ud83d" * 50,
    "planes": "".join(chr((p << 16) + 0x100) for p in range(17)),
    "plane-edges": "\U0010FFFF\U000E0001\U000F0000\U0001F600\uffff\ufffe\U0002A6D6",
    "replacement": "\ufffd\ufffd", "space-mark": "a\u2581b \u2581",
    "special-text": "<s></s><unk><|endoftext|>[CLS][SEP][UNK]<pad>",
}


@pytest.mark.parametrize("name", ALL)
def test_listed_odd_inputs(name: str, get_model: Callable[[str], Model]) -> None:
    model = get_model(name)
    for label, text in ODD.items():
        for add, parse in ((False, False), (True, True)):
            try:
                check(model, text, add, parse)
            except AssertionError as e:
                raise AssertionError(f"{name} / {label} (add_special={add}, parse_special={parse}): {e}") from e


# ---- hypothesis -------------------------------------------------------------------------------

def _in_plane(p: int) -> st.SearchStrategy[str]:
    return st.integers(p << 16, (p << 16) + 0xFFFF).map(chr)


PIECES = st.one_of(
    st.text(st.characters(exclude_categories=()), max_size=12),  # anything, surrogates too
    st.integers(0, 16).flatmap(_in_plane),
    st.sampled_from(["\x00", "\ufeff", "\u200f", "\u200e", "\u202e", "\u2067", "\u061c", "\ufffd", SPACE_MARK,
                     "\r\n", "\r", "\u2028", "\u2029", "\u00a0", "<s>", "</s>", "<|endoftext|>", "[UNK]",
                     "'s", " .", " ,", " 've"]),
    st.builds(lambda base, marks: base + "".join(marks), st.sampled_from("aeoZ\u65e5 "),
              st.lists(st.sampled_from("\u0301\u0308\u0323\u0338\u20dd\u0489\u302a"), min_size=1, max_size=40)),
    st.builds(lambda c, k: c * k, st.sampled_from(["a", "\u00e9", "\u65e5", "\U0001F642", "ab "]),
              st.integers(100, 3000)),
    st.text(st.sampled_from(" \t\n\r\u00a0\u3000\u2003\u000b\u000c\u0085"), min_size=1, max_size=40),
    st.text(st.characters(max_codepoint=0x7F), max_size=20),
)
TEXTS = st.lists(PIECES, max_size=6).map("".join)


@pytest.mark.parametrize("name", ALL)
@settings(max_examples=70, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                  HealthCheck.too_slow])
@given(text=TEXTS, flags=st.tuples(st.booleans(), st.booleans()))
def test_arbitrary_unicode(name: str, get_model: Callable[[str], Model], text: str, flags: Any) -> None:
    check(get_model(name), text, *flags)


# ---- the documented exceptions really are the only ones -------------------------------------

def test_which_models_are_lossless(get_model: Callable[[str], Model]) -> None:
    kinds = {name: get_model(name) for name in (f"demo-{k}" for k in DEMOS)}
    assert [n for n, m in kinds.items() if lossless(m)] == ["demo-spm", "demo-bpe"]


@pytest.mark.parametrize("name", ALL)
def test_lone_surrogates_read_back_as_replacement(name: str, get_model: Callable[[str], Model]) -> None:
    model = get_model(name)
    # tokenized exactly like U+FFFD in its place
    assert model.encode("a\ud800b").ids == model.encode("a\ufffdb").ids
    if lossless(model):
        assert model.decode(model.encode("a\ud800b").ids) == "a\ufffdb"


@pytest.mark.parametrize("name", ["demo-spm", "ref-llama-spm", "ref-gemma-4"])
def test_spm_reads_its_space_mark_as_a_space(name: str, get_model: Callable[[str], Model]) -> None:
    model = get_model(name)
    assert model.decode(model.encode("a\u2581b").ids) == "a b"
    assert model.decode(model.encode("a b").ids) == "a b"


def test_clean_spaces_is_the_only_bpe_change(get_model: Callable[[str], Model]) -> None:
    demo = get_model("demo-bpe")
    assert demo.config.clean_spaces
    assert demo.decode(demo.encode("it 's a test .").ids) == "it's a test."
    qwen = get_model("ref-qwen2")
    assert not qwen.config.clean_spaces
    assert qwen.decode(qwen.encode("it 's a test .").ids) == "it 's a test ."


def test_gemma4_escaped_spaces_are_lossless(get_model: Callable[[str], Model]) -> None:
    """gemma-4 goes through the BPE plugin's escape-whitespace path (no
    byte-level glyphs) and still reads back every text exactly, apart from
    the documented ▁, clean_spaces and lone-surrogate exceptions."""
    model = get_model("ref-gemma-4")
    assert escapes_spaces(model) and not model.config.byte_level and lossless(model)
    assert model.config.clean_spaces
    for text in ("  two  spaces\tand\ttabs\n\n", "\x00\ufeff\u200f\u202e", "\U0010FFFF\U000E0001",
                 "e" + "\u0301" * 50, "\r\n \u3000\u00a0", "\U0001F642" * 100):
        assert model.decode(model.encode(text).ids) == text, repr(text)
    assert model.decode(model.encode("it 's .").ids) == "it's."


@pytest.mark.parametrize("name", ["demo-ugm", "ref-nomic-bert-moe"])
def test_ugm_normalizes(name: str, get_model: Callable[[str], Model]) -> None:
    model = get_model(name)
    assert not lossless(model)
    assert model.decode(model.encode("  Hello   World  ").ids) == "Hello World"
    assert model.decode(model.encode("\ufeffbom").ids) == "bom"
    assert model.decode(model.encode("\uff21").ids).startswith("A")


@pytest.mark.parametrize("name", ["demo-wpm", "ref-bert-bge"])
def test_wpm_lowercases_and_drops_whitespace(name: str, get_model: Callable[[str], Model]) -> None:
    model = get_model(name)
    assert not lossless(model)
    assert model.decode(model.encode("Hello\t\tWorld\n").ids) == " hello world"
    assert model.decode(model.encode("nul\x00x").ids) == " nulx"
    assert model.encode("\n\n \t").ids == []
