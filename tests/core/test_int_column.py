"""IntColumn: the int64 column of a huge text's encoding reads and compares
like the tuple column of any other encoding."""

from __future__ import annotations

from array import array

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tokenprism.core.encoding import IntColumn

values = st.lists(st.integers(-(2 ** 63), 2 ** 63 - 1), max_size=40)


@given(values, values)
def test_equal_exactly_when_the_values_are(a: list[int], b: list[int]) -> None:
    col = IntColumn(a)
    same = a == b
    for other in (tuple(b), list(b), array("q", b), IntColumn(b)):
        assert (col == other) is same and (other == col) is same
        assert (col != other) is not same and (other != col) is not same
    assert col == tuple(a) and list(col) == a and len(col) == len(a)
    if a:
        assert col[-1] == a[-1] and list(col[1:]) == a[1:]


def test_not_equal_to_other_things_and_not_hashable() -> None:
    col = IntColumn([1, 2])
    assert col != "12" and col != {1, 2} and col != 3
    with pytest.raises(TypeError):
        hash(col)


def test_made_from_iterables() -> None:
    a = array("q", [5, -6, 7])
    assert IntColumn(a) == (5, -6, 7) and IntColumn(range(3)) == (0, 1, 2) and IntColumn() == ()
    with pytest.raises(OverflowError):
        IntColumn([2 ** 63])
