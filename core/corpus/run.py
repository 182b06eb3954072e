""":func:`profile`: a corpus counted for several models, with Dask.

The paths are cut into partitions (:func:`~.sources.plan`); each is one
Dask task (:func:`~.worker.count_partition`) whose result is a
:class:`~.stats.CorpusStats`, merged here as it arrives (sums and unions,
so the order does not matter). By default the tasks run on a
``distributed.LocalCluster`` of one single-threaded worker process per
core (tokenizing holds the GIL, so threads would not help); with
``scheduler="tcp://HOST:PORT"`` on an existing cluster, whose workers read
the model files and the corpus by the same paths. A task whose worker dies
is run again by Dask on another worker (up to :data:`RETRIES` more times
when it fails itself); a partition that still fails is listed in
:attr:`CorpusReport.missing` with the reason, never silently dropped.
``scheduler="synchronous"`` counts in this process, without Dask (tests,
tiny corpora).
"""

from __future__ import annotations

import importlib
import logging
import signal
import os
import threading
import time
import warnings
from dataclasses import dataclass
from dataclasses import field as _field
from contextlib import contextmanager
from typing import Any, Callable, Iterator, Sequence

from .sources import PART_BYTES, CorpusError, Partition, plan
from .stats import CorpusStats, empty_stats
from .worker import cached_model, count_partition, count_stdin

SYNCHRONOUS = "synchronous"
RETRIES = 2
INSTALL_HINT = "pip install tokenprism[corpus]"
_POLL = 0.05


@dataclass(frozen=True)
class Progress:
    """How far a run got (passed to the ``progress`` callback)."""

    parts_done: int
    parts_total: int
    bytes_done: int
    bytes_total: int
    elapsed: float

    @property
    def rate(self) -> float:
        """Bytes per second so far."""
        return self.bytes_done / self.elapsed if self.elapsed > 0 else 0.0

    @property
    def eta(self) -> float | None:
        """Seconds left at the rate so far (None before any is known)."""
        if self.bytes_done <= 0 or self.elapsed <= 0:
            return None
        return (self.bytes_total - self.bytes_done) / self.rate


@dataclass(frozen=True)
class Missing:
    """A partition whose counts are not in the report."""

    index: int
    files: str
    reason: str


@dataclass
class CorpusReport:
    """The merged counts of a run, and what it could not count."""

    stats: CorpusStats
    paths: tuple[str, ...]
    field: str = "text"
    add_special: bool = False
    limit_bytes: int | None = None
    missing: list[Missing] = _field(default_factory=list)
    cancelled: bool = False
    elapsed: float = 0.0
    engine: str = ""
    """Where it ran: "synchronous", "LocalCluster (2 processes)", an address."""
    worker_peak_rss: dict[str, int] = _field(default_factory=dict)
    """Each worker's peak resident memory in bytes (when known)."""
    worker_cpu_seconds: dict[str, float] = _field(default_factory=dict)
    """Each worker process's CPU time so far (a worker of an existing
    cluster may have run other work before)."""


def profile(paths: Sequence[str], models: Sequence[str], *, field: str = "text", workers: int | None = None,
            scheduler: str | None = None, limit_bytes: int | None = None, add_special: bool = False,
            progress: Callable[[Progress], None] | None = None, cancel: threading.Event | None = None,
            part_bytes: int = PART_BYTES) -> CorpusReport:
    """Count ``paths`` (files, folders, ``.jsonl``, ``.parquet``, ``-``)
    for each model file in ``models``.

    >>> report = profile(["docs/"], ["a.gguf", "b.gguf"])      # doctest: +SKIP
    >>> [m.total.tokens for m in report.stats.models]          # doctest: +SKIP
    [123456, 98765]
    """
    if not models:
        raise CorpusError("give at least one model")
    if not paths:
        raise CorpusError("give at least one file or folder")
    model_paths = [os.path.abspath(m) for m in models]
    opened = [cached_model(p) for p in model_paths]  # fails early, in one line, on a bad model
    start = time.monotonic()
    the_plan = plan(paths, limit_bytes=limit_bytes, part_bytes=part_bytes)
    report = CorpusReport(empty_stats(opened), tuple(paths), field, add_special, limit_bytes)
    report.stats.skipped.extend(the_plan.skipped)
    if the_plan.stdin:
        report.stats.merge(count_stdin(model_paths, add_special))
    run = _Run(report, the_plan.partitions, progress, cancel, start)
    args = (model_paths, field, add_special)
    if scheduler == SYNCHRONOUS or not the_plan.partitions:
        # (nothing to share out: no cluster is started for it)
        report.engine = SYNCHRONOUS
        run.synchronous(args)
    else:
        run.on_dask(args, workers, scheduler)
    report.elapsed = time.monotonic() - start
    report.stats.skipped.sort(key=lambda s: s.path)
    report.stats.partitions.sort()
    return report


