"""Mutating GGUF files: the shared engine of the fuzz test and the longer
fuzz script (benchmarks/fuzz_gguf.py).

Every mutated file must end in a clean result or :class:`GGUFError` — never
another exception, a hang, or an allocation beyond the file's size.
"""

from __future__ import annotations

import faulthandler
import os
import random
import signal
import struct
import sys
import threading
import time
import tracemalloc
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterator

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
    memory_limit: int = 0
    """Bytes one case may allocate (traced with tracemalloc); 0: not checked."""
    peak_bytes: int = 0
    peak_case: str = ""
    over_memory: list[str] = field(default_factory=list)


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


class CaseHang(BaseException):
    """Raised inside a case that ran past its watchdog (a BaseException, so
    the code under test cannot swallow it with ``except Exception``)."""


def _stop_case(signum: int, frame: object) -> None:
    raise CaseHang(signal.Signals(signum).name)


@contextmanager
def watchdog(cpu_s: float, wall_s: float, kill_s: float) -> Iterator[None]:
    """Stop a case that hangs instead of blocking the run forever.

    A busy loop is interrupted after ``cpu_s`` of CPU time (SIGPROF), a case
    blocked without using CPU after ``wall_s`` (SIGALRM): both raise
    :class:`CaseHang` in the case. Compiled code that never returns to the
    interpreter cannot be interrupted that way, so after ``kill_s``
    faulthandler prints every thread's stack and ends the process: a hard
    failure with the place of the hang, never a silent block.
    """
    timers = hasattr(signal, "setitimer") and threading.current_thread() is threading.main_thread()
    faulthandler.dump_traceback_later(kill_s, exit=True, file=sys.__stderr__)
    old_prof = old_alarm = None
    if timers:
        old_prof = signal.signal(signal.SIGPROF, _stop_case)
        old_alarm = signal.signal(signal.SIGALRM, _stop_case)
        signal.setitimer(signal.ITIMER_PROF, cpu_s)
        signal.setitimer(signal.ITIMER_REAL, wall_s)
    try:
        yield
    finally:
        for _ in range(3):
            try:  # a timer that fires while disarming must not leave the other one armed
                if timers:
                    signal.setitimer(signal.ITIMER_PROF, 0)
                    signal.setitimer(signal.ITIMER_REAL, 0)
                    signal.signal(signal.SIGPROF, old_prof)
                    signal.signal(signal.SIGALRM, old_alarm)
                faulthandler.cancel_dump_traceback_later()
                break
            except CaseHang:
                continue


def run_case(path: Path, stats: FuzzStats, label: str, limit_s: float = 2.0, trace: bool = False) -> None:
    """Open, encode and decode ``path``; count the outcome. Time is the
    process's CPU time (other jobs on a shared machine do not count);
    ``trace`` also measures the case's peak memory (tracemalloc, slow).
    A case is stopped by :func:`watchdog` once it runs past ``limit_s`` of
    CPU (several times that when traced) and is reported as slow."""
    stats.cases += 1
    if trace:
        tracemalloc.start()
    t0 = time.process_time()
    cpu_limit = limit_s * (10 if trace else 1) + 0.05
    hang = ""
    try:
        with watchdog(cpu_limit, max(2.0, 5 * cpu_limit), max(60.0, 30 * cpu_limit)):
            try:
                model = open_model(path)
                enc = model.encode(TEXT, add_special=True, parse_special=True)
                model.decode(enc.ids)
                stats.clean += 1
            except GGUFError:
                stats.errors += 1
            except Exception as e:  # anything else is a bug worth reporting
                stats.crashes.append(f"{label}: {type(e).__name__}: {e}")
    except CaseHang as e:
        hang = f" (hung: stopped by {e})"
    dt = time.process_time() - t0
    if trace:
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        if peak > stats.peak_bytes:
            stats.peak_bytes, stats.peak_case = peak, label
        if stats.memory_limit and peak > stats.memory_limit:
            stats.over_memory.append(f"{label}: {peak / 2**20:.1f} MiB")
        if hang:
            stats.slow.append(f"{label}: {dt:.2f}s CPU{hang}")
        return  # tracing slows a case down several times: no time check
    stats.max_seconds = max(stats.max_seconds, dt)
    if dt > limit_s or hang:
        stats.slow.append(f"{label}: {dt:.2f}s CPU{hang}")


