"""The UGM plugin's table scans against the regular expressions and numpy
conversions they stand in for: ``stop_starts`` finds exactly where the
chunk stop pattern matches, ``_to_bytes`` gives UTF-8 byte offsets; and
the chunk cache against a dict."""

from __future__ import annotations

import random
import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from librt.vecs import vec
from mypy_extensions import i64

from tokenprism.core import open_model
from tokenprism.plugins.ugm.charsmap import match_starts, stop_starts
from tokenprism.core.hash_slots import TextCache, chunk_end
from tokenprism.plugins.ugm.ugm import _NATIVE_CHUNKS as NATIVE
from tokenprism.plugins.ugm.ugm import UgmTokenizer, _to_bytes

VOCAB = Path("/work/shared/llama-vocab/ggml-vocab-nomic-bert-moe.gguf")
_tok: list[UgmTokenizer] = []


def _nomic() -> UgmTokenizer:
    if not VOCAB.exists():
        pytest.skip("reference vocab absent")
    if not _tok:
        t = open_model(VOCAB).tokenizer
        assert isinstance(t, UgmTokenizer)
        _tok.append(t)
    return _tok[0]


def _sample_text(seed: int) -> str:
    rng = random.Random(seed)
    pool = ("abc XYZ 12 ", "\u00e9\u00c5\uff21\uff41", "\u2581", "\u3000 \u00a0", "\u1100\u1161\uac00",
            "\u0627\u0644\u0639", "\u4f60\u597d", "\U0001F44D\U0001F3FD", "\ufb01 \u2126 \u212b", "\t\n",
            "\u0301\u0065\u0301", "\U0001D400\U00020000")
    return "".join(rng.choice(pool) for _ in range(400))


@pytest.mark.parametrize("seed", range(6))
def test_stop_table_matches_the_stop_pattern(seed: int) -> None:
    tok = _nomic()
    flags = tok.normalizer.look_flags(tok.space)
    text = _sample_text(seed)
    assert stop_starts(flags, text) == match_starts(tok.chunk_stop_re, text, 0, len(text))


@settings(max_examples=60, deadline=None)
@given(st.text(st.characters(blacklist_categories=("Cs",)), max_size=60))
def test_stop_table_on_any_text(text: str) -> None:
    tok = _nomic()
    flags = tok.normalizer.look_flags(tok.space)
    assert stop_starts(flags, text) == match_starts(tok.chunk_stop_re, text, 0, len(text))


def _byte_offsets(text: str, offsets: list[int]) -> list[int]:
    return [len(text[:k].encode("utf-8", "surrogatepass")) for k in offsets]


@settings(max_examples=80, deadline=None)
@given(st.text(max_size=30), st.data())
def test_to_bytes(text: str, data: st.DataObject) -> None:
    pos = st.integers(0, len(text))
    starts = data.draw(st.lists(pos, max_size=12))
    ends = sorted(data.draw(st.lists(pos, max_size=12)))
    bs, be = _to_bytes(text, starts, ends)
    assert bs == _byte_offsets(text, starts)
    assert be == _byte_offsets(text, ends)


def test_stop_table_tells_lone_surrogates() -> None:
    tok = _nomic()
    flags = tok.normalizer.look_flags(tok.space)
    assert stop_starts(flags, "ab\ud800c") is None
    assert stop_starts(flags, "\udfff") is None
    assert stop_starts(flags, "ab\U0001F44Dc") == []  # an astral character is no surrogate


def test_stop_table_is_small() -> None:
    # two levels: a block number per 256 code points, then the blocks used
    tok = _nomic()
    flags = tok.normalizer.look_flags(tok.space)
    assert len(flags) < 0x110000 // 8


# ---- the chunk cache (chunks found by their characters in the text) --------


