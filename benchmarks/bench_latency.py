"""Keystroke → repaint latency of the desktop app, and a 10 MB text.

For each model and document size, a real window (offscreen) shows the
document; then characters are typed one at a time in the middle of it, and
each time the clock runs from the key press until the editor and the token
table show the new tokens and have repainted (their paint events are forced
synchronously, so painting is counted). Median and p95 over the keystrokes,
with incremental retokenization on and off (full: every keystroke encodes
the whole text).

    python benchmarks/bench_latency.py [--sizes 10000,100000] [--keys 25] [--models ...] [--json]
    python benchmarks/bench_latency.py --huge [--huge-size 10000000]

``--huge`` pastes a 10 MB text instead and reports the time until its
tokens are on screen, the longest stall of the event loop meanwhile (and
how many passed 100 ms, with the machine's load average: on a busy machine
the scheduler alone makes some), how many progress reports arrived, and
the peak RSS of the process. ``--replace`` then also replaces that text's
tokens, which frees millions of objects: another huge text pasted over it,
select all + delete, a text file opened over it, a switch to the next
model of ``--models``; the same figures for each step.
Runs offscreen unless QT_QPA_PLATFORM is set.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Callable

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from PySide6.QtCore import QEvent, QEventLoop, QObject, QSettings, Qt, QTimer  # noqa: E402
from PySide6.QtGui import QGuiApplication, QKeyEvent  # noqa: E402
from PySide6.QtWidgets import QApplication  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_gui import Heartbeat, sample_text  # noqa: E402
from benchpaths import vocab_file  # noqa: E402


def _guard_bools() -> None:
    """PySide6 6.12.0 on Python < 3.12 also drops a reference to ``True`` or
    ``False`` on every ``signal.emit()`` (which returns a bool); thousands of
    keystrokes then abort with "bool_dealloc". Same cure as app/qt/qt_compat.py
    gives ``None``."""
    import ctypes

    from PySide6.QtCore import QObject

    if sys.version_info >= (3, 12) or sys.implementation.name != "cpython":
        return
    probe = QObject()
    before = sys.getrefcount(True) + sys.getrefcount(False)
    for _ in range(16):
        probe.objectNameChanged.emit("x")
    if sys.getrefcount(True) + sys.getrefcount(False) <= before - 16:
        for b in (True, False):
            ctypes.c_ssize_t.from_address(id(b)).value += 1 << 60


_guard_bools()

DEFAULT_MODELS = ("demo:spm", "demo:bpe", "demo:ugm", "demo:wpm", "llama-spm", "gpt-2", "llama-bpe",
                  "nomic-bert-moe", "bert-bge", "gemma-4")


def model_path(name: str) -> str | None:
    if name.startswith("demo:"):
        from tokenprism.core.library.resources import demo_models

        p = demo_models().get(name[5:])
        return str(p) if p else None
    p = vocab_file(name)
    return str(p) if p.exists() else None


def wait_until(cond: Callable[[], bool], timeout_s: float = 300.0) -> float:
    t0 = time.perf_counter()
    loop = QEventLoop()
    while not cond():
        if time.perf_counter() - t0 > timeout_s:
            raise TimeoutError("the window did not finish in time")
        loop.processEvents(QEventLoop.ProcessEventsFlag.AllEvents, 1)
    return time.perf_counter() - t0


def is_current(w: Any) -> bool:
    a = w.analysis
    return (a is not None and not w.live.busy and not w.editor.stale and a.info is w.model_info
            and a.generation == w.live.generation)


def press(widget: Any, ch: str) -> None:
    key, t = (Qt.Key.Key_Return, "\r") if ch == "\n" else (Qt.Key.Key_unknown, ch)
    for kind in (QEvent.Type.KeyPress, QEvent.Type.KeyRelease):
        QApplication.sendEvent(widget, QKeyEvent(kind, key, Qt.KeyboardModifier.NoModifier, t))


def pct(values: list[float], q: float) -> float:
    s = sorted(values)
    return s[min(len(s) - 1, int(round(q * (len(s) - 1))))]


def open_in(w: Any, path: str) -> None:
    w.open_path(path)
    wait_until(lambda: w.model_info is not None and w.model_info.path == os.path.abspath(path) and is_current(w))


class PaintWatch(QObject):
    """Counts paint events of a widget (the event filter sees each one)."""

    def __init__(self, widget: Any) -> None:
        super().__init__()
        self.count = 0
        widget.installEventFilter(self)

    def eventFilter(self, obj: Any, event: Any) -> bool:
        if event.type() == QEvent.Type.Paint:
            self.count += 1
        return False


def measure_typing(w: Any, text: str, keys: int, incremental: bool) -> list[float]:
    w.live.incremental = incremental
    w.editor.setPlainText(text)
    wait_until(lambda: is_current(w))
    c = w.editor.textCursor()
    c.setPosition(len(text) // 2)
    w.editor.setTextCursor(c)
    w.editor.centerCursor()
    wait_until(lambda: is_current(w))
    out: list[float] = []
    ed, tb = PaintWatch(w.editor.viewport()), PaintWatch(w.table.viewport())

    def applied(_a: object) -> None:  # connected after the window's own slot
        ed.count = tb.count = 0

    w.live.resultReady.connect(applied)
    worker_ms: list[float] = []
    gui_cpu_ms: list[float] = []
    unpainted: list[int] = []
    for k in range(keys + 2):
        ch = "abc xyz.\n"[k % 9]
        t0 = time.perf_counter()
        c0 = time.thread_time()
        press(w.editor, ch)
        wait_until(lambda: is_current(w))
        # then until the editor and the table have painted the result (the
        # first paint after it is what the user sees)
        t_res = time.perf_counter()
        while (ed.count == 0 or tb.count == 0) and time.perf_counter() - t_res < 0.2:
            QApplication.processEvents(QEventLoop.ProcessEventsFlag.AllEvents, 1)
        if ed.count == 0 or tb.count == 0:
            # no repaint came: paint now, so the time still includes one,
            # and count the keystroke as one the window left unpainted
            w.editor.viewport().repaint()
            w.table.viewport().repaint()
            if k >= 2:
                unpainted.append(k)
        dt = (time.perf_counter() - t0) * 1000
        cpu = (time.thread_time() - c0) * 1000
        if w.analysis is not None and k >= 2:
            worker_ms.append(w.analysis.stats.total_ms)
        if k >= 2:  # the first keystrokes warm caches
            out.append(dt)
            gui_cpu_ms.append(cpu)
    w.live.resultReady.disconnect(applied)
    ed.deleteLater()
    tb.deleteLater()
    measure_typing.tokenize_ms = statistics.median(worker_ms) if worker_ms else 0.0  # type: ignore[attr-defined]
    measure_typing.unpainted = len(unpainted)  # type: ignore[attr-defined]
    # the GUI thread's own CPU time: what a busy machine's scheduler adds to
    # the wall time is not in it, so runs on a loaded machine still compare
    measure_typing.gui_cpu_ms = statistics.median(gui_cpu_ms) if gui_cpu_ms else 0.0  # type: ignore[attr-defined]
    return out


def shown_window() -> Any:
    """A real main window (offscreen), not reading or writing the user's settings."""
    from tokenprism.app.qt.main_window import TokenPrismWindow

    w = TokenPrismWindow(restore=False)
    w.resize(1400, 900)
    w.show()
    return w


