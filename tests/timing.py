"""Responsiveness bounds on a shared machine.

A stall a test measures in wall time is some CPU time during which the GIL
or the event loop was held, stretched by every other process that wants
the cores meanwhile: on a 2-core machine with six runnable processes, a
200 ms hold shows as ~600 ms. The bounds in the tests are set for a
machine running only the test suite; :func:`scaled` stretches a bound by
the run queue's excess over the cores (the 1-minute load average), so a
machine busy with other jobs does not fail a test, while a quiet one
still catches the freezes the tests were written for.
"""

from __future__ import annotations

import os

MAX_FACTOR = 5.0
"""Beyond this a machine is too busy for any bound to mean much."""


def load_factor() -> float:
    """How many times over the machine's cores are asked for (at least 1)."""
    try:
        load = os.getloadavg()[0]
    except OSError:  # not available on this platform
        return 1.0
    return min(MAX_FACTOR, max(1.0, load / (os.cpu_count() or 1)))


def scaled(bound_s: float) -> float:
    """``bound_s`` for a machine as busy as this one is now."""
    return bound_s * load_factor()