def test_chunk_cache_finds_what_it_kept() -> None:
    text = " ".join(["abc", "x\u00e9y", "\u4f60\u597d", "\U0001F44D!", "abc", "ab", "abcd", "a"])
    starts = [0]
    for k, ch in enumerate(text):
        if ch == " ":
            starts.append(k + 1)
    cache: TextCache[vec[i64]] = TextCache(100)
    kept: dict[str, int] = {}
    for a in starts:
        b, h = chunk_end(text, a, len(text))
        assert text[a:b] == text[a:].split(" ")[0]
        found = cache.find(text, a, b, h)
        if text[a:b] in kept:
            assert found is not None and found == vec[i64]([kept[text[a:b]]])
        else:
            assert found is None
            kept[text[a:b]] = a
            cache.add(text[a:b], vec[i64]([a]), h)
    assert len(cache) == len(kept) == 7


def test_chunk_cache_with_colliding_hashes_and_growth() -> None:
    # every chunk under one hash: found by its characters alone; then
    # enough chunks to grow the slots a few times, and the limit empties it
    cache: TextCache[vec[i64]] = TextCache(10_000)
    words = [f"w{k}" for k in range(300)]
    for k, w in enumerate(words):
        cache.add(w, vec[i64]([k]), 12345)
    for k, w in enumerate(words):
        found = cache.find(w, 0, len(w), 12345)
        assert found is not None and cache.keys[k] == w and found[0] == k
    assert cache.find("w300", 0, 4, 12345) is None
    text = " ".join(f"c{k}" for k in range(9000))
    a = 0
    while a < len(text):
        b, h = chunk_end(text, a, len(text))
        if cache.find(text, a, b, h) is None:
            cache.add(text[a:b], vec[i64]([a]), h)
        a = b + 1
    assert len(cache) == 9300
    b, h = chunk_end("c8999", 0, 5)
    found = cache.find("c8999", 0, b, h)
    assert found is not None and cache.keys[-1] == "c8999" and cache.values[-1] == found
    small: TextCache[vec[i64]] = TextCache(2)
    for w in ("a", "b", "c"):
        small.add(w, vec[i64](), 1)
    assert len(small) == 1 and small.find("a", 0, 1, 1) is None and small.find("c", 0, 1, 1) is not None
    assert small.keys == ["c"]


def test_cached_chunks_encode_as_fresh_ones() -> None:
    # the second encode reads every chunk from the cache; the first made them
    tok = _nomic()
    text = _sample_text(11) + " " + "word " * 50 + "x" * 70 + " ab\u00e9 ab\u00e9"
    tok.clear_caches()
    first = [list(c) for c in tok.encode_columns(text, False)]
    again = [list(c) for c in tok.encode_columns(text, False)]
    assert first == again
    if not NATIVE:
        return  # (the pure build keeps chunks in a dict)
    cache = tok._chunk_cache
    for chunk, kept in (("word", True), ("ab\u00e9", True), ("x" * 70, False)):
        b, h = chunk_end(chunk, 0, len(chunk))
        assert (cache.find(chunk, 0, b, h) is not None) == kept, chunk


def _ascii_stops_by_trial(pattern: re.Pattern[str]) -> tuple[str, bool]:
    """The ASCII characters where ``pattern`` matches before every ASCII
    follower (and at the end), and whether no other match depends on the
    follower or is longer than one character."""
    chars = ""
    exact = True
    for c in range(128):
        hits = 0
        for f in range(129):
            m = pattern.match(chr(c) + (chr(f) if f < 128 else ""))
            if m is not None:
                hits += 1
                exact = exact and m.end() == 1
        if hits == 129:
            chars += chr(c)
        elif hits:
            exact = False
    return chars, exact


def test_ascii_stops_read_from_the_flags_are_the_trial_matches() -> None:
    tok = _nomic()
    tok._ascii_stop = None
    pattern, chars = tok._ascii_stops()
    want, exact = _ascii_stops_by_trial(tok.chunk_stop_re)
    assert exact and chars is not None
    assert chars.decode("ascii") == want and all(pattern.fullmatch(c) for c in want)