def models_found(names: list[str]) -> list[tuple[str, str]]:
    """(name, path) of the models that exist; the others are reported and skipped."""
    found: list[tuple[str, str]] = []
    for name in names:
        path = model_path(name)
        if path is None:
            print(f"skipping {name}: not found", file=sys.stderr)
        else:
            found.append((name, path))
    return found


def run_latency(args: argparse.Namespace) -> list[dict[str, Any]]:
    w = shown_window()
    rows: list[dict[str, Any]] = []
    for name, path in models_found(args.models):
        open_in(w, path)
        for size in args.sizes:
            text = sample_text(size)
            row: dict[str, Any] = {"model": name, "kind": w.model_info.kind if w.model_info else "",
                                   "bytes": size, "tokens": 0}
            for mode, inc in (("full", False), ("incremental", True)):
                times = measure_typing(w, text, args.keys, inc)
                row[f"{mode}_median_ms"] = round(statistics.median(times), 1)
                row[f"{mode}_p95_ms"] = round(pct(times, 0.95), 1)
                row[f"{mode}_tokenize_ms"] = round(measure_typing.tokenize_ms, 1)  # type: ignore[attr-defined]
                row[f"{mode}_unpainted"] = measure_typing.unpainted  # type: ignore[attr-defined]
                row[f"{mode}_gui_cpu_ms"] = round(measure_typing.gui_cpu_ms, 1)  # type: ignore[attr-defined]
            row["tokens"] = len(w.analysis) if w.analysis else 0
            rows.append(row)
            print(f"{name:16} {row['kind']:4} {size:>7,} B {row['tokens']:>7,} tok | full median "
                  f"{row['full_median_ms']:7.1f} p95 {row['full_p95_ms']:7.1f} | incremental median "
                  f"{row['incremental_median_ms']:6.1f} p95 {row['incremental_p95_ms']:6.1f} ms | tokenize+analysis "
                  f"{row['full_tokenize_ms']:.1f} / {row['incremental_tokenize_ms']:.1f} ms | GUI thread CPU "
                  f"{row['full_gui_cpu_ms']:.1f} / {row['incremental_gui_cpu_ms']:.1f} ms"
                  + (f" | unpainted {row['full_unpainted']}/{row['incremental_unpainted']}"
                     if row["full_unpainted"] or row["incremental_unpainted"] else ""), flush=True)
    w.shutdown()
    w.close()
    return rows


