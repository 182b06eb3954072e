"""The WPM plugin's remembered chunks: ``encode_fragment`` keeps the tokens
of each short space-free chunk (and of the words inside it) and copies
them out when the chunk comes again. Whatever the cache holds (nothing,
other texts' chunks, a reset halfway through a call when it is full), the
ids must be llama.cpp's (the transliteration in test_wpm_props) and the
spans those of each chunk tokenized on its own."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tokenprism.core.model import Model
from tokenprism.core.tokenizer import FragmentResult
from tokenprism.plugins.wpm.wpm import WpmTokenizer

from tests.plugins.test_wpm_props import reference_ids

SETTINGS = settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])

# words that repeat, in the scripts and classes the plugin treats apart:
# ASCII words with punctuation, accents composed and combining, controls,
# CJK runs, Hangul, Cyrillic, Arabic, emoji, an unknown word, code
WORDS = st.sampled_from([
    "the", "The", "day,", "f(x):", "x**2", "a[i];", "naïve", "nai\u0308ve", "Café", "CAFÉ",
    "你好世界", "测试。", "안녕하세요", "программирование", "Дела", "مرحبا", "👍🏽", "🦙",
    "e-mail", "I've", "0x161F):", "{\"key\":", "\u00ad", "a\x00b", "\u200b", "ﬁx", "İstanbul",
    "zzzzqqqxxv", "\u0301", "item_Cache.startswith('only'):", "x" * 60, "\t", "\n", "",
])
SEP = st.sampled_from([" ", " ", " ", "  ", "\n", " \n    ", "\u3000", "\xa0"])


@st.composite
def repeated_text(draw: st.DrawFn) -> str:
    words = draw(st.lists(WORDS, min_size=1, max_size=30))
    out = [words[0]]
    for w in words[1:]:
        out.append(draw(SEP))
        out.append(w)
    return "".join(out)


@pytest.fixture(scope="module")
def bge(ref_model: Any) -> Model:
    m: Model = ref_model("bert-bge")
    return m


def _tok(model: Model) -> WpmTokenizer:
    tok = model.tokenizer
    assert isinstance(tok, WpmTokenizer)
    return tok


def _chunkwise(tok: WpmTokenizer, text: str) -> FragmentResult:
    """Each space-separated chunk tokenized alone with an empty cache, its
    spans moved to where it is in ``text``."""
    ids: list[int] = []
    starts: list[int] = []
    ends: list[int] = []
    pos = 0
    for c in text.split(" "):
        tok.clear_cache()
        r = tok.encode_fragment(c, True)
        ids += r.ids
        starts += [pos + s for s in r.starts]
        ends += [pos + e for e in r.ends]
        pos += len(c.encode("utf-8", "surrogatepass")) + 1
    return FragmentResult(ids, starts, ends)


@SETTINGS
@given(texts=st.lists(repeated_text(), min_size=1, max_size=3))
def test_cache_gives_llama_ids_and_chunk_spans(bge: Model, texts: list[str]) -> None:
    tok = _tok(bge)
    tok.clear_cache()
    # the later texts find the earlier ones' chunks remembered
    warm = [tok.encode_fragment(t, True) for t in texts]
    for t, got in zip(texts, warm):
        assert got.ids == reference_ids(bge, t)
        assert got == _chunkwise(tok, t)
        tok.clear_cache()
        assert tok.encode_fragment(t, True) == got


def test_cache_reset_halfway_changes_nothing(bge: Model) -> None:
    # more distinct chunks than the cache keeps (65 536), empty parts
    # between double spaces, and words seen before the reset that come
    # back after it
    words = [f"w{i}q," if i % 3 else f"Zé{i}" for i in range(70_000)]
    text = "  ".join(words[:40_000]) + " " + " ".join(words[:100] + words[40_000:] + words[:100])
    tok = _tok(bge)
    tok.clear_cache()
    whole = tok.encode_fragment(text, True)
    # the same text in slices small enough that the cache is never reset
    cut = [0]
    for i in range(20_000, len(text), 20_000):
        j = text.index(" ", i)
        cut.append(j)
    cut.append(len(text))
    ids: list[int] = []
    starts: list[int] = []
    ends: list[int] = []
    for a, b in zip(cut, cut[1:]):
        tok.clear_cache()
        piece = text[a:b]
        r = tok.encode_fragment(piece, True)
        pos = len(text[:a].encode())
        ids += r.ids
        starts += [pos + s for s in r.starts]
        ends += [pos + e for e in r.ends]
    assert whole.ids == ids
    assert whole.starts == starts
    assert whole.ends == ends
    assert len(ids) > 70_000
