"""Bounded fuzzing of the whole open path (reader, vocab, plugin) on small
real and generated GGUF files. The long run is benchmarks/fuzz_gguf.py."""

from __future__ import annotations

import random
import threading
import time
from pathlib import Path

import pytest

from tests.refdata import VOCAB_DIR
from tests.reliability import fuzzing
from tests.reliability.fuzzing import (HUGE, NEGATIVE, FuzzStats, build, fuzz_file, fuzz_file_structured, parse_kvs,
                                       run_case, structured_mutation)
from tokenprism.core import GGUFError, open_model

# In all about 4,000 cases in ~30 s here (measured: see the report in the
# commit); benchmarks/fuzz_gguf.py runs the long version.
BYTE_CASES_PER_FILE = 600
STRUCTURED_CASES_PER_FILE = 160
# one small real vocabulary (32k pieces, byte fallback, control tokens)
REFERENCE = "llama-spm"
REFERENCE_CASES = (150, 100)  # byte-level, structured: each case reads the whole vocab


def _small_sources(char_model_path: Path) -> list[Path]:
    sources = [char_model_path]
    try:
        from tokenprism.core.library.resources import demo_models
        sources.extend(sorted(demo_models().values()))
    except ImportError:
        pass
    return sources


def _reference() -> Path:
    if VOCAB_DIR is None:
        pytest.skip("reference vocabs not found")
    path = Path(VOCAB_DIR) / f"ggml-vocab-{REFERENCE}.gguf"
    if not path.exists():
        pytest.skip(f"{path.name} not found")
    return path


def _report(kind: str, stats: FuzzStats) -> None:
    print(f"\nfuzzed {stats.cases} {kind} cases: {stats.clean} clean, {stats.errors} GGUFError, "
          f"{len(stats.crashes)} crashes, {len(stats.slow)} slow or hung, max {stats.max_seconds:.3f}s CPU")
    assert not stats.crashes, "\n".join(stats.crashes[:20])
    assert not stats.slow, "\n".join(stats.slow[:20])


def test_mutated_files_end_in_a_result_or_gguf_error(char_model_path: Path, tmp_path: Path) -> None:
    stats = FuzzStats()
    sources = _small_sources(char_model_path)
    for i, src in enumerate(sources):
        try:
            open_model(src)
        except GGUFError as e:  # a plugin not installed here: nothing to fuzz through
            pytest.skip(f"{src.name}: {e}")
        fuzz_file(src, tmp_path, BYTE_CASES_PER_FILE, seed=1000 + i, stats=stats)
    _report("byte-level", stats)
    assert stats.errors > 0 and stats.clean > 0 and stats.cases >= 2500


def test_hostile_contents_end_in_a_result_or_gguf_error(char_model_path: Path, tmp_path: Path) -> None:
    """Well-formed files that say something wrong: duplicated and missing
    keys, wrong value types, huge and negative-looking sizes, array lengths
    that disagree, unknown merges, charsmaps pointing out of range, special
    ids outside the vocabulary."""
    stats = FuzzStats()
    sources = _small_sources(char_model_path)
    for i, src in enumerate(sources):
        fuzz_file_structured(src, tmp_path, STRUCTURED_CASES_PER_FILE, seed=2000 + i, stats=stats)
    _report("structured", stats)
    assert stats.errors > 0 and stats.clean > 0 and stats.cases >= 800


def test_reference_vocab_mutations(tmp_path: Path) -> None:
    src = _reference()
    stats = FuzzStats()
    fuzz_file(src, tmp_path, REFERENCE_CASES[0], seed=3000, stats=stats)
    fuzz_file_structured(src, tmp_path, REFERENCE_CASES[1], seed=3001, stats=stats)
    _report(f"{REFERENCE}", stats)
    assert stats.errors > 0 and stats.clean > 0


# ---- the watchdog -------------------------------------------------------------------------------

@pytest.mark.parametrize("how", ["busy", "blocked"])
def test_a_hanging_case_is_reported_not_waited_for(how: str, char_model_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    if threading.current_thread() is not threading.main_thread():
        pytest.skip("the watchdog's timers need the main thread")

    def hang(path: object) -> None:
        if how == "busy":
            while True:
                pass
        time.sleep(3600)

    monkeypatch.setattr(fuzzing, "open_model", hang)
    stats = FuzzStats()
    t0 = time.monotonic()
    # a short limit keeps the test quick; the suite's cases use 2 s
    run_case(char_model_path, stats, "hanging case", limit_s=0.2)
    elapsed = time.monotonic() - t0
    assert stats.cases == 1 and stats.clean == stats.errors == 0 and not stats.crashes
    assert len(stats.slow) == 1 and "hanging case" in stats.slow[0] and "hung" in stats.slow[0], stats.slow
    assert elapsed < 30
    # the timers are off again: a normal case afterwards is unaffected
    monkeypatch.undo()
    after = FuzzStats()
    run_case(char_model_path, after, "normal case")
    time.sleep(0.3)
    assert after.clean == 1 and not after.slow


def test_a_slow_case_is_a_failure(char_model_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    real = fuzzing.open_model

    def slow(path: Path) -> object:
        t = time.process_time()
        while time.process_time() - t < 0.3:
            pass
        return real(path)

    monkeypatch.setattr(fuzzing, "open_model", slow)
    stats = FuzzStats()
    run_case(char_model_path, stats, "slow case", limit_s=0.1)
    assert len(stats.slow) == 1 and stats.slow[0].startswith("slow case")


@pytest.mark.parametrize("kind", range(10))
def test_each_structured_mutation_kind_changes_the_file(kind: int, char_model_path: Path) -> None:
    """The mutator really produces every kind (a silent no-op would leave a
    bullet untested)."""
    from tokenprism.core.library.resources import demo_models
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