@dataclass
class _Run:
    report: CorpusReport
    parts: tuple[Partition, ...]
    progress: Callable[[Progress], None] | None
    cancel: threading.Event | None
    start: float
    done: int = 0
    done_bytes: int = 0

    def _tell(self) -> None:
        if self.progress is not None:
            self.progress(Progress(self.done, len(self.parts), self.done_bytes, sum(p.size for p in self.parts),
                                   time.monotonic() - self.start))

    def _finished(self, part: Partition, stats: CorpusStats) -> None:
        self.report.stats.merge(stats)
        self.done += 1
        self.done_bytes += part.size

    def _cancelled(self) -> bool:
        return self.cancel is not None and self.cancel.is_set()

    def _left_out(self, reason: str) -> None:
        counted = set(self.report.stats.partitions) | {m.index for m in self.report.missing}
        for part in self.parts:
            if part.index not in counted:
                self.report.missing.append(Missing(part.index, part.describe(), reason))

    def synchronous(self, args: tuple[list[str], str, bool]) -> None:
        self._tell()
        for part in self.parts:
            if self._cancelled():
                self.report.cancelled = True
                self._left_out("cancelled")
                return
            try:
                stats = count_partition(part, *args)
            except Exception as e:  # as on Dask: the partition is reported missing, the run goes on
                self.report.missing.append(Missing(part.index, part.describe(), f"{type(e).__name__}: {e}"))
            else:
                self._finished(part, stats)
            self._tell()

    def on_dask(self, args: tuple[list[str], str, bool], workers: int | None, scheduler: str | None) -> None:
        try:
            # (as a module of Any: distributed's functions are not typed)
            dist: Any = importlib.import_module("distributed")
        except ImportError:
            raise CorpusError(f"running on Dask needs dask.distributed: {INSTALL_HINT}") from None
        cluster: Any = None
        client: Any = None
        try:
            if scheduler:
                client = dist.Client(scheduler, timeout="20s")
                self.report.engine = scheduler
            else:
                n = workers or _cores()
                with warnings.catch_warnings():
                    # the scheduler's HTTP endpoint falls back from a busy port 8787
                    # to a free one with a warning, which is no news to the user
                    warnings.filterwarnings("ignore", message="Port .* is already in use")
                    with _sigint_ignored(), _counting_cluster():
                        cluster = dist.LocalCluster(n_workers=n, threads_per_worker=1, processes=True,
                                                    dashboard_address=None, silence_logs=logging.ERROR)
                        client = dist.Client(cluster)
                self.report.engine = f"LocalCluster ({n} process{'es' if n != 1 else ''})"
            self._tell()
            by_key: dict[str, Partition] = {}
            futures = []
            # largest first (Dask runs them in the order given): the last ones
            # to finish are then the small ones, and no core idles long at the end
            for part in sorted(self.parts, key=lambda p: -p.size):
                fut = client.submit(count_partition, part, *args, True, pure=False, retries=RETRIES,
                                    key=f"tokenprism-corpus-{id(self)}-{part.index}")
                by_key[fut.key] = part
                futures.append(fut)
            pending = dist.as_completed(futures, with_results=False)
            while not pending.is_empty():
                if self._cancelled():
                    client.cancel(futures)
                    self.report.cancelled = True
                    self._left_out("cancelled")
                    return
                batch = pending.next_batch(block=False)
                if not batch:
                    time.sleep(_POLL)
                    continue
                for fut in batch:
                    part = by_key[fut.key]
                    if fut.status == "finished":
                        self._finished(part, fut.result())
                    else:
                        self.report.missing.append(Missing(part.index, part.describe(), _why(fut)))
                    fut.release()
                self._tell()
            _worker_usage(client, self.report)
        finally:
            if client is not None:
                client.close()
            if cluster is not None:
                cluster.close()


