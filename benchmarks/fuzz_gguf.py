"""Long fuzz run over GGUF files (the suite runs a bounded version).

    nice -n 10 python benchmarks/fuzz_gguf.py [--cases N] [--seed S] [--refs] FILE.gguf [...]

With no files, fuzzes the bundled demo models (``--refs`` adds the three
smallest reference vocabs). Each file gets N cases: half byte-level
mutations (truncation, flipped bits, huge u64s, value types, duplicated and
deleted chunks) and half structured ones (duplicated and missing keys,
wrong value types, huge and negative-looking counts and lengths,
tokens/scores/types of different lengths, merges naming unknown pieces,
charsmap blobs pointing out of range, special ids outside the vocabulary).

Every case must end in a clean result or GGUFError within 2 s. Time is CPU
time (a shared machine's load does not count). A case that hangs is stopped
by a watchdog (tests/reliability/fuzzing.py: CPU and wall-clock timers, and
faulthandler ending the process with every thread's stack as a last
resort) and counted under hangs, so the run never blocks. Memory is traced with
tracemalloc on every Nth case (``--trace-every``): a case may allocate at most twice what opening the
unmutated file does, plus 16 MiB — a declared size is never trusted for an
allocation. Prints cases, clean results, GGUFErrors, crashes, hangs,
memory overruns and the peak per case; exits 1 on any problem.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.reliability.fuzzing import FuzzStats, fuzz_file, fuzz_file_structured, run_case  # noqa: E402

REFS = ("bert-bge", "llama-spm", "phi-3")


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("files", nargs="*", type=Path)
    ap.add_argument("--cases", type=int, default=5000, help="cases per file")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--refs", action="store_true", help="add the smallest reference vocabs")
    ap.add_argument("--trace-every", type=int, default=10, help="measure memory of every Nth case")
    args = ap.parse_args()
    files = list(args.files)
    if not files:
        from tokenprism.core.library.resources import demo_models
        files = sorted(demo_models().values())
        if args.refs:
            from tests.refdata import VOCAB_DIR
            if VOCAB_DIR is not None:
                files += [Path(VOCAB_DIR) / f"ggml-vocab-{n}.gguf" for n in REFS]
    stats = FuzzStats()
    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        for i, f in enumerate(files):
            # what the unmutated file costs sets the allowance for its mutants
            probe = FuzzStats()
            run_case(f, probe, f"{f.name} unmutated", trace=True)
            stats.memory_limit = 2 * probe.peak_bytes + (16 << 20)
            half = args.cases // 2
            fuzz_file(f, Path(tmp), args.cases - half, args.seed + i, stats, args.trace_every)
            fuzz_file_structured(f, Path(tmp), half, args.seed + 1000 + i, stats, args.trace_every)
            print(f"{f.name}: {stats.cases} cases so far, unmutated peak {probe.peak_bytes / 2**20:.1f} MiB, "
                  f"{time.perf_counter() - t0:.0f} s", flush=True)
    largest = max(f.stat().st_size for f in files)
    print(f"cases {stats.cases}, clean {stats.clean}, GGUFError {stats.errors}, "
          f"crashes {len(stats.crashes)}, hangs>2s {len(stats.slow)}, memory overruns {len(stats.over_memory)}, "
          f"max {stats.max_seconds:.2f} s CPU per case")
    print(f"peak traced memory of one case {stats.peak_bytes / 2**20:.1f} MiB ({stats.peak_case}); "
          f"largest input {largest / 2**20:.2f} MiB; {time.perf_counter() - t0:.0f} s in all")
    for line in stats.crashes[:20] + stats.slow[:20] + stats.over_memory[:20]:
        print("  ", line)
    return 1 if stats.crashes or stats.slow or stats.over_memory else 0


if __name__ == "__main__":
    sys.exit(main())
