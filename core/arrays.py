"""Small numpy helpers shared by the plugins' table builders."""

from __future__ import annotations

from typing import TYPE_CHECKING, TypeVar


if TYPE_CHECKING:  # (numpy.typing at run time: ~0.6 ms of a BPE file's first open)
    import numpy as np
    import numpy.typing as npt

    A = TypeVar("A", npt.NDArray[np.int64], npt.NDArray[np.float64])


def distinct_sorted(a: A) -> A:
    """The distinct values of ``a``, ascending: ``np.unique(a)`` for a 1-D
    array, without importing numpy.ma, which np.unique does on its first
    call (12-40 ms inside the first model open of a process)."""
    import numpy as np  # (only the table builders that call this need it)

    srt: A = np.sort(a)
    if srt.size < 2:
        return srt
    return srt[np.concatenate(([True], srt[1:] != srt[:-1]))]
