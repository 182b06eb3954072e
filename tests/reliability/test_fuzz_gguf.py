"""Bounded fuzzing of the whole open path (reader, vocab, plugin) on small
real and generated GGUF files. The long run is benchmarks/fuzz_gguf.py."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from tests.reliability.fuzzing import (HUGE, NEGATIVE, FuzzStats, build, fuzz_file, fuzz_file_structured, parse_kvs,
                                       structured_mutation)
from tokenprism.core import GGUFError, open_model


def _small_sources(char_model_path: Path) -> list[Path]:
    sources = [char_model_path]
    try:
        from tokenprism.core.resources import demo_models
        sources.extend(sorted(demo_models().values()))
    except ImportError:
        pass
    return sources


def test_mutated_files_end_in_a_result_or_gguf_error(char_model_path: Path, tmp_path: Path) -> None:
    stats = FuzzStats()
    sources = _small_sources(char_model_path)
    per_file = max(150, 1200 // len(sources))
    for i, src in enumerate(sources):
        try:
            open_model(src)
        except GGUFError as e:  # a plugin not installed here: nothing to fuzz through
            pytest.skip(f"{src.name}: {e}")
        fuzz_file(src, tmp_path, per_file, seed=1000 + i, stats=stats)
    print(f"\nfuzzed {stats.cases} cases: {stats.clean} clean, {stats.errors} GGUFError, "
          f"{len(stats.crashes)} crashes, max {stats.max_seconds:.3f}s")
    assert not stats.crashes, "\n".join(stats.crashes[:20])
    assert not stats.slow, "\n".join(stats.slow[:20])
    assert stats.errors > 0 and stats.cases >= 1000


def test_hostile_contents_end_in_a_result_or_gguf_error(char_model_path: Path, tmp_path: Path) -> None:
    """Well-formed files that say something wrong: duplicated and missing
    keys, wrong value types, huge and negative-looking sizes, array lengths
    that disagree, unknown merges, charsmaps pointing out of range, special
    ids outside the vocabulary."""
    stats = FuzzStats()
    sources = _small_sources(char_model_path)
    for i, src in enumerate(sources):
        fuzz_file_structured(src, tmp_path, 360 // len(sources), seed=2000 + i, stats=stats)
    print(f"\nfuzzed {stats.cases} structured cases: {stats.clean} clean, {stats.errors} GGUFError, "
          f"{len(stats.crashes)} crashes, max {stats.max_seconds:.3f}s CPU")
    assert not stats.crashes, "\n".join(stats.crashes[:20])
    assert not stats.slow, "\n".join(stats.slow[:20])
    assert stats.errors > 0 and stats.clean > 0


@pytest.mark.parametrize("kind", range(10))
def test_each_structured_mutation_kind_changes_the_file(kind: int, char_model_path: Path) -> None:
    """The mutator really produces every kind (a silent no-op would leave a
    bullet untested)."""
    from tokenprism.core.resources import demo_models
    data = demo_models()["ugm" if kind == 6 else "bpe" if kind == 5 else "spm"].read_bytes()
    rng = random.Random(kind)
    done = 0
    for _ in range(200):
        state = rng.getstate()
        if rng.randrange(10) != kind:
            continue
        rng.setstate(state)
        mutated, what = structured_mutation(data, rng)
        assert mutated != data, what
        done += 1
        if done == 5:
            break
    assert done == 5


def test_declared_sizes_are_checked_before_allocating(char_model_path: Path, tmp_path: Path) -> None:
    """A count or length near 2**64 fails at once with GGUFError, using no
    more memory than the file's size would need."""
    import struct
    import tracemalloc

    data = char_model_path.read_bytes()
    head, kvs = parse_kvs(data)
    for v in NEGATIVE + HUGE:
        for i, kv in enumerate(kvs):
            if kv.vtype not in (8, 9):
                continue
            off = 24 + sum(8 + len(k.key) + 4 + len(k.payload) for k in kvs[:i])
            off += 8 + len(kv.key) + 4 + (4 if kv.vtype == 9 else 0)
            buf = bytearray(build(head, kvs))
            buf[off:off + 8] = struct.pack("<Q", v)
            p = tmp_path / "huge.gguf"
            p.write_bytes(bytes(buf))
            tracemalloc.start()
            try:
                with pytest.raises(GGUFError):
                    open_model(p)
                peak = tracemalloc.get_traced_memory()[1]
            finally:
                tracemalloc.stop()
            assert peak < 4 * len(data) + (4 << 20), (v, kv.key, peak)
