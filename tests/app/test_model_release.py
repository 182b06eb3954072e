"""Switching models gives the old model's memory back.

A 4M-token vocabulary took 1.66 GB that stayed after switching to a small
model. What kept it: the Vocabulary browser's index build for the old model
ran to its end (about a minute and a half for 4M tokens) holding the model,
and glibc kept the freed heap for itself. Now the build stops as soon as
the browser wants another model, and once the old model is freed the heap
is trimmed (``disposal.trim_when_freed``)."""

from __future__ import annotations

import gc
import os
import sys
import threading
import time
import weakref
from pathlib import Path

import pytest

from PySide6.QtGui import QTextCursor

from tests.app.conftest import RESULT_TIMEOUT_MS, is_current, open_model_in, type_text
from tests.ggufmaker import write_vocab_gguf

SPECIALS = ["<unk>", "<s>", "</s>"] + [f"<0x{b:02X}>" for b in range(256)]
SPECIAL_TYPES = [2, 3, 3] + [6] * 256


def _write_spm(path: Path, n: int) -> str:
    """An SPM vocabulary of ``n`` tokens (byte fallback, made-up pieces)."""
    k = n - len(SPECIALS)
    tokens = SPECIALS + [f"\u2581w{i}" if i % 3 else f"x{i}y" for i in range(k)]
    return str(write_vocab_gguf(
        path, tokens, "llama", scores=[0.0] * len(SPECIALS) + [-float(i) for i in range(k)],
        types=SPECIAL_TYPES + [1] * k, name=f"big test vocab {n}",
        extra={"tokenizer.ggml.unknown_token_id": 0, "tokenizer.ggml.bos_token_id": 1,
               "tokenizer.ggml.eos_token_id": 2}))


@pytest.fixture(scope="module")
def big_vocab(tmp_path_factory: pytest.TempPathFactory) -> str:
    from tokenprism.core.library.vocab_query import BUILD_STEP

    return _write_spm(tmp_path_factory.mktemp("big") / "big.gguf", 2 * BUILD_STEP + 1000)


def _switch_and_wait_freed(qtbot, window, path: str, timeout_ms: int = 5000) -> None:  # type: ignore[no-untyped-def]
    old_model = weakref.ref(window.model_info.model)
    old_info = weakref.ref(window.model_info)
    open_model_in(qtbot, window, path)
    # by reference counting alone: a model kept by a cycle would stay, since
    # every open freezes what is alive for the cyclic collector (gc.freeze)
    try:
        qtbot.waitUntil(lambda: old_model() is None and old_info() is None, timeout=timeout_ms)
    except Exception:
        held = old_model() or old_info()
        raise AssertionError(f"the old model is still held: {_holders(held)}") from None


def _holders(obj: object, depth: int = 4) -> list[str]:
    """Chains of objects that refer to ``obj`` (for the failure message)."""
    import inspect

    gc.unfreeze()  # frozen objects are invisible to get_referrers (a failing test only)
    gc.collect()
    out: list[str] = []
    seen: set[int] = set()

    def walk(o: object, chain: str, d: int) -> None:
        for r in gc.get_referrers(o):
            if id(r) in seen or inspect.isframe(r) and r.f_code.co_name in ("walk", "_holders"):
                continue
            seen.add(id(r))
            what = (f"frame {r.f_code.co_qualname}:{r.f_lineno}" if inspect.isframe(r)
                    else f"function {r.__qualname__}" if inspect.isfunction(r)
                    else f"dict({', '.join(map(str, list(r)[:6]))})" if isinstance(r, dict)
                    else type(r).__qualname__)
            link = f"{chain} <- {what}"
            if d == 1 or inspect.isframe(r):
                out.append(link)
            else:
                walk(r, link, d - 1)

    walk(obj, type(obj).__name__, depth)
    return out


def test_the_old_model_is_freed_after_using_every_view(window, qtbot, big_vocab, spm_vocab) -> None:  # type: ignore[no-untyped-def]
    from PySide6.QtWidgets import QDockWidget

    window.tabs.setCurrentWidget(window.chips)  # its widths cache has a float per token of the model
    open_model_in(qtbot, window, big_vocab)
    window.vocab_dock.show()
    window.findChild(QDockWidget, "metadataDock").show()
    qtbot.waitUntil(lambda: window.vocab_browser.table_model.index_data is not None, timeout=60_000)
    window.chat_dock.show()  # its rendering's encoding holds the model, also once hidden
    qtbot.waitUntil(lambda: window.chat_panel.main.view is not None and not window.chat_panel.busy,
                    timeout=RESULT_TIMEOUT_MS)
    window.chat_dock.hide()
    window.editor.setFocus()
    window.editor.moveCursor(QTextCursor.MoveOperation.End)
    type_text(window.editor, " w12 x15y ż🙂")
    qtbot.waitUntil(lambda: is_current(window) and window.analysis.text.endswith("🙂"), timeout=RESULT_TIMEOUT_MS)
    window.table.select_tokens(1, 3)
    assert window.chips._width_cache.size == len(window.model_info.model)
    _switch_and_wait_freed(qtbot, window, spm_vocab)
    assert window.chips._width_cache.size in (0, len(window.model_info.model))


