"""A read-only dict for the lookup tables of ``Vocab`` and ``GGUFFile``.

Not :class:`types.MappingProxyType`: the tokenizer plugins' compiled hot
loops keep using a table as a plain ``dict`` when ``isinstance(t, dict)``
holds, and copying a 262k-entry proxy into a dict costs ~140 ms per model
load. A ``dict`` subclass whose mutators raise keeps lookups at dict speed
(mypyc's ``dict.get`` reads a subclass directly) and the data shared
between views and threads safe from an accidental write. This module is
left uncompiled on purpose: mypyc's native classes cannot subclass ``dict``.
"""

from __future__ import annotations

import threading
from typing import Any, Callable, Iterator, Mapping, NoReturn, TypeVar

K = TypeVar("K")
V = TypeVar("V")


class _Refuses:
    """Every mutator of a ``dict`` (and ``|=``), refused: put first among
    the bases, these come before ``dict``'s own."""

    __slots__ = ()

    def _read_only(self, *args: Any, **kwargs: Any) -> NoReturn:
        raise TypeError(f"{type(self).__name__} is read-only")

    __setitem__ = _read_only
    __delitem__ = _read_only
    __ior__ = _read_only
    clear = _read_only
    pop = _read_only
    popitem = _read_only
    setdefault = _read_only
    update = _read_only


class FrozenDict(_Refuses, dict[K, V]):
    """A ``dict`` that refuses every change after construction.

    >>> d = FrozenDict({"a": 1})
    >>> d["a"] = 2
    Traceback (most recent call last):
    TypeError: FrozenDict is read-only
    """

    __slots__ = ()

    def __reduce__(self) -> tuple[type[FrozenDict[K, V]], tuple[dict[K, V]]]:
        # pickle's default for dict subclasses re-adds items one by one
        return (type(self), (dict(self),))

    def __repr__(self) -> str:
        return f"{type(self).__name__}({dict.__repr__(self)})"


class TokenIndex(_Refuses, Mapping[str, int]):
    """A vocabulary's piece → id table, built on first use.

    A 250k-piece dict costs ~35 ms and ~15 MB to build, and a tokenizer
    that walks its own trie (Unigram) never reads it: the vocabulary
    holds this instead, and :meth:`table` builds the read-only dict (in
    id order, so the last of duplicate pieces wins, as in llama.cpp) the
    first time anyone asks, once, whichever thread asks first.
    """

    __slots__ = ("_pieces", "_build", "_table", "_lock")

    def __init__(self, pieces: tuple[str, ...], build: Callable[[tuple[str, ...]], dict[str, int]]) -> None:
        self._pieces = pieces
        self._build = build
        self._table: dict[str, int] | None = None
        self._lock = threading.Lock()

    def table(self) -> dict[str, int]:
        """The dict itself (a :class:`FrozenDict`), built if not yet."""
        t = self._table
        if t is None:
            with self._lock:
                t = self._table
                if t is None:
                    t = self._build(self._pieces)
                    self._table = t
        return t

    def built(self) -> bool:
        """Whether :meth:`table` has been built (for tests and benchmarks)."""
        return self._table is not None

    def __getitem__(self, key: str) -> int:
        return self.table()[key]

    def get(self, key: str, default: Any = None) -> Any:
        return self.table().get(key, default)

    def __contains__(self, key: object) -> bool:
        return key in self.table()

    def __iter__(self) -> Iterator[str]:
        return iter(self.table())

    def __len__(self) -> int:
        return len(self.table())

    def __reduce__(self) -> tuple[type[FrozenDict[str, int]], tuple[dict[str, int]]]:
        # pickled as the table it stands for (a lock does not pickle)
        return (FrozenDict, (dict(self.table()),))

    def __repr__(self) -> str:
        state = "built" if self._table is not None else "not built yet"
        return f"TokenIndex({len(self._pieces)} pieces, {state})"
