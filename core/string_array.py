"""GGUF string arrays that decode their strings when first read.

A large vocabulary stores ~800k strings (262k pieces, 515k merges on
gemma-4). Turning all of them into ``str`` objects while opening the file
cost ~110 ms for the merges alone, and a BPE tokenizer needs only the
merges a text touches, in the raw bytes, to find their ranks
(``plugins/bpe/ranks.py``). So the reader keeps each string array as its
raw bytes and the offsets of its length prefixes; ``tolist()`` (or the
first iteration) decodes them all at once, an item access decodes one.

Decoding uses ``surrogateescape``, as the reader always did: every byte
string gives a ``str``, and encoding it back with ``surrogateescape`` gives
the original bytes, which is what lets a plugin match text against the raw
bytes. Left uncompiled: mypyc's native classes cannot be a ``Sequence``.
"""

from __future__ import annotations

from array import array
from typing import Iterator, Sequence, overload

from .int_column import le_view
from .piece_codes import PieceCodes, codes_from_bytes, codes_of, split_strings


_EMPTY = le_view(b"", "q")
# bytes.translate's deletion set: the UTF-8 continuation bytes
_CONTINUATION = bytes(range(0x80, 0xC0))


def _code_points_about(region: bytes, first: int, end: int, n: int) -> int:
    """About how many code points the ``n`` strings between ``first`` and
    ``end`` decode to: their bytes less the UTF-8 continuation bytes, with
    a margin. The continuation bytes are counted in up to eight 16 KB
    windows spread over the strings and scaled up: counting all of a 250k
    vocabulary's 4.4 MB (``bytes.translate``) was 6 ms of its open. A
    short guess only makes the vector grow; a long one costs zeroed pages.
    Windows stay under glibc's mmap threshold, so each reuses the last's
    memory rather than faulting in fresh pages."""
    size = end - first
    window = 1 << 14
    if size <= 8 * window:
        starts = list(range(first, end, window))
    else:
        starts = [first + k * (size - window) // 7 for k in range(8)]
    looked = cont = 0
    for a in starts:
        part = region[a:min(end, a + window)]
        looked += len(part)
        cont += len(part) - len(part.translate(None, _CONTINUATION))
    cont = cont * size // max(looked, 1)
    text = max(size - 8 * n, 0)
    return max(text - cont, 0) + text // 64 + n // 64 + 64


class StringArray(Sequence[str]):
    """An immutable sequence of the strings of one GGUF string array.

    ``region`` holds the array's bytes (length prefixes included),
    ``starts`` is the offset of each string's 8-byte length prefix in it
    and ``end`` the offset just past the last string (``len(region)`` when
    not given); the reader has checked every length against the file
    before making one. The region may hold more than the array: the reader
    hands every array of a small file the file's bytes themselves, not a
    copy of its part. ``starts`` is kept as a read-only int64 view (any
    sequence of ints is taken: it is copied into one).
    """

    __slots__ = ("region", "starts", "end", "_items", "_n")

    def __init__(self, region: bytes, starts: Sequence[int], end: int = -1) -> None:
        self.region = region
        if not (isinstance(starts, memoryview) and starts.format == "q" and starts.readonly):
            starts = memoryview(array("q", starts).tobytes()).cast("q")
        self.starts: memoryview = starts
        self.end = len(region) if end < 0 else end
        self._n = len(starts)
        self._items: tuple[str, ...] | None = None

    def __len__(self) -> int:
        return self._n

    def raw(self) -> tuple[bytes, memoryview, int] | None:
        """``(region, starts, end)`` while the strings are undecoded, else None.

        Taken in one go for a reader on another thread: decoding lets the
        bytes go (``region`` first, then ``starts``), so reading ``region``
        first and checking ``starts`` after never pairs stale parts."""
        region = self.region
        starts = self.starts
        if len(starts) != self._n or (self._n and not region):
            return None
        return region, starts, self.end

    @staticmethod
    def ends_of(starts: memoryview, end: int) -> memoryview:
        """Offset just past each string of :meth:`raw`'s parts (the next
        prefix, or ``end``)."""
        if not len(starts):
            return _EMPTY
        last = array("q", [end]).tobytes()
        return memoryview(starts[1:].tobytes() + last).cast("q")

    def ends(self) -> memoryview:
        """:meth:`ends_of` this array's parts (undecoded arrays only)."""
        return self.ends_of(self.starts, self.end)

    def decode_one(self, i: int) -> str:
        # the raw bytes first: _all() publishes the strings before it lets
        # the bytes go, so one of the two is always there
        region = self.region
        starts = self.starts
        items = self._items
        if items is not None:
            return items[i]
        return self.decode_at(region, starts, self.end, i)

    @staticmethod
    def decode_at(region: bytes, starts: Sequence[int], end: int, i: int) -> str:
        """String ``i`` of :meth:`raw`'s parts."""
        s = int(starts[i])
        e = int(starts[i + 1]) if i + 1 < len(starts) else end
        return region[s + 8:e].decode("utf-8", "surrogateescape")

    def _all(self) -> tuple[str, ...]:
        items = self._items
        if items is None:
            items = tuple(split_strings(self.region, self.end, self.starts))
            # two threads may both get here: each makes the same tuple
            self._items = items
            # decoded, the raw bytes only cost memory (13 MB for gemma-4's merges)
            self.region = b""
            self.starts = _EMPTY
        return items

    def totuple(self) -> tuple[str, ...]:
        """Every string, decoded, as the tuple this array keeps (no copy:
        a vocabulary's pieces are this tuple itself)."""
        return self._all()

    def codes(self) -> PieceCodes:
        """Every string's code points, from the raw bytes while undecoded
        (no ``str`` made: see ``core.piece_codes``)."""
        raw = self.raw()
        if raw is not None and self._n:
            region, starts, end = raw
            first = int(starts[0])
            return codes_from_bytes(region, first, end, self._n, _code_points_about(region, first, end, self._n))
        return codes_of(self._all())

    def tolist(self) -> list[str]:
        """Every string, decoded (at once, and kept for later reads)."""
        return list(self._all())

    def decoded(self) -> bool:
        """Whether the strings were already decoded (for tests and benchmarks)."""
        return self._items is not None

    @overload
    def __getitem__(self, i: int) -> str: ...

    @overload
    def __getitem__(self, i: slice) -> list[str]: ...

    def __getitem__(self, i: int | slice) -> str | list[str]:
        items = self._items
        if isinstance(i, slice):
            if items is not None:
                return list(items[i])
            return [self.decode_one(k) for k in range(*i.indices(len(self)))]
        n = len(self)
        if not -n <= i < n:
            raise IndexError("StringArray index out of range")
        return self.decode_one(i % n)

    def __iter__(self) -> Iterator[str]:
        return iter(self._all())

    def __contains__(self, value: object) -> bool:
        return value in self._all()

    def __eq__(self, other: object) -> bool:
        if isinstance(other, StringArray):
            if len(self) != len(other):
                return False
            ra, rb = self.raw(), other.raw()
            if ra is not None and rb is not None and len(self):
                # undecoded: equal bytes (the strings lie one after another,
                # so equal bytes and counts put the prefixes at equal offsets)
                a_start, b_start = int(ra[1][0]), int(rb[1][0])
                return ra[0][a_start:ra[2]] == rb[0][b_start:rb[2]]
            return len(other) == len(self) and self._all() == other._all()
        if isinstance(other, (list, tuple)):
            return len(other) == len(self) and list(self._all()) == list(other)
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]  # equal to lists, which are unhashable

    def __reduce__(self) -> tuple[object, tuple[object, ...]]:
        # (a memoryview does not pickle: the starts go as an array)
        items = self._items
        if items is not None:
            return _decoded, (items,)
        return StringArray, (self.region, array("q", self.starts), self.end)

    def __repr__(self) -> str:
        raw = self.raw()
        nbytes = raw[2] - int(raw[1][0]) if raw is not None and len(raw[1]) else 0
        return f"StringArray({len(self)} strings, {nbytes} bytes)"


def _decoded(items: tuple[str, ...]) -> StringArray:
    """A decoded :class:`StringArray` of ``items`` (unpickling)."""
    out = StringArray(b"", _EMPTY, 0)
    out._items = items
    out._n = len(items)
    return out
