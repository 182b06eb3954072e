"""The corpus profiler on Dask: a ``LocalCluster`` of worker processes, and
a real ``dask scheduler`` with two ``dask worker`` processes this test
starts on loopback. Counts equal the sums of ``Model.encode``; a worker
killed mid-run loses nothing silently; cancel closes the cluster."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any, Iterator

import pytest

from tests.core.corpus_data import INVALID, expected, make_corpus, mixed_text, text_totals
from tests.refdata import vocab_path
from tokenprism.core.corpus import CorpusReport, Progress, profile
from tokenprism.core.corpus.worker import cached_model

distributed = pytest.importorskip("distributed")
dask = pytest.importorskip("dask")
pytest.importorskip("pyarrow")

ROOT = Path(__file__).resolve().parents[2]
# one per algorithm; the bundled UGM demo stands in for nomic-bert-moe here,
# which takes ~9 s to open in each worker (tests/core/test_corpus.py uses it)
MODELS = ("llama-spm", "gpt-2", "demo-ugm", "bert-bge")


def model_paths() -> list[str]:
    return [str(ROOT / "resources" / "demo-ugm.gguf") if n == "demo-ugm" else vocab_path(n) for n in MODELS]


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[str]]:
    root = tmp_path_factory.mktemp("dask-corpus")
    docs = make_corpus(root)
    # more files, so a run lasts long enough to lose a worker in the middle
    for i in range(16):
        text = mixed_text(100 + i, 500)
        (root / "sub" / f"more{i:02}.txt").write_text(text, encoding="utf-8")
        docs.append(text)
    return root, docs


def check_exact(report: CorpusReport, docs: list[str]) -> None:
    assert not report.missing and not report.cancelled
    s = report.stats
    assert (s.text.bytes, s.text.chars, s.text.words) == text_totals(docs)
    assert s.invalid_utf8 == INVALID
    for path, ms in zip(model_paths(), s.models):
        want = expected(cached_model(path), docs)
        assert (ms.total.tokens, ms.byte_fallback, ms.unknown, ms.vocab_used) == (
            want.tokens, want.byte_fallback, want.unknown, len(want.ids)), path


def test_local_cluster_counts_exactly(corpus: tuple[Path, list[str]]) -> None:
    root, docs = corpus
    report = profile([str(root)], model_paths(), workers=2, part_bytes=8000)
    assert report.engine == "LocalCluster (2 processes)"
    assert len(report.stats.partitions) > 3
    assert len(report.worker_peak_rss) == 2 and all(v > 0 for v in report.worker_peak_rss.values())
    check_exact(report, docs)


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A scheduler and two single-threaded workers, separate processes on
    loopback, started the way a user starts them."""
    folder = tmp_path_factory.mktemp("dask")
    sched_file = str(folder / "scheduler.json")
    dask = [sys.executable, "-m", "dask"]
    quiet: dict[str, Any] = {"stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL, "cwd": folder}
    procs = [subprocess.Popen([*dask, "scheduler", "--host", "127.0.0.1", "--port", "0", "--no-dashboard",
                               "--scheduler-file", sched_file], **quiet)]
    try:
        for _ in range(2):
            procs.append(subprocess.Popen([*dask, "worker", "--scheduler-file", sched_file, "--nthreads", "1",
                                           "--no-nanny", "--host", "127.0.0.1", "--no-dashboard"], **quiet))
        deadline = time.monotonic() + 60
        while not os.path.exists(sched_file) and time.monotonic() < deadline:
            time.sleep(0.1)
        with distributed.Client(scheduler_file=sched_file, timeout="30s") as client:
            client.wait_for_workers(2, timeout=60)
            address = client.scheduler.address
        yield address
    finally:
        # workers first: a worker whose scheduler is gone tries to reconnect
        # for a while before it exits
        for p in reversed(procs):
            p.terminate()
            try:
                p.wait(10)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()


def test_real_scheduler_counts_exactly(corpus: tuple[Path, list[str]], cluster: str) -> None:
    root, docs = corpus
    report = profile([str(root)], model_paths(), scheduler=cluster, part_bytes=8000)
    assert report.engine == cluster
    check_exact(report, docs)


def test_worker_killed_mid_run(corpus: tuple[Path, list[str]], cluster: str) -> None:
    """A worker process killed after the first partition (no nanny brings
    it back): Dask runs its partitions again on the other worker; the
    counts are exact, or what is missing is listed."""
    root, docs = corpus
    with distributed.Client(cluster, timeout="30s") as client:
        pids = client.run(os.getpid)
    victim = sorted(pids.values())[0]
    killed_at: list[Progress] = []

    def progress(p: Progress) -> None:
        if p.parts_done >= 1 and not killed_at:
            os.kill(victim, signal.SIGKILL)
            killed_at.append(p)

    # a result that lived on the dead worker: the client retries connecting
    # to it until this timeout (30 s by default) before Dask recomputes it
    with dask.config.set({"distributed.comm.timeouts.connect": "3s"}):
        report = profile([str(root)], model_paths(), scheduler=cluster, part_bytes=3000, progress=progress)
    assert killed_at and killed_at[0].parts_done < killed_at[0].parts_total  # killed mid-run
    total = killed_at[0].parts_total
    counted = set(report.stats.partitions)
    assert counted.isdisjoint(m.index for m in report.missing)
    assert counted | {m.index for m in report.missing} == set(range(total))
    if not report.missing:
        check_exact(report, docs)


def test_cancel_closes_local_cluster(corpus: tuple[Path, list[str]]) -> None:
    psutil = pytest.importorskip("psutil")
    root, _docs = corpus
    cancel = threading.Event()

    def progress(p: Progress) -> None:
        if p.parts_done >= 1:
            cancel.set()

    before = {c.pid for c in psutil.Process().children(recursive=True)}
    report = profile([str(root)], model_paths()[:2], workers=2, part_bytes=3000, progress=progress, cancel=cancel)
    assert report.cancelled and report.missing
    assert set(report.stats.partitions).isdisjoint(m.index for m in report.missing)
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        left = [c for c in psutil.Process().children(recursive=True) if c.pid not in before and c.is_running()
                and c.status() != psutil.STATUS_ZOMBIE]
        if not left:
            break
        time.sleep(0.2)
    assert not left, "the cluster's worker processes outlived the cancelled run"


def test_local_cluster_workers_keep_glibc_trimming() -> None:
    """Our LocalCluster's workers run without Dask's MALLOC_TRIM_THRESHOLD_
    (it cost the count ~2 s of system time on the benchmark corpus) and
    with the calmer health checks; Dask's own settings are back afterwards."""
    from tokenprism.core.corpus import run

    key = "distributed.nanny.pre-spawn-environ"
    assert "MALLOC_TRIM_THRESHOLD_" in dask.config.get(key)
    with run._counting_cluster():
        with distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=True,
                                      dashboard_address=None) as cluster, distributed.Client(cluster) as client:
            seen = client.run(lambda: (os.environ.get("MALLOC_TRIM_THRESHOLD_"),
                                       dask.config.get("distributed.admin.tick.interval"),
                                       dask.config.get("distributed.worker.profile.enabled")))
    assert list(seen.values()) == [(None, "1s", False)]
    assert "MALLOC_TRIM_THRESHOLD_" in dask.config.get(key)
    assert dask.config.get("distributed.admin.tick.interval") != "1s"
