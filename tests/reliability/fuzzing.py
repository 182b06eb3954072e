"""Mutating GGUF files: the shared engine of the fuzz test and the longer
fuzz script (benchmarks/fuzz_gguf.py).

Every mutated file must end in a clean result or :class:`GGUFError` — never
another exception, a hang, or an allocation beyond the file's size.
"""

from __future__ import annotations

import os
import random
import struct
import time
from dataclasses import dataclass, field
from pathlib import Path

from tokenprism.core import GGUFError, open_model

HUGE = (2**64 - 1, 2**63, 2**62 + 7, 2**40, 2**32 - 1, 2**31, 10**9)
TEXT = "Hello wörld 🙂 ½ 日本 <s></s>\n\t  end"


@dataclass
class FuzzStats:
    cases: int = 0
    clean: int = 0
    errors: int = 0
    crashes: list[str] = field(default_factory=list)
    slow: list[str] = field(default_factory=list)
    max_seconds: float = 0.0


def mutate(data: bytes, rng: random.Random) -> tuple[bytes, str]:
    """One mutation of ``data``, and a short description of it."""
    kind = rng.randrange(6)
    n = len(data)
    if kind == 0:
        cut = rng.randrange(n)
        return data[:cut], f"truncate@{cut}"
    buf = bytearray(data)
    if kind == 1:
        for _ in range(rng.randint(1, 8)):
            i = rng.randrange(n)
            buf[i] ^= 1 << rng.randrange(8)
        return bytes(buf), "bitflips"
    if kind == 2:
        # a huge count or length where the header keeps its u64 fields
        i = rng.randrange(0, max(1, min(n - 8, 4096)))
        v = rng.choice(HUGE)
        buf[i:i + 8] = struct.pack("<Q", v)
        return bytes(buf), f"huge u64 {v}@{i}"
    if kind == 3:
        i = rng.randrange(0, max(1, n - 4))
        buf[i:i + 4] = struct.pack("<I", rng.randrange(0, 16))
        return bytes(buf), f"value type@{i}"
    if kind == 4:
        i = rng.randrange(n)
        j = rng.randrange(n)
        chunk = data[i:i + rng.randint(1, 64)]
        return data[:j] + chunk + data[j:], f"duplicate chunk {i}->{j}"
    i = rng.randrange(n)
    return data[:i] + data[i + rng.randint(1, 64):], f"delete@{i}"


def run_case(path: Path, stats: FuzzStats, label: str, limit_s: float = 2.0) -> None:
    stats.cases += 1
    t0 = time.perf_counter()
    try:
        model = open_model(path)
        enc = model.encode(TEXT, add_special=True, parse_special=True)
        model.decode(enc.ids)
        stats.clean += 1
    except GGUFError:
        stats.errors += 1
    except Exception as e:  # anything else is a bug worth reporting
        stats.crashes.append(f"{label}: {type(e).__name__}: {e}")
    dt = time.perf_counter() - t0
    stats.max_seconds = max(stats.max_seconds, dt)
    if dt > limit_s:
        stats.slow.append(f"{label}: {dt:.2f}s")


def fuzz_file(source: Path, workdir: Path, count: int, seed: int, stats: FuzzStats) -> None:
    data = source.read_bytes()
    rng = random.Random(seed)
    target = workdir / f"fuzz-{os.getpid()}-{source.stem}.gguf"
    for k in range(count):
        mutated, what = mutate(data, rng)
        target.write_bytes(mutated)
        run_case(target, stats, f"{source.name}#{k} {what}")
