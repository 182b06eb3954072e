"""Aligning several models' tokens of one text (no Qt, so it is testable
and can run anywhere).

Positions are in the units the caller uses for all lanes (the compare view
uses UTF-16 code units, Qt's text positions). A *cut* is a position strictly
inside the text where a model's token boxes meet; a *difference mark* is a
cut that not every model makes.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np


def cuts(span_start: np.ndarray, span_end: np.ndarray, length: int) -> np.ndarray:
    """Sorted unique cut positions of one lane: every box edge strictly
    inside ``(0, length)``. Gaps between boxes (text no token covers) cut
    on both sides."""
    edges = np.concatenate([np.asarray(span_start, dtype=np.int64), np.asarray(span_end, dtype=np.int64)])
    edges = np.unique(edges)
    return edges[(edges > 0) & (edges < length)]


def difference_marks(lane_cuts: Sequence[np.ndarray]) -> np.ndarray:
    """Positions cut by some lanes but not all of them (sorted)."""
    if len(lane_cuts) < 2:
        return np.zeros(0, dtype=np.int64)
    union = lane_cuts[0]
    common = lane_cuts[0]
    for c in lane_cuts[1:]:
        union = np.union1d(union, c)
        common = np.intersect1d(common, c, assume_unique=True)
    return np.setdiff1d(union, common, assume_unique=True).astype(np.int64)


def space_adjacent(text: str, positions: np.ndarray) -> np.ndarray:
    """For each position in ``text``: is the character before or after it
    whitespace? (Models that attach a space to the next word and models
    that drop it cut on different sides of every space; those marks hide
    the differences inside words.)"""
    out = np.zeros(len(positions), dtype=bool)
    n = len(text)
    for k, p in enumerate(positions.tolist()):
        out[k] = (p > 0 and text[p - 1].isspace()) or (p < n and text[p].isspace())
    return out


@dataclass(frozen=True)
class LaneSummary:
    """One summary row of the compare view."""

    tokens: int
    chars: int
    byte_fallback: int
    unknown: int
    first_tokens: int | None
    """The first lane's token count (None for the first lane itself)."""

    @property
    def chars_per_token(self) -> float:
        return self.chars / self.tokens if self.tokens else 0.0

    @property
    def delta(self) -> str:
        """How many more or fewer tokens than the first lane, e.g. "+23 % tokens"."""
        return delta_label(self.tokens, self.first_tokens)


def delta_label(tokens: int, first: int | None) -> str:
    """``tokens`` against the first lane's ``first``: "+23 % tokens",
    "−8 % tokens", "same", or "" for the first lane itself."""
    if first is None:
        return ""
    if tokens == first:
        return "same"
    if first == 0:
        return f"+{tokens:,} tokens"
    pct = (tokens - first) * 100.0 / first
    rounded = round(pct)
    if rounded == 0:  # never "+0 %" for a real difference
        return f"{'+' if pct > 0 else '−'}{abs(pct):.1f} % tokens"
    return f"{'+' if rounded > 0 else '−'}{abs(rounded)} % tokens"


def wrap_rows(advances: np.ndarray, text16: str, width: float) -> np.ndarray:
    """Start positions of the display rows of ``text16`` (one entry per
    UTF-16 unit, ``advances`` its widths): a row ends after a line break
    (``\\n`` or U+2028),
    or before the unit that would overflow ``width``, preferably after the
    row's last space. Returns ``[0, ..., len]`` (row ``r`` is
    ``[rows[r], rows[r + 1])``)."""
    n = len(text16)
    rows = [0]
    x = 0.0
    last_space = -1
    start = 0
    for i in range(n):
        ch = text16[i]
        w = float(advances[i])
        if x + w > width and i > start:
            cut = last_space + 1 if last_space >= start else i
            rows.append(cut)
            start = cut
            x = float(advances[cut:i].sum())
            last_space = -1
        x += w
        if ch == "\n" or ch == "\u2028":
            rows.append(i + 1)
            start = i + 1
            x = 0.0
            last_space = -1
        elif ch == " " or ch == "\t":
            last_space = i
    if rows[-1] != n or n == 0:
        rows.append(n)
    return np.asarray(rows, dtype=np.int64)
