"""Render the main window to PNG files, one per tokenizer type, for the README.

    python -m tokenprism.app.qt.screenshots [OUT_DIR] [--scale 2] [--model KIND=PATH ...]

Without ``--model`` it uses the bundled demo models (SPM, BPE, UGM, WPM) and
the welcome text. Writes ``<kind>.png`` (editor and token table),
``chips.png`` (the chips view), ``dark.png`` (a dark palette) and, with a
UGM model, ``normalized.png`` (the text as that model sees it) into
OUT_DIR; ``--compare`` writes ``compare.png``, ``--chat`` ``chat.png`` and
``--check GGUF SOURCE`` ``check.png`` (default ``docs/screenshots``). Runs offscreen unless
``QT_QPA_PLATFORM`` is set, and never touches the user's settings.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path
from contextlib import contextmanager
from typing import Callable, Iterator

from PySide6.QtCore import QSettings
from PySide6.QtGui import QColor, QPalette
from PySide6.QtWidgets import QApplication

from . import qt_compat  # noqa: F401  (guards against a PySide6 bug; see there)
from ..logic.analysis import Style
from ..logic.demo import demo_models, welcome_text
from .main_window import TokenPrismWindow, app_icon
from .settings import AppSettings

DEFAULT_OUT = Path(__file__).resolve().parents[2] / "docs" / "screenshots"


def wait_for(cond: Callable[[], bool], timeout_s: float = 60.0) -> None:
    """Run the event loop until ``cond()`` holds."""
    app = QApplication.instance()
    assert app is not None
    end = time.monotonic() + timeout_s
    while not cond():
        if time.monotonic() > end:
            raise TimeoutError("the window did not show the tokens in time")
        app.processEvents()
        time.sleep(0.005)


def dark_palette() -> QPalette:
    """A plain dark palette (what a dark desktop theme hands to Qt)."""
    p = QPalette()
    roles = {
        QPalette.ColorRole.Window: "#2b2d30", QPalette.ColorRole.WindowText: "#dfe1e5",
        QPalette.ColorRole.Base: "#1e1f22", QPalette.ColorRole.AlternateBase: "#26282b",
        QPalette.ColorRole.Text: "#dfe1e5", QPalette.ColorRole.Button: "#393b40",
        QPalette.ColorRole.ButtonText: "#dfe1e5", QPalette.ColorRole.Highlight: "#2f65ca",
        QPalette.ColorRole.HighlightedText: "#ffffff", QPalette.ColorRole.ToolTipBase: "#393b40",
        QPalette.ColorRole.ToolTipText: "#dfe1e5", QPalette.ColorRole.PlaceholderText: "#868a91",
        QPalette.ColorRole.Light: "#4e5157", QPalette.ColorRole.Midlight: "#43454a",
        QPalette.ColorRole.Mid: "#393b40", QPalette.ColorRole.Dark: "#1e1f22",
        QPalette.ColorRole.Shadow: "#000000", QPalette.ColorRole.Link: "#589df6",
    }
    for role, color in roles.items():
        p.setColor(role, QColor(color))
    for role in (QPalette.ColorRole.Text, QPalette.ColorRole.WindowText, QPalette.ColorRole.ButtonText):
        p.setColor(QPalette.ColorGroup.Disabled, role, QColor("#6f737a"))
    return p


def _ready(window: TokenPrismWindow) -> bool:
    a = window.analysis
    return (a is not None and not window.loader.busy and not window.live.busy and not window.editor.stale
            and a.info is window.model_info and a.generation == window.live.generation)


def _pick_token(window: TokenPrismWindow) -> None:
    """Select something worth showing: a byte-fallback group if there is
    one, else an unknown token, else a word split into several tokens."""
    a = window.analysis
    assert a is not None
    sizes = a.span_last - a.span_first
    for hits in (((a.span_style == Style.BYTES) & (sizes > 1)).nonzero()[0],
                 (a.span_style == Style.UNKNOWN).nonzero()[0]):
        if len(hits):
            first = int(a.span_first[hits[0]])
            window.table.selectRow(first)
            window.table.scrollTo(window.table.model().index(first, 0),
                                  window.table.ScrollHint.PositionAtCenter)
            return
    text = a.text
    i = a.encoding.token_at(max(text.find("tokenizer"), 0))
    if i >= 0:
        window.table.selectRow(i)


def _fit_table(window: TokenPrismWindow) -> None:
    """Give the token table the width of all its columns (the Chars and
    Bytes spans last), the editor the rest."""
    t = window.table
    need = (t.horizontalHeader().length() + t.verticalHeader().width() + 2 * t.frameWidth()
            + t.verticalScrollBar().sizeHint().width() + 6)
    total = sum(window.splitter.sizes())
    right = min(need, total // 2)
    window.splitter.setSizes([total - right, right])


NORMALIZED_TEXT = ("The ﬁrst ﬂoor has room ① and ②; ＦＵＬＬ-width ＡＢＣ letters\n"
                   "and ligatures (ﬁ, ﬂ, ﬀ) become what the unigram model actually reads.\n")


def _render_normalized(window: TokenPrismWindow, path: Path, out: Path) -> Path:
    """The Normalized tab of a UGM model, one token picked there (its
    original characters selected in the editor)."""
    app = QApplication.instance()
    assert app is not None
    window.open_path(str(path))
    window.editor.setPlainText(NORMALIZED_TEXT)
    window.tabs.setCurrentWidget(window.normalized)
    wait_for(lambda: window.model_info is not None and os.path.samefile(window.model_info.path, path)
             and _ready(window) and window.normalized.normalized is not None)
    view = window.normalized
    rng = view.token_at(view.text.toPlainText().find("first") + 1)
    if rng is not None:
        window.editor.select_tokens(*rng)
        view.select_tokens(*rng)
    app.processEvents()
    window.grab().save(str(out))
    return out


def render(out_dir: Path, models: dict[str, Path], text: str, size: tuple[int, int] = (1280, 760),
           extras: bool = True) -> list[Path]:
    """Open each model in one window, show ``text`` and save a PNG per model
    (and, with ``extras``, the chips view and a dark-palette shot)."""
    app = QApplication.instance()
    assert isinstance(app, QApplication)
    out_dir.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []
    with tempfile.TemporaryDirectory() as tmp:
        settings = AppSettings(QSettings(os.path.join(tmp, "shots.ini"), QSettings.Format.IniFormat))
        window = TokenPrismWindow(settings, restore=False)
        window.resize(*size)
        window.show()
        window.editor.setPlainText(text)
        first_kind = ""
        for kind, path in models.items():
            window.open_path(str(path))
            wait_for(lambda p=path: window.model_info is not None  # type: ignore[misc]
                     and os.path.samefile(window.model_info.path, p) and _ready(window))
            window.tabs.setCurrentWidget(window.table)
            _fit_table(window)
            _pick_token(window)
            wait_for(lambda: True)
            app.processEvents()
            out = out_dir / f"{kind}.png"
            window.grab().save(str(out))
            written.append(out)
            first_kind = first_kind or kind
        if extras and first_kind:
            if len(models) > 1:
                window.open_path(str(models[first_kind]))
                wait_for(lambda: _ready(window) and window.model_info is not None
                         and os.path.samefile(window.model_info.path, models[first_kind]))
            window.tabs.setCurrentWidget(window.chips)
            wait_for(lambda: window.chips.row_count > 0)
            _pick_token(window)
            app.processEvents()
            out = out_dir / "chips.png"
            window.grab().save(str(out))
            written.append(out)
            old = app.palette()
            app.setPalette(dark_palette())
            window.tabs.setCurrentWidget(window.table)
            window.act_show_ws.setChecked(True)
            _pick_token(window)
            app.processEvents()
            out = out_dir / "dark.png"
            window.grab().save(str(out))
            written.append(out)
            app.setPalette(old)
            window.act_show_ws.setChecked(False)
            if "ugm" in models:
                written.append(_render_normalized(window, models["ugm"], out_dir / "normalized.png"))
        window.shutdown()
        window.close()
    return written


@contextmanager
def scratch_window(out: Path) -> Iterator[tuple[QApplication, TokenPrismWindow]]:
    """A window with settings of its own (thrown away after), for one
    screenshot saved under ``out``'s folder."""
    app = QApplication.instance()
    assert isinstance(app, QApplication)
    out.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        settings = AppSettings(QSettings(os.path.join(tmp, "shots.ini"), QSettings.Format.IniFormat))
        yield app, TokenPrismWindow(settings, restore=False)


