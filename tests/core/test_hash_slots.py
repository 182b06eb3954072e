"""core.hash_slots: the open addressing under the plugins' native caches,
checked against a plain dict of hash -> entries."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st
from librt.vecs import vec
from mypy_extensions import i64

from tokenprism.core.hash_slots import FIRST_SLOTS, entry_at, next_match, with_entry


def entries_of(slots: vec[i64], h: int) -> list[int]:
    """Every entry of hash ``h``, in probe order, as a cache walks them."""
    out = []
    s = next_match(slots, h, h)
    while s >= 0:
        out.append(entry_at(slots, s))
        s = next_match(slots, h, s + 1)
    return out


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(0, (1 << 31) - 1) | st.sampled_from([7, 7 + FIRST_SLOTS, FIRST_SLOTS - 1]),
                max_size=3 * FIRST_SLOTS))
def test_every_entry_is_found_under_its_hash(hashes: list[int]) -> None:
    slots = vec[i64]()
    for j, h in enumerate(hashes):
        slots = with_entry(slots, h, j)
    assert len(slots) >= 2 * len(hashes) and (len(slots) & (len(slots) - 1)) == 0
    expected: dict[int, list[int]] = {}
    for j, h in enumerate(hashes):
        expected.setdefault(h, []).append(j)
    for h, js in expected.items():
        assert sorted(entries_of(slots, h)) == js
    # a hash never stored leads to no entry, from wherever it starts
    absent = next(h for h in range(1 << 20) if h not in expected)
    assert entries_of(slots, absent) == []


def test_no_slots_and_wrapping_around() -> None:
    assert next_match(vec[i64](), 5, 5) == -1
    slots = vec[i64]()
    last = FIRST_SLOTS - 1
    for j in range(3):  # three entries that all want the last slot: two wrap to the front
        slots = with_entry(slots, last, j)
    assert len(slots) == FIRST_SLOTS
    assert entries_of(slots, last) == [0, 1, 2]
    assert [entry_at(slots, s) for s in (last, 0, 1)] == [0, 1, 2]


def test_growing_makes_a_new_vector_and_keeps_the_old_one() -> None:
    """A reader holding the slots from before a growth still finds what
    they held (the caches rely on it)."""
    slots = vec[i64]()
    n = FIRST_SLOTS // 2
    for j in range(n):
        slots = with_entry(slots, j * 7919 % (1 << 31), j)
    old = slots
    grown = with_entry(slots, 123, n)
    assert len(grown) == 2 * len(old)
    assert entries_of(old, 123) == [] and n in entries_of(grown, 123)
    assert all(j in entries_of(old, j * 7919 % (1 << 31)) for j in range(n))


@settings(max_examples=200, deadline=None)
@given(text=st.text(alphabet="ab é\u4f60\U0001F44D", max_size=40), start=st.integers(0, 40))
def test_chunk_end_stops_at_the_next_space_and_hashes_as_text_hash(text: str, start: int) -> None:
    from tokenprism.core.hash_slots import chunk_end, text_hash

    a = min(start, len(text))
    end, h = chunk_end(text, a, len(text))
    want = text.find(" ", a)
    assert end == (len(text) if want < 0 else want)
    assert h == text_hash(text, a, end) and 0 <= h < 2 ** 31


def test_text_cache_keeps_values_and_finds_keys_where_they_lie() -> None:
    from tokenprism.core.hash_slots import TextCache, text_hash

    cache: TextCache[int] = TextCache(100_000)
    words = [f"w{k}\u00e9" for k in range(5000)]  # past several doublings of the slots
    for k, w in enumerate(words):
        cache.add(w, k, text_hash(w, 0, len(w)))
    assert cache.keys == words and cache.values == list(range(5000))
    line = " ".join(words)
    at = 0
    for k, w in enumerate(words):
        assert cache.find(line, at, at + len(w), text_hash(line, at, at + len(w))) == k
        at += len(w) + 1
    # a key of the same hash is compared, not trusted
    cache.add("zz", 5000, 7)
    assert cache.find("zy", 0, 2, 7) is None and cache.find("zz", 0, 2, 7) == 5000
    cache.clear()
    assert len(cache) == 0 and cache.find(line, 0, len(words[0]), text_hash(words[0], 0, len(words[0]))) is None
