"""Throughput of the corpus profiler (``tokenprism stats``): one process,
all local cores (a Dask ``LocalCluster``), and a real ``dask scheduler``
with ``dask worker`` processes on loopback.

The corpus (``--size-mb``, default 50) is made reproducibly from the
benchmark texts' seeded generators (benchmarks/benchtexts.py): English
prose, mixed scripts and Python-like code in ~1 MB files, and one JSON
Lines file of records, under ``--corpus`` (kept between runs). Each round
runs the three modes one after the other (interleaved, so a load change on
a shared machine hits them alike); the medians are reported, with the load
average. Times are wall clock from the call of ``profile`` to its report:
the cluster modes include opening the models in every worker (and the
LocalCluster its start); the single process (a fresh one each round, as
every worker is) opens them before the clock. A fourth mode, ``ideal``,
is the machine's own ceiling for the all-cores run: as many plain
processes as workers, no Dask, each counting a share of the partitions
balanced by size, started together once their models are open.

    python benchmarks/bench_corpus.py [--models gpt-2,llama-spm] [--rounds 3] [--limit-mb 16] [--json]
    python benchmarks/bench_corpus.py --scripts     # regex vs unicodedata script lookup
    python benchmarks/bench_corpus.py --long-line 20 --models llama-spm   # peak memory on one 20 MB line
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import unicodedata
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from benchpaths import vocab_file  # noqa: E402
from benchtexts import code_text, english_text, mixed_text  # noqa: E402

MB = 1 << 20


MODES = ("single", "local", "cluster", "ideal")


def make_corpus(folder: Path, size_mb: int) -> Path:
    """The corpus in ``folder`` (made once; a stamp says which size)."""
    stamp = folder / f".made-{size_mb}mb"
    if stamp.exists():
        return folder
    folder.mkdir(parents=True, exist_ok=True)
    makers = (("english", english_text), ("mixed", mixed_text), ("code", code_text))
    total = 0
    n = 0
    jsonl_mb = max(1, size_mb // 10)
    while total < (size_mb - jsonl_mb) * MB:
        kind, make = makers[n % 3]
        text = make(MB, seed=1000 + n)
        path = folder / kind / f"{kind}-{n:03}.txt"
        path.parent.mkdir(exist_ok=True)
        path.write_text(text, encoding="utf-8")
        total += len(text.encode("utf-8"))
        n += 1
    with open(folder / "records.jsonl", "w", encoding="utf-8") as f:
        size = 0
        k = 0
        while size < jsonl_mb * MB:
            text = (english_text, mixed_text)[k % 2](2000 + (k * 7919) % 6000, seed=5000 + k)
            line = json.dumps({"id": k, "text": text}, ensure_ascii=False) + "\n"
            f.write(line)
            size += len(line.encode("utf-8"))
            k += 1
    stamp.touch()
    return folder


class Cluster:
    """A scheduler and ``n`` single-threaded workers, started as a user would."""

    def __init__(self, n: int) -> None:
        self.dir = tempfile.mkdtemp(prefix="bench-dask-")
        self.file = os.path.join(self.dir, "scheduler.json")
        dask = [sys.executable, "-m", "dask"]
        quiet: dict[str, Any] = {"stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL, "cwd": self.dir}
        self.procs = [subprocess.Popen([*dask, "scheduler", "--host", "127.0.0.1", "--port", "0", "--no-dashboard",
                                        "--scheduler-file", self.file], **quiet)]
        for _ in range(n):
            self.procs.append(subprocess.Popen([*dask, "worker", "--scheduler-file", self.file, "--nthreads", "1",
                                                "--host", "127.0.0.1", "--no-dashboard"], **quiet))
        import distributed

        while not os.path.exists(self.file):
            time.sleep(0.1)
        with distributed.Client(scheduler_file=self.file, timeout="60s") as client:
            client.wait_for_workers(n, timeout=120)
            self.address: str = client.scheduler.address

    def close(self) -> None:
        for p in reversed(self.procs):
            p.terminate()
            try:
                p.wait(20)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()


_SINGLE = """
import json, sys, time
from tokenprism.core.corpus import SYNCHRONOUS, profile
from tokenprism.core.corpus.worker import cached_model, own_process
corpus, limit, models = sys.argv[1], int(sys.argv[2]) or None, sys.argv[3:]
own_process()
for m in models:
    cached_model(m)
t = time.perf_counter()
cpu = time.process_time()
r = profile([corpus], models, scheduler=SYNCHRONOUS, limit_bytes=limit)
print(json.dumps({"seconds": time.perf_counter() - t, "bytes": r.stats.bytes_read,
                  "cpu_s": time.process_time() - cpu,
                  "tokens": [m.total.tokens for m in r.stats.models], "missing": len(r.missing)}))
"""


_SHARE = """
import json, sys, time
from tokenprism.core.corpus.sources import plan
from tokenprism.core.corpus.worker import cached_model, count_partition, own_process
corpus, k, n, models = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4:]
own_process()
for m in models:
    cached_model(m)
