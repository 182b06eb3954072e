"""The kernel's frozen value types, without ``dataclasses``' cost at start-up.

``@dataclass(frozen=True)`` writes a class's ``__init__``, ``__repr__``,
``__eq__``, ``__hash__``, ``__setattr__`` and ``__delattr__`` out as source
and compiles each with ``exec``: 0.4-0.85 ms a class here. The nine types
every process defines (``Vocab``, ``Encoding``, ``Token``, the GGUF header's
three, the tokenizer's config and fragment result, a plugin's spec) took
6-8 ms of the 14-18 ms the command line spends importing the kernel
(measured by importing it with the decorator made a no-op). So these are
plain classes: each writes its ``__init__`` and names its fields, and
:class:`NativeRecord` gives them what the decorator did, the same way for
every class: ``repr`` and ``==`` as a dataclass's (``==`` only between
instances of one class), a hash of the compared fields, and
:func:`replace` for ``dataclasses.replace``.

No assignment after ``__init__``: a compiled type (a mypyc native class)
declares its attributes ``Final``, read-only in the compiled build and to
the type checker in both; a pure-Python one derives from
:class:`~tokenprism.core.frozen.Record`, whose ``__setattr__`` refuses
(mypyc allows no ``__setattr__`` in a class Python code may subclass).
"""

from __future__ import annotations

from typing import Any, TypeVar, cast

from mypy_extensions import mypyc_attr


@mypyc_attr(allow_interpreted_subclasses=True)
class NativeRecord:
    """Base of a frozen value type: a subclass returns its fields from
    ``_fields`` (those ``repr`` shows, in order) and, when they differ,
    from ``_compared`` (those ``==`` and ``hash`` use)."""

    def _fields(self) -> tuple[str, ...]:
        return ()

    def _compared(self) -> tuple[str, ...]:
        return self._fields()

    def _arguments(self) -> tuple[str, ...]:
        """The ``__init__`` arguments that make this instance again."""
        return self._compared()

    def __repr__(self) -> str:
        shown = ", ".join([f"{n}={getattr(self, n)!r}" for n in self._fields()])
        return f"{type(self).__qualname__}({shown})"

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        names = self._compared()
        return tuple([getattr(self, n) for n in names]) == tuple([getattr(other, n) for n in names])

    def __hash__(self) -> int:
        return hash(tuple([getattr(self, n) for n in self._compared()]))


R = TypeVar("R", bound=NativeRecord)


def replace(obj: R, **changes: Any) -> R:
    """A copy of ``obj`` with ``changes``, as ``dataclasses.replace`` makes
    one (a name ``__init__`` does not take raises ``TypeError``)."""
    args = {n: getattr(obj, n) for n in obj._arguments()}
    args.update(changes)
    made: R = cast(Any, type(obj))(**args)
    return made
