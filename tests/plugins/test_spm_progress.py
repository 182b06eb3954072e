"""An SPM fragment the core cannot cut is one plugin call: a word of tens of
thousands of characters (text without a space) or a line of many words.
Both report progress from inside the call and can be cancelled there."""

from __future__ import annotations

import random
from typing import Any

import pytest

from tests.plugins.progress import cancel_at, reports_of

# no space, so one word: the merge runs on llama.cpp's queue
LONG_WORD = "".join(random.Random(7).choice("abcdefghijklmnop") for _ in range(30_000))
# ~20k words: the word loop reports
MANY_WORDS = " ".join(f"w{i % 1009}x" for i in range(20_000))


@pytest.mark.parametrize("text", [LONG_WORD, MANY_WORDS], ids=["long-word", "many-words"])
def test_reports_from_inside_the_call(text: str, ref_model: Any) -> None:
    model = ref_model("llama-spm")
    seen, res = reports_of(model.tokenizer, text)
    assert len(seen) >= 3
    assert [d for d, _ in seen] == sorted(d for d, _ in seen)
    assert all(0 < d <= t for d, t in seen)
    assert res.ids == model.encode(text).ids


@pytest.mark.parametrize("text", [LONG_WORD, MANY_WORDS], ids=["long-word", "many-words"])
def test_cancels_inside_the_call(text: str, ref_model: Any) -> None:
    model = ref_model("llama-spm")
    assert cancel_at(model.tokenizer, text, 2) == 2
    # nothing half-done was kept: a fresh tokenizer gives the same ids
    from tokenprism.plugins.spm.spm import SpmTokenizer

    assert model.tokenizer.encode_fragment(text, True).ids == \
        SpmTokenizer(model.vocab).encode_fragment(text, True).ids


# words longer than the linear scan's limit take llama.cpp's queue; ids by
# llama.cpp 0.3.36 (tests/llama_oracle.py), never by this code
_HELLO = "Helloworld Helloworld_Helloworld-Helloworld.Helloworld,Helloworld!Helloworld?Helloworld"
_JA = "日本語のテキスト。" * 8 + "🦙"
_LONG_WORD_IDS = {
    ("llama-spm", _HELLO): [379, 4743, 1613, 379, 4743, 1613] + sum(
        ([sep, 29950, 4743, 1613] for sep in (29918, 29899, 29889, 29892, 29991, 29973)), []),
    ("phi-3", _HELLO): [379, 4743, 1613, 379, 4743, 1613] + sum(
        ([sep, 29950, 4743, 1613] for sep in (29918, 29899, 29889, 29892, 29991, 29973)), []),
    ("baichuan", _HELLO): [745, 3796, 1796, 745, 3796, 1796] + sum(
        ([sep, 31149, 3796, 1796] for sep in (31193, 31136, 79, 31125, 80, 81)), []),
    ("llama-spm", _JA): [29871] + [30325, 30346, 30968, 30199, 30572, 30454, 30255, 30279, 30267] * 8
    + [243, 162, 169, 156],
    ("phi-3", _JA): [29871] + [30325, 30346, 30968, 30199, 30572, 30454, 30255, 30279, 30267] * 8
    + [243, 162, 169, 156],
    ("baichuan", _JA): [31106] + [6063, 36113, 33689, 36094, 36384, 34871, 35022, 73] * 8 + [56940],
}


@pytest.mark.parametrize("vocab,text", list(_LONG_WORD_IDS), ids=lambda x: str(len(x)) if len(x) > 20 else x)
def test_long_words_match_llama_cpp(vocab: str, text: str, ref_model: Any) -> None:
    assert max(len(w) for w in text.split(" ")) > 64
    assert ref_model(vocab).encode(text).ids == _LONG_WORD_IDS[(vocab, text)]