def run_huge(args: argparse.Namespace, tmp_dir: str) -> list[dict[str, Any]]:
    w = shown_window()
    rows: list[dict[str, Any]] = []
    for name, path in models_found(args.models):
        open_in(w, path)
        w.editor.clear()
        wait_until(lambda: is_current(w))
        text = sample_text(args.huge_size)
        QGuiApplication.clipboard().setText(text)
        reports: list[tuple[int, int]] = []
        w.live.progress.connect(lambda d, t: reports.append((d, t)))
        hb = Heartbeat()
        hb.start()
        w.editor.setFocus()
        t0 = time.perf_counter()
        paste_ms: list[float] = []

        def paste() -> None:
            t = time.perf_counter()
            w.editor.paste()  # Qt lays out 10 MB here, on the GUI thread
            paste_ms.append((time.perf_counter() - t) * 1000)

        QTimer.singleShot(0, paste)
        wait_until(lambda: bool(paste_ms))
        hb.start()  # stalls after the paste: what TokenPrism itself does
        wait_until(lambda: is_current(w) and w.analysis is not None and len(w.analysis.text) == len(text))
        w.editor.viewport().repaint()
        w.table.viewport().repaint()
        elapsed = time.perf_counter() - t0
        stall = hb.stop()
        # the longest stall alone is at the mercy of a busy machine's
        # scheduler; how many stalls passed 100 ms tells a pattern from a fluke
        long_stalls = sum(1 for g in hb.gaps if g > 0.1)
        a = w.analysis
        rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        row = {"model": name, "kind": a.info.kind if a else "", "bytes": len(text.encode("utf-8")),
               "tokens": len(a) if a else 0, "paste_to_tokens_s": round(elapsed, 2),
               "encode_s": round(a.stats.encode_ms / 1000, 2) if a else 0,
               "paste_ms": round(paste_ms[0]), "max_stall_after_paste_ms": round(stall, 0),
               "stalls_over_100ms": long_stalls, "load_avg": round(os.getloadavg()[0], 1),
               "progress_reports": len(reports),
               "peak_rss_mb": round(rss_mb, 0)}
        rows.append(row)
        print(json.dumps(row), flush=True)
        w.live.progress.disconnect()
        if args.replace:
            for step in replace_steps(w, name, text, args.models, tmp_dir):
                rows.append(step)
                print(json.dumps(step), flush=True)
        w.editor.clear()
        wait_until(lambda: is_current(w))
    w.shutdown()
    w.close()
    return rows


def _timed_step(w: Any, action: Callable[[], None], done: Callable[[], bool], settle_s: float = 0.5) -> dict[str, Any]:
    """Run ``action`` from inside the event loop (like a key or menu
    command), then wait for ``done``; the longest event-loop stall until
    ``settle_s`` after ``done`` (work deferred past the result, such as
    freeing the old one, counts too), without the time spent in Qt's own
    replacement of the document's text (the action's call, and any
    ``setPlainText`` meanwhile: not TokenPrism's code)."""
    beats: list[float] = []
    heart = QTimer()
    heart.setInterval(5)
    heart.timeout.connect(lambda: beats.append(time.perf_counter()))
    qt: list[tuple[float, float]] = []
    ed = w.editor
    plain = ed.setPlainText

    def timed_plain(text: str) -> None:
        t = time.perf_counter()
        plain(text)
        qt.append((t, time.perf_counter()))

    def run() -> None:
        t = time.perf_counter()
        action()
        qt.append((t, time.perf_counter()))

    ed.setPlainText = timed_plain
    try:
        t0 = time.perf_counter()
        beats.append(t0)
        heart.start()
        QTimer.singleShot(0, run)
        wait_until(lambda: bool(qt))
        wait_until(done)
        elapsed = time.perf_counter() - t0
        t1 = time.perf_counter()
        wait_until(lambda: time.perf_counter() - t1 > settle_s)
        heart.stop()
    finally:
        del ed.setPlainText
    own = [(b - a) - sum(max(0.0, min(b, q1) - max(a, q0)) for q0, q1 in qt) for a, b in zip(beats, beats[1:])]
    return {"qt_ms": round(sum(q1 - q0 for q0, q1 in qt) * 1000), "to_tokens_s": round(elapsed, 2),
            "max_stall_ms": round(max(own, default=0.0) * 1000),
            "stalls_over_100ms": sum(1 for g in own if g > 0.1), "load_avg": round(os.getloadavg()[0], 1)}


