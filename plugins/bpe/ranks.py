"""Merge ranks of a BPE vocabulary.

Ranks are looked up by merge text (``"left right"``, see ``bpe.py``). Made
as a dict, gemma-4's 515k merges cost ~110 ms to decode and ~110 ms to
insert, and even filled a bucket at a time (the merges grouped by a hash
of their first bytes, a group decoded on its first miss) the grouping and
the decoding of what a first 0.11 MB text needs were 100M instructions of
llama-bpe's 336M first encode. When the merges come undecoded from the
file (a :class:`StringArray`), the core's :class:`BytesIndex` is made
over their bytes instead (the first of duplicates winning, as in
llama.cpp), and a pair is ranked where its symbols lie, no merge text
made; ``bpe.py`` looks pieces up in the same kind of table.

The pure-Python build ranks every merge in a dict at once (a loop over
every merge in the interpreter is slower than decoding them all).
"""

from __future__ import annotations

import threading
from bisect import bisect_right
from typing import Final, Optional, Sequence

from mypy_extensions import i64

from tokenprism.core.plugin_api import BytesIndex, StringArray, offer_gil, raw_index

NATIVE_TABLES: Final = not __file__.endswith(".py")
"""Whether this module is compiled (see the module doc)."""
_SLICE = 65536


class RankTable:
    """Merge text -> rank of a vocabulary's merges (see the module doc).

    Readers take ``ranks`` and look up in it; one that misses calls
    :func:`rank_of`, which asks the native table (:class:`BytesIndex`)
    while there is one, or :meth:`pair_rank` asks it directly. ``ranks``
    starts empty and keeps the texts :meth:`miss` found, until
    :meth:`complete_all` swaps in the full dict; ``done`` is that full
    dict, once there is one, so a reader still holding the partial dict
    knows to look again. Several threads may encode with one tokenizer:
    the native table is made before anyone reads it and never changes."""

    ranks: dict[str, int]
    done: Optional[dict[str, int]]
    complete: bool

    def __init__(self, merges: Sequence[str]) -> None:
        self.ranks = {}
        self.done = None
        self.complete = True
        self._lock = threading.Lock()
        self._merges: Optional[StringArray] = None
        self._native: Optional[BytesIndex] = None
        raw = None
        if isinstance(merges, StringArray) and len(merges) > 0:
            raw = merges.raw()
            if raw is not None:
                self._merges = merges
                native = raw_index(merges, False) if NATIVE_TABLES else None
                if native is not None:
                    self._native = native
                    self.complete = False
                else:
                    # decoded on a copy: the array stays undecoded
                    self.ranks = rank_dict(StringArray(raw[0], raw[1], raw[2]).tolist())
        if raw is None:
            self.ranks = rank_dict(merges)
        if self.complete:
            self.done = self.ranks

    def miss(self, text: str) -> int:
        """The rank of ``text`` from the native table, or -1 (a hit is kept
        in ``ranks``, so the next reader of the same text finds it there)."""
        nat = self._native  # (None once another thread completed the table)
        if nat is None:
            return self.ranks.get(text, -1)
        n: i64 = len(text)
        r = nat.find(text, 0, n, n, False)
        if r >= 0:
            self.ranks.setdefault(text, int(r))
        return r

    def pair_rank(self, s: str, a: i64, b: i64, c: i64) -> i64:
        """The rank of the merge of ``s[a:b]`` and ``s[b:c]``, or -1,
        looked up where the symbols lie (no merge text made) while the
        native table answers."""
        nat = self._native
        if nat is not None:
            return nat.find(s, a, b, c, True)
        return self.ranks.get(s[a:b] + " " + s[b:c], -1)

    def _finish(self, full: dict[str, int]) -> None:
        self.ranks = full
        self.done = full
        self.complete = True
        # the table and the bytes are no longer needed
        self._native = None
        self._merges = None

    def complete_all(self) -> None:
        """Rank every merge in the dict now (for displays and the trace,
        which look merges up by text; the encoder's lookups need only the
        native table)."""
        if self.complete:
            return
        with self._lock:
            merges = self._merges
        if merges is None:
            return
        # decoded by the array itself, which keeps the strings: the dict's
        # keys are then the same objects a display of the merges shows
        texts = merges.tolist()
        full = rank_dict(texts)
        with self._lock:
            if not self.complete:
                self._finish(full)

    def load_all(self) -> None:
        """:meth:`complete_all` (tests compare the result with :func:`rank_dict`)."""
        self.complete_all()


def rank_of(table: RankTable, ranks: dict[str, int], text: str) -> int:
    """The rank of merge text ``text`` in ``table`` (whose dict was
    ``ranks`` when the caller took it), or -1."""
    r = ranks.get(text, -1)
    if r < 0 and ranks is not table.done:
        r = table.miss(text)
    return r



def rank_dict(merges: Sequence[str]) -> dict[str, int]:
    """Merge text -> rank of decoded merges, the first of duplicates
    winning as in llama.cpp.

    Filled a slice at a time: one dict(zip(...)) over gemma-4's 515k merges
    is a single call that holds the GIL for ~200 ms, and a worker thread
    building it froze the GUI thread that long."""
    items = list(merges)
    n = len(items)
    r: dict[str, int] = {}
    for a in range(0, n, _SLICE):
        b = min(n, a + _SLICE)
        r.update(zip(items[a:b], range(a, b)))
        offer_gil()
    if len(r) != n:  # duplicates: a later one overwrote the first; redo backwards
        r = {}
        for b in range(n, 0, -_SLICE):
            a = max(0, b - _SLICE)
            r.update(zip(reversed(items[a:b]), range(b - 1, a - 1, -1)))
            offer_gil()
    return r


def merges_containing(merges: Sequence[str], sub: str) -> list[str]:
    """The merges whose text contains ``sub``, in rank order; from the raw
    bytes when undecoded (a search of the bytes, then a decode of the few
    merges it finds)."""
    raw = merges.raw() if isinstance(merges, StringArray) else None
    if raw is None:
        return [m for m in merges if sub in m]
    region, starts, end = raw
    needle = sub.encode("utf-8", "surrogateescape")
    if not needle:
        return list(merges)
    lo = int(starts[0]) if len(starts) else end
    if end - lo < len(needle):
        return []
    # bytes.find, from hit to hit, in the array's own bytes (the region
    # can hold the whole file). A vectorised pass (the needle's first byte
    # compared everywhere, then narrowed) made temporaries of the bytes'
    # size, faulted in page by page in a fresh process: gemma-4's 9 MB of
    # merges took 16-22 ms that way, 8 ms so
    found: list[int] = []
    at = region.find(needle, lo, end)
    while at >= 0:
        found.append(at)
        if len(found) % _SLICE == 0:
            offer_gil()  # (a hostile file can hold the needle everywhere)
        at = region.find(needle, at + 1, end)
    if not found:
        return []
    # the merge of each hit, once (hits ascend: so do their merges); no
    # numpy: a BPE encode of 256 chars and more asks this on its first use
    which: list[int] = []
    for at in found:
        i = bisect_right(starts, at) - 1
        if not which or which[-1] != i:
            which.append(i)
    out: list[str] = []
    for i in which:
        m = StringArray.decode_at(region, starts, end, i)
        # a hit can straddle a length prefix; the decoded text decides
        if sub in m:
            out.append(m)
    return out
