"""Bounded fuzzing of the whole open path (reader, vocab, plugin) on small
real and generated GGUF files. The long run is benchmarks/fuzz_gguf.py."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.reliability.fuzzing import FuzzStats, fuzz_file
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
