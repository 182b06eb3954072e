"""Sets of code points as sorted lists of inclusive ranges, and llama.cpp's
Unicode tables (``unicode_data``) as such sets (compiled).

The plugins build their character classes from these at open time: BPE's
regex translator writes each class as ranges, WPM fills a class byte per
code point from them, UGM writes the characters its charsmap may change as
a regex class. A set here is a ``Ranges`` list that is *normalized*: sorted,
no empty range, no two ranges that overlap or touch. The functions that
give ranges take them in any order and return normalized lists, so their
results compare equal exactly when the sets are equal.

>>> merged([(5, 9), (0, 3), (4, 4)])
[(0, 9)]
>>> subtract([(0, 9)], [(3, 4)])
[(0, 2), (5, 9)]
"""

from __future__ import annotations

from bisect import bisect_right
from typing import Final, Iterable, final

from . import unicode_data as ud

MAX_CP: Final = 0x10FFFF

Ranges = list[tuple[int, int]]
"""Inclusive ``(first, last)`` code point ranges."""


def merged(ranges: Iterable[tuple[int, int]]) -> Ranges:
    """The set of ``ranges`` (any order, overlapping or empty ones
    allowed), normalized."""
    given = list(ranges)
    if is_normalized(given):
        # most inputs are made by these functions: a copy, no new tuples
        # (WPM's classes go through ~2 000 ranges a dozen times)
        return given
    out: Ranges = []
    for lo, hi in sorted(given):
        if lo > hi:
            continue
        if out and lo <= out[-1][1] + 1:
            if hi > out[-1][1]:
                out[-1] = (out[-1][0], hi)
        else:
            out.append((lo, hi))
    return out


def is_normalized(ranges: Ranges) -> bool:
    """Whether ``ranges`` is sorted, without empty ranges, and no two of
    them overlap or touch."""
    prev = -2
    for lo, hi in ranges:
        if lo > hi or lo <= prev + 1:
            return False
        prev = hi
    return True


def points(cps: Iterable[int]) -> Ranges:
    """The set of the code points ``cps``."""
    return merged([(c, c) for c in cps])


def complement(ranges: Ranges, top: int = MAX_CP) -> Ranges:
    """The code points from 0 to ``top`` not in ``ranges`` (which should
    not go past ``top``)."""
    out: Ranges = []
    nxt = 0
    for lo, hi in merged(ranges):
        if lo > nxt:
            out.append((nxt, lo - 1))
        nxt = max(nxt, hi + 1)
    if nxt <= top:
        out.append((nxt, top))
    return out


def intersect(a: Ranges, b: Ranges) -> Ranges:
    """The code points in both ``a`` and ``b``."""
    a = merged(a)
    b = merged(b)
    out: Ranges = []
    i = 0
    j = 0
    while i < len(a) and j < len(b):
        lo = max(a[i][0], b[j][0])
        hi = min(a[i][1], b[j][1])
        if lo <= hi:
            out.append((lo, hi))
        if a[i][1] < b[j][1]:
            i += 1
        else:
            j += 1
    return out


def subtract(a: Ranges, b: Ranges) -> Ranges:
    """The code points of ``a`` not in ``b``: one walk over both (they are
    normalized first), so a set of thousands of ranges costs no more than
    sorting it."""
    a = merged(a)
    b = merged(b)
    out: Ranges = []
    j = 0
    for lo0, hi in a:
        lo = lo0
        while j < len(b) and b[j][1] < lo:
            j += 1
        k = j
        while k < len(b) and b[k][0] <= hi:
            blo, bhi = b[k]
            if blo > lo:
                out.append((lo, blo - 1))
            lo = max(lo, bhi + 1)
            if lo > hi:
                break
            k += 1
        if lo <= hi:
            out.append((lo, hi))
    return out


def contains(ranges: Ranges, cp: int) -> bool:
    """Whether ``cp`` is in ``ranges`` (a walk: for a few ranges; a
    :class:`RangeSet` answers for many)."""
    for lo, hi in ranges:
        if lo <= cp <= hi:
            return True
    return False


@final
class RangeSet:
    """Membership in a normalized ``Ranges``, by binary search."""

    def __init__(self, ranges: Ranges) -> None:
        self.starts: list[int] = [lo for lo, _ in ranges]
        self.ends: list[int] = [hi for _, hi in ranges]

    def __contains__(self, cp: int) -> bool:
        i = bisect_right(self.starts, cp) - 1
        return i >= 0 and cp <= self.ends[i]


# ------------------------------------------------- llama.cpp's tables as sets

_by_flag: dict[int, tuple[tuple[int, int], ...]] = {}
# made on first use (the same value whichever thread makes it): their ~3 000
# tuples took 0.9 ms of importing this module, which a BPE file's open does
# though only some pre-tokenizers' first encode reads them
_lower: tuple[tuple[int, int], ...] | None = None
_nfd: tuple[tuple[int, int, int], ...] | None = None


def flag_ranges(bit: int) -> Ranges:
    """The code points whose llama.cpp flags (``unicode_data.FLAG_RANGES``)
    have ``bit`` (``unicode_data.LETTER``, ``CONTROL``, ...). Row ``k`` of
    the flag table covers its start up to the next row's start, and each
    run of consecutive rows with the bit is one range. Made once per bit
    (a compiled walk over the 2 273 rows: ~20 µs) and copied for each
    caller, who may change its list."""
    found = _by_flag.get(bit)
    if found is None:
        data = ud.FLAG_RANGES
        out: Ranges = []
        first = -1
        k = 0
        last = len(data) - 2  # the last row only marks where the table ends
        while k < last:
            if data[k + 1] & bit:
                if first < 0:
                    first = data[k]
            elif first >= 0:
                out.append((first, data[k] - 1))
                first = -1
            k += 2
        if first >= 0:
            out.append((first, data[last] - 1))
        found = tuple(out)
        _by_flag[bit] = found  # the same value whichever thread stores it
    return list(found)


def whitespace() -> list[int]:
    """llama.cpp's whitespace code points, ascending."""
    return list(ud.WHITESPACE)


def lowercase_pairs() -> list[tuple[int, int]]:
    """llama.cpp's simple lowercase mapping as ``(code point, lowercase)``
    pairs, ascending."""
    global _lower
    if _lower is None:
        _lower = tuple(zip(ud.LOWERCASE[0::2], ud.LOWERCASE[1::2]))
    return list(_lower)


def nfd_first() -> list[tuple[int, int, int]]:
    """``(first, last, target)``: every code point from ``first`` to
    ``last`` has ``target`` as the first code point of its NFD, the only
    one llama.cpp's ``unicode_cpts_normalize_nfd`` keeps ("é" becomes
    "e")."""
    global _nfd
    if _nfd is None:
        _nfd = tuple(zip(ud.NFD[0::3], ud.NFD[1::3], ud.NFD[2::3]))
    return list(_nfd)
