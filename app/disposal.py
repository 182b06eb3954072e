"""Freeing a huge text's tokens without freezing the window.

An :class:`~tokenprism.core.Encoding` keeps its tokens as tuples of Python
ints: a 10 MB text holds some twenty million distinct int objects (token
starts and ends in characters and bytes). Whoever drops the last reference
to it frees them all in one deallocation that holds the GIL throughout
(measured: 180-330 ms on the GUI thread when a 10 MB text was deleted or
pasted over), and a tuple cannot be emptied a slice at a time.

What can be done a slice at a time is emptying a list. So :func:`retire`
hands an encoding that is about to be replaced to a disposer thread, which
copies each tuple's items into a list (in slices, offering the GIL); while
those lists hold the ints, freeing the tuples themselves only drops
references, a few milliseconds. Once the encoding is really gone (a weak
reference's finalizer tells, whoever dropped it last), the thread empties
the lists in slices with :func:`tokenprism.core.gil.dispose`, so the GUI
thread gets its turn every fraction of a millisecond.

Retiring an encoding that something else still uses is harmless: nothing
is changed in it, its ints merely wait in the lists until it goes.
"""

from __future__ import annotations

import queue
import threading
import time
import weakref
from typing import Any

from tokenprism.core.gil import dispose

from .analysis import Analysis

RETIRE_MIN = 50_000
"""Encodings with fewer tokens are freed where they fall (well under a
millisecond)."""
_SLICE = 1 << 16

_work: queue.Queue[tuple[str, Any]] = queue.Queue()
_thread: threading.Thread | None = None
_lock = threading.Lock()
_pending = 0  # retirements not finished yet (for tests and benchmarks)
_retired: weakref.WeakValueDictionary[int, Any] = weakref.WeakValueDictionary()
"""Encodings retired and not yet gone, by id (an Encoding's own hash would
hash all its tokens)."""


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
    _work.put(("copy", enc))
    return True


def busy() -> bool:
    """True while a retired encoding is still being freed."""
    return _pending > 0


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
    global _pending
    while True:
        kind, item = _work.get()
        if kind == "copy":
            lists = _copy_out(item)
            # from here on the lists hold every int the tuples hold; when the
            # encoding goes (perhaps right here, perhaps later on the GUI
            # thread), its tuples only drop references
            fin = weakref.finalize(item, _work.put, ("free", lists))
            fin.atexit = False
            del item, lists
        else:
            for lst in item:
                dispose(lst)
            del item
            with _lock:
                _pending -= 1


def _copy_out(enc: Any) -> list[list[Any]]:
    """The items of ``enc``'s tuples, copied into lists a slice at a time."""
    # (a snapshot of the values: the GUI thread may add extras meanwhile)
    tuples = [v for v in tuple(vars(enc).values()) if isinstance(v, tuple)]
    tuples += [v for v in tuple(getattr(enc, "_extras", {}).values()) if isinstance(v, tuple)]
    out: list[list[Any]] = []
    for t in tuples:
        lst: list[Any] = []
        for i in range(0, len(t), _SLICE):
            lst.extend(t[i:i + _SLICE])
            time.sleep(0)  # the GUI thread's turn
        out.append(lst)
    return out
