"""Broken and hostile GGUF files in the window: a readable message, and the
model that was open stays open and keeps tokenizing."""

from __future__ import annotations

from pathlib import Path

from tests.app.conftest import open_model_in, type_text, wait_result
from tests.reliability.test_hostile_cli import hostile_files


def test_hostile_files_keep_the_previous_model(qtbot, window, models, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    from tokenprism.core.library.resources import demo_models

    good_path = str(demo_models()["spm"])
    open_model_in(qtbot, window, good_path)
    good = window.model_info
    for path in hostile_files(tmp_path, 12, seed=9):
        window.banner.hide()
        window.open_path(str(path))
        qtbot.waitUntil(lambda: window.banner.isVisible() and not window.loader.busy, timeout=10_000)
        msg = window.banner.text
        assert path.name in msg and f"Still using {good.name}" in msg, msg
        assert msg.isprintable() and "Traceback" not in msg and len(msg) < 600, repr(msg)
        assert window.model_info is good
        assert window.windowTitle().startswith(good.name) or good.name in window.windowTitle()
    a = wait_result(qtbot, window, lambda: type_text(window.editor, " still here"))
    assert a.info is good
    assert a.encoding.ids == models(good_path).encode(window.editor.token_text()).ids
