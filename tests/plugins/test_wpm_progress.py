"""A long WPM fragment is one plugin call (a text whose spaces follow
no printable ASCII character has no cut points): it reports progress from
inside and can be cancelled there."""

from __future__ import annotations

from typing import Callable

import pytest

from tokenprism.core import Model
from tokenprism.core.gil import Cancelled, progress_hook
from tokenprism.core.tokenizer import cut_points

# every space follows a non-ASCII letter, so no cut point: ~30k chunks
TEXT = " ".join(f"mot{i % 613}é Ünïcödé" for i in range(15_000))


@pytest.fixture(scope="module")
def model(ref_model: Callable[[str], Model]) -> Model:
    return ref_model("bert-bge")


def test_no_cut_points(model: Model) -> None:
    assert cut_points(model.tokenizer, TEXT, 1, len(TEXT)) == []


def test_long_fragment_reports_from_inside_the_call(model: Model) -> None:
    seen: list[tuple[int, int]] = []
    with progress_hook(lambda done, total: seen.append((done, total)) is None):
        res = model.tokenizer.encode_fragment(TEXT, True)
    assert len(seen) >= 5
    assert [d for d, _ in seen] == sorted(d for d, _ in seen) and all(0 < d <= t for d, t in seen)
    # the same tokens as a call without a hook, on a fresh cache
    model.tokenizer.clear_cache()  # type: ignore[attr-defined]
    assert res.ids == model.tokenizer.encode_fragment(TEXT, True).ids


def test_long_fragment_cancels_inside_the_call(model: Model) -> None:
    calls = 0

    def stop_at_third(done: int, total: int) -> bool:
        nonlocal calls
        calls += 1
        return calls < 3

    with progress_hook(stop_at_third), pytest.raises(Cancelled):
        model.tokenizer.encode_fragment(TEXT, True)
    assert calls == 3
