"""A vocabulary's scores, types and attributes are ``Column``s: tuples of
Python numbers made on first use from the arrays the loader keeps, equal
to the tuples they stand for, whatever reads them."""

from __future__ import annotations

import pickle
from pathlib import Path

import numpy as np
import pytest

from tests.ggufmaker import write_vocab_gguf
from tokenprism.core.gguf_file import read_gguf
from tokenprism.core.frozen import Column, as_tuple
from tokenprism.core.vocab import vocab_from_gguf


def test_a_column_is_its_tuple() -> None:
    a = np.array([1.5, -2.0, 3.25], dtype=np.float32)
    c: Column[float] = Column(a)
    assert len(c) == 3 and c._items is None  # nothing made for len
    assert c == (1.5, -2.0, 3.25) and c == [1.5, -2.0, 3.25] and c == Column(a.copy())
    assert c[1] == -2.0 and type(c[1]) is float and c[1:] == (-2.0, 3.25)
    assert list(c) == [1.5, -2.0, 3.25] and as_tuple(c) is c.totuple()
    assert pickle.loads(pickle.dumps(c)) == (1.5, -2.0, 3.25)
    assert hash(c) == hash((1.5, -2.0, 3.25))
    assert c != (1.5, -2.0) and c != "abc"


def test_equal_values_share_one_object_but_nan_does_not_count() -> None:
    same = Column(np.full(1000, -7.5, dtype=np.float32)).totuple()
    assert len({id(x) for x in same}) == 1 and same == (-7.5,) * 1000
    nans = Column(np.full(3, np.nan, dtype=np.float32)).totuple()
    assert len(nans) == 3 and all(x != x for x in nans)
    ints = Column(np.array([3, 3, 3], dtype=np.int64)).totuple()
    assert ints == (3, 3, 3) and type(ints[0]) is int


@pytest.mark.parametrize("scores", [None, [0.5, -1.0, 2.0, 0.0], [1.0] * 4])
def test_a_vocabulary_read_from_a_file(tmp_path: Path, scores: list[float] | None) -> None:
    p = write_vocab_gguf(tmp_path / "v.gguf", ["a", "b", "ab", "<s>"], scores=scores, types=[1, 1, 1, 3])
    v = vocab_from_gguf(read_gguf(p))
    assert isinstance(v.scores, Column) and isinstance(v.types, Column) and isinstance(v.attrs, Column)
    assert v.scores == tuple(scores or [0.0] * 4)
    assert v.types == (1, 1, 1, 3)
    cols = v.arrays()
    assert v.attrs == tuple(cols.attrs.tolist()) and v.attrs[3] == int(cols.attrs[3])
    assert all(type(x) is float for x in v.scores)


def test_an_item_is_read_from_the_array_without_making_the_tuple() -> None:
    from array import array

    from tokenprism.core.int_column import le_view

    ints = Column(array("q", [5, -3, 1 << 40]))
    floats = Column(le_view(np.array([0.5, -2.25], dtype="<f4").tobytes(), "f"))
    assert ints[1] == -3 and ints[-1] == 1 << 40 and type(ints[0]) is int
    assert floats[1] == -2.25 and type(floats[0]) is float
    assert ints._items is None and floats._items is None  # no tuple made for one value
    with pytest.raises(IndexError):
        ints[3]
    assert ints[0:2] == (5, -3) and ints._items is not None  # a slice reads the tuple


@pytest.mark.parametrize("values", [
    Column(np.array([1.5, -2.0, 3.25, -1e9], dtype=np.float32)),  # the file's float32 array, read in place
    Column(np.array([3, -7, 0, 2 ** 30], dtype=np.int32)),
    Column(np.array([0.1, -2.5, 1e300, 0.0], dtype=np.float64)),
    [0.1, -2.5, 7, 1e-300],  # no array behind it: converted to float64
])
def test_scores_read_natively_are_the_column_values(values: object) -> None:
    from tokenprism.core.vocab import Scores

    scores = Scores(values)  # type: ignore[arg-type]
    assert len(scores) == 4
    assert [scores.at(i) for i in range(4)] == [float(x) for x in values]  # type: ignore[attr-defined]
