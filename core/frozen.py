"""A read-only dict for the lookup tables of ``Vocab`` and ``GGUFFile``.

Not :class:`types.MappingProxyType`: the tokenizer plugins' compiled hot
loops keep using a table as a plain ``dict`` when ``isinstance(t, dict)``
holds, and copying a 262k-entry proxy into a dict costs ~140 ms per model
load. A ``dict`` subclass whose mutators raise keeps lookups at dict speed
(mypyc's ``dict.get`` reads a subclass directly) and the data shared
between views and threads safe from an accidental write. This module is
left uncompiled on purpose: mypyc's native classes cannot subclass ``dict``
(nor can a class Python subclasses refuse assignment: :class:`Record`).
"""

from __future__ import annotations

import math
import sys
from array import array
import threading

from typing import Any, Callable, ClassVar, Iterable, Iterator, Mapping, NoReturn, Sequence, TypeVar, cast, overload

from librt.vecs import vec
from mypy_extensions import i32, i64

from . import piece_codes
from .piece_codes import PieceCodes, PieceIndex, codes_of, last_ids
from .record import NativeRecord
from .string_array import StringArray

T = TypeVar("T")
X = TypeVar("X")

K = TypeVar("K")
V = TypeVar("V")


class Record(NativeRecord):
    """Base of a frozen pure-Python value type (``core.record`` says why
    not a dataclass): a subclass names its fields in ``_FIELDS``, in the
    order of its ``__init__``'s arguments, and stores them there through
    ``self.__dict__``, as assignment raises."""

    _FIELDS: ClassVar[tuple[str, ...]] = ()

    def _fields(self) -> tuple[str, ...]:
        return self._FIELDS

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"cannot assign to field {name!r}")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"cannot delete field {name!r}")

    # pickle and copy: the compiled base's own state is its native
    # attributes, none; the fields are in __dict__
    def __getstate__(self) -> dict[str, Any]:
        return dict(self.__dict__)

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)


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


NATIVE: bool = not piece_codes.__file__.endswith(".py")
"""Whether ``core.piece_codes`` is compiled. Built a code point at a time
in the interpreter, its codes and hash index made a pure-Python open 5-9x
slower than a dict (gemma-4: 1.6 s): the pure build makes the codes with
numpy and answers lookups from the dict (:class:`DictIndex`)."""


class DictIndex:
    """:class:`~tokenprism.core.piece_codes.PieceIndex`'s lookups answered
    by the piece -> id dict: what the pure-Python build hands the
    tokenizers (a compiled one would refuse it)."""

    __slots__ = ("_table",)

    def __init__(self, table: dict[str, int]) -> None:
        self._table = table

    def get(self, s: str, start: int, end: int) -> int:
        return self._table.get(s[start:end], -1)

    def find(self, text: str) -> int:
        return self._table.get(text, -1)

    def char(self, cp: int) -> int:
        return self._table.get(chr(cp), -1)

    def __len__(self) -> int:
        return len(self._table)


def _codes_by_numpy(pieces: tuple[str, ...]) -> PieceCodes:
    """:func:`~tokenprism.core.piece_codes.codes_of` without a loop per
    code point in the interpreter: one UTF-32 encode of all pieces."""
    import numpy as np  # (the pure-Python build only: not on a compiled open's path)

    n = len(pieces)
    offs = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(np.fromiter(map(len, pieces), dtype=np.int64, count=n), out=offs[1:])
    cps = np.frombuffer("".join(pieces).encode("utf-32-le", "surrogatepass"), dtype=np.int32)
    return PieceCodes(vec[i32](cps.tolist()), vec[i64](offs.tolist()))


