"""Help ▸ About (version, build, documentation) and File ▸ Open Recent
(paths that tell files of the same name apart)."""

from __future__ import annotations

import os
from pathlib import Path

from PySide6.QtWidgets import QMessageBox


def test_about_shows_version_build_and_documentation(window, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    import importlib.metadata

    from tokenprism.app.qt import qt_menus
    from tokenprism.core.build_info import build_kind

    shown: list[str] = []
    monkeypatch.setattr(QMessageBox, "about", lambda _parent, _title, text: shown.append(text))
    window.show_about()
    (text,) = shown
    assert importlib.metadata.version("tokenprism") in text
    assert {"compiled": "compiled (mypyc)", "pure": "pure Python", "mixed": "partly compiled"}[build_kind()] in text
    target, where = qt_menus.documentation()
    assert where in text
    readme = Path(qt_menus.__file__).resolve().parent.parent / "README.md"
    if readme.is_file():  # a source checkout: the README itself
        assert target == readme.as_uri() and os.path.isfile(where)
    box = QMessageBox(QMessageBox.Icon.Information, "About TokenPrism", text, parent=window)
    box.show()
    box.grab().save("/tmp/shots/about.png")
    box.close()


def test_about_without_a_readme_points_at_the_package_metadata(monkeypatch, tmp_path: Path) -> None:
    from tokenprism.app.qt import qt_menus

    monkeypatch.setattr(qt_menus, "__file__", str(tmp_path / "app" / "qt_menus.py"))
    target, where = qt_menus.documentation()
    assert "README.md" not in where
    assert ("pip show" in where and target == "") or where.startswith("http")


def test_recent_menu_tells_files_of_the_same_name_apart(window, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    paths = []
    for folder in ("first & one", "second/" + "deep" * 30):
        p = tmp_path / folder / "model.gguf"
        p.parent.mkdir(parents=True)
        p.write_bytes(b"GGUF")
        paths.append(str(p))
    for p in paths:
        window.settings.add_recent_file(p)
    window.recent_menu.aboutToShow.emit()
    acts = [a for a in window.recent_menu.actions() if a.toolTip() in paths]
    assert len(acts) == 2
    texts = [a.text() for a in acts]
    assert texts[0] != texts[1]
    for a in acts:
        assert "model.gguf — " in a.text()
        assert a.toolTip() in paths
    deep = next(a for a in acts if "deep" in a.toolTip())
    assert "…" in deep.text() and deep.text().endswith("model.gguf")  # cut in the middle, the name kept
    amp = next(a for a in acts if "&" in a.toolTip())
    assert "first && one" in amp.text()  # shown as "&", not taken as a mnemonic
    assert window.recent_menu.toolTipsVisible()
    window.recent_menu.popup(window.mapToGlobal(window.rect().center()))
    window.recent_menu.grab().save("/tmp/shots/recent_menu.png")
    window.recent_menu.hide()


def test_edit_menu_screenshot(window, qtbot) -> None:  # type: ignore[no-untyped-def]
    window.editor.selectAll()
    window.edit_menu.popup(window.mapToGlobal(window.rect().center()))
    qtbot.waitExposed(window.edit_menu)
    window.edit_menu.grab().save("/tmp/shots/edit_menu.png")
    window.edit_menu.hide()