loads = [0] * n
mine = []
for part in sorted(plan([corpus]).partitions, key=lambda p: -p.size):  # largest first, to the least loaded
    i = loads.index(min(loads))
    loads[i] += part.size
    if i == k:
        mine.append(part)
print("ready", flush=True)
sys.stdin.readline()
t = time.perf_counter()
cpu = time.process_time()
b = 0
for part in mine:
    b += count_partition(part, models).bytes_read
print(json.dumps({"seconds": time.perf_counter() - t, "cpu_s": time.process_time() - cpu, "bytes": b}))
"""


def run_ideal(corpus: Path, models: list[str], workers: int) -> dict[str, Any]:
    """The machine's own ceiling: ``workers`` plain processes, no Dask, each
    counting its share of the partitions (balanced by size), all started at
    once after opening the models. Two such processes on a 2-core machine
    do not count twice as fast as one when each core's work slows the
    other's (shared caches, the host): Dask's run is measured against this."""
    procs = [subprocess.Popen([sys.executable, "-c", _SHARE, str(corpus), str(k), str(workers), *models],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True) for k in range(workers)]
    for p in procs:
        assert p.stdout is not None and p.stdout.readline().strip() == "ready"
    t0 = time.perf_counter()
    for p in procs:
        assert p.stdin is not None
        p.stdin.write("go\n")
        p.stdin.flush()
    outs = [json.loads(p.communicate()[0]) for p in procs]
    wall = time.perf_counter() - t0
    total = sum(o["bytes"] for o in outs)
    return {"mode": "ideal", "seconds": wall, "bytes": total, "mb_per_s": total / MB / wall,
            "cpu_s": sum(o["cpu_s"] for o in outs), "tokens": None, "peak_rss_mb": []}


def run_single(corpus: Path, models: list[str], limit: int | None) -> dict[str, Any]:
    """One process, a fresh one each round: the tokenizers' word caches
    would otherwise make every round after the first a rerun of warm ones
    (measured: 3x faster), while the workers of the other modes start cold.
    The models are opened before the clock starts."""
    res = subprocess.run([sys.executable, "-c", _SINGLE, str(corpus), str(limit or 0), *models],
                         capture_output=True, text=True, check=True)
    out: dict[str, Any] = json.loads(res.stdout)
    assert not out.pop("missing")
    out.update(mode="single", mb_per_s=out["bytes"] / MB / out["seconds"], peak_rss_mb=[])
    return out


def run_mode(mode: str, corpus: Path, models: list[str], workers: int, limit: int | None) -> dict[str, Any]:
    from tokenprism.core.corpus import profile

    if mode == "single":
        return run_single(corpus, models, limit)
    if mode == "ideal":
        return run_ideal(corpus, models, workers)
    cluster = Cluster(workers) if mode == "cluster" else None
    try:
        kw: dict[str, Any] = {"limit_bytes": limit}
        if mode == "local":
            kw["workers"] = workers
        else:
            assert cluster is not None
            kw["scheduler"] = cluster.address
        t0 = time.perf_counter()
        report = profile([str(corpus)], models, **kw)
        wall = time.perf_counter() - t0
    finally:
        if cluster is not None:
            cluster.close()
    s = report.stats
    assert not report.missing, report.missing
    return {"mode": mode, "seconds": wall, "bytes": s.bytes_read, "mb_per_s": s.bytes_read / MB / wall,
            "cpu_s": sum(report.worker_cpu_seconds.values()),
            "tokens": [m.total.tokens for m in s.models],
            "peak_rss_mb": sorted(round(v / MB) for v in report.worker_peak_rss.values())}


def bench(args: argparse.Namespace) -> dict[str, Any]:
    corpus = make_corpus(Path(args.corpus), args.size_mb)
    models = [str(vocab_file(n)) for n in args.models.split(",")]
    limit = args.limit_mb * MB if args.limit_mb else None
    load = [os.getloadavg()[0]]
    runs: list[dict[str, Any]] = []
    for r in range(args.rounds):
        for mode in MODES if limit is None else MODES[:-1]:  # (ideal counts the whole corpus)
            res = run_mode(mode, corpus, models, args.workers, limit)
            res["round"] = r
            runs.append(res)
            load.append(os.getloadavg()[0])
            print(f"round {r} {mode:>7}: {res['mb_per_s']:.3f} MB/s ({res['seconds']:.1f} s, "
                  f"CPU {res['cpu_s']:.1f} s, "
                  f"{res['bytes'] / MB:.1f} MB, peak RSS per worker {res['peak_rss_mb']} MB, "
                  f"load {load[-1]:.1f})", file=sys.stderr, flush=True)
    tokens = {tuple(r["tokens"]) for r in runs if r["tokens"] is not None}
    assert len(tokens) == 1, f"the modes disagree: {tokens}"
    modes = sorted({r["mode"] for r in runs}, key=MODES.index)
    med = {m: statistics.median(r["mb_per_s"] for r in runs if r["mode"] == m) for m in modes}
    return {"models": args.models, "workers": args.workers, "rounds": args.rounds, "corpus_mb": args.size_mb,
            "read_mb": round(runs[0]["bytes"] / MB, 1), "median_mb_per_s": med,
            "local_vs_single": med["local"] / med["single"], "cluster_vs_local": med["cluster"] / med["local"],
            **({"ideal_vs_single": med["ideal"] / med["single"], "local_vs_ideal": med["local"] / med["ideal"]}
               if "ideal" in med else {}),
            # CPU seconds per MB: the cost of the work itself, whatever share
            # of the cores a busy machine left the run
            "median_cpu_s_per_mb": {m: statistics.median(r["cpu_s"] / (r["bytes"] / MB) for r in runs
                                                         if r["mode"] == m) for m in modes},
            "peak_rss_mb": max(max(r["peak_rss_mb"] or [0]) for r in runs),
            "load_average": [round(x, 1) for x in load], "cpus": os.cpu_count(), "runs": runs}


def long_line_bench(args: argparse.Namespace) -> dict[str, Any]:
    """Peak memory of counting one file that is a single line of
    ``--long-line`` MB (no line break), in a fresh process per model."""
    # (beside the corpus, not in it: the three modes count the corpus as made)
    path = Path(args.corpus + "-long-line") / f"long-line-{args.long_line}mb.txt"
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(path, "w", encoding="utf-8") as f:
            n = 0
            while f.tell() < args.long_line * MB:
                f.write(mixed_text(MB, seed=7000 + n).replace("\n", " "))
                n += 1
    code = ("import resource, sys, time\n"
            "from tokenprism.core.corpus import profile, SYNCHRONOUS\n"
            "from tokenprism.core.corpus.worker import cached_model, own_process\n"
            "own_process(); cached_model(sys.argv[2])\n"
            "base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss\n"
            "t = time.perf_counter(); r = profile([sys.argv[1]], [sys.argv[2]], scheduler=SYNCHRONOUS)\n"
            "print(base, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, time.perf_counter() - t,"
            " r.stats.forced_cuts, r.stats.models[0].total.tokens)\n")
    out: dict[str, Any] = {"file_mb": round(path.stat().st_size / MB, 1)}
    for name in args.models.split(","):
        res = subprocess.run([sys.executable, "-c", code, str(path), str(vocab_file(name))], capture_output=True,
                             text=True, check=True)
        base, peak, secs, forced, tokens = res.stdout.split()
        out[name] = {"rss_before_mb": int(base) // 1024, "peak_rss_mb": int(peak) // 1024,
                     "seconds": round(float(secs), 1), "forced_cuts": int(forced), "tokens": int(tokens)}
    return out


def scripts_bench() -> dict[str, float]:
    """Script of each word: the regex module's \\p{Script} (what stats.py
    uses) against a unicodedata.name() lookup, over the same words."""
    from tokenprism.core.corpus.stats import _SCRIPTED, _script_name, script_of

    words = mixed_text(2 * MB, seed=3).split()

    def by_regex(w: str) -> str:
        m = _SCRIPTED.search(w)
        return "Common" if m is None else _script_name(m.group())

    def by_name(w: str) -> str:
        for ch in w:
            if unicodedata.category(ch)[0] in "LM":
                name = unicodedata.name(ch, "")
                return "Han" if name.startswith("CJK") else name.split(" ")[0].capitalize()
        return "Common"

    out: dict[str, float] = {"words": float(len(words))}
    for label, fn in (("regex", by_regex), ("unicodedata", by_name), ("script_of_cached", script_of)):
        t = time.perf_counter()
        for w in words:
            fn(w)
        out[f"{label}_us_per_word"] = (time.perf_counter() - t) / len(words) * 1e6
    return out


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--models", default="gpt-2", help="reference vocab names, comma-separated")
    p.add_argument("--corpus", default=os.path.join(tempfile.gettempdir(), "tokenprism-bench-corpus"))
    p.add_argument("--size-mb", type=int, default=50)
    p.add_argument("--limit-mb", type=int, default=0, help="read only this much of the corpus per run (0: all)")
    p.add_argument("--workers", type=int, default=os.cpu_count() or 2)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--scripts", action="store_true", help="only time the script lookup")
    p.add_argument("--long-line", type=int, default=0, metavar="MB",
                   help="only measure the peak memory of counting one line of MB megabytes")
    p.add_argument("--json", action="store_true")
    args = p.parse_args()
    if args.scripts:
        result: dict[str, Any] = scripts_bench()
    elif args.long_line:
        result = long_line_bench(args)
    else:
        result = bench(args)
    if args.json:
        print(json.dumps(result, indent=1))
    else:
        for k, v in result.items():
            if k != "runs":
                print(f"{k}: {v}")


if __name__ == "__main__":
    main()
