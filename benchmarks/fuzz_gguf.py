"""Long fuzz run over GGUF files (the suite runs a bounded version).

    python benchmarks/fuzz_gguf.py [--cases N] [--seed S] FILE.gguf [...]

With no files, fuzzes the bundled demo models. Prints cases, clean
results, GGUFErrors, crashes, hangs (> 2 s) and the peak memory traced
while opening mutated files, next to the size of the largest input.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import tracemalloc
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.reliability.fuzzing import FuzzStats, fuzz_file  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("files", nargs="*", type=Path)
    ap.add_argument("--cases", type=int, default=5000, help="cases per file")
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    files = list(args.files)
    if not files:
        from tokenprism.core.resources import demo_models
        files = sorted(demo_models().values())
    stats = FuzzStats()
    tracemalloc.start()
    with tempfile.TemporaryDirectory() as tmp:
        for i, f in enumerate(files):
            fuzz_file(f, Path(tmp), args.cases, args.seed + i, stats)
            print(f"{f.name}: {stats.cases} cases so far", flush=True)
    _, peak = tracemalloc.get_traced_memory()
    largest = max(f.stat().st_size for f in files)
    print(f"cases {stats.cases}, clean {stats.clean}, GGUFError {stats.errors}, "
          f"crashes {len(stats.crashes)}, hangs>2s {len(stats.slow)}, max {stats.max_seconds:.2f}s")
    print(f"peak traced memory {peak / 2**20:.1f} MiB; largest input {largest / 2**20:.1f} MiB")
    for line in stats.crashes[:20] + stats.slow[:20]:
        print("  ", line)
    return 1 if stats.crashes or stats.slow else 0


if __name__ == "__main__":
    sys.exit(main())
