"""Giving freed heap memory back to the operating system.

Opening a large vocabulary makes tens of megabytes of short-lived objects
(the header buffer, decoded chunks, the smaller tables a growing dict
leaves behind). glibc keeps such freed memory in the heap, so the process
would look that much bigger than the model it holds; ``malloc_trim``
returns it. Elsewhere this does nothing.
"""

from __future__ import annotations

import sys
import threading

_lock = threading.Lock()
_trim: object = None  # the libc function, False when there is none
_M_MMAP_THRESHOLD = -3  # mallopt's parameter number (malloc.h)
LARGE_BLOCK = 1 << 20
"""Allocations from this size on get a mapping of their own (see
:func:`map_large_blocks`)."""
_mapped = False


def _glibc(name: str) -> object:
    """glibc's function ``name``, or False where there is none."""
    if not sys.platform.startswith("linux"):
        return False
    import ctypes  # (here: ~1.6 ms of every command line's start, which seldom trims)

    try:
        return getattr(ctypes.CDLL("libc.so.6"), name)
    except (OSError, AttributeError):
        return False


def trim_heap() -> None:
    """Return free heap pages to the OS (glibc only; a few milliseconds)."""
    global _trim
    with _lock:
        if _trim is None:
            _trim = _glibc("malloc_trim")
        fn = _trim
    if fn:
        fn(0)  # type: ignore[operator]


def map_large_blocks() -> bool:
    """Give every allocation of :data:`LARGE_BLOCK` or more its own memory
    mapping, returned whole when it is freed (glibc only; once per process).

    glibc starts by mapping blocks of 128 KB and up, but each time one is
    freed it raises that threshold to the freed block's size (to 32 MB), so
    after a large vocabulary is dropped, the next model's arrays land in the
    heap between small live objects, and a trim cannot give those pages back.
    Measured in the window (tests/app/test_model_release.py, a 600k-token
    vocabulary, ~100-140 MB): 8-17% of it stayed after switching to a small
    model with the moving threshold, 3-5% with it fixed at 1 MB (128 KB gave
    the same). A fixed threshold costs one mmap and munmap per megabyte-sized
    array, a few microseconds against the milliseconds of filling it.
    Returns whether the setting took.
    """
    global _mapped
    with _lock:
        if not _mapped:
            mallopt = _glibc("mallopt")
            _mapped = bool(mallopt and mallopt(_M_MMAP_THRESHOLD, LARGE_BLOCK))  # type: ignore[operator]
        return _mapped
