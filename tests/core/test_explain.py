"""``Model.explain`` (issue #28): its ids are llama.cpp's and ``encode``'s on
every reference vocabulary in three flag modes (the tests named
``*_parity_*`` run in the pure build too: tests/test_pure_build.py), its
special stage says
what was matched and why not, and its limits hold."""

from __future__ import annotations

import json
import subprocess
import sys
from functools import lru_cache
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.refdata import VOCAB_DIR, inp_out_cases, special_cases, vocab_path
from tokenprism.core import Model, open_model
from tokenprism.core.errors import TokenPrismError
from tokenprism.core.explain import ModelStage, NormalizeStage, PostStage, PreTokenizeStage, SpecialStage

pytestmark = pytest.mark.skipif(VOCAB_DIR is None, reason="reference vocabs not found")

ALL = ["aquila", "baichuan", "bert-bge", "command-r", "deepseek-coder", "deepseek-llm", "falcon", "gemma-4", "gpt-2",
       "gpt-neox", "llama-bpe", "llama-spm", "mpt", "nomic-bert-moe", "phi-3", "qwen2", "qwen35", "refact",
       "starcoder"]
MODES = [(False, False), (True, False), (True, True)]
STAGES = ["special", "normalize", "pre_tokenize", "model", "post"]


@lru_cache(maxsize=None)
def _model(name: str) -> Model:
    return open_model(vocab_path(name))


def _texts(name: str) -> list[str]:
    """The reference texts, at most 4 000 characters each (qwen35 has one of
    ~40 000 that takes seconds to trace in pure Python)."""
    return [c.text for c in inp_out_cases(name) if len(c.text) <= 4000]


@pytest.mark.parametrize("name", ALL)
def test_explain_parity_ids_are_llama_cpp_and_encode(name: str) -> None:
    m = _model(name)
    # llama.cpp's own ids, where the reference data has them
    for case in inp_out_cases(name)[:60] + special_cases(name):
        if len(case.text) <= 4000:
            assert list(m.explain(case.text, case.add_special, case.parse_special).ids) == list(case.ids), case
    for text in _texts(name):
        for add, parse in MODES:
            ex = m.explain(text, add, parse)
            assert list(ex.ids) == list(m.encode(text, add, parse).ids), (text, add, parse)
            assert [s.KIND for s in ex.stages] == STAGES
            _check_words(m, ex.text, ex.stage("model"), ex.stage("special"))  # type: ignore[arg-type]
            _check_sources(ex.stage("normalize"))  # type: ignore[arg-type]


def _check_words(m: Model, text: str, model: ModelStage, special: SpecialStage) -> None:
    """Words in text order, inside their fragments, each with its tokens."""
    plain = [(a, b) for a, b, t in special.fragments if t < 0]
    assert model.algorithm == m.spec.name
    prev = 0
    for w in model.words:
        assert prev <= w.start <= w.end <= len(text)
        assert any(a <= w.start and w.end <= b for a, b in plain)
        prev = w.start


def _check_sources(norm: NormalizeStage) -> None:
    """One source per normalized character, inside the fragment, in order."""
    for f in norm.fragments:
        assert len(f.sources) == len(f.normalized)
        prev = f.start
        for a, b in f.sources:
            assert f.start <= a <= b <= f.end and a >= prev
            prev = a


ALPHABET = st.one_of(st.characters(blacklist_categories=("Cs",)),
                     st.sampled_from(list(" \n\t'sS0123456789\u2581<>|_aé\u0301\U0001f600\u4f60")))


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(name=st.sampled_from(ALL), text=st.text(alphabet=ALPHABET, max_size=40),
       mode=st.sampled_from(MODES))
def test_explain_parity_random_text_equals_encode(name: str, text: str, mode: tuple[bool, bool]) -> None:
    m = _model(name)
    ex = m.explain(text, *mode)
    assert list(ex.ids) == list(m.encode(text, *mode).ids)
    _check_sources(ex.stage("normalize"))  # type: ignore[arg-type]


def test_json_shape() -> None:
    m = _model("nomic-bert-moe")
    data = json.loads(json.dumps(m.explain("naïve 12345", add_special=True).to_json()))
    assert data["ids"] == m.encode("naïve 12345", add_special=True).ids
    assert [s["name"] for s in data["stages"]] == STAGES
    model = data["stages"][3]
    assert model["algorithm"] == "ugm"
    for w in model["words"]:
        assert {"text", "start", "end", "tokens", "steps", "alternatives"} <= set(w)
        assert w["alternatives"][0]["tokens"] == w["tokens"]
        assert w["steps"][0]["kind"] == "lattice"
    assert data["stages"][4]["prefix"] == [0] and data["stages"][4]["suffix"] == [2]  # <s> ... </s>


# ---- the special stage ---------------------------------------------------------------------------

