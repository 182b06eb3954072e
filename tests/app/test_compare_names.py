"""Models are shown by names a person recognises (the file's name where the
metadata name is a hash, a path or another model's), in the window title,
the compare view's rows and lanes; and the compare view opens with the
models the user worked with, not with demo models."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from PySide6.QtCore import QEvent, QPoint
from PySide6.QtGui import QHelpEvent
from PySide6.QtWidgets import QApplication, QToolTip

from tests.app.conftest import RESULT_TIMEOUT_MS, open_model_in, real_vocab
from tests.app.test_compare import compare, wait_ready
from tokenprism.app.qt.qt_compare import DEFAULT_MODELS, MIN_MODELS, CompareFeature
from tokenprism.core.library.resources import demo_models

SHOTS = Path("/tmp/shots")


def reference(name: str) -> str:
    path = real_vocab(name)
    if path is None:
        pytest.skip(f"reference vocabulary {name} not found")
    return path


def demos() -> dict[str, str]:
    found = {k: os.path.abspath(str(p)) for k, p in demo_models().items()}
    if len(found) < 4:
        pytest.skip("the bundled demo models are not installed")
    return found


def names_shown(view) -> tuple[list[str], list[str], list[str]]:  # type: ignore[no-untyped-def]
    """(summary Model cells, their tooltips, lane names) of the compare view."""
    rows = range(view.summary.rowCount())
    return ([view.summary.item(r, 1).text() for r in rows], [view.summary.item(r, 1).toolTip() for r in rows],
            [ld.name for ld in view.view.lanes])


# ---- names ----------------------------------------------------------------------------


def test_compare_tells_qwen2_from_qwen35(qtbot, window) -> None:  # type: ignore[no-untyped-def]
    q2, q35 = reference("qwen2"), reference("qwen35")
    view = compare(qtbot, window, [q2, q35], "Hello world, 你好世界 🙂\nqwen2 and qwen35 share a general.name")
    cells, tips, lanes = names_shown(view)
    assert cells == ["qwen2 (ggml-vocab-qwen2)", "qwen2 (ggml-vocab-qwen35)"]
    assert lanes == cells
    assert tips == [q2, q35]  # the full path, to tell which file
    lanes_view = view.view
    assert [lanes_view.gutter_label(i) for i in range(2)] == ["1 " + cells[0], "2 " + cells[1]]  # whole
    SHOTS.mkdir(parents=True, exist_ok=True)
    view.grab().save(str(SHOTS / "compare_qwen.png"))
    whole = lanes_view.gutter
    view.resize(300, 500)  # too narrow for whole names: they are cut in the middle and still differ
    qtbot.waitUntil(lambda: lanes_view.gutter < whole)
    short = [lanes_view.gutter_label(i) for i in range(2)]
    assert "…" in short[1] and short[0] != short[1]
    assert short[1].endswith("qwen35)")


def test_lane_gutter_tooltip_gives_the_path(qtbot, window) -> None:  # type: ignore[no-untyped-def]
    q2, q35 = reference("qwen2"), reference("qwen35")
    view = compare(qtbot, window, [q2, q35], "Hello")
    lanes = view.view
    rect = lanes.lane_rect(0, 1)
    pos = QPoint(4, int(rect.center().y()))  # on the lane's number and name
    QApplication.sendEvent(lanes.viewport(), QHelpEvent(QEvent.Type.ToolTip, pos, lanes.viewport().mapToGlobal(pos)))
    assert QToolTip.isVisible()
    assert "ggml-vocab-qwen35)" in QToolTip.text() and q35 in QToolTip.text()
    QToolTip.hideText()


def test_hash_and_path_names_give_way_to_file_names(qtbot, window) -> None:  # type: ignore[no-untyped-def]
    gemma, aquila = reference("gemma-4"), reference("aquila")
    view = compare(qtbot, window, [gemma, aquila], "Hello")
    cells, _tips, lanes = names_shown(view)
    assert cells == lanes == ["ggml-vocab-gemma-4", "ggml-vocab-aquila"]


def test_window_title_names_gemma4_by_its_file(qtbot, window) -> None:  # type: ignore[no-untyped-def]
    gemma = reference("gemma-4")
    open_model_in(qtbot, window, gemma)
    title = window.windowTitle()
    assert "ggml-vocab-gemma-4" in title
    assert "47b6801b" not in title
    assert "47b6801b" not in window.stats.model_label.text()


def test_a_lane_is_named_by_its_file_while_it_loads(qtbot, window) -> None:  # type: ignore[no-untyped-def]
    paths = demos()
    view = compare(qtbot, window, [paths["spm"], paths["bpe"]], "Hi")
    assert view.lane_names()[0].startswith("TokenPrism demo SPM")
    lane = view.add_model(paths["wpm"])
    assert lane is not None and lane.info is None
    assert view.lane_names()[2] == "demo-wpm"  # the file's name until its own name is read
    wait_ready(qtbot, view)
    assert view.lane_names()[2].startswith("TokenPrism demo WPM")


# ---- the models Compare opens with ---------------------------------------------------------


def copies(tmp_path: Path, n: int) -> list[str]:
    """``n`` model files that are not the bundled demo models (copies under
    other names), so a lane that holds one was chosen from the recent list."""
    src = list(demos().values())
    out = []
    for i in range(n):
        dst = tmp_path / f"my-model-{i}.gguf"
        shutil.copyfile(src[i % len(src)], dst)
        out.append(str(dst))
    return out


def open_compare(qtbot, window):  # type: ignore[no-untyped-def]
    feature = window.findChild(CompareFeature)
    assert feature is not None
    view = feature.show()
    qtbot.addWidget(view)
    return view


def test_compare_opens_with_the_open_model_and_the_recent_ones(qtbot, window, tmp_path) -> None:  # type: ignore[no-untyped-def]
    mine = copies(tmp_path, 4)
    for p in reversed(mine[1:]):  # Open Recent, newest first: 1, 2, 3
        window.settings.add_recent_file(p)
    open_model_in(qtbot, window, mine[0])  # the open model is the newest of all
    assert window.settings.recent_files()[:4] == mine
    view = open_compare(qtbot, window)
    assert [ln.path for ln in view.lanes] == mine[:DEFAULT_MODELS]
    assert view.lanes[0].info is window.model_info
    wait_ready(qtbot, view)
    assert all(ld.analysis is not None for ld in view.view.lanes)


def test_recent_files_that_are_gone_are_passed_over(qtbot, window, tmp_path) -> None:  # type: ignore[no-untyped-def]
    mine = copies(tmp_path, 3)
    for p in reversed(mine):
        window.settings.add_recent_file(p)
    os.remove(mine[0])
    view = open_compare(qtbot, window)
    assert [ln.path for ln in view.lanes] == mine[1:]  # no model open: the two recent files that exist
    wait_ready(qtbot, view)


def test_one_recent_model_and_nothing_open_adds_one_demo(qtbot, window, tmp_path) -> None:  # type: ignore[no-untyped-def]
    [mine] = copies(tmp_path, 1)
    window.settings.add_recent_file(mine)
    view = open_compare(qtbot, window)
    paths = [ln.path for ln in view.lanes]
    assert len(paths) == MIN_MODELS and paths[0] == mine
    assert paths[1] in demos().values()
    wait_ready(qtbot, view)


def test_demo_models_only_without_recent_models(qtbot, window) -> None:  # type: ignore[no-untyped-def]
    paths = demos()
    assert window.settings.recent_files() == []
    view = open_compare(qtbot, window)
    shown = [ln.path for ln in view.lanes]
    assert len(shown) == MIN_MODELS and set(shown) <= set(paths.values())
    wait_ready(qtbot, view)


def test_the_open_model_alone_in_recent_is_completed_by_a_demo(qtbot, window) -> None:  # type: ignore[no-untyped-def]
    paths = demos()
    with qtbot.waitSignal(window.loader.loaded, timeout=RESULT_TIMEOUT_MS):
        window.open_path(paths["ugm"])
    view = open_compare(qtbot, window)
    shown = [ln.path for ln in view.lanes]
    assert shown[0] == paths["ugm"] and len(shown) == MIN_MODELS
    assert shown[1] in paths.values() and shown[1] != paths["ugm"]
    wait_ready(qtbot, view)
