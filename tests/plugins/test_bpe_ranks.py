"""The lazily filled merge-rank table (plugins/bpe/ranks.py) against the
dict made at once from decoded merges: same ranks for every merge, the
first of duplicates winning, no rank for anything else, on the reference
vocabularies and on hostile bytes."""

from __future__ import annotations

import os
import threading

import numpy as np
import pytest

from hypothesis import given, settings
from hypothesis import strategies as st

from tests.ggufmaker import string_array
from tests.refdata import SKIP_REASON, VOCAB_DIR
from tokenprism.core import open_model, read_gguf
from tokenprism.core.library.resources import demo_models
from tokenprism.core.string_array import StringArray
from tokenprism.plugins.bpe.ranks import BUCKETS, KEY_BYTES, RankTable, bucket_keys, bucket_of, merges_containing, \
    rank_dict, rank_of, text_bucket


def _files_with_merges() -> list[object]:
    if VOCAB_DIR is None:
        return [pytest.param(None, marks=pytest.mark.skip(reason=SKIP_REASON))]
    names = sorted(n for n in os.listdir(VOCAB_DIR) if n.endswith(".gguf"))
    return [pytest.param(os.path.join(VOCAB_DIR, n), id=n[len("ggml-vocab-"):-5]) for n in names
            if "tokenizer.ggml.merges" in read_gguf(os.path.join(VOCAB_DIR, n)).metadata]




def _expected_ranks(texts: list[str]) -> dict[str, int]:
    want: dict[str, int] = {}
    for i, t in enumerate(texts):
        want.setdefault(t, i)
    return want


