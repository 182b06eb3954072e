"""A long WPM fragment is one plugin call (a text whose spaces follow
no printable ASCII character has no cut points): it reports progress from
inside and can be cancelled there."""

from __future__ import annotations

from typing import Callable

import pytest

from tests.plugins.progress import cancel_at, reports_of
from tokenprism.core import Model
from tokenprism.core.tokenizer import cut_points

# every space follows a non-ASCII letter, so no cut point: ~30k chunks
TEXT = " ".join(f"mot{i % 613}é Ünïcödé" for i in range(15_000))


@pytest.fixture(scope="module")
def model(ref_model: Callable[[str], Model]) -> Model:
    return ref_model("bert-bge")


def test_no_cut_points(model: Model) -> None:
    assert cut_points(model.tokenizer, TEXT, 1, len(TEXT)) == []


def test_long_fragment_reports_from_inside_the_call(model: Model) -> None:
    seen, res = reports_of(model.tokenizer, TEXT)
    assert len(seen) >= 5
    assert [d for d, _ in seen] == sorted(d for d, _ in seen) and all(0 < d <= t for d, t in seen)
    # the same tokens as a call without a hook, on a fresh cache
    model.tokenizer.clear_cache()  # type: ignore[attr-defined]
    assert res.ids == model.tokenizer.encode_fragment(TEXT, True).ids


def test_long_fragment_cancels_inside_the_call(model: Model) -> None:
    assert cancel_at(model.tokenizer, TEXT, 3) == 3