#: Dask settings for the LocalCluster we start, whose processes only count:
#: each periodic check wakes a thread that must take the GIL from the count.
#: (Measured on the 70 MB benchmark corpus, gpt-2, 2 workers: client process
#: CPU 1.9-2.0 s -> 1.2-1.4 s, the run 0.4-1 s shorter.)
_CLUSTER_CONFIG = {
    "distributed.admin.tick.interval": "1s",  # event-loop health check, 20 ms by default
    "distributed.worker.memory.monitor-interval": "1s",  # 100 ms by default
    "distributed.admin.system-monitor.interval": "2s",  # 500 ms by default
    # the worker's statistical profiler samples the running task's stack
    # every 10 ms (for the dashboard, which ours does not have)
    "distributed.worker.profile.enabled": False,
}


@contextmanager
def _counting_cluster() -> Iterator[None]:
    """The settings a LocalCluster of ours starts with (:data:`_CLUSTER_CONFIG`),
    and glibc's own heap trimming in its workers. Dask's nannies set
    ``MALLOC_TRIM_THRESHOLD_=65536`` so that long-lived workers hand memory
    back; a count allocates and frees words all the time, and that threshold
    turned it into madvise/brk calls: 3.6 s of system time on two workers
    over the benchmark corpus, 1.5 s without, about 1 s of wall time. Our
    workers live for one run. (A user's own cluster keeps its settings.)"""
    dask: Any = importlib.import_module("dask")
    key = "distributed.nanny.pre-spawn-environ"
    environ = {k: v for k, v in dict(dask.config.get(key, {})).items() if k != "MALLOC_TRIM_THRESHOLD_"}
    with dask.config.set({key: environ, **_CLUSTER_CONFIG}):
        yield


@contextmanager
def _sigint_ignored() -> Iterator[None]:
    """Start worker processes that ignore Ctrl+C (an ignored signal stays
    ignored in a child, and Python then installs no handler of its own).
    A terminal sends Ctrl+C to the whole process group: the workers printed
    a page of tracebacks each while this process was already closing them
    in order. Only the main thread may change signal handlers (the window
    runs profile on a worker thread, where there is no Ctrl+C)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    old = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, old)


def _why(fut: Any) -> str:
    try:
        exc = fut.exception(timeout=5)
    except Exception as e:  # a cancelled future raises instead of returning its error
        return f"{type(e).__name__}: {e}"
    return f"{type(exc).__name__}: {exc}" if exc is not None else str(fut.status)


def _cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def _usage() -> tuple[int, float]:
    """This process's peak resident memory (bytes) and CPU time (s)."""
    import resource

    u = resource.getrusage(resource.RUSAGE_SELF)
    return u.ru_maxrss * 1024, u.ru_utime + u.ru_stime  # ru_maxrss is in KiB on Linux


def _worker_usage(client: Any, report: CorpusReport) -> None:
    try:
        result: dict[str, tuple[int, float]] = client.run(_usage)
    except Exception:  # usage is a nicety: never lose a report for it
        return
    report.worker_peak_rss = {w: rss for w, (rss, _cpu) in result.items()}
    report.worker_cpu_seconds = {w: round(cpu, 2) for w, (_rss, cpu) in result.items()}