def fuzz_file(source: Path, workdir: Path, count: int, seed: int, stats: FuzzStats, trace_every: int = 0) -> None:
    data = source.read_bytes()
    rng = random.Random(seed)
    target = workdir / f"fuzz-{os.getpid()}-{source.stem}.gguf"
    for k in range(count):
        mutated, what = mutate(data, rng)
        target.write_bytes(mutated)
        run_case(target, stats, f"{source.name}#{k} {what}", trace=trace_every > 0 and k % trace_every == 0)


# ---- structured mutations: well-formed files with hostile contents -------------------------
#
# Byte-level mutations rarely produce a file that parses and then says
# something wrong; these rewrite the key/value section so each issue bullet
# is hit on purpose: duplicated keys, missing tokenizer keys, wrong value
# types, huge or negative-looking counts and lengths, tokens/scores/types
# arrays of different lengths, merges naming unknown pieces, charsmap blobs
# pointing out of range, special ids outside the vocabulary.

_SCALAR = {0: "<B", 1: "<b", 2: "<H", 3: "<h", 4: "<I", 5: "<i", 6: "<f", 7: "<?", 10: "<Q", 11: "<q", 12: "<d"}
STRING, ARRAY = 8, 9
NEGATIVE = (2**64 - 1, 2**64 - 2, 2**63, 2**63 + 1, 2**32 - 1, 2**31)


@dataclass
class KV:
    key: bytes
    vtype: int
    payload: bytes  # the value's bytes as stored, after the type


def _skip_value(data: bytes, at: int, vtype: int) -> int:
    if vtype in _SCALAR:
        return at + struct.calcsize(_SCALAR[vtype])
    if vtype == STRING:
        (n,) = struct.unpack_from("<Q", data, at)
        return at + 8 + n
    if vtype == ARRAY:
        etype, count = struct.unpack_from("<IQ", data, at)
        at += 12
        if etype in _SCALAR:
            return at + count * struct.calcsize(_SCALAR[etype])
        for _ in range(count):
            at = _skip_value(data, at, etype)
        return at
    raise ValueError(f"value type {vtype}")


def parse_kvs(data: bytes) -> tuple[bytes, list[KV]]:
    """(header before the count, key/value pairs) of a tensor-free GGUF."""
    magic, version, n_tensors, n_kv = struct.unpack_from("<4sIQQ", data, 0)
    if n_tensors:
        raise ValueError("structured mutation needs a vocab-only file")
    at = 24
    kvs: list[KV] = []
    for _ in range(n_kv):
        (n,) = struct.unpack_from("<Q", data, at)
        key = data[at + 8:at + 8 + n]
        at += 8 + n
        (vtype,) = struct.unpack_from("<I", data, at)
        at += 4
        end = _skip_value(data, at, vtype)
        kvs.append(KV(key, vtype, data[at:end]))
        at = end
    return data[:16], kvs


def build(head: bytes, kvs: list[KV]) -> bytes:
    out = [head, struct.pack("<Q", len(kvs))]
    for kv in kvs:
        out += [struct.pack("<Q", len(kv.key)), kv.key, struct.pack("<I", kv.vtype), kv.payload]
    data = b"".join(out)
    return data + bytes(-len(data) % 32)


def _string(s: bytes) -> bytes:
    return struct.pack("<Q", len(s)) + s


def _array(etype: int, items: list[bytes]) -> bytes:
    return struct.pack("<IQ", etype, len(items)) + b"".join(items)


def _array_items(kv: KV) -> tuple[int, list[bytes]]:
    etype, count = struct.unpack_from("<IQ", kv.payload, 0)
    at = 12
    items = []
    for _ in range(count):
        end = _skip_value(kv.payload, at, etype)
        items.append(kv.payload[at:end])
        at = end
    return etype, items


def _find(kvs: list[KV], suffix: bytes) -> int:
    return next((i for i, kv in enumerate(kvs) if kv.key.endswith(suffix)), -1)


