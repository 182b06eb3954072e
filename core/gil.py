"""Letting other threads run during long compiled work, and hearing how far
it got.

The interpreter hands the GIL to a waiting thread only between bytecodes;
code compiled by mypyc runs none, so a worker thread that opens a 262k-token
vocabulary or encodes a long text would hold the GIL for its whole call and
freeze the GUI thread that waits for it (measured: 500 ms while the UGM
plugin builds its tables). Long loops in compiled modules call
:func:`offer_gil` every few thousand steps instead; ``time.sleep(0)``
releases the GIL and takes it back, and a waiting thread gets its turn in
between. Without a waiting thread it costs about a microsecond.

Loops that may run for seconds over one huge fragment (a pasted 10 MB text
that a plugin cannot cut, see ``Tokenizer.cut_points``) call
:func:`checkpoint` instead: it offers the GIL too, and also tells whoever
installed a hook with :func:`progress_hook` on this thread how far the
work got, and lets that hook stop it by raising :class:`Cancelled`. A
plugin that never calls it still works; its progress is just coarser (one
report per fragment or piece).

>>> with progress_hook(lambda done, total: not cancel_requested()):
...     tokenizer.encode_fragment(huge_text, True)   # may raise Cancelled
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
    since = 0.0  # time.perf_counter() when the hook was installed


_local = _Local()


_step_back = (0.0, 0)  # (time.perf_counter() until, thread that asked): see step_back
MAX_STEP_BACK_S = 0.05
LONG_JOB_S = 0.5
"""Jobs that have run this long step back (see :func:`step_back`)."""


def step_back(seconds: float) -> None:
    """Ask long jobs on other threads to pause at their next
    :func:`checkpoint` for up to ``seconds`` (at most :data:`MAX_STEP_BACK_S`).

    A GUI thread about to run many short Python callbacks (a window repaint
    calls dozens) needs the GIL for each; a worker that only offers it
    every few milliseconds makes each one wait for the next offer, and a
    repaint took 150-270 ms while a 10 MB text was tokenized. Paused, the
    worker leaves the GIL to it for the whole burst. Only jobs that report
    progress (a hook installed, see :func:`progress_hook`) and have run for
    :data:`LONG_JOB_S` already pause: a huge text's, whose progress the user
    watches; a keystroke's or a 100 KB text's job is short, and the user
    waits for its result (pausing those at every repaint made a 100 KB
    text's tokens take 300 ms instead of 30)."""
    global _step_back
    _step_back = (time.perf_counter() + min(seconds, MAX_STEP_BACK_S), threading.get_ident())


def offer_gil() -> None:
    """Give any thread waiting for the GIL its turn now."""
    time.sleep(0)


def checkpoint(done: int, total: int) -> None:
    """:func:`offer_gil` (or, in a job with a progress hook, the pause asked
    for with :func:`step_back`), then report ``done`` of ``total``
    (``total == 0``: unknown) to this thread's hook, if one is installed;
    raises :class:`Cancelled` when the hook returns False.

    A plugin calls it every :data:`STEP` steps of a loop that can be long,
    with its position in the whole call's work (a call with several passes
    adds up the passes, so that ``done`` only grows)."""
    hook = _local.hook
    wait = 0.0
    if hook is not None:
        until, asker = _step_back
        now = time.perf_counter()
        if until > now and asker != threading.get_ident() and now - _local.since >= LONG_JOB_S:
            wait = until - now
    time.sleep(wait)
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
        time.sleep(0)
    items.clear()


_DISPOSE_SLICE = 1 << 16


@contextmanager
def progress_hook(hook: ProgressHook) -> Iterator[None]:
    """Install ``hook`` for :func:`checkpoint` calls on this thread while
    the ``with`` block runs (the previous hook is back afterwards)."""
    prev, prev_since = _local.hook, _local.since
    _local.hook, _local.since = hook, time.perf_counter()
    try:
        yield
    finally:
        _local.hook, _local.since = prev, prev_since
