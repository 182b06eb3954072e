"""Find in the text and Go to Token, without Qt: the searching and the
reading of "#12" / "id 450" that :mod:`.qt_find` puts behind its find bar
and dialog.

Positions are UTF-16 offsets, as the editor's document counts them (the
editor's ``token_text()`` has equal offsets): a character outside the
Basic Multilingual Plane counts two.
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass
from typing import Sequence

import numpy as np

MAX_MATCHES = 1_000_000  # a one-letter search in a huge text stops counting here


def _u16_offsets(text: str, indices: list[int]) -> list[int]:
    """UTF-16 offsets of code-point ``indices`` (sorted) of ``text``."""
    if not indices or text.isascii():
        return indices
    chars = np.frombuffer(text.encode("utf-32-le", "surrogatepass"), dtype=np.uint32)
    astral = np.flatnonzero(chars > 0xFFFF)
    if not len(astral):
        return indices
    idx = np.asarray(indices, dtype=np.int64)
    out: list[int] = (idx + np.searchsorted(astral, idx, "left")).tolist()
    return out


def find_all(text: str, needle: str, case_sensitive: bool = False) -> list[tuple[int, int]]:
    """(start, end) UTF-16 ranges of the matches of ``needle`` in ``text``,
    in order, not overlapping. Without ``case_sensitive``, letters match in
    either case (one character for one, so matches keep the text's length)."""
    if not needle:
        return []
    flags = 0 if case_sensitive else re.IGNORECASE
    pattern = re.compile(re.escape(needle), flags)
    spans = []
    for m in pattern.finditer(text):
        spans.append(m.span())
        if len(spans) >= MAX_MATCHES:
            break
    if not spans:
        return []
    flat = _u16_offsets(text, [p for span in spans for p in span])
    return list(zip(flat[0::2], flat[1::2]))


def next_match(matches: Sequence[tuple[int, int]], start: int, end: int,
               backward: bool = False) -> tuple[int, bool]:
    """Index of the match to go to from the selection ``[start, end)`` (the
    match itself when it is selected moves on), and whether the search
    wrapped around the end (or the start, going backward). -1 without matches."""
    if not matches:
        return -1, False
    starts = [s for s, _ in matches] if not isinstance(matches, _Starts) else matches.starts
    if backward:
        i = bisect.bisect_left(starts, start) - 1
        return (i, False) if i >= 0 else (len(matches) - 1, True)
    # forward: the first match that starts after the selection's start (a
    # selected match counts as passed; an empty selection as not)
    i = bisect.bisect_right(starts, start) if end > start else bisect.bisect_left(starts, start)
    return (i, False) if i < len(matches) else (0, True)


class _Starts(list[tuple[int, int]]):
    """Matches with their starts kept beside them (for repeated next_match calls)."""

    def __init__(self, matches: list[tuple[int, int]]) -> None:
        super().__init__(matches)
        self.starts = [s for s, _ in matches]


def indexed(matches: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """``matches`` ready for many :func:`next_match` calls (no list of starts made per call)."""
    return _Starts(matches)


def match_at(matches: Sequence[tuple[int, int]], start: int, end: int) -> int:
    """Index of the match that is exactly ``[start, end)``, or -1."""
    starts = matches.starts if isinstance(matches, _Starts) else [s for s, _ in matches]
    i = bisect.bisect_left(starts, start)
    return i if i < len(matches) and matches[i] == (start, end) else -1


# ---- Go to Token ---------------------------------------------------------------------

@dataclass(frozen=True)
class GotoTarget:
    """A token by its position (``by_id`` false: ``#value``) or by its id."""

    by_id: bool
    value: int


_INDEX = re.compile(r"^\s*(?:#|token\s*#?|index\s*)\s*(\d+)\s*$", re.IGNORECASE)
_ID = re.compile(r"^\s*id\s*[:=#]?\s*(\d+)\s*$", re.IGNORECASE)
_BARE = re.compile(r"^\s*(\d+)\s*$")


def parse_goto(query: str) -> GotoTarget:
    """Read ``#12`` / ``12`` / ``token 12`` (the token at that position in
    the token table's # column) or ``id 450`` / ``id:450`` (a token with
    that vocabulary id). Raises ValueError saying what is understood."""
    for rx, by_id in ((_INDEX, False), (_BARE, False), (_ID, True)):
        m = rx.match(query)
        if m:
            return GotoTarget(by_id, int(m.group(1)))
    raise ValueError("Type #N for the token at position N (as in the # column) or id N for a token id")


def resolve_goto(target: GotoTarget, ids: Sequence[int] | np.ndarray, vocab_size: int,
                 after: int = -1) -> int:
    """The token index ``target`` names among the tokens ``ids``. For an id,
    the first of its tokens after token ``after`` (the current one), from
    the start again when none follows: asking again steps through them.
    Raises ValueError with a message for the user."""
    n = len(ids)
    if not target.by_id:
        if target.value >= n:
            last = f"#0 to #{n - 1}" if n else "none yet"
            raise ValueError(f"There is no token #{target.value:,}: the text has {n:,} tokens ({last}).")
        return target.value
    if target.value >= vocab_size:
        raise ValueError(f"Id {target.value:,} is not in the vocabulary (ids 0 to {vocab_size - 1:,}).")
    hits = np.flatnonzero(np.asarray(ids) == target.value)
    if not len(hits):
        raise ValueError(f"Id {target.value:,} is not among the text's tokens.")
    i = int(np.searchsorted(hits, after, "right"))
    return int(hits[i] if i < len(hits) else hits[0])
