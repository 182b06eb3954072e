"""Letting other threads run during long compiled work.

The interpreter hands the GIL to a waiting thread only between bytecodes;
code compiled by mypyc runs none, so a worker thread that opens a 262k-token
vocabulary or encodes a long text would hold the GIL for its whole call and
freeze the GUI thread that waits for it (measured: 500 ms while the UGM
plugin builds its tables). Long loops in compiled modules call
:func:`offer_gil` every few thousand steps instead; ``time.sleep(0)``
releases the GIL and takes it back, and a waiting thread gets its turn in
between. Without a waiting thread it costs about a microsecond.
"""

from __future__ import annotations

import time

STEP = 4096
"""How many loop steps between two offers: at tens of nanoseconds a step,
well under a millisecond of work."""


def offer_gil() -> None:
    """Give any thread waiting for the GIL its turn now."""
    time.sleep(0)
