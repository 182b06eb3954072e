"""Incremental retokenization gives exactly what a full encode gives.

Random edit sequences (inserts, deletes, replacements; special-token text,
line breaks, emoji, CJK, combining marks, runs of spaces) are applied to
random texts and, after every edit, the incremental result is compared
field by field with ``Model.encode`` of the new text, on every tokenizer
type (reference vocabularies and the bundled demo models), with
``add_special``/``parse_special`` on and off.
"""

from __future__ import annotations

import random
import re
from typing import Any, Callable

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tokenprism.core import Model, open_model
from tokenprism.core.encoding import IntColumn
from tokenprism.core.incremental import encode_chunked, retokenize, retokenize_edit
from tokenprism.core.library.resources import demo_models
from tokenprism.core.tokenizer import cut_points

FIELDS = ("token_ids", "starts", "ends", "byte_starts", "byte_ends", "groups")

# every reference vocabulary (all four tokenizer types, every pre-tokenizer
# shape among them) for the random edits; one of each shape for the costlier
# long-text check
ALL_REF_VOCABS = ("aquila", "baichuan", "bert-bge", "command-r", "deepseek-coder", "deepseek-llm", "falcon",
                  "gemma-4", "gpt-2", "gpt-neox", "llama-bpe", "llama-spm", "mpt", "nomic-bert-moe", "phi-3",
                  "qwen2", "qwen35", "refact", "starcoder")
REF_VOCABS = ("llama-spm", "gpt-2", "llama-bpe", "deepseek-coder", "gemma-4", "bert-bge", "nomic-bert-moe")

PIECES = ["a", "b", "the", "Hello", "world", " ", "  ", "    ", "\n", "\n\n", "\r\n", "\t", ".", ",", "'s",
          "!", "?", "(", ")", "123", "4567", "é", "e\u0301", "\u0301", "ß", "İ", "日本語", "中", "🙂", "👍🏽",
          "\u00a0", "\u3000", "▁", "<s>", "</s>", "<unk>", "[CLS]", "[SEP]", "<|endoftext|>",
          "<start_of_turn>", "<mask>", "x\ny", "end.\nNext", "def f(x):\n    return x\n", "A-Z"]

texts = st.lists(st.sampled_from(PIECES), max_size=30).map("".join)
edits = st.lists(st.tuples(st.floats(0, 1), st.integers(0, 6), texts.map(lambda s: s[:12])),
                 min_size=1, max_size=10)


def assert_same(inc: Any, full: Any, context: str) -> None:
    for f in FIELDS:
        assert getattr(inc, f) == getattr(full, f), f"{f} differs after {context}"
    assert inc.text == full.text


def run_edits(model: Model, text: str, steps: list[tuple[float, int, str]], add_special: bool,
              parse_special: bool, chunked: bool = False) -> None:
    """Edit ``text`` step by step, each step retokenized from the last and
    compared with a full encode. ``chunked``: start from
    :func:`encode_chunked`'s encoding, whose columns are :class:`IntColumn`
    arrays (as a pasted huge text's are), and keep checking they stay so."""
    if chunked:
        first = encode_chunked(model, text, add_special, parse_special)
        assert first is not None
        enc = first
    else:
        enc = model.encode(text, add_special, parse_special)
    for frac, removed, added in steps:
        pos = int(frac * len(text))
        removed = min(removed, len(text) - pos)
        new = text[:pos] + added + text[pos + removed:]
        inc = retokenize_edit(enc, pos, removed, added)
        full = model.encode(new, add_special, parse_special)
        assert_same(inc, full, f"{text!r} -> {new!r}")
        if chunked:
            assert all(type(getattr(inc, f)) is IntColumn for f in FIELDS)
        text, enc = new, inc


_models: dict[str, Model] = {}


def demo(kind: str) -> Model:
    if kind not in _models:
        _models[kind] = open_model(demo_models()[kind])
    return _models[kind]