def test_special_matched_in_llama_order_and_control_needs_parse_special() -> None:
    m = _model("llama-spm")
    on = m.explain("<s>hi</s>", parse_special=True).stage("special")
    assert isinstance(on, SpecialStage)
    # "</s>" is longer, so llama.cpp takes it first
    assert [(x.text, x.token, x.match_start) for x in on.matched] == [("</s>", 2, 5), ("<s>", 1, 0)]
    assert on.fragments == ((0, 3, 1), (3, 5, -1), (5, 9, 2))
    off = m.explain("<s>hi</s>").stage("special")
    assert isinstance(off, SpecialStage)
    assert off.matched == ()
    assert {(u.text, u.start) for u in off.unmatched} == {("</s>", 5), ("<s>", 0)}
    assert all("parse_special is off" in u.reason for u in off.unmatched)


def test_special_lstrip_swallows_the_space() -> None:
    st_ = _model("nomic-bert-moe").explain("a <mask> b", parse_special=True).stage("special")
    assert isinstance(st_, SpecialStage)
    (mask,) = st_.matched
    assert (mask.text, mask.start, mask.end, mask.match_start, mask.lstrip, mask.rstrip) == ("<mask>", 1, 8, 2, " ", "")


def test_special_overlap_says_the_longer_one_won() -> None:
    # gpt-neox has tokens for runs of spaces: the 4-space one takes the run
    st_ = _model("gpt-neox").explain("a    b").stage("special")
    assert isinstance(st_, SpecialStage)
    assert [(x.text, x.start, x.end) for x in st_.matched] == [("    ", 1, 5)]
    assert st_.unmatched and all("longer texts go first" in u.reason for u in st_.unmatched)


def test_stages_of_each_kind() -> None:
    ex = _model("llama-bpe").explain("x 1234567")
    pre = ex.stage("pre_tokenize")
    assert isinstance(pre, PreTokenizeStage)
    (frag,) = pre.fragments
    assert frag.name == "llama-bpe"
    # the digits rule \p{N}{1,3} cuts the number in threes
    assert frag.rules[-1].chunks == ((0, 1), (1, 2), (2, 5), (5, 8), (8, 9))
    norm = ex.stage("normalize")
    assert isinstance(norm, NormalizeStage) and norm.fragments == ()  # byte-level BPE: no normalizer
    n2 = _model("llama-spm").explain("a b").stage("normalize")
    assert isinstance(n2, NormalizeStage)
    assert n2.fragments[0].normalized == "\u2581a\u2581b"
    assert n2.fragments[0].sources == ((0, 0), (0, 1), (1, 2), (2, 3))
    post = _model("bert-bge").explain("hi", add_special=True).stage("post")
    assert isinstance(post, PostStage) and (post.prefix, post.suffix) == ((101,), (102,))  # [CLS] [SEP]


# ---- limits --------------------------------------------------------------------------------------

def test_max_chars_refused() -> None:
    m = _model("llama-spm")
    with pytest.raises(TokenPrismError, match="at most 10 "):
        m.explain("x" * 11, max_chars=10)
    assert m.explain("x" * 10, max_chars=10).ids == tuple(m.encode("x" * 10).ids)
    # whatever max_chars says, the ceiling holds (the check comes before any work)
    with pytest.raises(TokenPrismError, match="^the text has 50,001 characters; explain takes at most 50,000 "
                                              "whatever max_chars says"):
        m.explain("x" * 50_001, max_chars=10**9)


class _NoTrace:
    """A plugin's tokenizer without the capability: everything but trace_fragment."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.vocab = inner.vocab
        self.config = inner.config

    def encode_fragment(self, text: str, after_special: bool) -> Any:
        return self.inner.encode_fragment(text, after_special)

    def piece_bytes(self, token_id: int) -> bytes:
        return bytes(self.inner.piece_bytes(token_id))

    def normalized(self, text: str) -> str:
        return str(self.inner.normalized(text))


def test_plugin_without_the_capability() -> None:
    m = open_model(vocab_path("llama-spm"))
    m.tokenizer = _NoTrace(m.tokenizer)
    with pytest.raises(TokenPrismError, match="^no explanation available for this tokenizer"):
        m.explain("Hello")
    assert m.encode("Hello").ids == [15043]  # nothing else breaks


def test_encode_never_imports_the_trace_modules() -> None:
    # a fresh interpreter: other tests here have imported them
    code = (
        "import sys\n"
        "from tokenprism.core import open_model\n"
        "from tokenprism.core.library.resources import demo_models\n"
        "models = [open_model(p) for p in demo_models().values()]\n"
        "for m in models:\n"
        "    m.encode('Hello world, naïve 12345 <s>', True, True)\n"
        "print(len(models), sorted(k for k in sys.modules if k.endswith('.trace')))\n"
        "for m in models:\n"
        "    m.explain('Hi')\n"
        "print(sorted(k.split('.')[-2] for k in sys.modules if k.endswith('.trace')))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split("\n")[:2] == ["4 []", "['bpe', 'spm', 'ugm', 'wpm']"]