class TokenIndex(_Refuses, Mapping[str, int]):
    """A vocabulary's piece → id table, built on first use.

    A 250k-piece dict costs ~35 ms and ~15 MB to build, and a 32k-piece
    one most of a small vocabulary's open: the vocabulary holds this
    instead. Three forms, each made the first time it is asked for, once,
    whichever thread asks first:

    - :meth:`codes`: the pieces' code points (``core.piece_codes``), read
      from the file's bytes while ``pieces`` are undecoded;
    - :meth:`native`: a hash index over them, what the compiled
      tokenizers look pieces up in (no ``str`` per piece made);
    - :meth:`table`: the read-only dict, in id order (the last of
      duplicate pieces wins, as in llama.cpp).

    Lookups (``get``, ``in``, ``[]``) use the dict once built, else the
    native index; iteration and ``len`` build the dict.
    """

    __slots__ = ("_pieces", "_build", "_table", "_codes", "_native", "_lock")

    def __init__(self, pieces: Sequence[str], build: Callable[[tuple[str, ...]], dict[str, int]]) -> None:
        self._pieces = pieces
        self._build = build
        self._table: dict[str, int] | None = None
        self._codes: PieceCodes | None = None
        self._native: PieceIndex | None = None
        self._lock = threading.Lock()

    def over(self, pieces: Sequence[str]) -> bool:
        """Whether this is the table of exactly ``pieces`` (the object)."""
        return self._pieces is pieces

    def _once(self, name: str, make: Callable[[], X]) -> X:
        """The slot ``name``, made by ``make`` the first time, under the
        lock (checked again inside it: made once, whichever thread asks
        first). ``make`` must not take the lock itself."""
        x = getattr(self, name)
        if x is None:
            with self._lock:
                x = getattr(self, name)
                if x is None:
                    x = make()
                    setattr(self, name, x)
        return cast(X, x)

    def table(self) -> dict[str, int]:
        """The dict itself (a :class:`FrozenDict`), built if not yet."""
        return self._once("_table", lambda: self._build(as_tuple(self._pieces)))

    def codes(self) -> PieceCodes:
        """The pieces' code points, made if not yet."""
        def make() -> PieceCodes:
            p = self._pieces
            if not NATIVE:
                return _codes_by_numpy(as_tuple(p))
            return p.codes() if isinstance(p, StringArray) else codes_of(p)
        return self._once("_codes", make)

    def native(self) -> PieceIndex:
        """The compiled tokenizers' hash index, built if not yet. In the
        pure-Python build, a :class:`DictIndex` over the dict instead."""
        if self._native is None:
            # what it is made from first, outside the lock _once takes
            if NATIVE:
                codes = self.codes()
                return self._once("_native", lambda: PieceIndex(codes))
            table = self.table()
            return self._once("_native", lambda: cast(PieceIndex, DictIndex(table)))
        return self._native

    def some(self, texts: Iterable[str]) -> dict[str, int]:
        """The ids of those of ``texts`` that are pieces: from the dict or
        the native index when either is built, else from one pass over
        the code points that builds neither (``piece_codes.last_ids``)."""
        wanted = list(texts)
        if self._table is None and self._native is None and NATIVE:
            return last_ids(self.codes(), wanted)
        out: dict[str, int] = {}
        for t in wanted:
            tid = self._id(t)
            if tid >= 0:
                out[t] = tid
        return out

    def built(self) -> bool:
        """Whether :meth:`table` has been built (for tests and benchmarks)."""
        return self._table is not None

    def _id(self, key: object) -> int:
        if not isinstance(key, str):
            return -1
        t = self._table
        return t.get(key, -1) if t is not None else self.native().find(key)

    def __getitem__(self, key: str) -> int:
        tid = self._id(key)
        if tid < 0:
            raise KeyError(key)
        return tid

    def get(self, key: str, default: Any = None) -> Any:
        tid = self._id(key)
        return default if tid < 0 else tid

    def __contains__(self, key: object) -> bool:
        return self._id(key) >= 0

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


