"""A huge text file goes into the editor a slice at a time (Qt's one
``setPlainText`` froze the window for 0.4-0.8 s on 10 MB): the event loop
keeps running, the editor ends with exactly the file's text, tokens of the
whole text once loaded, no undo step, and "\\r\\n" never cut in two."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QPlainTextEdit

from tests.app.conftest import is_current, open_model_in
from tokenprism.app.qt import qt_slicer


def test_huge_file_is_loaded_in_slices(qtbot: Any, window: Any, tmp_path: Path, test_vocab: str,
                                       monkeypatch: Any) -> None:
    open_model_in(qtbot, window, test_vocab)
    monkeypatch.setattr(qt_slicer, "SLICED_MIN", 50_000)
    monkeypatch.setattr(qt_slicer, "SLICE", 7_001)  # odd: slices end inside "\r\n" too
    line = "Sliced loading keeps the window alive, ça va? 東京 🙂\r\n"
    p = tmp_path / "huge.txt"
    p.write_bytes((line * 4_000).encode("utf-8"))
    files = window.text_files
    ticks: list[float] = []
    beat = QTimer()
    beat.timeout.connect(lambda: ticks.append(time.perf_counter()))
    beat.start(5)
    files.open_path(str(p))
    assert files.loading and window.editor.isReadOnly()
    qtbot.waitUntil(lambda: files.path == str(p), timeout=30_000)
    beat.stop()
    assert len(ticks) >= 5  # the event loop ran while the slices went in
    assert not files.loading and not window.editor.isReadOnly()
    want = files.file.text
    reference = QPlainTextEdit()
    reference.setPlainText(want)  # what one insertion makes of the same text
    assert window.editor.toPlainText() == reference.toPlainText()
    assert window.editor.token_text() == want
    assert not window.editor.document().isModified() and not window.editor.document().isUndoAvailable()
    qtbot.waitUntil(lambda: is_current(window) and window.analysis is not None, timeout=30_000)
    assert window.analysis.text == want
    assert window.analysis.encoding.token_ids == window.model_info.model.encode(want).token_ids
