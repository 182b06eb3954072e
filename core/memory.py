"""Giving freed heap memory back to the operating system.

Opening a large vocabulary makes tens of megabytes of short-lived objects
(the header buffer, decoded chunks, the smaller tables a growing dict
leaves behind). glibc keeps such freed memory in the heap, so the process
would look that much bigger than the model it holds; ``malloc_trim``
returns it. Elsewhere this does nothing.
"""

from __future__ import annotations

import ctypes
import sys
import threading

_lock = threading.Lock()
_trim: object = None  # the libc function, False when there is none


def trim_heap() -> None:
    """Return free heap pages to the OS (glibc only; a few milliseconds)."""
    global _trim
    with _lock:
        if _trim is None:
            _trim = False
            if sys.platform.startswith("linux"):
                try:
                    _trim = ctypes.CDLL("libc.so.6").malloc_trim
                except (OSError, AttributeError):
                    pass
        fn = _trim
    if fn:
        fn(0)  # type: ignore[operator]