def _any_value(rng: random.Random) -> tuple[int, bytes]:
    """A value of a random type (the wrong one for most keys)."""
    t = rng.choice([0, 4, 5, 6, 7, 8, 9, 10, 11])
    if t == STRING:
        return t, _string(rng.choice([b"", b"x", "ü".encode(), b"\xff\xfe"]))
    if t == ARRAY:
        et = rng.choice([0, 5, 6, 8])
        n = rng.randint(0, 5)
        items = [_string(b"a") if et == STRING else struct.pack(_SCALAR[et], 1) for _ in range(n)]
        return t, _array(et, items)
    return t, struct.pack(_SCALAR[t], rng.choice([0, 1, 7]) if t not in (6,) else 1.5)


def structured_mutation(data: bytes, rng: random.Random) -> tuple[bytes, str]:
    """One semantic mutation of a tensor-free GGUF, and what it did."""
    head, kvs = parse_kvs(data)
    kind = rng.randrange(10)
    tok = [i for i, kv in enumerate(kvs) if kv.key.startswith(b"tokenizer.")]
    i = rng.choice(tok or list(range(len(kvs))))
    kv = kvs[i]
    if kind == 0:  # duplicated key, same or other value
        dup = KV(kv.key, kv.vtype, kv.payload)
        if rng.random() < 0.5:
            dup.vtype, dup.payload = _any_value(rng)
        kvs.insert(rng.randint(0, len(kvs)), dup)
        return build(head, kvs), f"duplicate {kv.key!r}"
    if kind == 1:  # missing key
        del kvs[i]
        return build(head, kvs), f"missing {kv.key!r}"
    if kind == 2:  # wrong value type
        kv.vtype, kv.payload = _any_value(rng)
        return build(head, kvs), f"type {kv.vtype} for {kv.key!r}"
    if kind == 3:  # huge or negative-looking count / length, declared in place
        v = rng.choice(HUGE + NEGATIVE)
        blob = build(head, kvs)
        at = 24
        for k in kvs[:i]:
            at += 8 + len(k.key) + 4 + len(k.payload)
        where = rng.choice(["key", "value"])
        if where == "value" and kv.vtype in (STRING, ARRAY):
            off = at + 8 + len(kv.key) + 4 + (4 if kv.vtype == ARRAY else 0)
        else:
            off = at
        buf = bytearray(blob)
        buf[off:off + 8] = struct.pack("<Q", v)
        return bytes(buf), f"size {v} in {where} of {kv.key!r}"
    if kind == 4:  # tokens vs scores vs types of different lengths
        j = _find(kvs, rng.choice([b".scores", b".token_type", b".tokens"]))
        if j < 0 or kvs[j].vtype != ARRAY:
            return build(head, kvs), "no array to resize"
        etype, items = _array_items(kvs[j])
        n = len(items)
        new_n = rng.choice([0, 1, max(0, n - 1), n + 1, n * 2])
        items = (items * 3)[:new_n]
        kvs[j].payload = _array(etype, items)
        return build(head, kvs), f"{kvs[j].key!r} has {new_n} of {n}"
    if kind == 5:  # merges naming unknown pieces, or malformed
        j = _find(kvs, b".merges")
        bad = rng.choice([b"zq\xc3\xa9 xqv", b"onlyone", b" a", b"a  b", b"a b c", b"", b"\xff \xfe",
                          "Ġneverseen Ġpiece".encode()])
        if j < 0:
            kvs.append(KV(b"tokenizer.ggml.merges", ARRAY, _array(STRING, [_string(bad)])))
            return build(head, kvs), f"merges added {bad!r}"
        etype, items = _array_items(kvs[j])
        if items:
            items[rng.randrange(len(items))] = _string(bad)
        else:
            items = [_string(bad)]
        kvs[j].payload = _array(etype, items)
        return build(head, kvs), f"merge {bad!r}"
    if kind == 6:  # charsmap blobs pointing out of range
        j = _find(kvs, b".precompiled_charsmap")
        if j < 0:
            blob = struct.pack("<I", rng.choice([0, 4, 2**31, 2**32 - 1])) + rng.randbytes(rng.randint(0, 64))
            kvs.append(KV(b"tokenizer.ggml.precompiled_charsmap", ARRAY, struct.pack("<IQ", 0, len(blob)) + blob))
            return build(head, kvs), "charsmap added"
        etype = struct.unpack_from("<I", kvs[j].payload, 0)[0]
        raw = bytearray(kvs[j].payload[12:])
        how = rng.randrange(4)
        if how == 0 and len(raw) >= 4:  # trie size beyond the blob
            raw[0:4] = struct.pack("<I", rng.choice([len(raw), len(raw) + 4, 2**31, 2**32 - 1, 3]))
        elif how == 1 and len(raw) > 8:  # trie units / string offsets pointing anywhere
            for _ in range(rng.randint(1, 16)):
                k = rng.randrange(4, len(raw) - 3) & ~3
                raw[k:k + 4] = struct.pack("<I", rng.getrandbits(32))
        elif how == 2:
            raw = raw[:rng.randrange(len(raw) + 1)]
        else:  # normalized strings without their NUL ends
            raw = bytearray(x if x else 0x41 for x in raw)
        kvs[j].payload = struct.pack("<IQ", etype, len(raw)) + bytes(raw)
        return build(head, kvs), f"charsmap mutation {how}"
    if kind == 7:  # special ids outside the vocabulary
        keys = [k for k, x in enumerate(kvs) if x.key.endswith(b"_token_id")]
        v = rng.choice([2**32 - 1, 2**31, 2**31 - 1, 10**6, 65535])
        if keys:
            j = rng.choice(keys)
            kvs[j].vtype, kvs[j].payload = rng.choice([(4, struct.pack("<I", v)), (5, struct.pack("<i", -1)),
                                                       (10, struct.pack("<Q", v))])
            return build(head, kvs), f"id {v} for {kvs[j].key!r}"
        kvs.append(KV(b"tokenizer.ggml.bos_token_id", 4, struct.pack("<I", v)))
        return build(head, kvs), f"bos id {v}"
    if kind == 8:  # token types out of range, scores NaN/inf
        j = _find(kvs, rng.choice([b".token_type", b".scores"]))
        if j < 0:
            return build(head, kvs), "no types/scores"
        etype, items = _array_items(kvs[j])
        if not items:
            return build(head, kvs), "empty"
        for _ in range(rng.randint(1, 8)):
            k = rng.randrange(len(items))
            if etype == 6:
                items[k] = struct.pack("<f", rng.choice([float("nan"), float("inf"), -float("inf"), 3e38]))
            elif etype in (4, 5):
                items[k] = struct.pack("<i", rng.choice([-1, 0, 7, 99, 2**31 - 1]))
        kvs[j].payload = _array(etype, items)
        return build(head, kvs), f"values in {kvs[j].key!r}"
    # kind 9: token strings that are invalid UTF-8, empty, or duplicated
    j = _find(kvs, b".tokens")
    if j < 0:
        return build(head, kvs), "no tokens"
    etype, items = _array_items(kvs[j])
    for _ in range(rng.randint(1, 6)):
        k = rng.randrange(len(items))
        items[k] = rng.choice([_string(b""), _string(b"\xff\xc3"), items[rng.randrange(len(items))],
                               _string(b"<0xZZ>"), _string(b"\x00")])
    kvs[j].payload = _array(etype, items)
    return build(head, kvs), "token strings"


def fuzz_file_structured(source: Path, workdir: Path, count: int, seed: int, stats: FuzzStats,
                         trace_every: int = 0) -> None:
    data = source.read_bytes()
    rng = random.Random(seed)
    target = workdir / f"fuzz-s-{os.getpid()}-{source.stem}.gguf"
    for k in range(count):
        mutated, what = structured_mutation(data, rng)
        if rng.random() < 0.3:  # two faults at once
            try:
                mutated, what2 = structured_mutation(mutated, rng)
                what += " + " + what2
            except (ValueError, struct.error, OverflowError, IndexError):
                pass  # the first fault made the file unparsable for the mutator
        target.write_bytes(mutated)
        run_case(target, stats, f"{source.name}#s{k} {what}", trace=trace_every > 0 and k % trace_every == 0)