def replace_steps(w: Any, name: str, text: str, models: list[str], tmp_dir: str) -> list[dict[str, Any]]:
    """What happens to the event loop when a huge text's tokens are
    replaced or dropped: another huge text pasted over it (select all +
    paste), select all + delete, a text file opened over it, and a switch
    to another model while it is shown."""
    rows: list[dict[str, Any]] = []
    half = len(text) // 2
    cut = text.rfind("\n", 0, half) + 1
    other = text[cut:] + text[:cut]  # as big, and different from the first character on

    def shows(t: str) -> Callable[[], bool]:
        return lambda: is_current(w) and w.analysis is not None and w.analysis.text == t

    def select_all_then(f: Callable[[], None]) -> Callable[[], None]:
        def act() -> None:
            w.editor.setFocus()
            w.editor.selectAll()
            f()
        return act

    QGuiApplication.clipboard().setText(other)
    rows.append({"model": name, "step": "paste over", **_timed_step(w, select_all_then(w.editor.paste),
                                                                     shows(other))})
    rows.append({"model": name, "step": "select all + delete",
                 **_timed_step(w, select_all_then(lambda: w.editor.textCursor().removeSelectedText()),
                               shows(""))})
    # the next steps replace a huge text again: show one first
    w.editor.setPlainText(text)
    wait_until(shows(text))
    path = os.path.join(tmp_dir, "other.txt")
    Path(path).write_text(other, encoding="utf-8")
    w.editor.document().setModified(False)
    rows.append({"model": name, "step": "open text file",
                 **_timed_step(w, lambda: w.text_files.open_path(path, confirmed=True), shows(other))})
    names = [m for m in models if m != name] or [name]
    target = model_path(names[0])
    if target is not None:
        info = w.model_info

        def switched() -> bool:
            return (w.model_info is not info and w.analysis is not None and w.analysis.info is w.model_info
                    and shows(other)())

        row = _timed_step(w, lambda: w.open_path(target), switched)
        rows.append({"model": name, "step": f"switch to {names[0]}", **row})
        open_in(w, model_path(name) or target)
    return rows


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", default="10000,100000", help="document sizes in bytes, comma-separated")
    ap.add_argument("--keys", type=int, default=25, help="keystrokes measured per case")
    ap.add_argument("--models", default=",".join(DEFAULT_MODELS),
                    help="demo:KIND or reference vocab names, comma-separated")
    ap.add_argument("--huge", action="store_true", help="measure a 10 MB paste instead")
    ap.add_argument("--huge-size", type=int, default=10_000_000)
    ap.add_argument("--replace", action="store_true",
                    help="with --huge: then replace the huge text (paste over, delete, open a file, switch model)")
    ap.add_argument("--free-inline", action="store_true",
                    help="free replaced tokens where they fall, as before app/logic/disposal.py (for comparison)")
    ap.add_argument("--json", metavar="FILE", help="also write the rows as JSON")
    args = ap.parse_args()
    args.sizes = [int(s) for s in args.sizes.split(",") if s]
    args.models = [m for m in args.models.split(",") if m]
    if args.free_inline:
        from tokenprism.app.logic import disposal

        disposal.RETIRE_MIN = sys.maxsize
    with tempfile.TemporaryDirectory() as tmp:
        QSettings.setPath(QSettings.Format.IniFormat, QSettings.Scope.UserScope, tmp)
        app = QApplication(sys.argv[:1])
        rows = run_huge(args, tmp) if args.huge else run_latency(args)
        app.processEvents()
        if args.json:
            Path(args.json).write_text(json.dumps(rows, indent=1))
        sys.stdout.flush()
        os._exit(0)  # skips a PySide6 crash at interpreter exit (see app/qt/qt_compat.py)
    return 0


if __name__ == "__main__":
    sys.exit(main())