@pytest.mark.parametrize("path", _files_with_merges())
def test_lazy_table_equals_the_full_dict(path: str) -> None:
    merges = read_gguf(path).metadata["tokenizer.ggml.merges"].value
    assert isinstance(merges, StringArray)
    lazy = RankTable(merges)
    assert not lazy.complete and not merges.decoded()
    texts = StringArray(merges.region, merges.starts, merges.end).tolist()  # decoded on a copy
    # the vectorised bucket of every merge is the one its text gets
    keys = bucket_keys(merges.region, merges.starts, merges.ends())
    assert keys.tolist() == [text_bucket(t) for t in texts]
    # lookups before everything is loaded already give the full answer
    want = _expected_ranks(texts)
    for t in texts[:: max(1, len(texts) // 3000)]:
        assert rank_of(lazy, lazy.ranks, t) == want[t]
    for left, right in (("zz", "qq"), ("\u0120t", "\u0120t"), ("x", "")):
        assert rank_of(lazy, lazy.ranks, left + " " + right) == want.get(left + " " + right, -1)
    lazy.load_all()
    assert lazy.complete and lazy.ranks == want == rank_dict(texts)


HOSTILE = [
    b"a b", b"a b",  # a duplicate: the first keeps its rank
    b"", b"x", b"ab",  # shorter than the bucket key
    b"\xe2\x96\x81t he", b"\xe2\x96\x81t he",
    b"\xff\xfe b", b"\xe2\x96 \x81",  # invalid UTF-8 (decoded with surrogateescape)
    b"\xed\xa0\x80 x",  # an encoded surrogate, invalid in UTF-8
    "\u2581the re".encode(), "日本 語".encode(), "🙂 🙂".encode(),
    b"a b",
]


def test_hostile_bytes_give_the_ranks_of_the_decoded_texts() -> None:
    arr = string_array(HOSTILE)
    texts = [b.decode("utf-8", "surrogateescape") for b in HOSTILE]
    want = _expected_ranks(texts)
    assert want["a b"] == 0 and want["\u2581t he"] == 5
    lazy = RankTable(arr)
    for t, r in want.items():
        assert rank_of(lazy, lazy.ranks, t) == r, t
    # texts no merge has: other surrogates, the same bytes as a merge but
    # other characters, nothing at all
    for t in ("\ud800 b", "\udce2\udc96\udc81t he", "a  b", "zz", "\u2581th e"):
        assert rank_of(lazy, lazy.ranks, t) == -1, t
    assert text_bucket("\ud800 b") == -1
    lazy.load_all()
    assert lazy.ranks == want == RankTable(texts).ranks


def test_decoded_merges_are_ranked_at_once() -> None:
    t = RankTable(("a b", "c d", "a b"))
    assert t.complete and t.ranks == {"a b": 0, "c d": 1}
    arr = string_array([b"a b"])
    arr.tolist()
    assert RankTable(arr).complete  # decoded already: nothing to gain from waiting
    assert RankTable(()).complete and RankTable(string_array([])).ranks == {}


def test_threads_loading_the_same_buckets_agree() -> None:
    items = [f"{chr(0x4E00 + i % 500)}{i} {i % 7}".encode() for i in range(20_000)]
    texts = [b.decode() for b in items]
    want = _expected_ranks(texts)
    table = RankTable(string_array(items))
    errors: list[str] = []

    def worker(seed: int) -> None:
        order = list(range(len(texts)))
        np.random.default_rng(seed).shuffle(order)
        for i in order[:4000]:
            if rank_of(table, table.ranks, texts[i]) != want[texts[i]]:
                errors.append(texts[i])

    threads = [threading.Thread(target=worker, args=(s,)) for s in range(4)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert errors == []


def test_merges_containing_searches_the_bytes() -> None:
    items = [b"a b", "x \u2581y".encode(), b"\x04\x00", "\u2581 \u2581".encode(), "q \u2581".encode()]
    arr = string_array(items)
    got = merges_containing(arr, " \u2581")
    assert got == ["x \u2581y", "\u2581 \u2581", "q \u2581"] and not arr.decoded()
    assert merges_containing(tuple(arr.tolist()), " \u2581") == got


def test_a_short_text_decodes_few_merges() -> None:
    path = demo_models().get("bpe")
    if path is None:
        pytest.skip("no bundled BPE demo model")
    model = open_model(path)
    merges = model.vocab.merges
    assert isinstance(merges, StringArray)
    model.encode("Hello world")
    assert not merges.decoded()
    table = model.tokenizer.rank_table()  # type: ignore[attr-defined]
    assert 0 < len(table.ranks) < len(merges) and BUCKETS > 1000


def _bucket_by_encoding(text: str) -> int:
    raw = text.encode("utf-8", "surrogateescape")
    head = raw[:KEY_BYTES]
    tail = raw[-2] | raw[-1] << 8 if len(raw) >= 2 else raw[0] << 8 if raw else 0
    return bucket_of(int.from_bytes(head, "little"), len(head), tail, len(raw))


@settings(max_examples=400, deadline=None)
@given(st.text(alphabet=st.one_of(st.characters(codec="utf-8"), st.sampled_from("\u2581\u0120\udc80\udcff\udce2")),
               min_size=0, max_size=9))
def test_bucket_from_code_points_equals_bucket_of_the_encoded_bytes(text: str) -> None:
    assert text_bucket(text) == _bucket_by_encoding(text)


def test_surrogates_no_merge_can_hold_have_no_bucket() -> None:
    assert text_bucket("\ud800ab") == -1 and text_bucket("a\udc7f") == -1
    assert text_bucket("\udc80") == _bucket_by_encoding("\udc80")


@pytest.mark.parametrize("path", _files_with_merges()[:1] + [pytest.param("hostile", id="hostile")])
def test_complete_all_swaps_in_the_full_dict_without_misleading_readers(path: str) -> None:
    if path == "hostile":
        merges = string_array(HOSTILE)
    else:
        merges = read_gguf(path).metadata["tokenizer.ggml.merges"].value
    texts = StringArray(merges.region, merges.starts, merges.end).tolist()
    want = _expected_ranks(texts)
    table = RankTable(merges)
    partial = table.ranks
    rank_of(table, partial, texts[0])  # one bucket loaded
    assert table.done is None and len(partial) < len(want)
    table.complete_all()
    assert table.complete and table.done is table.ranks and table.ranks == want
    # a reader that took the partial dict before the swap still gets every rank
    for t in texts[:: max(1, len(texts) // 2000)]:
        assert rank_of(table, partial, t) == want[t]
    assert rank_of(table, partial, "no such merge") == -1
    table.load_all()  # nothing left to load
    assert table.ranks == want


TEXT = "Hello world!  Ünïcödé 日本語 🙂 tabs\tand\nnew lines " * 20


@pytest.mark.parametrize("kind", ["spm", "bpe", "ugm", "wpm"])
def test_prepare_builds_ahead_and_changes_no_id(kind: str) -> None:
    path = demo_models().get(kind)
    if path is None:
        pytest.skip(f"no bundled {kind} demo model")
    lazy = open_model(path)
    want = lazy.encode(TEXT).ids
    ready = open_model(path)
    ready.prepare()  # a no-op for plugins without tables made on demand
    if kind == "bpe":
        table = ready.tokenizer.rank_table()  # type: ignore[attr-defined]
        assert table.complete and table.done is table.ranks
        assert len(table.ranks) == len(set(ready.vocab.merges))
    if kind == "ugm" and ready.tokenizer.by_chunks:  # type: ignore[attr-defined]
        # the tables its first ASCII and non-ASCII encodes would make
        assert ready.tokenizer._ascii_stop is not None and ready.tokenizer._stop_flags  # type: ignore[attr-defined]
    assert ready.encode(TEXT).ids == want
    assert ready.encode(TEXT, add_special=True).ids == lazy.encode(TEXT, add_special=True).ids
