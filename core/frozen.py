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

from typing import Any, NoReturn, TypeVar

K = TypeVar("K")
V = TypeVar("V")


class FrozenDict(dict[K, V]):
    """A ``dict`` that refuses every change after construction.

    >>> d = FrozenDict({"a": 1})
    >>> d["a"] = 2
    Traceback (most recent call last):
    TypeError: FrozenDict is read-only
    """

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

    def __reduce__(self) -> tuple[type[FrozenDict[K, V]], tuple[dict[K, V]]]:
        # pickle's default for dict subclasses re-adds items one by one
        return (type(self), (dict(self),))

    def __repr__(self) -> str:
        return f"{type(self).__name__}({dict.__repr__(self)})"
