"""Letting other threads run during long compiled work, and hearing how far
it got.

The interpreter hands the GIL to a waiting thread only between bytecodes;
code compiled by mypyc runs none, so a worker thread that opens a 262k-token
vocabulary or encodes a long text would hold the GIL for its whole call and
freeze the GUI thread that waits for it (measured: 500 ms while the UGM
plugin builds its tables). Long loops in compiled modules call
:func:`offer_gil` every few thousand steps instead; ``time.sleep(0)``
releases the GIL and takes it back, and a waiting thread gets its turn in
between. That sleep is not free: Linux rounds it up by the thread's timer
slack, and it takes 60-90 µs here, waiting thread or not (a releasing call
that returns sooner leaves the waiting thread no time to wake up and take
the GIL). So the sleep happens only when :data:`OFFER_NS` have passed
since the last one: an encode of 0.5 MB offered ~250 times, and the sleeps
cost it 17-27 % of its wall time.

Loops that may run for seconds over one huge fragment (a pasted 10 MB text
that a plugin cannot cut, see ``Tokenizer.cut_points``) call
:func:`checkpoint` instead: it offers the GIL too, and also tells whoever
installed a hook with :func:`progress_hook` on this thread how far the
work got, and lets that hook stop it by raising :class:`Cancelled`. A
plugin that never calls it still works; its progress is just coarser (one
report per fragment or piece).

>>> model = open_model(demo("spm"))
>>> reports = []
>>> with progress_hook(lambda done, total: reports.append((done, total)) or True):
...     enc = model.encode("word " * 200_000)
>>> reports[-1]
(..., 1000000)
>>> with progress_hook(lambda done, total: False):  # a Cancel button was pressed
...     enc = model.encode("word " * 200_000)
Traceback (most recent call last):
tokenprism.core.gil.Cancelled
"""

from __future__ import annotations

import threading
import time
from contextlib import contextmanager
from typing import Any, Callable, Iterator

STEP = 4096
"""How many loop steps between two offers: at tens of nanoseconds a step,
well under a millisecond of work."""
WORD_STEP = 512
"""The same for loops over words: a word not seen before costs 5-10 µs
(UGM's Viterbi, a BPE or SPM merge), so 4096 of them held the GIL for
20-40 ms, and every Python callback of a Qt repaint waited that long."""

ProgressHook = Callable[[int, int], bool]
"""``hook(done, total)``: ``done`` of ``total`` units of the current call's
work are finished (``total == 0``: no idea how far, only a chance to
cancel). Returns False to cancel."""


class Cancelled(Exception):
    """Raised by :func:`checkpoint` when the installed hook asks to stop.

    Plugins let it pass (it is not a plugin error): the caller that
    installed the hook catches it and drops the unfinished work."""


class _Local(threading.local):
    hook: ProgressHook | None = None


_local = _Local()


OFFER_NS = 1_000_000
"""A thread that took the GIL waits at most this long (plus one step of
the loop that offers it) for its turn, and offering costs at most ~9 %."""
_last_offer = 0  # time.perf_counter_ns() after the last sleep, any thread's


def offer_gil() -> None:
    """Give any thread waiting for the GIL its turn, unless a thread did
    so less than :data:`OFFER_NS` ago, or this is the main thread of a
    process that has no other (the command line, a benchmark, one process
    counting a corpus: the sleeps were 36 ms of a 0.66 s first encode of
    5.2 MB). Work on another thread always offers: a thread that Python did
    not start (a Qt one) is not in ``threading``'s count, and may be the
    one waiting."""
    global _last_offer
    if time.perf_counter_ns() - _last_offer >= OFFER_NS:
        if threading.active_count() == 1 and threading.current_thread() is threading.main_thread():
            _last_offer = time.perf_counter_ns()
            return
        time.sleep(0)
        _last_offer = time.perf_counter_ns()


def pause() -> None:
    """Sleep :data:`PAUSE_S` after a step that could not offer the GIL for
    tens of milliseconds (one ``tuple()`` or deallocation of millions of
    ints). ``time.sleep(0)`` would let a waiting GUI thread run one Python
    callback, and it needs several for one repaint (a view's ``paintEvent``,
    its model's ``data()``...), each of which would then wait out the next
    such step: measured, a status-bar repaint took 50-120 ms with 1 ms of
    its own CPU. A short real sleep lets it finish what it started."""
    time.sleep(PAUSE_S)


PAUSE_S = 0.004
PAUSE_ITEMS = 1 << 19
"""Steps over fewer items than this (a few ms) are not worth a pause."""


def checkpoint(done: int, total: int) -> None:
    """:func:`offer_gil`, then report ``done`` of ``total`` (``total == 0``:
    unknown) to this thread's hook, if one is installed; raises
    :class:`Cancelled` when the hook returns False.

    A plugin calls it every :data:`STEP` steps of a loop that can be long,
    with its position in the whole call's work (a call with several passes
    adds up the passes, so that ``done`` only grows)."""
    offer_gil()
    hook = _local.hook
    if hook is not None and not hook(done, total):
        raise Cancelled()


def dispose(items: list[Any]) -> None:
    """Empty ``items`` a slice at a time, offering the GIL in between.

    Freeing a list of millions of distinct ints (the per-character offset
    maps of a 10 MB text) is one deallocation that holds the GIL for as
    long as making them did, ~0.3 s per 10 million, all at once."""
    n = len(items)
    while n > _DISPOSE_SLICE:
        n -= _DISPOSE_SLICE
        del items[n:]
        offer_gil()
    items.clear()


_DISPOSE_SLICE = 1 << 16


@contextmanager
def progress_hook(hook: ProgressHook) -> Iterator[None]:
    """Install ``hook`` for :func:`checkpoint` calls on this thread while
    the ``with`` block runs (the previous hook is back afterwards)."""
    prev = _local.hook
    _local.hook = hook
    try:
        yield
    finally:
        _local.hook = prev
