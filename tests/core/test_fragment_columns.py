"""The vector path from a plugin to an Encoding: fragment_columns takes a
plugin's encode_columns when it has one and converts encode_fragment's
lists otherwise, and the core never writes into a plugin's vectors."""

from __future__ import annotations

import pytest
from librt.vecs import append, vec
from mypy_extensions import i64

from tokenprism.core import open_model
from tokenprism.core.library.resources import demo_models
from tokenprism.core.columns import extend_shifted
from tokenprism.core.tokenizer import FragmentResult, fragment_columns


class _ListsOnly:
    def encode_fragment(self, text: str, after_special: bool) -> FragmentResult:
        return FragmentResult([7, 8], [0, 1], [1, len(text.encode())])


class _Cached(_ListsOnly):
    """Hands out the same vectors every time, with spare room after them."""

    def __init__(self) -> None:
        self.cols = tuple(append(append(vec[i64](capacity=64), a), b) for a, b in ((7, 8), (0, 1), (1, 2)))

    def encode_columns(self, text: str, after_special: bool) -> tuple[vec[i64], vec[i64], vec[i64]]:
        return self.cols  # type: ignore[return-value]


def test_lists_are_converted_and_columns_taken_as_they_are() -> None:
    cols = fragment_columns(_ListsOnly(), "ab", True)  # type: ignore[arg-type]
    assert [list(c) for c in cols] == [[7, 8], [0, 1], [1, 2]]
    tok = _Cached()
    assert fragment_columns(tok, "ab", True) is tok.cols  # type: ignore[arg-type]


def test_extending_a_copy_leaves_the_shared_vector_alone() -> None:
    shared = _Cached().cols[0]
    a = extend_shifted(extend_shifted(vec[i64](), shared, 0), vec[i64]([5]), 0)
    b = extend_shifted(extend_shifted(vec[i64](), shared, 0), vec[i64]([6]), 10)
    assert (list(a), list(b), list(shared)) == ([7, 8, 5], [7, 8, 16], [7, 8])


def test_the_vector_path_gives_what_the_lists_give() -> None:
    # every demo model, with and without special tokens around the text
    # (a suffix is appended to copies, a prefix starts the parts' vectors)
    text = "Héllo wörld, 日本語 🙂 x+=1"
    for path in demo_models().values():
        m = open_model(path)
        res = m.tokenizer.encode_fragment(text, True)
        plain = m.encode(text)
        assert plain.token_ids == res.ids
        assert plain.byte_starts == res.starts and plain.byte_ends == res.ends
        both = m.encode(text, add_special=True)
        pre, suf = m.config.special_prefix, m.config.special_suffix
        assert both.token_ids == [*pre, *res.ids, *suf]
        again = m.encode(text, add_special=True)
        assert again.token_ids == both.token_ids and again.byte_ends == both.byte_ends


@pytest.mark.parametrize("groups", [False, True])
def test_span_shifts_are_the_same_with_and_without_numpy(monkeypatch: pytest.MonkeyPatch, groups: bool) -> None:
    """``pipeline.extend_shifted`` shifts in a loop until numpy is imported
    (the command line never needs it), with numpy after: same values,
    -1 (no group) kept where only groups move."""
    import sys

    import numpy  # noqa: F401  (the desktop app has it imported)

    from tokenprism.core.int_column import IntColumn
    from tokenprism.core.pipeline import extend_shifted as shift_spans

    values = IntColumn([5, -1, 0, 17, -1, 4096, 3])
    with_numpy = IntColumn([1])
    shift_spans(with_numpy, values, 10, groups)
    monkeypatch.delitem(sys.modules, "numpy")
    looped = IntColumn([1])
    shift_spans(looped, values, 10, groups)
    assert "numpy" not in sys.modules  # (the loop did not import it)
    expected = [1] + [v if groups and v < 0 else v + 10 for v in values]
    assert list(with_numpy) == list(looped) == expected
