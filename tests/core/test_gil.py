"""A worker thread that opens a big vocabulary, or encodes with it for the
first time, lets other threads run meanwhile (compiled code only does when
it offers the GIL: tokenprism.core.gil).

The other thread sleeps 2 ms at a time and records the longest time it had
to wait; 250 ms is a freeze a user would notice in the GUI, well above a
busy 2-core machine's scheduling jitter. Before the offers, opening
nomic-bert-moe held the GIL for ~500 ms and gemma-4's first encode for
~200 ms, each in one go.
"""

from __future__ import annotations

import subprocess
import sys
import threading
import time
from typing import Callable

import pytest

from tests.refdata import vocab_path
from tests.timing import scaled
from tokenprism.core import Model, open_model

BOUND_S = 0.250


def longest_wait(work: Callable[[], object]) -> float:
    done = threading.Event()

    def run() -> None:
        try:
            work()
        finally:
            done.set()

    worker = threading.Thread(target=run)
    worst = 0.0
    last = time.perf_counter()
    worker.start()
    while not done.is_set():
        time.sleep(0.002)
        now = time.perf_counter()
        worst = max(worst, now - last)
        last = now
    worker.join()
    return worst


@pytest.mark.parametrize("name", ["nomic-bert-moe", "gemma-4", "command-r"])
def test_opening_and_first_encode_leave_other_threads_running(name: str) -> None:
    path = vocab_path(name)
    box: list[Model] = []
    opened = longest_wait(lambda: box.append(open_model(path)))
    assert box, "the model did not open"
    first = longest_wait(lambda: box[0].encode("The first encode builds the tables a plugin makes on first use."))
    assert opened < scaled(BOUND_S), f"opening {name} kept other threads waiting {opened * 1000:.0f} ms"
    assert first < scaled(BOUND_S), f"the first encode with {name} kept other threads waiting {first * 1000:.0f} ms"


# ---- checkpoint: progress and cancel from inside compiled loops --------------


def test_checkpoint_without_a_hook_does_nothing() -> None:
    from tokenprism.core.gil import checkpoint

    checkpoint(5, 10)  # no hook on this thread: no report, no cancel
    checkpoint(0, 0)


def test_checkpoint_reports_to_this_threads_hook_and_cancels() -> None:
    from tokenprism.core.gil import Cancelled, checkpoint, progress_hook

    seen: list[tuple[int, int]] = []
    other_thread: list[BaseException | None] = []

    def elsewhere() -> None:
        try:
            checkpoint(1, 2)  # another thread: the hook below is not its hook
            other_thread.append(None)
        except BaseException as e:  # noqa: BLE001 - recorded for the assert
            other_thread.append(e)

    with progress_hook(lambda d, t: seen.append((d, t)) is None and d < 7):
        checkpoint(3, 10)
        t = threading.Thread(target=elsewhere)
        t.start()
        t.join()
        with pytest.raises(Cancelled):
            checkpoint(7, 10)
    checkpoint(9, 10)  # the hook is gone with its block
    assert seen == [(3, 10), (7, 10)]
    assert other_thread == [None]


def test_progress_hooks_nest() -> None:
    from tokenprism.core.gil import checkpoint, progress_hook

    outer: list[int] = []
    inner: list[int] = []
    with progress_hook(lambda d, t: outer.append(d) is None):
        checkpoint(1, 9)
        with progress_hook(lambda d, t: inner.append(d) is None):
            checkpoint(2, 9)
        checkpoint(3, 9)
    assert outer == [1, 3] and inner == [2]


def test_offers_sleep_at_most_once_per_offer_interval(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each sleep costs ~60-90 µs of wall time whether or not a thread
    waits, so offers closer together than OFFER_NS skip it."""
    from tokenprism.core import gil

    class Clock:
        now = 10**12
        sleeps = 0

        def perf_counter_ns(self) -> int:
            return self.now

        def sleep(self, s: float) -> None:
            assert s == 0
            self.sleeps += 1

    clock = Clock()
    monkeypatch.setattr(gil, "time", clock)
    monkeypatch.setattr(gil, "_last_offer", 0)
    step = gil.OFFER_NS // 10
    counts: list[int] = []

    def work() -> None:  # (on a thread of its own: the main thread alone skips them all)
        for _ in range(100):  # 10 offer intervals' worth of offers
            gil.offer_gil()
            clock.now += step
        counts.append(clock.sleeps)
        for _ in range(5):  # far apart: every one sleeps
            gil.checkpoint(0, 0)
            clock.now += gil.OFFER_NS
        counts.append(clock.sleeps)

    t = threading.Thread(target=work)
    t.start()
    t.join()
    assert 9 <= counts[0] <= 11 and 14 <= counts[1] <= 16


_ALONE = """
import threading, time
from tokenprism.core import gil
sleeps = []
gil.time = type("Clock", (), {"perf_counter_ns": staticmethod(time.perf_counter_ns),
                               "sleep": staticmethod(lambda s: sleeps.append(s))})()
gil.OFFER_NS = 0
for _ in range(10):
    gil.offer_gil()
alone = len(sleeps)
stop = threading.Event()
other = threading.Thread(target=stop.wait)
other.start()
for _ in range(10):
    gil.offer_gil()
stop.set()
other.join()
print(alone, len(sleeps) - alone)
"""


def test_the_main_thread_alone_does_not_sleep() -> None:
    """A process with one thread has nobody to give the GIL to: its main
    thread skips the sleeps; once another thread runs, it offers again."""
    out = subprocess.run([sys.executable, "-c", _ALONE], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["0", "10"]