class Column(Sequence[T]):
    """One per-token column of a vocabulary (scores, types, attributes) as a
    tuple of Python numbers, made from its array on first use (a typed
    ``memoryview`` as the reader makes it, an ``array.array``, or a numpy
    array: whatever has ``tolist``, ``tobytes`` and ``itemsize``).

    The tuples of a 250k vocabulary cost ~16 ms and ~10 MB of every open
    (a float or int object per token), and a tokenizer reads the arrays
    (``Vocab.arrays()``) or, for a hot loop, :meth:`totuple`: views
    and exports read a few items. Equal to a tuple or list of the same
    values; pickled as the tuple. A column whose values are all equal
    shares one object (gemma-4's 262k equal scores: 6 MB less)."""

    __slots__ = ("_array", "_items")

    def __init__(self, array: Any) -> None:
        self._array = array
        self._items: tuple[T, ...] | None = None

    def totuple(self) -> tuple[T, ...]:
        """The values as a tuple (made once; two threads may both make the same)."""
        t = self._items
        if t is None:
            a = self._array
            n = len(a)
            first = a[0] if n else 0
            data = a.tobytes() if n > 1 else b""
            size = a.itemsize
            # all equal (and no NaN, which equals nothing): bytes compared in C
            if n > 1 and data == data[:size] * n and not (isinstance(first, float) and math.isnan(first)):
                t = (a[:1].tolist()[0],) * n
            else:
                t = tuple(a.tolist())
            self._items = t
        return t

    def __len__(self) -> int:
        return len(self._array)

    @overload
    def __getitem__(self, i: int) -> T: ...

    @overload
    def __getitem__(self, i: slice) -> tuple[T, ...]: ...

    def __getitem__(self, i: int | slice) -> T | tuple[T, ...]:
        a = self._array
        if self._items is None and isinstance(i, int) and isinstance(a, (memoryview, array)):
            # one value read from the array: a few special tokens' attributes
            # made the whole tuple (~3 ms of a 250k vocabulary's first encode)
            v: T = a[i]
            return v
        return self.totuple()[i]

    def __iter__(self) -> Iterator[T]:
        return iter(self.totuple())

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Column):
            return self.totuple() == other.totuple()
        if isinstance(other, (tuple, list)):
            return self.totuple() == tuple(other)
        return NotImplemented

    def __hash__(self) -> int:
        return hash(self.totuple())

    def __reduce__(self) -> tuple[type[tuple[T, ...]], tuple[tuple[T, ...]]]:
        return (tuple, (self.totuple(),))

    def __repr__(self) -> str:
        return f"Column({len(self)} values)"


def column_bytes(values: Sequence[Any]) -> tuple[str, bytes] | None:
    """The array behind a vocabulary column (:class:`Column`) as ``(type
    code, little-endian bytes)``, e.g. ``("f", ...)`` for the file's float32
    scores, ``("q", ...)`` for int64 attributes; ``None`` for values held
    otherwise (a tuple), or on a big-endian machine. A plugin reads a 250k
    column natively from it at open, where the tuple would cost ~16 ms and
    numpy's import ~65 ms."""
    if not isinstance(values, Column) or sys.byteorder != "little":
        return None
    a = values._array
    code = getattr(a, "format", None) or getattr(a, "typecode", None)
    if code is None:
        dtype = getattr(a, "dtype", None)  # a numpy array (native order)
        code = dtype.char if dtype is not None else None
    if not isinstance(code, str) or code.lstrip("<=@") not in ("b", "B", "h", "H", "i", "I", "l", "L", "q", "Q", "f", "d"):
        return None
    code = code.lstrip("<=@")
    if code in ("l", "L"):  # (a C long: 4 or 8 bytes)
        code = ("q" if code == "l" else "Q") if int(a.itemsize) == 8 else ("i" if code == "l" else "I")
    return code, bytes(a.tobytes())


def score_bytes(values: Sequence[float]) -> tuple[bytes, str]:
    """A vocabulary column of scores as little-endian bytes and their type
    code: ``f`` (float32, as files store them), ``i`` (int32) or ``d``
    (float64, the values converted when no array of those is behind the
    column), read natively by ``core.vocab.Scores``."""
    raw = column_bytes(values)
    if raw is not None and raw[0] in ("f", "i", "d"):
        return raw[1], raw[0]
    out = array("d", [float(x) for x in values])
    if sys.byteorder == "big":
        out.byteswap()
    return out.tobytes(), "d"


def as_tuple(values: Sequence[T]) -> tuple[T, ...]:
    """``values`` as a tuple: the one a :class:`Column` or an undecoded
    :class:`StringArray` makes once and keeps, a tuple itself."""
    if isinstance(values, (Column, StringArray)):
        return values.totuple()
    return values if isinstance(values, tuple) else tuple(values)
