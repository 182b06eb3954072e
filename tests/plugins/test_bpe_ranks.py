"""The native merge-rank table (plugins/bpe/ranks.py) against the dict
made at once from decoded merges: same ranks for every merge and every
pair looked up in place, the first of duplicates winning, no rank for
anything else, on the reference vocabularies and on hostile bytes."""

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
from tokenprism.plugins.bpe.ranks import NATIVE_TABLES, RankTable, merges_containing, rank_dict, rank_of


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
    assert lazy.complete != NATIVE_TABLES and not merges.decoded()
    texts = StringArray(merges.region, merges.starts, merges.end).tolist()  # decoded on a copy
    want = _expected_ranks(texts)
    # every merge, by its text and as a pair looked up where it lies
    for t in texts:
        assert rank_of(lazy, lazy.ranks, t) == want[t]
        k = t.find(" ", 1)
        if k > 0:
            w = "<" + t[:k] + t[k + 1:] + ">"
            assert lazy.pair_rank(w, 1, 1 + k, len(w) - 1) == want.get(t, -1), t
    for left, right in (("zz", "qq"), ("\u0120t", "\u0120t"), ("x", ""), ("", "x")):
        assert rank_of(lazy, lazy.ranks, left + " " + right) == want.get(left + " " + right, -1)
        assert lazy.pair_rank(left + right, 0, len(left), len(left + right)) == want.get(left + " " + right, -1)
    lazy.load_all()
    assert lazy.complete and lazy.ranks == want == rank_dict(texts)


HOSTILE = [
    b"a b", b"a b",  # a duplicate: the first keeps its rank
    b"", b"x", b"ab",  # shorter than one word of the hash
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
    assert lazy.pair_rank("\udce2\udc96\udc81the", 0, 4, 6) == -1  # the bytes of "\u2581t he", other chars
    assert lazy.pair_rank("\u2581the", 0, 2, 4) == 5 and lazy.pair_rank("\udcff\udcfeb", 0, 2, 3) == 7
    lazy.load_all()
    assert lazy.ranks == want == RankTable(texts).ranks


def test_decoded_merges_are_ranked_at_once() -> None:
    t = RankTable(("a b", "c d", "a b"))
    assert t.complete and t.ranks == {"a b": 0, "c d": 1}
    arr = string_array([b"a b"])
    arr.tolist()
    assert RankTable(arr).complete  # decoded already: nothing to gain from waiting
    assert RankTable(()).complete and RankTable(string_array([])).ranks == {}


def test_threads_reading_one_table_agree() -> None:
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
    assert table.complete != NATIVE_TABLES and table.done is (None if NATIVE_TABLES else table.ranks)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.text(alphabet="ab\u0120\u2581\udcff\u00e9\U0001f642", min_size=1, max_size=5),
                          st.text(alphabet="ab\u0120\u2581\udcff\u00e9\U0001f642", min_size=1, max_size=5)),
                min_size=1, max_size=60),
       st.lists(st.text(alphabet="ab\u0120\u2581\udcff\u00e9\U0001f642 ", max_size=11), max_size=20))
def test_native_table_answers_as_the_dict(pairs: list[tuple[str, str]], probes: list[str]) -> None:
    """Random merges (duplicates likely, escaped bytes among them): the
    table made from their bytes ranks texts and in-place pairs as the dict
    of the decoded texts does."""
    items = [(a + " " + b).encode("utf-8", "surrogateescape") for a, b in pairs]
    texts = [x.decode("utf-8", "surrogateescape") for x in items]
    want = _expected_ranks(texts)
    table = RankTable(string_array(items))
    for t in texts + probes:
        assert rank_of(table, table.ranks, t) == want.get(t, -1), t
    for a, b in pairs + [(p[:2], p[2:]) for p in probes]:
        assert table.pair_rank("<" + a + b, 1, 1 + len(a), 1 + len(a + b)) == want.get(a + " " + b, -1)


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
    rank_of(table, partial, texts[0])  # one text kept
    if NATIVE_TABLES:
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
        # the native table made (no dict of every merge's text: memory only)
        assert ready.tokenizer._ranks is not None  # type: ignore[attr-defined]
    if kind == "ugm" and ready.tokenizer.by_chunks:  # type: ignore[attr-defined]
        # the tables its first ASCII and non-ASCII encodes would make
        assert ready.tokenizer._ascii_stop is not None and ready.tokenizer._stop_flags  # type: ignore[attr-defined]
    assert ready.encode(TEXT).ids == want
    assert ready.encode(TEXT, add_special=True).ids == lazy.encode(TEXT, add_special=True).ids


@pytest.mark.parametrize("path", _files_with_merges())
def test_pieces_index_answers_as_the_vocabulary(path: str) -> None:
    """What encoding looks pieces up in (the pieces' undecoded bytes)
    gives the vocabulary's own ids: the last of duplicates, -1 for the
    rest."""
    model = open_model(path)
    tok = model.tokenizer
    finder = tok._piece_finder()  # type: ignore[attr-defined]
    pieces = model.vocab.pieces
    assert isinstance(pieces, StringArray)
    ix = finder.raw
    if not NATIVE_TABLES:
        assert ix is None
        return
    assert ix is not None
    texts = StringArray(pieces.region, pieces.starts, pieces.end).tolist()
    last = {p: i for i, p in enumerate(texts) if p}
    probes = ["", "zzzzqqq", "\udcff", "\u2581the", "\u0120the", "<0x0A>", "\ud800"]
    for t in texts[:: max(1, len(texts) // 4000)] + probes:
        assert ix.find_text(t) == last.get(t, -1) == tok.t2i.find(t), t  # type: ignore[attr-defined]
        assert tok.piece_id("<" + t + ">", 1, 1 + len(t)) == last.get(t, -1)  # type: ignore[attr-defined]
