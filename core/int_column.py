"""Token columns: int64 arrays that read like tuples of ints.

Kept apart from :mod:`.encoding` so that the compiled span walk and the
plugins' vectors can make them without importing the result type.
"""

from __future__ import annotations

import sys
from array import array
from typing import TYPE_CHECKING, Any, Iterable, Union, cast


if TYPE_CHECKING:
    _IntArray = array[int]
else:
    _IntArray = array


class IntColumn(_IntArray):
    """A column of int64 values that compares equal to a tuple, list or
    array of the same values (as a tuple column would). Never changed in
    place once in an :class:`Encoding`."""

    __slots__ = ()

    def __new__(cls, values: Iterable[int] = ()) -> IntColumn:
        out = cast(IntColumn, super().__new__(cls, "q"))
        if isinstance(values, list):
            out.fromlist(values)  # (the quickest way in from a list)
        else:
            out.extend(values)
        return out

    def __eq__(self, other: object) -> bool:
        if isinstance(other, array):
            return array.__eq__(self, other)
        if isinstance(other, (tuple, list)):
            return len(self) == len(other) and self.tolist() == list(other)
        return NotImplemented

    def __ne__(self, other: object) -> bool:
        eq = self.__eq__(other)
        return eq if eq is NotImplemented else not eq

    __hash__ = None  # (mutable underneath, like array)


Column = Union[tuple[int, ...], IntColumn]
"""One per-token column of an :class:`Encoding`."""


def le_view(data: bytes, code: str) -> memoryview:
    """The little-endian values in ``data`` as a read-only typed view
    (``code``: an ``array`` type code, e.g. ``"q"``, ``"i"``, ``"f"``):
    what numpy arrays were on the open path, without numpy's ~65 ms import.
    Indexing gives Python numbers, ``tolist()`` all of them, and numpy
    takes it as it is (``np.asarray``: the buffer protocol, no copy)."""
    if sys.byteorder == "big":  # (GGUF is little-endian; swapped on a copy)
        a = array(code)
        a.frombytes(data)
        a.byteswap()
        data = a.tobytes()
    # (the code is only known at run time: typeshed types cast() per literal)
    view: memoryview = memoryview(data).cast(cast(Any, code))
    return view
