"""A BPE fragment with no cut points (one long line) is one plugin call:
it reports progress from inside and can be cancelled there."""

from __future__ import annotations

import pytest

from tests.plugins.progress import cancel_at, reports_of
from tokenprism.core import open_model
from tokenprism.core.incremental import encode_chunked
from tokenprism.core.library.resources import demo_models

LINE = " ".join(f"word{i % 997} and, more" for i in range(12_000))  # ~36k pre-tokenizer words, no newline


def _model():  # type: ignore[no-untyped-def]
    path = demo_models().get("bpe")
    if path is None:
        pytest.skip("no bundled BPE demo model")
    return open_model(path)


def test_one_long_line_reports_from_inside_the_call() -> None:
    model = _model()
    seen, res = reports_of(model.tokenizer, LINE)
    assert len(seen) >= 5
    assert [d for d, _ in seen] == sorted(d for d, _ in seen) and all(0 < d <= t for d, t in seen)
    assert res.ids == model.encode(LINE).ids


def test_one_long_line_cancels_inside_the_call() -> None:
    model = _model()
    assert cancel_at(model.tokenizer, LINE, 3) == 3
    # nothing half-done was kept: the same model still gives the full answer
    assert model.encode(LINE).ids == open_model(model.path).encode(LINE).ids
    reports: list[int] = []
    assert encode_chunked(model, LINE, report=lambda d, t: reports.append(d) is None and len(reports) < 2) is None