EDIT_SETTINGS = settings(max_examples=40, deadline=None, derandomize=True,
                         suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])


@pytest.mark.parametrize("name", ALL_REF_VOCABS)
@EDIT_SETTINGS
@given(text=texts, steps=edits, add_special=st.booleans(), parse_special=st.booleans())
def test_edits_match_full_encode_reference(ref_model: Callable[[str], Model], name: str, text: str,
                                           steps: list[tuple[float, int, str]], add_special: bool,
                                           parse_special: bool) -> None:
    run_edits(ref_model(name), text, steps, add_special, parse_special)


@pytest.mark.parametrize("kind", ["spm", "bpe", "ugm", "wpm"])
@EDIT_SETTINGS
@given(text=texts, steps=edits, add_special=st.booleans(), parse_special=st.booleans())
def test_edits_match_full_encode_demo(kind: str, text: str, steps: list[tuple[float, int, str]],
                                      add_special: bool, parse_special: bool) -> None:
    run_edits(demo(kind), text, steps, add_special, parse_special)


@pytest.mark.parametrize("name", ["llama-spm", "gpt-2", "nomic-bert-moe", "bert-bge", "gemma-4"])
@EDIT_SETTINGS
@given(text=texts, steps=edits, add_special=st.booleans(), parse_special=st.booleans())
def test_edits_of_a_chunked_encoding_match_full_encode(ref_model: Callable[[str], Model], name: str, text: str,
                                                       steps: list[tuple[float, int, str]], add_special: bool,
                                                       parse_special: bool) -> None:
    run_edits(ref_model(name), text, steps, add_special, parse_special, chunked=True)


PROSE = ("The quick brown fox jumps over the lazy dog, and the dog sleeps on.\n"
         "def tokenize(text: str) -> list[int]:\n    return [ord(c) for c in text]\n"
         "Ελληνικά, русский and 日本語 with emoji 🙂 and numbers 3.14159 2024-06-01.\n")


