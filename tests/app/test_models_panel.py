"""The Models panel (app/qt/qt_models.py) on a fake home, and the first start
with the bundled SPM demo model."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from PySide6.QtCore import QSettings, Qt
from PySide6.QtGui import QKeySequence

from tests.app.conftest import RESULT_TIMEOUT_MS, is_current
from tests.fakehome import build_linux_home
from tokenprism.app.qt.qt_menus import SHORTCUTS
from tokenprism.app.qt.qt_models import COL_NAME, COL_SOURCE, COL_TOKENIZER, COL_VOCAB, PANEL_SHORTCUT, QModelsPanel
from tokenprism.app.qt.settings import AppSettings
from tokenprism.core.library.resources import demo_models, welcome_text

SCAN_TIMEOUT_MS = 20_000


def _panel(window, home: Path) -> QModelsPanel:  # type: ignore[no-untyped-def]
    panel = window.findChild(QModelsPanel)
    assert panel is not None
    panel.scanner.home, panel.scanner.env = home, {}
    panel.scanner.platform, panel.scanner.include_system = "linux", False
    panel.scanner.data_dir = home / ".local" / "share" / "tokenprism"  # not the real user's data folder
    return panel


def _rows(panel: QModelsPanel) -> dict[str, list[str]]:
    p = panel.proxy
    return {p.index(r, COL_NAME).data(): [p.index(r, c).data() for c in range(p.columnCount())]
            for r in range(p.rowCount())}


def _show_and_scan(qtbot, window, panel: QModelsPanel) -> None:  # type: ignore[no-untyped-def]
    assert panel.dock is not None and not panel.dock.isVisible()  # hidden until asked for
    panel.toggle_action.trigger()
    qtbot.waitUntil(lambda: panel.scanned and not panel.scanning, timeout=SCAN_TIMEOUT_MS)
    assert panel.dock.isVisible()


@pytest.fixture
def fake_home(tmp_path: Path):  # type: ignore[no-untyped-def]
    home = tmp_path / "home"
    return home, build_linux_home(home)


def test_panel_lists_the_fake_homes_models_and_ignores_junk(qtbot, window, fake_home) -> None:  # type: ignore[no-untyped-def]
    home, expected = fake_home
    panel = _panel(window, home)
    window.settings.add_model_folder(str(home / "my-models"))
    _show_and_scan(qtbot, window, panel)
    rows = _rows(panel)
    assert set(rows) == set(expected.models)
    assert rows["tinybpe:latest"][COL_TOKENIZER] == "BPE · gpt2"
    assert rows["tinybpe:latest"][COL_SOURCE] == "ollama"
    assert rows["TheOrg/Tiny-GGUF/quant/tiny-spm-Q4_K_M.gguf"][COL_VOCAB] == "1,500"
    assert rows["pub/vision/mmproj.gguf"][COL_TOKENIZER] == "none"
    assert "not-a-model.gguf" not in " ".join(rows) and "truncated" not in " ".join(rows)
    n = len(expected.models)
    assert panel.status.text().startswith(f"{n} models") and not panel.busy_bar.isVisible()

    qtbot.keyClicks(panel.filter, "lmstudio")
    assert list(_rows(panel)) == ["lmstudio-community/demo-ugm/demo-ugm.gguf"]
    assert panel.status.text().startswith(f"1 of {n} models")
    panel.filter.clear()
    qtbot.keyClicks(panel.filter, "WPM")  # the tokenizer column filters too
    assert list(_rows(panel)) == ["demo-wpm.gguf"]


def test_enter_opens_the_model_in_the_window(qtbot, window, fake_home) -> None:  # type: ignore[no-untyped-def]
    home, _ = fake_home
    panel = _panel(window, home)
    _show_and_scan(qtbot, window, panel)
    qtbot.keyClicks(panel.filter, "tinybpe")
    assert panel.proxy.rowCount() == 1
    panel.view.setFocus()
    panel.view.setCurrentIndex(panel.proxy.index(0, 0))
    with qtbot.waitSignal(window.loader.loaded, timeout=RESULT_TIMEOUT_MS):
        qtbot.keyClick(panel.view, Qt.Key.Key_Return)
    blob = home / ".ollama" / "models" / "blobs"
    assert window.model_info is not None
    assert Path(window.model_info.path).parent == blob.resolve()
    assert window.model_info.kind == "BPE"
    qtbot.waitUntil(lambda: is_current(window), timeout=RESULT_TIMEOUT_MS)
    assert len(window.analysis.encoding.token_ids) > 0
    # the open model's row is shown in bold
    assert panel.proxy.index(0, 0).data(Qt.ItemDataRole.FontRole).bold()


def test_a_file_without_tokenizer_explains_itself(qtbot, window, fake_home) -> None:  # type: ignore[no-untyped-def]
    home, _ = fake_home
    panel = _panel(window, home)
    _show_and_scan(qtbot, window, panel)
    qtbot.keyClicks(panel.filter, "mmproj")
    panel.open_index(panel.proxy.index(0, 0))
    assert window.banner.isVisible() and "no tokenizer" in window.banner.text


def test_added_folders_are_kept_and_rescanned(qtbot, window, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    home = tmp_path / "empty-home"
    home.mkdir()
    panel = _panel(window, home)
    _show_and_scan(qtbot, window, panel)
    assert panel.proxy.rowCount() == 0 and "No GGUF models found" in panel.status.text()
    folder = tmp_path / "mine"
    folder.mkdir()
    (folder / "one.gguf").write_bytes(demo_models()["ugm"].read_bytes())
    panel.add_folder(str(folder))
    qtbot.waitUntil(lambda: not panel.scanning and panel.proxy.rowCount() == 1, timeout=SCAN_TIMEOUT_MS)
    assert window.settings.model_folders() == [str(folder)]
    # a fresh settings object on the same file sees the folder
    again = AppSettings(QSettings(window.settings.q.fileName(), QSettings.Format.IniFormat))
    assert again.model_folders() == [str(folder)]
    panel._fill_folders_menu()
    assert str(folder) in [a.text() for a in panel.folders_menu.actions()]
    panel.remove_folder(str(folder))
    qtbot.waitUntil(lambda: not panel.scanning and panel.proxy.rowCount() == 0, timeout=SCAN_TIMEOUT_MS)
    assert window.settings.model_folders() == []


def test_reference_vocabs_download_from_the_panel(qtbot, window, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    from tests.fakehome import make_sdist
    from tokenprism.core.library.samples import default_samples_dir

    home = tmp_path / "home"
    home.mkdir()
    panel = _panel(window, home)
    _show_and_scan(qtbot, window, panel)
    sdist, sha = make_sdist(tmp_path / "sdist.tar.gz")
    panel.samples_url, panel.samples_sha256 = sdist.as_uri(), sha
    panel.samples_dest = default_samples_dir(panel.scanner.data_dir)  # where the scan of the fake home looks
    panel._fill_folders_menu()
    assert any("Reference Vocabs" in a.text() for a in panel.folders_menu.actions())
    panel.download_samples(confirm=False)
    qtbot.waitUntil(lambda: not panel.downloading and not panel.scanning and panel.proxy.rowCount() == 2,
                    timeout=SCAN_TIMEOUT_MS)
    rows = _rows(panel)
    assert rows["ggml-vocab-tiny-spm.gguf"][COL_SOURCE] == "Reference vocab"
    assert "2 reference vocabs (4 files) downloaded" in window.banner.text
    # a failed download says why and leaves the list alone
    panel.samples_sha256 = "0" * 64
    panel.samples_dest = tmp_path / "other"
    panel.download_samples(confirm=False)
    qtbot.waitUntil(lambda: not panel.downloading, timeout=SCAN_TIMEOUT_MS)
    assert "SHA-256" in window.banner.text and panel.proxy.rowCount() == 2
    assert not panel.busy_bar.isVisible()


def test_rescan_while_scanning_keeps_one_list(qtbot, window, fake_home) -> None:  # type: ignore[no-untyped-def]
    home, expected = fake_home
    panel = _panel(window, home)
    panel.toggle_action.trigger()
    for _ in range(3):
        panel.rescan()
    qtbot.waitUntil(lambda: not panel.scanning, timeout=SCAN_TIMEOUT_MS)
    qtbot.wait(50)  # any late row of a cancelled scan would arrive now
    names = [panel.table_model.models[i].name for i in range(panel.table_model.rowCount())]
    assert sorted(names) == sorted(n for n in expected.models if not n.startswith("mine/"))


def test_shortcut_is_listed_and_unique(window) -> None:  # type: ignore[no-untyped-def]
    panel = window.findChild(QModelsPanel)
    assert panel.toggle_action.shortcut() == QKeySequence(PANEL_SHORTCUT)
    assert panel.toggle_action in window.menus["view"].actions()
    assert PANEL_SHORTCUT in [k for k, _ in SHORTCUTS]
    clashes = [a.text() for a in window.findChildren(type(panel.toggle_action))
               if a is not panel.toggle_action and a.shortcut() == QKeySequence(PANEL_SHORTCUT)]
    assert clashes == []


# ---- first start -----------------------------------------------------------------------------------

def test_first_start_opens_the_spm_demo_with_the_welcome_text(qtbot, make_window) -> None:  # type: ignore[no-untyped-def]
    spm = demo_models().get("spm")
    if spm is None:
        pytest.skip("the demo models are not built")
    w = make_window(restore=True)  # empty settings: a first start
    assert w.editor.toPlainText() == welcome_text() != ""
    w.start([])
    qtbot.waitUntil(lambda: w.model_info is not None and is_current(w), timeout=RESULT_TIMEOUT_MS)
    assert os.path.samefile(w.model_info.path, spm)
    assert w.model_info.kind == "SPM"
    a = w.analysis
    pieces = [a.info.model.vocab.pieces[i] for i in a.encoding.token_ids]
    # the welcome text shows byte fallback: 🙂 is four byte tokens
    start = w.editor.toPlainText().index("🙂")
    emoji_tokens = [pieces[i] for i in range(len(pieces)) if a.encoding.starts[i] == start]
    assert emoji_tokens and all(p.startswith("<0x") for p in emoji_tokens)
    assert sum(p == "<0xF0>" for p in pieces) >= 4


def test_cli_models_scans_the_folders_added_in_the_app(tmp_path: Path, capsys, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    import json

    from tokenprism.app.cli import main

    folder = tmp_path / "added in the app"
    folder.mkdir()
    (folder / "wpm.gguf").write_bytes(demo_models()["wpm"].read_bytes())
    monkeypatch.setenv("HOME", str(tmp_path / "empty-home"))
    AppSettings().add_model_folder(str(folder))  # the default settings (isolated by conftest)
    assert main(["models", "--format", "json"]) == 0
    rows = [r for r in json.loads(capsys.readouterr().out) if r["path"].startswith(str(tmp_path))]
    assert [(r["name"], r["source"], r["tokenizer"]) for r in rows] == [("wpm.gguf", "Folder", "bert")]
    assert main(["models", "--format", "json", "--no-saved-folders"]) == 0
    assert not [r for r in json.loads(capsys.readouterr().out) if r["path"].startswith(str(tmp_path))]


def test_models_the_user_opened_are_listed_with_their_neighbours(qtbot, window, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    # a new user's panel said "No GGUF models found" although a model was open
    home = tmp_path / "empty-home"
    home.mkdir()
    work = tmp_path / "work"
    work.mkdir()
    for name in ("mine.gguf", "sibling.gguf"):
        (work / name).write_bytes(demo_models()["ugm"].read_bytes())
    window.settings.add_recent_file(str(work / "mine.gguf"))
    panel = _panel(window, home)
    _show_and_scan(qtbot, window, panel)
    rows = _rows(panel)
    assert set(rows) == {"mine.gguf", "sibling.gguf"}
    assert {r[COL_SOURCE] for r in rows.values()} == {"Opened before"}
    assert "No GGUF models" not in panel.status.text() and "2 models" in panel.status.text()
    # opening a model from another folder lists that folder too, without a Rescan
    other = tmp_path / "elsewhere"
    other.mkdir()
    (other / "third.gguf").write_bytes(demo_models()["bpe"].read_bytes())
    with qtbot.waitSignal(window.loader.loaded, timeout=RESULT_TIMEOUT_MS):
        window.open_path(str(other / "third.gguf"))
    qtbot.waitUntil(lambda: not panel.scanning and "third.gguf" in _rows(panel), timeout=SCAN_TIMEOUT_MS)
    assert set(_rows(panel)) == {"mine.gguf", "sibling.gguf", "third.gguf"}
    qtbot.waitUntil(lambda: is_current(window), timeout=RESULT_TIMEOUT_MS)
