"""A huge text that a UGM model cannot cut still shows progress and can be
cancelled midway (the reports and the cancel come from inside the one
plugin call, through core.gil.checkpoint).

A 10 MB paste into nomic-bert-moe is one uncuttable fragment because it is
longer than the model's exact-sum limit (``exact_chars``) allows cutting.
For a quick test the text is ~1 MB and the limit of the opened model is
lowered to the text's normalized length: the same branches run as for
10 MB (no cut points, normalizer then best path word by word in one
call); only the threshold moved. ``benchmarks/bench_latency.py --huge``
measures a real 10 MB text.
"""

from __future__ import annotations

from typing import Any, Callable

import pytest
from PySide6.QtCore import Qt

from tests.app.conftest import demo_vocab, hold_inside, is_current, open_model_in, real_vocab
from tokenprism.app.logic import analysis
from tokenprism.app.qt import workers
from tokenprism.core import Model
from tokenprism.core.tokenizer import cut_points

LINE = "The quick brown fox jumps over the lazy dog; Ünïcödé naïve café 東京, numbers 3.14159.\n"


@pytest.fixture
def ugm_vocab() -> str:
    path = real_vocab("nomic-bert-moe") or demo_vocab("ugm")
    if path is None:
        pytest.skip("no UGM model (reference vocabularies or demo model) opens here")
    return path


@pytest.fixture
def small_thresholds(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(analysis, "CHUNKED_MIN", 40_000)
    monkeypatch.setattr(analysis, "CHUNK_CHARS", 2_000)
    monkeypatch.setattr(workers, "PROGRESS_INTERVAL_S", 0.0)


def make_uncuttable(window: Any, text: str, monkeypatch: pytest.MonkeyPatch) -> None:
    tok = window.model_info.model.tokenizer
    monkeypatch.setattr(tok, "exact_chars", len(tok.normalized(text)))
    assert cut_points(tok, text, 1, len(text)) == []


def test_uncuttable_ugm_text_reports_progress_and_ends_exact(
        qtbot: Any, window: Any, ugm_vocab: str, small_thresholds: None, monkeypatch: pytest.MonkeyPatch,
        models: Callable[[str], Model]) -> None:
    open_model_in(qtbot, window, ugm_vocab)
    text = LINE * 3_000  # ~260 000 characters
    make_uncuttable(window, text, monkeypatch)
    reports: list[int] = []
    window.live.progress.connect(lambda d, t: reports.append(d))
    window.editor.setPlainText(text)
    qtbot.waitUntil(lambda: is_current(window), timeout=60_000)
    # one piece: without reports from inside the call there would be two
    inside = [d for d in reports if 0 < d < len(text)]
    assert len(inside) >= 4, f"progress reports: {reports}"
    assert reports == sorted(reports)
    # a model opened separately, with its own (real) limit, agrees exactly
    assert window.analysis.encoding.token_ids == models(ugm_vocab).encode(text).token_ids


def test_cancel_inside_an_uncuttable_ugm_text(qtbot: Any, window: Any, ugm_vocab: str, small_thresholds: None,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    open_model_in(qtbot, window, ugm_vocab)
    text = LINE * 12_000  # ~1 million characters, a second or more of one plugin call
    make_uncuttable(window, text, monkeypatch)
    clicked = hold_inside(monkeypatch)
    reports: list[int] = []
    window.live.progress.connect(lambda d, t: reports.append(d))
    with qtbot.waitSignal(window.live.progress, timeout=30_000,
                          check_params_cb=lambda d, t: 0 < d < t):  # a report from inside the call
        window.editor.setPlainText(text)
    with qtbot.waitSignal(window.live.cancelled, timeout=30_000):
        qtbot.mouseClick(window.stats.cancel_button, Qt.MouseButton.LeftButton)
        clicked.set()
    # stopped inside the one call: the worker never reported the end
    assert reports and max(reports) < len(text)
    assert window.live.paused and not window.live.busy
    assert window.analysis is None
    assert window.editor.token_text() == text