class SpyTokenizer:
    """Wraps a tokenizer and records the length of every fragment it is asked
    to encode. A wrapper, not a patched method: the instance of a compiled
    (mypyc) tokenizer class has read-only attributes."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.seen: list[int] = []

    def encode_fragment(self, piece: str, after_special: bool) -> Any:
        self.seen.append(len(piece))
        return self.inner.encode_fragment(piece, after_special)

    def encode_columns(self, piece: str, after_special: bool) -> Any:
        # the pipeline's path for plugins that offer it (all four do)
        self.seen.append(len(piece))
        return self.inner.encode_columns(piece, after_special)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


@pytest.mark.parametrize("name", REF_VOCABS)
def test_long_text_redoes_only_the_edited_part(ref_model: Callable[[str], Model], name: str,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """In a long text, an edit in the middle re-encodes a little text around
    it, not the whole text (and the result is still exact)."""
    model = ref_model(name)
    text = PROSE * 300
    enc = model.encode(text)
    real = model.tokenizer
    spy = SpyTokenizer(real)
    rnd = random.Random(7)
    for _ in range(20):
        pos = rnd.randrange(len(text))
        new = text[:pos] + rnd.choice(["x", " ", "\n", "é", "🙂", ""]) + text[pos + rnd.randint(0, 2):]
        spy.seen.clear()
        monkeypatch.setattr(model, "tokenizer", spy)
        inc = retokenize(enc, new)
        monkeypatch.setattr(model, "tokenizer", real)
        assert spy.seen or new == text, "an edit re-encoded nothing"
        assert sum(spy.seen) < 2000, f"re-encoded {sum(spy.seen)} of {len(new)} characters"
        assert_same(inc, model.encode(new), f"edit at {pos}")
        text, enc = new, inc


def test_plugin_without_cut_points_still_exact() -> None:
    """A tokenizer that offers no cut points gets whole changed fragments redone."""
    from tests.app import apptok

    apptok.register()
    import tempfile
    from pathlib import Path

    with tempfile.TemporaryDirectory() as tmp:
        model = open_model(apptok.write_gguf(Path(tmp) / "t.gguf"))
    assert cut_points(model.tokenizer, "hello world", 0, 11) == []
    rnd = random.Random(3)
    for _ in range(30):
        text = "".join(rnd.choice(PIECES) for _ in range(rnd.randint(0, 20)))
        steps = [(rnd.random(), rnd.randint(0, 5), rnd.choice(PIECES)) for _ in range(5)]
        run_edits(model, text, steps, rnd.random() < 0.5, rnd.random() < 0.5)


def test_unchanged_text_returns_the_same_encoding(ref_model: Callable[[str], Model]) -> None:
    enc = ref_model("gpt-2").encode("same text")
    assert retokenize(enc, "same text") is enc


# ---- the BPE cut rule holds for every pre-tokenizer llama.cpp knows ----------

LINE_PIECES = ["a", "Z", "9", ".", "'", "-", " ", "  ", "\t", "\n", "\n\n", "\r", "é", "日本", "123", "'s", "🙂",
               "ab c", "\u2581", "\u00a0", "\u0301", "!!", "x\ny"]


@settings(max_examples=150, deadline=None, derandomize=True)
@given(st.lists(st.sampled_from(LINE_PIECES), max_size=40).map("".join))
def test_bpe_line_cuts_split_every_pre_tokenizer(text: str) -> None:
    from tokenprism.plugins.bpe import pretokenizers as pt
    from tokenprism.plugins.bpe.bpe import _NO_LINE_CUTS
    from tokenprism.plugins.bpe.pretokenize import Splitter

    cuts = [m.start() for m in re.finditer("(?<=[!-~]\n)(?=[!-~])", text)]
    if not cuts:
        return
    for name, ptype in pt.PRE_TYPES.items():
        if name in _NO_LINE_CUTS:
            continue
        sp = _splitter(name, ptype.regexes, Splitter)
        for variant in (text, text.replace(" ", "\u2581")):
            words = sp.split(variant)
            for p in cuts:
                left, right = sp.split(variant[:p]), sp.split(variant[p:])
                assert left + right == words, (name, variant, p)


_splitters: dict[str, Any] = {}


def _splitter(name: str, regexes: tuple[str, ...], cls: Any) -> Any:
    if name not in _splitters:
        _splitters[name] = cls(regexes)
    return _splitters[name]


# ---- huge texts in pieces -------------------------------------------------------


@pytest.mark.parametrize("name", REF_VOCABS)
def test_chunked_encode_matches_full_encode(ref_model: Callable[[str], Model], name: str) -> None:
    from tokenprism.core.incremental import encode_chunked

    model = ref_model(name)
    rnd = random.Random(11)
    text = "".join(rnd.choice(PIECES) for _ in range(3000)) + PROSE * 20
    reports: list[tuple[int, int]] = []
    for add_special, parse_special in ((False, False), (True, True)):
        reports.clear()
        enc = encode_chunked(model, text, add_special, parse_special,
                             report=lambda d, t: reports.append((d, t)) is None, chunk_chars=500)
        assert enc is not None
        assert_same(enc, model.encode(text, add_special, parse_special), "chunked encode")
        # 8 bytes a value, no int objects (a 10 MB text's tokens are millions)
        assert all(type(getattr(enc, f)) is IntColumn and getattr(enc, f).itemsize == 8 for f in FIELDS)
        assert len(reports) > 3 and reports[-1] == (len(text), len(text))
        assert [d for d, _ in reports] == sorted(d for d, _ in reports)


def test_chunked_encode_can_be_cancelled(ref_model: Callable[[str], Model]) -> None:
    from tokenprism.core.incremental import encode_chunked

    calls: list[int] = []

    def report(done: int, total: int) -> bool:
        calls.append(done)
        return len(calls) < 3

    assert encode_chunked(ref_model("gpt-2"), PROSE * 50, report=report, chunk_chars=300) is None
    assert len(calls) == 3
