"""How responsive the desktop app stays with a big text.

Pastes about 1 MB into the editor of a real window and measures, with a
5 ms heartbeat timer, the longest time the GUI event loop did not run
(the "stall"), from the paste until the full result is on screen; then does
the same for one keystroke typed into that megabyte, for scrolling, and for
switching to the chips view. Also times the GUI-thread parts on their own.

    python benchmarks/bench_gui.py [MODEL.gguf] [--size BYTES] [--json]

Without a model it uses llama-spm from the reference vocabularies. Runs
offscreen unless QT_QPA_PLATFORM is set.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Callable

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from PySide6.QtCore import QEventLoop, QSettings, QTimer  # noqa: E402
from PySide6.QtGui import QGuiApplication, QKeyEvent  # noqa: E402
from PySide6.QtWidgets import QApplication  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent

LINES = (
    "The quick brown fox jumps over the lazy dog, and the dog sleeps on. 🙂",
    "def tokenize(text: str) -> list[int]:  # code mixes with prose",
    "Ελληνικά, русский and 日本語 often fall back to bytes in small vocabularies.",
    "\tindented with a tab; numbers 3.14159 2024-06-01 1,000,000 and URLs http://x.y/z",
)


def sample_text(size: int) -> str:
    out: list[str] = []
    n = i = 0
    while n < size:
        line = f"{LINES[i % len(LINES)]} #{i}\n"
        out.append(line)
        n += len(line.encode("utf-8"))
        i += 1
    return "".join(out)


class Heartbeat:
    """Records the gaps between ticks of a short repeating timer."""

    def __init__(self, interval_ms: int = 5) -> None:
        self.timer = QTimer()
        self.timer.setInterval(interval_ms)
        self.timer.timeout.connect(self._beat)
        self.gaps: list[float] = []
        self._last = 0.0

    def _beat(self) -> None:
        now = time.perf_counter()
        self.gaps.append(now - self._last)
        self._last = now

    def start(self) -> None:
        self.gaps.clear()
        self._last = time.perf_counter()
        self.timer.start()

    def stop(self) -> float:
        self.timer.stop()
        return max(self.gaps, default=0.0) * 1000.0


def wait_until(cond: Callable[[], bool], timeout_s: float = 120.0) -> float:
    t0 = time.perf_counter()
    loop = QEventLoop()
    while not cond():
        if time.perf_counter() - t0 > timeout_s:
            raise TimeoutError("the window did not finish in time")
        loop.processEvents(QEventLoop.ProcessEventsFlag.WaitForMoreEvents, 5)
    return time.perf_counter() - t0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("model", nargs="?", default="")
    ap.add_argument("--size", type=int, default=1_000_000, help="bytes of text to paste")
    ap.add_argument("--json", action="store_true", help="print the results as JSON")
    args = ap.parse_args()
    if not args.model:
        from benchpaths import vocab_file

        args.model = str(vocab_file("llama-spm"))
    if not os.path.exists(args.model):
        print(f"bench_gui: {args.model}: no such file", file=sys.stderr)
        return 1

    with tempfile.TemporaryDirectory() as tmp:
        QSettings.setPath(QSettings.Format.IniFormat, QSettings.Scope.UserScope, tmp)
        app = QApplication(sys.argv[:1])
        from tokenprism.app.qt.main_window import TokenPrismWindow

        w = TokenPrismWindow(restore=False)
        w.resize(1400, 900)
        w.show()
        w.open_path(args.model)

        def current() -> bool:
            a = w.analysis
            return (a is not None and not w.live.busy and not w.editor.stale
                    and a.generation == w.live.generation)

        wait_until(lambda: w.model_info is not None and current())
        w.editor.clear()
        wait_until(current)
        text = sample_text(args.size)
        QGuiApplication.clipboard().setText(text)
        results: dict[str, object] = {"model": w.model_info.name if w.model_info else "",
                                      "kind": w.model_info.kind if w.model_info else "",
                                      "bytes": len(text.encode("utf-8")), "chars": len(text)}

        # GUI-thread costs of showing a result, timed on their own
        timings: dict[str, float] = {}
        orig = w._on_result

        def timed_result(a: object) -> None:
            t = time.perf_counter()
            orig(a)  # type: ignore[arg-type]
            timings["apply_result_ms"] = (time.perf_counter() - t) * 1000
        w.live.resultReady.disconnect(w._on_result)
        w.live.resultReady.connect(timed_result)

        hb = Heartbeat()
        hb.start()
        w.editor.setFocus()
        t_paste = {}

        def paste() -> None:
            t = time.perf_counter()
            w.editor.paste()
            t_paste["paste_ms"] = (time.perf_counter() - t) * 1000
        QTimer.singleShot(0, paste)
        results["paste_to_result_s"] = round(wait_until(lambda: current() and len(w.analysis or ()) > 1000), 3)
        results["paste_max_stall_ms"] = round(hb.stop(), 1)
        results["paste_ms"] = round(t_paste.get("paste_ms", 0), 1)
        results["apply_result_ms"] = round(timings.get("apply_result_ms", 0), 1)
        a = w.analysis
        results["tokens"] = len(a) if a else 0
        results["encode_ms"] = round(a.stats.encode_ms, 1) if a else 0
        results["analysis_ms"] = round(a.stats.total_ms - a.stats.encode_ms, 1) if a else 0

        # one keystroke in the middle of the megabyte
        c = w.editor.textCursor()
        c.setPosition(len(text) // 2)
        w.editor.setTextCursor(c)
        hb.start()
        QTimer.singleShot(0, lambda: QApplication.sendEvent(w.editor, QKeyEvent(
            QKeyEvent.Type.KeyPress, 0x41, QGuiApplication.keyboardModifiers(), "A")))
        results["keystroke_to_result_s"] = round(wait_until(
            lambda: current() and w.analysis is not None and len(w.analysis.text) == len(text) + 1), 3)
        results["keystroke_max_stall_ms"] = round(hb.stop(), 1)

        # scrolling through the document
        hb.start()
        sb = w.editor.verticalScrollBar()
        t = time.perf_counter()
        for k in range(1, 21):
            sb.setValue(sb.maximum() * k // 20)
            app.processEvents()
        results["scroll_step_ms"] = round((time.perf_counter() - t) * 1000 / 20, 1)
        hb.stop()

        # the chips view over the whole encoding
        hb.start()
        w.tabs.setCurrentWidget(w.chips)
        results["chips_layout_s"] = round(wait_until(lambda: w.chips.row_count > 1), 3)
        results["chips_max_stall_ms"] = round(hb.stop(), 1)
        w.close()
        app.processEvents()

    if args.json:
        print(json.dumps(results, indent=1))
    else:
        for k, v in results.items():
            print(f"{k:>24}: {v}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
