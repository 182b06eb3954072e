"""Guard against a PySide6 reference-counting bug on Python < 3.12.

PySide6 6.12.0 (abi3 wheels) returns ``None`` from every C++ method
returning ``void`` without taking a reference to it. Python 3.12 and later
never count references to ``None`` (it is immortal), but 3.10 and 3.11 do:
each ``painter.drawRect(...)``, ``label.setText(...)``, ``widget.update()``
takes one reference away, and after some ten thousand calls the interpreter
aborts with "Fatal Python error: none_dealloc". A painting app makes that
many calls in seconds.

When the bug is detected, :func:`apply` gives ``None`` 2**60 extra
references (what 3.12 does in effect), so the count can never reach zero.
Every module of the app that uses Qt imports this module first.
"""

from __future__ import annotations

import ctypes
import sys

APPLIED = False
_EXTRA = 1 << 60


def void_calls_drop_none() -> bool:
    """True if calling a ``void`` Qt method takes a reference from ``None``."""
    from PySide6.QtCore import QObject

    probe = QObject()
    probe.setObjectName("probe")
    before = sys.getrefcount(None)
    for _ in range(16):
        probe.setObjectName("probe")
    return sys.getrefcount(None) <= before - 16


def apply() -> bool:
    """Make ``None`` effectively immortal if this PySide6 needs it; returns
    whether the guard is active."""
    global APPLIED
    if APPLIED or sys.version_info >= (3, 12) or sys.implementation.name != "cpython":
        return APPLIED
    if not void_calls_drop_none():
        return False
    refcnt = ctypes.c_ssize_t.from_address(id(None))  # ob_refcnt is the first field
    before = sys.getrefcount(None)
    refcnt.value += _EXTRA
    if sys.getrefcount(None) - before != _EXTRA:  # unexpected object layout: undo
        refcnt.value -= _EXTRA
        return False
    APPLIED = True
    return True


apply()