COMPARE_TEXT = ("Tokenizers don't agree: unbelievably, 3.14159 and 2024-06-01.\n"
                "CamelCaseWords, snake_case_names and    indented code;\n"
                "Zażółć gęślą jaźń — naïve café, Ελληνικά, русский.\n")


def render_compare(out: Path, paths: list[Path], text: str = COMPARE_TEXT,
                   size: tuple[int, int] = (1100, 580)) -> Path:
    """The compare view (View ▸ Compare Models) of ``paths`` on ``text``,
    with one token hovered, saved as ``out``."""
    from .qt_compare import CompareFeature

    with scratch_window(out) as (app, window):
        window.editor.setPlainText(text)
        feature = window.findChild(CompareFeature)
        assert feature is not None
        view = feature.show(paths=[str(p) for p in paths])
        view.resize(*size)
        wait_for(lambda: len(view.view.lanes) == len(paths)
                 and all(ld.analysis is not None and ld.analysis.text == text for ld in view.view.lanes))
        lanes = view.view
        a = lanes.lanes[0].analysis
        assert a is not None
        k = a.span_at(min(text.find("believ") + 1, len(text) - 1))
        if k >= 0:
            lanes.set_hover(int(a.span_start16[k]), int(a.span_end16[k]))
        app.processEvents()
        view.grab().save(str(out))
        feature.shutdown()
        window.shutdown()
        view.close()
        window.close()
    return out