def test_a_running_vocabulary_build_lets_the_old_model_go(window, qtbot, big_vocab, spm_vocab,
                                                            monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """The browser starts indexing the big model, the user switches: the
    build stops at its next step instead of running on (here it would take
    a minute more) with the old model in hand."""
    from tokenprism.core.model import Model
    from tokenprism.core.library.vocab_query import BUILD_STEP

    reached = threading.Event()
    switched = threading.Event()
    real = Model.display_piece
    big_len = 2 * BUILD_STEP + 1000

    def slow_display_piece(self: Model, token_id: int) -> str:
        if len(self) == big_len:
            if token_id == BUILD_STEP - 1:  # end of the first step: wait for the switch
                reached.set()
                switched.wait(20)
            elif token_id >= BUILD_STEP:
                time.sleep(0.001)  # the rest of the build: ~1 minute
        return real(self, token_id)

    monkeypatch.setattr(Model, "display_piece", slow_display_piece)
    open_model_in(qtbot, window, big_vocab)
    window.vocab_dock.show()
    qtbot.waitUntil(reached.is_set, timeout=20_000)
    old_model = weakref.ref(window.model_info.model)
    open_model_in(qtbot, window, spm_vocab)
    switched.set()
    qtbot.waitUntil(lambda: old_model() is None, timeout=5000)
    # and the new model's vocabulary is not kept waiting behind the old build
    qtbot.waitUntil(lambda: window.vocab_browser.table_model.index_data is not None
                    and window.vocab_browser.table_model.index_data.model is window.model_info.model,
                    timeout=10_000)
    assert not window.vocab_browser.error.isVisible()


def test_the_heap_is_trimmed_once_the_old_model_is_freed(window, qtbot, big_vocab, spm_vocab) -> None:  # type: ignore[no-untyped-def]
    from tokenprism.app.logic import disposal

    open_model_in(qtbot, window, big_vocab)
    before = disposal.trims
    _switch_and_wait_freed(qtbot, window, spm_vocab)
    qtbot.waitUntil(lambda: disposal.trims > before and not disposal.watching(), timeout=5000)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's malloc")
def test_the_window_maps_large_blocks_apart(window) -> None:  # type: ignore[no-untyped-def]
    from tokenprism.core import memory

    assert memory._mapped


def _rss_mb() -> float:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    raise AssertionError("no VmRSS")


@pytest.mark.slow
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc/self/status; trims glibc's heap")
def test_memory_goes_back_after_switching_from_a_large_vocabulary(window, qtbot, spm_vocab,
                                                                   tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """RSS with a 600k-token vocabulary open, then after switching to a
    small one: most of what the large one took is given back (measured: 7-10%
    of it stayed, fragments, before the piece index was made on first use,
    8-17% since, once 17% in CI; 3-5% since blocks of 1 MB and more are
    mapped apart, ``core.memory.map_large_blocks``; 20-22% stayed before the
    heap was trimmed)."""
    from tokenprism.app.logic import disposal

    large = _write_spm(tmp_path / "large.gguf", 600_000)
    open_model_in(qtbot, window, spm_vocab)
    gc.collect()
    small_mb = _rss_mb()
    open_model_in(qtbot, window, large)
    window.editor.setFocus()
    window.editor.moveCursor(QTextCursor.MoveOperation.End)
    type_text(window.editor, " w12 x15y")
    qtbot.waitUntil(lambda: is_current(window) and window.analysis.text.endswith("x15y"), timeout=RESULT_TIMEOUT_MS)
    large_mb = _rss_mb()
    trims = disposal.trims
    _switch_and_wait_freed(qtbot, window, spm_vocab, timeout_ms=20_000)
    qtbot.waitUntil(lambda: disposal.trims > trims and not disposal.watching(), timeout=10_000)
    qtbot.wait(200)
    after_mb = _rss_mb()
    grown = large_mb - small_mb
    # (~98 MB since open reads the pieces' facts from their undecoded bytes;
    # enough that what stays after the switch is measured, not noise)
    assert grown > 60, f"the large vocabulary took only {grown:.0f} MB"
    kept = (after_mb - small_mb) / grown
    print(f"RSS small {small_mb:.0f} MB, large {large_mb:.0f} MB, after switching back {after_mb:.0f} MB "
          f"({kept:.0%} kept)")
    assert kept < 0.10, f"{after_mb - small_mb:.0f} of {grown:.0f} MB still held after switching"
