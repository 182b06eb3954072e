"""Models found on this computer (the Models panel's discovery) can be
picked for the compare view: from the Add menu and from the panel."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.app.conftest import RESULT_TIMEOUT_MS
from tests.app.test_compare import compare, demos, wait_ready
from tests.fakehome import build_linux_home
from tokenprism.app.qt.qt_compare import CompareFeature
from tokenprism.app.qt.qt_models import COL_NAME, QModelsPanel
from tokenprism.core import open_model

SCAN_TIMEOUT_MS = 20_000


@pytest.fixture
def panel(window, tmp_path: Path):  # type: ignore[no-untyped-def]
    home = tmp_path / "home"
    build_linux_home(home)
    p = window.findChild(QModelsPanel)
    assert p is not None
    p.scanner.home, p.scanner.env = home, {}
    p.scanner.platform, p.scanner.include_system = "linux", False
    return p


def found_menu(view):  # type: ignore[no-untyped-def]
    view._fill_add_menu()
    for act in view.add_menu.actions():
        if act.text() == "Found on This Computer":
            return act.menu()
    raise AssertionError("no Found on This Computer submenu")


def test_add_menu_lists_the_discovered_models(qtbot, window, panel) -> None:  # type: ignore[no-untyped-def]
    paths = demos()
    view = compare(qtbot, window, [paths["spm"], paths["wpm"]])
    sub = found_menu(view)
    # before any scan: one entry that starts the panel's scan
    [look] = sub.actions()
    assert look.text() == "Look for Models" and not panel.scanned
    look.trigger()
    qtbot.waitUntil(lambda: panel.scanned and not panel.scanning, timeout=SCAN_TIMEOUT_MS)

    sub = found_menu(view)
    offered = {a.toolTip(): a for a in sub.actions() if a.toolTip()}
    runnable = [m for m in panel.table_model.models if m.tokenizer]
    assert len(runnable) >= 5
    assert set(offered) == {m.path for m in runnable}  # the projector (no tokenizer) is left out
    lm = next(m for m in runnable if m.source == "LM Studio")
    assert offered[lm.path].text() == f"{lm.name} (UGM)"
    assert all(a.isEnabled() for a in offered.values())  # none of these files is compared yet

    with qtbot.waitSignal(view.lanesUpdated, timeout=RESULT_TIMEOUT_MS):
        offered[lm.path].trigger()
    wait_ready(qtbot, view)
    assert [ln.path for ln in view.lanes][-1] == lm.path
    ld = view.view.lanes[-1]
    assert ld.analysis is not None and ld.kind == "UGM"
    assert ld.analysis.encoding.token_ids == open_model(lm.path).encode(view.text()).token_ids
    again = {a.toolTip(): a for a in found_menu(view).actions() if a.toolTip()}
    assert again[lm.path].isEnabled() is False  # already compared


def test_panel_compares_a_found_model_with_the_open_one(qtbot, window, panel) -> None:  # type: ignore[no-untyped-def]
    paths = demos()
    with qtbot.waitSignal(window.loader.loaded, timeout=RESULT_TIMEOUT_MS):
        window.open_path(paths["spm"])
    window.editor.setPlainText("Compare me, please: 1234 tokens")
    panel.rescan()
    qtbot.waitUntil(lambda: not panel.scanning and panel.proxy.rowCount() > 0, timeout=SCAN_TIMEOUT_MS)
    rows = {panel.proxy.index(r, COL_NAME).data(): r for r in range(panel.proxy.rowCount())}
    panel.compare_index(panel.proxy.index(rows["tinybpe:latest"], 0))
    feature = window.findChild(CompareFeature)
    assert feature.view is not None
    view = feature.view
    qtbot.addWidget(view)
    wait_ready(qtbot, view)
    tiny = next(m for m in panel.table_model.models if m.name == "tinybpe:latest")
    assert [ln.path for ln in view.lanes] == [paths["spm"], tiny.path]
    assert [ld.kind for ld in view.view.lanes] == ["SPM", "BPE"]
    for ld, ln in zip(view.view.lanes, view.lanes):
        assert ld.analysis is not None
        assert ld.analysis.encoding.token_ids == open_model(ln.path).encode("Compare me, please: 1234 tokens").token_ids
    # a file without a tokenizer is refused with a message, not added
    panel.compare_index(panel.proxy.index(rows["pub/vision/mmproj.gguf"], 0))
    assert len(view.lanes) == 2
    assert window.banner.isVisible() and "cannot be compared" in window.banner.text
