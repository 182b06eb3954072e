"""Which retokenizations run inline on the GUI thread: only those whose
own estimated cost is small, never a big edit, whatever the last job took."""

from __future__ import annotations

import dataclasses
import threading
from typing import Any, Callable

import pytest

from tests.app.conftest import is_current, open_model_in, type_text, wait_result
from tokenprism.app.qt import workers
from tokenprism.core import Model

LINE = "The quick brown fox jumps over the lazy dog; numbers 3.14 and words.\n"


@pytest.fixture
def threads(monkeypatch: pytest.MonkeyPatch) -> list[bool]:
    """For every tokenization: did it run on the GUI thread?"""
    seen: list[bool] = []
    real = workers.tokenize

    def spy(*args: Any, **kwargs: Any) -> Any:
        seen.append(threading.current_thread() is threading.main_thread())
        return real(*args, **kwargs)

    monkeypatch.setattr(workers, "tokenize", spy)
    return seen


def test_small_edit_inline_big_edits_never(qtbot: Any, window: Any, spm_vocab: str, threads: list[bool],
                                           models: Callable[[str], Model]) -> None:
    window.editor.setPlainText(LINE * 40)  # ~2800 characters: above the incremental minimum
    open_model_in(qtbot, window, spm_vocab)
    live = window.live
    assert live._encode_rate is not None  # measured on the model's first (whole) encode
    # pretend the machine is extremely fast: only the size rules can keep a job off the GUI thread
    live._encode_rate = live._splice_rate = 1e9
    window.editor.moveCursor(window.editor.textCursor().MoveOperation.End)
    threads.clear()
    type_text(window.editor, "x")
    assert threads == [True] and live.inline_jobs == 1  # a keystroke: inline, result at once
    assert is_current(window)
    # a paste of 1000 characters right after that very quick job: the worker
    threads.clear()
    a = wait_result(qtbot, window, lambda: window.editor.insertPlainText("word " * 200))
    assert threads and not any(threads) and live.inline_jobs == 1
    assert list(a.encoding.token_ids) == list(models(spm_vocab).encode(a.text).token_ids)


def test_keystroke_in_long_text_goes_to_worker(qtbot: Any, window: Any, spm_vocab: str,
                                               threads: list[bool]) -> None:
    window.editor.setPlainText(LINE * 3000)  # 200k characters
    open_model_in(qtbot, window, spm_vocab)
    live = window.live
    rate = live._encode_rate
    assert rate is not None
    base = live.last_result
    assert base is not None
    est, worst = live.inline_cost_ms(base, base.text + "x")
    assert worst == pytest.approx(len(base.text + "x") / rate)
    assert est > workers.INLINE_BUDGET_MS  # copying 200k characters of spans is no keystroke's job
    window.editor.moveCursor(window.editor.textCursor().MoveOperation.End)
    threads.clear()
    before = live.inline_jobs
    wait_result(qtbot, window, lambda: type_text(window.editor, "x"))
    assert threads and not any(threads) and live.inline_jobs == before


def test_encode_rate_is_measured_warm(qtbot: Any, window: Any, spm_vocab: str, threads: list[bool],
                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """A model's first encode builds its tables on first use, so it is
    slow for its size (here made 200 ms slower still): the rate that
    decides which keystrokes run inline is measured again after it, warm.
    Taken from the first encode, it kept every keystroke in a text of a
    few thousand characters off the GUI thread."""
    real = workers.tokenize
    first = [True]

    def cold_first(*args: Any, **kwargs: Any) -> Any:
        result = real(*args, **kwargs)
        if first[0]:
            first[0] = False
            slow = dataclasses.replace(result.stats, encode_ms=result.stats.encode_ms + 200.0)
            result = dataclasses.replace(result, stats=slow)
        return result

    monkeypatch.setattr(workers, "tokenize", cold_first)
    window.editor.setPlainText(LINE * 40)  # ~2800 characters: above the incremental minimum
    open_model_in(qtbot, window, spm_vocab)
    live = window.live
    cold = len(LINE * 40) / 200.0
    assert live._encode_rate is not None and live._encode_rate > 10 * cold
    live._splice_rate = 1e9  # (copying spans: not what this is about)
    window.editor.moveCursor(window.editor.textCursor().MoveOperation.End)
    threads.clear()
    type_text(window.editor, "x")
    assert threads == [True] and live.inline_jobs == 1 and is_current(window)
