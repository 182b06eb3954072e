"""The BPE word cache (``plugins/bpe/word_cache.py``): ASCII words found by
their bytes where they lie, other words by their text, emptied at its limit;
and encoding through it gives the ids of a cache-less encode."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st
from librt.vecs import vec
from mypy_extensions import i64

from tokenprism.plugins.bpe.word_cache import WordCache, WordResult, ascii_hash


def _result(tid: int) -> WordResult:
    return WordResult(vec[i64]([tid, 0, 1]), 1)


def test_ascii_words_are_found_by_their_bytes_where_they_lie() -> None:
    cache = WordCache(100)
    data = b"the cat, the hat"
    words = [(0, 3), (3, 7), (7, 8), (8, 12), (12, 16)]  # "the", " cat", ",", " the", " hat"
    for k, (a, b) in enumerate(words[:3]):
        h = ascii_hash(data, a, b)
        assert h >= 0 and cache.get_ascii(data, a, b, h) is None
        cache.put(data[a:b].decode(), data[a:b], h, _result(k))
    # " the" is new (its leading blank), " cat" is found in place
    a, b = 8, 12
    assert cache.get_ascii(data, a, b, ascii_hash(data, a, b)) is None
    got = cache.get_ascii(data, 3, 7, ascii_hash(data, 3, 7))
    assert got is not None and got.ids == [1]
    # the same bytes elsewhere are the same word
    other = b"a cat"
    got = cache.get_ascii(other, 1, 5, ascii_hash(other, 1, 5))
    assert got is not None and got.ids == [1]


def test_non_ascii_words_go_to_the_dict_and_the_limit_empties_both() -> None:
    data = b"x\x83y"  # a collapsed byte of a non-ASCII letter
    assert ascii_hash(data, 0, 3) == -1
    cache = WordCache(3)
    cache.put("x\u0436y", b"", -1, _result(5))
    got = cache.get("x\u0436y")
    assert got is not None and got.ids == [5]
    for k, w in enumerate([b"ab", b"cd"]):
        cache.put(w.decode(), w, ascii_hash(w, 0, 2), _result(k))
    assert len(cache) == 3
    cache.put("ef", b"ef", ascii_hash(b"ef", 0, 2), _result(9))  # past the limit: emptied first
    assert len(cache) == 1
    assert cache.get("x\u0436y") is None
    assert cache.get_ascii(b"ab", 0, 2, ascii_hash(b"ab", 0, 2)) is None
    got = cache.get_ascii(b"ef", 0, 2, ascii_hash(b"ef", 0, 2))
    assert got is not None and got.ids == [9]


def test_many_words_grow_the_table() -> None:
    cache = WordCache(1 << 20)
    words = [f"w{k}".encode() for k in range(20_000)]
    for k, w in enumerate(words):
        cache.put(w.decode(), w, ascii_hash(w, 0, len(w)), _result(k))
    for k in range(0, 20_000, 997):
        w = words[k]
        got = cache.get_ascii(w, 0, len(w), ascii_hash(w, 0, len(w)))
        assert got is not None and got.ids == [k]
    assert cache.get_ascii(b"w20000", 0, 6, ascii_hash(b"w20000", 0, 6)) is None


def test_encoding_through_a_small_cache_gives_the_same_ids(ref_model) -> None:  # type: ignore[no-untyped-def]
    model = ref_model("llama-bpe")
    tok = model.tokenizer
    text = "The cat sat; the cat's hat \u00e9t\u00e9 \u043a\u043e\u0442 12345 cat cat\n" * 40
    full = model.encode(text).token_ids
    want = [t for w in tok.splitter.split(text) for t in tok.word(w).ids]
    assert list(full) == want  # the cache, word by word
    saved = tok.cache
    try:
        tok.cache = WordCache(3)  # emptied every few words
        assert list(model.encode(text).token_ids) == want
    finally:
        tok.cache = saved


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=3), st.binary(max_size=21), st.binary(max_size=9), st.binary(max_size=9))
def test_a_words_hash_is_its_bytes_alone(before: bytes, word: bytes, after: bytes, other_after: bytes) -> None:
    """Only the word's own bytes count, wherever it lies and whatever
    follows, and any byte 0x80 and up makes it no ASCII word."""
    h = ascii_hash(before + word + after, len(before), len(before) + len(word))
    assert h == ascii_hash(word + other_after, 0, len(word)) == ascii_hash(word, 0, len(word))
    assert (h == -1) == any(c >= 0x80 for c in word)
    if h >= 0 and word:
        # found where it lies; one byte changed (anywhere) is another word
        cache = WordCache(10)
        cache.put(word.decode(), word, h, _result(3))
        data = before + word + after
        got = cache.get_ascii(data, len(before), len(before) + len(word), h)
        assert got is not None and got.ids == [3]
        for k in range(len(word)):
            changed = word[:k] + bytes([word[k] ^ 1]) + word[k + 1:]
            assert cache.get_ascii(changed, 0, len(changed), ascii_hash(changed, 0, len(changed))) is None