def render_chat(out: Path, path: Path, other: Path | None = None, size: tuple[int, int] = (1200, 820)) -> Path:
    """The chat view (View ▸ Chat) of ``path``'s model on the starter
    conversation, beside ``other``'s rendering when given, saved as ``out``."""
    with scratch_window(out) as (app, window):
        window.open_path(str(path))
        wait_for(lambda: window.model_info is not None)
        panel, dock = window.chat_panel, window.chat_dock
        dock.setFloating(True)
        dock.show()
        dock.resize(*size)
        if other is not None:
            panel.compare_path(str(other))
            wait_for(lambda: panel.other.model is not None)
        wait_for(lambda: not panel.busy and panel.main.view is not None
                 and (other is None or panel.other.view is not None))
        app.processEvents()
        dock.grab().save(str(out))
        window.shutdown()
        dock.close()
        window.close()
    return out


def render_check(out: Path, model: Path, source: str, pick: str = "",
                 size: tuple[int, int] = (1000, 700)) -> Path:
    """The check window (Tokenize ▸ Check Against Source…) of ``model``
    against ``source`` (shown as given: pass a path relative to the current
    folder to keep temporary folders out of the picture), with the minimal
    string ``pick`` (else the first) clicked, saved as ``out``."""
    from .qt_check import CheckFeature

    with scratch_window(out) as (app, window):
        window.open_path(str(model))
        wait_for(lambda: window.model_info is not None)
        window.editor.setPlainText("")
        feature = window.findChild(CheckFeature)
        assert feature is not None
        view = feature.show()
        view.resize(*size)
        view.start(source)
        wait_for(lambda: not view.running, 300.0)
        result = view.outcome.result if view.outcome is not None else None
        texts = [d.text for d in result.divergences] if result is not None else []
        row = texts.index(pick) if pick in texts else 0
        if texts:
            drawn: list[bool] = []
            view.lanesUpdated.connect(lambda: drawn.append(True))
            view.table.selectRow(row)
            wait_for(lambda: bool(drawn))
        app.processEvents()
        view.grab().save(str(out))
        view.close()
        window.shutdown()
        window.close()
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m tokenprism.app.qt.screenshots", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("out", nargs="?", default=str(DEFAULT_OUT), help="folder for the PNG files")
    ap.add_argument("--model", action="append", default=[], metavar="KIND=PATH",
                    help="a model to show instead of the demo models (repeatable)")
    ap.add_argument("--compare", action="append", default=[], metavar="PATH",
                    help="only write compare.png: the compare view of these models (repeatable)")
    ap.add_argument("--chat", nargs="+", metavar="PATH",
                    help="only write chat.png: the chat view of a model (and a second one beside it)")
    ap.add_argument("--check", nargs=2, metavar=("GGUF", "SOURCE"),
                    help="only write check.png: the check window of GGUF against SOURCE")
    ap.add_argument("--pick", default="", help="with --check: the minimal string to click")
    ap.add_argument("--width", type=int, default=1280)
    ap.add_argument("--height", type=int, default=760)
    ap.add_argument("--scale", type=float, default=1.0, help="device pixel ratio (2 for sharp images)")
    args = ap.parse_args(argv)
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    if args.scale != 1.0:
        os.environ["QT_SCALE_FACTOR"] = str(args.scale)
    if args.compare:
        app = QApplication.instance() or QApplication(sys.argv[:1])
        print(render_compare(Path(args.out) / "compare.png", [Path(p) for p in args.compare]))
        del app
        return 0
    if args.check:
        app = QApplication.instance() or QApplication(sys.argv[:1])
        print(render_check(Path(args.out) / "check.png", Path(args.check[0]), args.check[1], args.pick))
        del app
        return 0
    if args.chat:
        app = QApplication.instance() or QApplication(sys.argv[:1])
        print(render_chat(Path(args.out) / "chat.png", Path(args.chat[0]),
                          Path(args.chat[1]) if len(args.chat) > 1 else None))
        del app
        return 0
    models: dict[str, Path] = {}
    for item in args.model:
        kind, sep, path = item.partition("=")
        if not sep:
            ap.error(f"--model wants KIND=PATH, not {item!r}")
        models[kind] = Path(path)
    if not models:
        models = demo_models()
    if not models:
        print("screenshots: no demo models found; pass --model KIND=PATH", file=sys.stderr)
        return 1
    app = QApplication.instance() or QApplication(sys.argv[:1])  # kept alive until we return
    QApplication.setWindowIcon(app_icon())
    for out in render(Path(args.out), models, welcome_text(), (args.width, args.height)):
        print(out)
    del app
    return 0


if __name__ == "__main__":
    sys.exit(main())
