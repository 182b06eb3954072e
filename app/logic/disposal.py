"""Freeing a huge text's tokens without freezing the window.

An :class:`~tokenprism.core.Encoding` keeps its tokens in arrays, which are
freed at once for next to nothing; the per-token columns it makes on first
use (merge ranks, word indices) are tuples of Python ints, though, and for
a 10 MB text those are millions of distinct int objects. Whoever drops the
last reference frees all of them in one deallocation that holds the GIL
throughout (measured when the token columns were tuples too: 180-330 ms on
the GUI thread when a 10 MB text was deleted or pasted over).

:func:`retire` hands an encoding that is about to be replaced to a
disposer thread instead. The thread keeps it until nothing else holds it
(the views and the live tokenizer let go of it a moment later; a view
that keeps it simply delays this), and then, as its only owner, frees its
tuples one at a time: each is first copied into a list in slices, so that
the tuple's own deallocation, which cannot be cut, only drops references
(about half the cost of freeing the ints), and the list is then emptied a
slice at a time with :func:`tokenprism.core.gil.dispose`. Between slices
the GUI thread gets its turn.

:func:`trim_when_freed` serves a model the window no longer shows: once the
model is freed, the same thread hands the heap it leaves free back to the
operating system. glibc keeps freed memory for its next allocations, so
without it a process that once held a multi-gigabyte vocabulary stays that
big after switching to a small one.
"""

from __future__ import annotations

import queue
import sys
import threading
import time
import weakref
from typing import Any

from tokenprism.core.gil import PAUSE_ITEMS, dispose, pause
from tokenprism.core.memory import trim_heap

from .analysis import Analysis

RETIRE_MIN = 50_000
"""Encodings with fewer tokens are freed where they fall (a few ms)."""
_SLICE = 1 << 16
_POLL_S = 0.05
"""How often the disposer looks whether a retired encoding is free to go."""

_work: queue.Queue[Any] = queue.Queue()
_thread: threading.Thread | None = None
_lock = threading.Lock()
_pending = 0  # retirements not finished yet (for tests and benchmarks)
_holding = 0  # of those, waiting for everything else to let go of their encoding
_retired: weakref.WeakValueDictionary[int, Any] = weakref.WeakValueDictionary()
"""Encodings retired and not yet freed, by id (an Encoding's own hash would
hash all its tokens)."""
TRIM_WAIT_S = 60.0
"""How long :func:`trim_when_freed` waits for its object to be freed."""
_watched: list[tuple[weakref.ref[Any], float]] = []  # (object, give up at) waiting to be freed
trims = 0
"""Heap trims done after a watched object was freed (tests)."""


def retire(old: Analysis | None, new: Analysis | None) -> bool:
    """Free ``old``'s tokens in the background if ``new`` replaces them
    with tokens of its own. False (nothing done) for a small encoding, or
    when ``new`` was spliced from ``old`` (an edit: they share their ints,
    and dropping ``old`` frees little)."""
    if old is None or old is new or len(old) < RETIRE_MIN:
        return False
    if new is not None and (new.encoding is old.encoding or new.extra.get("whole") is False):
        return False
    enc = old.encoding
    global _pending
    with _lock:
        if _retired.get(id(enc)) is enc:
            return False  # (several views and the live tokenizer drop the same one)
        _retired[id(enc)] = enc
        _pending += 1
    _start()
    _work.put(enc)
    return True


def trim_when_freed(obj: object) -> None:
    """Once ``obj`` (a model the window let go of) is freed, and the
    encodings retired meanwhile too, return the free heap to the OS
    (:func:`tokenprism.core.memory.trim_heap`: glibc only, else nothing)."""
    with _lock:
        _watched.append((weakref.ref(obj), time.monotonic() + TRIM_WAIT_S))
    _start()
    _work.put(None)  # wakes the thread to start polling


def watching() -> bool:
    """True while an object given to :func:`trim_when_freed` is still alive (tests)."""
    with _lock:
        return bool(_watched)


def busy() -> bool:
    """True while a retired encoding is still waiting or being freed."""
    return _pending > 0


def holding() -> int:
    """Retired encodings the disposer holds, waiting for everything else
    to let go of them (tests)."""
    return _holding


def wait_idle(timeout_s: float = 10.0) -> bool:
    """Wait until nothing retired is left (tests); False on timeout."""
    end = time.monotonic() + timeout_s
    while busy():
        if time.monotonic() > end:
            return False
        time.sleep(0.01)
    return True


def _start() -> None:
    global _thread
    with _lock:
        if _thread is None or not _thread.is_alive():
            _thread = threading.Thread(target=_run, name="tokenprism-disposal", daemon=True)
            _thread.start()


def _run() -> None:
    global _pending, _holding
    waiting: list[Any] = []  # retired encodings, perhaps still held elsewhere
    while True:
        try:
            enc = _work.get(timeout=_POLL_S if waiting or _watched else None)
        except queue.Empty:
            pass
        else:
            if enc is not None:  # (None only wakes the loop for _watched)
                waiting.append(enc)
                with _lock:
                    _holding += 1
            del enc
        i = 0
        while i < len(waiting):
            # held by this list alone (2: the list and the call's argument;
            # weak references do not count): nothing else can see it any
            # more, so emptying it changes nothing for anyone
            if sys.getrefcount(waiting[i]) > 2:
                i += 1
                continue
            enc = waiting.pop(i)
            with _lock:
                _retired.pop(id(enc), None)
                _holding -= 1
            _free(enc)
            del enc
            with _lock:
                _pending -= 1
        if _watched and not waiting:
            _trim_if_freed()


def _trim_if_freed() -> None:
    """Trim the heap when a watched object is gone (or its wait timed out)."""
    global trims
    now = time.monotonic()
    with _lock:
        done = [w for w in _watched if w[0]() is None or now > w[1]]
        for w in done:
            _watched.remove(w)
        last = not _watched
    if done and last:  # one trim after the last of several switches
        trim_heap()
        trims += 1


def _free(enc: Any) -> None:
    """Free the tuples of ``enc``, which nothing else holds, one at a time."""
    extras = getattr(enc, "_extras", None)
    if isinstance(extras, dict):
        for key in [k for k, v in extras.items() if isinstance(v, tuple)]:
            items = _copied(extras[key])
            del extras[key]  # drops the tuple: its ints are in the list, so it only drops references
            _paused(len(items))
            dispose(items)
    for name in [k for k, v in vars(enc).items() if isinstance(v, tuple)]:
        items = _copied(getattr(enc, name))
        object.__setattr__(enc, name, ())  # (a frozen dataclass: see _run why this is safe)
        _paused(len(items))
        dispose(items)


def _paused(n: int) -> None:
    """After dropping a tuple of ``n`` items (one deallocation that holds
    the GIL throughout), let the GUI thread catch up."""
    if n >= PAUSE_ITEMS:
        pause()
    else:
        time.sleep(0)


def _copied(t: tuple[Any, ...]) -> list[Any]:
    """The items of ``t`` in a list, copied a slice at a time."""
    out: list[Any] = []
    for i in range(0, len(t), _SLICE):
        out.extend(t[i:i + _SLICE])
        time.sleep(0)  # the GUI thread's turn
    return out
