"""A megabyte pasted into the editor: the window keeps answering and ends
with the full result; only the visible part of the editor is styled.

The stall bound here is generous on purpose (shared CI machines are slow);
``benchmarks/bench_gui.py`` measures the real figure.
"""

from __future__ import annotations

import time

from PySide6.QtCore import QTimer
from PySide6.QtGui import QGuiApplication

from tests.app.conftest import is_current, open_model_in

STALL_BOUND_S = 1.0


def big_text(size: int = 1_000_000) -> str:
    lines = [
        "The quick brown fox jumps over the lazy dog, and the dog sleeps on. 🙂",
        "Tokens of text: hello world 42; is a token of the world? Yes (mostly).",
        "Ελληνικά and 日本語 fall back to bytes in the test vocabulary, fine.",
        "\tindented with a tab: the lazy dog and the quick fox, again and again",
    ]
    out: list[str] = []
    n = 0
    i = 0
    while n < size:
        line = lines[i % len(lines)] + f" #{i}\n"
        out.append(line)
        n += len(line.encode("utf-8"))
        i += 1
    return "".join(out)


def test_megabyte_paste_stays_responsive(qtbot, window, spm_vocab, models) -> None:  # type: ignore[no-untyped-def]
    open_model_in(qtbot, window, spm_vocab)
    window.editor.clear()
    qtbot.waitUntil(lambda: is_current(window), timeout=10_000)
    text = big_text()
    QGuiApplication.clipboard().setText(text)

    gaps: list[float] = []
    last = [time.perf_counter()]

    def beat() -> None:
        now = time.perf_counter()
        gaps.append(now - last[0])
        last[0] = now

    heart = QTimer()
    heart.setInterval(5)
    heart.timeout.connect(beat)
    heart.start()
    t0 = time.perf_counter()
    window.editor.setFocus()
    QTimer.singleShot(0, window.editor.paste)  # pasted from inside the event loop, like Ctrl+V
    qtbot.waitUntil(lambda: is_current(window) and window.editor.token_text() == text, timeout=60_000)
    elapsed = time.perf_counter() - t0
    qtbot.wait(50)
    heart.stop()
    stall = max(gaps)
    print(f"\n1 MB paste: max event-loop stall {stall * 1000:.0f} ms, result after {elapsed:.2f} s, "
          f"{len(window.analysis):,} tokens")
    assert stall < STALL_BOUND_S

    a = window.analysis
    assert window.table.model().rowCount() == len(a) == len(models(spm_vocab).encode(text))
    lo, hi = window.editor.shown_spans
    assert 0 < hi - lo < 3000  # only the viewport is styled, not 250k spans
    # scrolling to the end styles the spans there
    sb = window.editor.verticalScrollBar()
    sb.setValue(sb.maximum())
    qtbot.waitUntil(lambda: window.editor.shown_spans[1] == len(a.span_start16), timeout=5_000)
    # selecting a late row scrolls the editor to its text
    window.table.selectRow(len(a) - 3)
    c = window.editor.textCursor()
    enc = a.encoding
    first, last = a.token_range(len(a) - 3)
    assert c.selectedText() == text[enc.starts[first]:enc.ends[last - 1]]
    # the chips view lays out the whole encoding (in its worker) without blocking
    window.tabs.setCurrentWidget(window.chips)
    qtbot.waitUntil(lambda: window.chips.row_count > 1000, timeout=20_000)
    window.chips.grab()
