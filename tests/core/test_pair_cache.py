"""The cache of one int per pair of token ids (SPM's and BPE's merge loops)."""

from __future__ import annotations

from tokenprism.core.pair_cache import MISS, SLOTS, PairCache


def test_values_from_minus_one_to_top_come_back() -> None:
    cache = PairCache(n_tokens=1000, top=70_000)
    assert cache.get(3, 4) == MISS
    for v in (-1, 0, 1, 69_999, 70_000):
        cache.put(3, 4, v)
        assert cache.get(3, 4) == v


def test_a_clash_evicts_and_never_answers_for_the_other_pair() -> None:
    n = 262_144
    cache = PairCache(n_tokens=n, top=n)
    a = (5, 7)
    # another pair in the same slot: (lid * 1031 + rid) equal modulo SLOTS
    b = (5 + 1, 7 - 1031 + SLOTS)
    assert (a[0] * 1031 + a[1]) % SLOTS == (b[0] * 1031 + b[1]) % SLOTS
    cache.put(*a, 11)
    assert cache.get(*b) == MISS
    cache.put(*b, 22)
    assert cache.get(*a) == MISS
    assert cache.get(*b) == 22


def test_pairs_that_differ_only_in_order() -> None:
    cache = PairCache(n_tokens=50, top=50)
    cache.put(1, 2, 9)
    assert cache.get(2, 1) == MISS
    assert cache.get(1, 2) == 9


def test_caches_do_not_share_slots() -> None:
    # every cache's slots start as a copy of one blank vector: a store in
    # one must not show in another (another model's ids mean other pairs)
    a = PairCache(n_tokens=100, top=100)
    b = PairCache(n_tokens=100, top=100)
    a.put(1, 2, 7)
    b.put(3, 4, 5)
    assert (a.get(1, 2), a.get(3, 4)) == (7, MISS)
    assert (b.get(1, 2), b.get(3, 4)) == (MISS, 5)
    assert PairCache(n_tokens=100, top=100).get(1, 2) == MISS
    c = PairCache(n_tokens=100, top=100)
    c.put(9, 9, 0)
    assert (c.get(1, 2), c.get(3, 4), c.get(9, 9)) == (MISS, MISS, 0)


def test_slots_start_at_one_page_and_grow_to_the_bound() -> None:
    from tokenprism.core.pair_cache import FIRST_SLOTS

    n = 262_144
    cache = PairCache(n_tokens=n, top=n)
    assert len(cache.slots) == 0
    cache.put(1, 2, 3)
    assert len(cache.slots) == FIRST_SLOTS
    assert cache.get(1, 2) == 3
    sizes = set()
    for k in range(200_000):
        cache.put(k % 5000 + 7, k // 5000 + 1, k % 7)
        sizes.add(len(cache.slots))
        # the pair just stored is always found, whatever the growth did
        assert cache.get(k % 5000 + 7, k // 5000 + 1) == k % 7
    assert sizes == {FIRST_SLOTS, 8 * FIRST_SLOTS, SLOTS}
    hits = sum(cache.get(k % 5000 + 7, k // 5000 + 1) == k % 7 for k in range(195_000, 200_000))
    assert hits > 4000  # (a direct-mapped cache forgets what a later pair evicted)


def test_growth_carries_every_stored_pair_over() -> None:
    from tokenprism.core.pair_cache import FIRST_SLOTS

    cache = PairCache(n_tokens=100_000, top=100_000)
    # distinct slots at the first size (lid * 1031 + rid differ mod FIRST_SLOTS)
    pairs = [(0, r) for r in range(FIRST_SLOTS)]
    for lid, rid in pairs:
        cache.put(lid, rid, rid + 1)
    assert len(cache.slots) == FIRST_SLOTS
    cache._grown(cache.slots)
    assert len(cache.slots) == 8 * FIRST_SLOTS
    assert all(cache.get(lid, rid) == rid + 1 for lid, rid in pairs)
    assert cache.get(1, 0) == MISS
