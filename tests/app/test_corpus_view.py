"""View ▸ Corpus Profile: a run on a tiny corpus with two models shows the
counts that encoding each document gives (computed here, model by model),
cancel stops a run (on a real Dask cluster too, closed cleanly), a costly
word opens in the editor with its model, the export is a valid report,
missing extras are named in one line, and the options are remembered."""

from __future__ import annotations

import csv
import io
import json
import multiprocessing
import os
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import Qt, QTimer

from tests.app.conftest import RESULT_TIMEOUT_MS, demo_vocab, real_vocab
from tokenprism.app.logic import corpus_view as cv
from tokenprism.app.qt.qt_corpus_charts import MISSING_MESSAGE
from tokenprism.app.qt.qt_corpus_results import MODEL_COLUMNS
from tokenprism.app.qt.qt_corpus_window import QCorpusWindow
from tokenprism.core import Model, open_model
from tokenprism.core.corpus import SYNCHRONOUS, Progress
from tokenprism.core.vocab import Attr

EN = "The quick brown fox jumps over the lazy dog; unbelievable tokenizers, 3.14159!\n"
RU = "Съешь же ещё этих мягких французских булок, да выпей чаю.\n"
RECORDS = ["Ελληνικά γράμματα και λέξεις.", "東京は日本の首都です。", "plain ascii record"]


@dataclass(frozen=True)
class Corpus:
    folder: str
    documents: tuple[str, ...]
    """Each document as one ``Model.encode`` call takes it."""
    binary: str


@pytest.fixture
def corpus(tmp_path: Path) -> Corpus:
    folder = tmp_path / "texts"
    (folder / "sub").mkdir(parents=True)
    en, ru = EN * 5, RU * 3
    (folder / "en.txt").write_text(en, encoding="utf-8")
    (folder / "sub" / "ru.md").write_text(ru, encoding="utf-8")
    (folder / "records.jsonl").write_text("".join(json.dumps({"text": r, "id": i}) + "\n"
                                                  for i, r in enumerate(RECORDS)), encoding="utf-8")
    binary = folder / "image.bin"
    binary.write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00" * 50)
    return Corpus(str(folder), (en, ru, *RECORDS), str(binary))


@pytest.fixture(scope="module")
def two_models() -> tuple[str, str]:
    """An SPM model with byte fallback and a byte-level BPE one (the
    reference vocabularies, else the bundled demo models)."""
    spm = real_vocab("llama-spm") or demo_vocab("spm")
    bpe = real_vocab("gpt-2") or demo_vocab("bpe")
    if spm is None or bpe is None:
        pytest.skip("neither the reference vocabularies nor the demo models are installed")
    return os.path.abspath(spm), os.path.abspath(bpe)


@dataclass(frozen=True)
class Expected:
    tokens: int
    bytes: int
    chars: int
    words: int
    byte_fallback: int
    unknown: int
    vocab_used: int


def expected(model: Model, documents: tuple[str, ...]) -> Expected:
    """The counts of encoding each document on its own (no special tokens)."""
    tokens = bytes_ = chars = words = fallback = unknown = 0
    used: set[int] = set()
    for doc in documents:
        ids = model.encode(doc).ids
        tokens += len(ids)
        bytes_ += len(doc.encode("utf-8"))
        chars += len(doc)
        words += len(doc.split())
        fallback += sum(model.vocab.has_attr(i, Attr.BYTE) for i in ids)
        unknown += sum(model.vocab.has_attr(i, Attr.UNKNOWN) for i in ids)
        used.update(ids)
    return Expected(tokens, bytes_, chars, words, fallback, unknown, len(used))


def open_view(window: Any, qtbot: Any, paths: list[str], models: tuple[str, ...],
              scheduler: str = SYNCHRONOUS, workers: int = 0) -> QCorpusWindow:
    view: QCorpusWindow = window.corpus.show()
    qtbot.addWidget(view)
    view.path_list.clear()
    view.add_paths(paths)
    view.model_list.clear()
    for m in models:
        view.add_model(m)
    view.scheduler_edit.setText(scheduler)
    view.workers_spin.setValue(workers)
    return view


def run_to_end(qtbot: Any, view: QCorpusWindow, timeout: int = RESULT_TIMEOUT_MS) -> Any:
    with qtbot.waitSignal(view.finished, timeout=timeout) as blocker:
        assert view.run()
    return blocker.args[0]


def cell(view: QCorpusWindow, row: int, column: str) -> str:
    item = view.results.model_table.item(row, MODEL_COLUMNS.index(column))
    assert item is not None
    return item.text()


def test_run_shows_the_counts_of_encoding_each_document(window, qtbot, corpus: Corpus,  # type: ignore[no-untyped-def]
                                                        two_models: tuple[str, str]) -> None:
    view = open_view(window, qtbot, [corpus.folder], two_models)
    report = run_to_end(qtbot, view)
    assert not report.cancelled and not report.missing
    assert view.results.model_table.rowCount() == 2
    for row, path in enumerate(two_models):
        e = expected(open_model(path), corpus.documents)
        assert cell(view, row, "Tokens") == f"{e.tokens:,}"
        assert cell(view, row, "Bytes/\ntoken") == f"{e.bytes / e.tokens:.2f}"
        assert cell(view, row, "Chars/\ntoken") == f"{e.chars / e.tokens:.2f}"
        assert cell(view, row, "Tokens/\nword") == f"{e.tokens / e.words:.2f}"
        assert cell(view, row, "Byte\nfallback") == f"{e.byte_fallback:,}"
        assert cell(view, row, "Unknown") == f"{e.unknown:,}"
        assert cell(view, row, "Vocabulary used").startswith(f"{e.vocab_used:,} / {len(open_model(path)):,}")
    first = expected(open_model(two_models[0]), corpus.documents).tokens
    second = expected(open_model(two_models[1]), corpus.documents).tokens
    assert cell(view, 1, "vs\nfirst") == f"{second / first:.1%}"
    # the binary file is listed with its reason, the rest was read
    left_out = [view.results.left_out.item(i).text() for i in range(view.results.left_out.count())]
    assert len(left_out) == 1 and corpus.binary in left_out[0]
    assert view.results.tabs.tabText(3) == "Left out (1)"
    assert "3 files (5 documents)" in view.results.summary.text()
    # the by-script table holds the Cyrillic words of ru.md for each model
    scripts = {(view.results.script_table.item(r, 0).text(), view.results.script_table.item(r, 1).text())
               for r in range(view.results.script_table.rowCount())}
    assert {s for s, _ in scripts} >= {"Latin", "Cyrillic", "Greek", "Han"}
    # the charts were drawn (matplotlib is in the test extra)
    assert view.results.charts.canvas is not None and view.results.charts.figure.axes


def test_cancel_stops_the_run(window, qtbot, corpus: Corpus, two_models: tuple[str, str],  # type: ignore[no-untyped-def]
                              monkeypatch: pytest.MonkeyPatch) -> None:
    from tokenprism.core.corpus import run as corpus_run

    started, release = threading.Event(), threading.Event()
    real = corpus_run.count_partition

    def held(*args: Any, **kwargs: Any) -> Any:
        started.set()
        release.wait(30)  # the run is surely still going when Cancel is pressed
        return real(*args, **kwargs)

    real_plan = corpus_run.plan
    monkeypatch.setattr(corpus_run, "count_partition", held)
    # one partition per file, so some are left when Cancel is pressed
    monkeypatch.setattr(corpus_run, "plan", lambda paths, **kw: real_plan(paths, **{**kw, "part_bytes": 1}))
    view = open_view(window, qtbot, [corpus.folder], two_models)
    view.run()
    qtbot.waitUntil(started.is_set, timeout=RESULT_TIMEOUT_MS)
    assert view.running and not view.run_button.isEnabled() and view.cancel_button.isEnabled()
    with qtbot.waitSignal(view.finished, timeout=RESULT_TIMEOUT_MS) as blocker:
        qtbot.mouseClick(view.cancel_button, Qt.MouseButton.LeftButton)
        assert view.status.text().startswith("Cancelling")
        assert not view.cancel_button.isEnabled()
        release.set()
    report = blocker.args[0]
    assert report.cancelled and all(m.reason == "cancelled" for m in report.missing)
    # the part running at Cancel (en.txt, the first) was counted, the others not
    assert {os.path.basename(m.files) for m in report.missing} == {"records.jsonl", "ru.md"}
    first = expected(open_model(two_models[0]), corpus.documents[:1]).tokens  # en.txt comes first
    assert cell(view, 0, "Tokens") == f"{first:,}"
    assert view.status.text() == "Cancelled." and view.results.summary.text().startswith("Cancelled")
    assert not view.running and view.run_button.isEnabled()


def test_cancel_closes_a_real_dask_cluster_and_never_blocks(window, qtbot, tmp_path: Path,  # type: ignore[no-untyped-def]
                                                             two_models: tuple[str, str]) -> None:
    pytest.importorskip("distributed")
    folder = tmp_path / "big"
    folder.mkdir()
    for i in range(3):  # three partitions of several seconds each
        (folder / f"part{i}.txt").write_text((EN + RU) * 40_000, encoding="utf-8")
    view = open_view(window, qtbot, [str(folder)], two_models[:1], scheduler="", workers=1)
    ticks = []
    timer = QTimer(view)
    timer.timeout.connect(lambda: ticks.append(time.monotonic()))
    timer.start(20)
    view.run()
    # the cluster is up and working when the first progress arrives
    qtbot.waitUntil(lambda: "parts" in view.status.text(), timeout=60_000)
    with qtbot.waitSignal(view.finished, timeout=60_000) as blocker:
        view.cancel()
    timer.stop()
    report = blocker.args[0]
    assert report.cancelled and report.engine.startswith("LocalCluster")
    assert len(report.missing) >= 1
    # the event loop kept turning while the cluster started and closed
    gaps = [b - a for a, b in zip(ticks, ticks[1:])]
    assert gaps and max(gaps) < 2.0
    # no worker process outlives the run
    deadline = time.monotonic() + 10
    while multiprocessing.active_children() and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not multiprocessing.active_children()


def test_enter_on_a_costly_word_opens_it_in_the_editor(window, qtbot, corpus: Corpus,  # type: ignore[no-untyped-def]
                                                       two_models: tuple[str, str]) -> None:
    window.editor.setPlainText("my own text")
    view = open_view(window, qtbot, [corpus.folder], two_models)
    run_to_end(qtbot, view)
    rows = view.results.word_rows
    # the second model's words only, then its first: a model other than the open one
    view.results.word_model.setCurrentIndex(2)
    table = view.results.word_table
    shown = [r for r in range(table.rowCount()) if not table.isRowHidden(r)]
    assert shown and all(rows[r].model_path == two_models[1] for r in shown)
    assert len(shown) == sum(r.model_path == two_models[1] for r in rows)
    index = shown[0]
    word = rows[index].word
    assert len(open_model(two_models[1]).encode(word).ids) >= 2  # costly: cut in two tokens or more
    view.results.word_table.setFocus()
    view.results.word_table.setCurrentCell(index, 0)
    with qtbot.waitSignal(window.loader.loaded, timeout=RESULT_TIMEOUT_MS):
        qtbot.keyClick(view.results.word_table, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: window.editor.toPlainText() == word, timeout=RESULT_TIMEOUT_MS)
    assert window.model_info is not None and window.model_info.path == two_models[1]
    # one edit: the user's text comes back with one undo
    window.editor.undo()
    assert window.editor.toPlainText() == "my own text"


def test_double_click_opens_a_word_with_its_model(window, qtbot, corpus: Corpus,  # type: ignore[no-untyped-def]
                                                  two_models: tuple[str, str]) -> None:
    view = open_view(window, qtbot, [corpus.folder], two_models[:1])
    run_to_end(qtbot, view)
    row = view.results.word_rows[0]
    rect = view.results.word_table.visualItemRect(view.results.word_table.item(0, 4))
    with qtbot.waitSignal(window.loader.loaded, timeout=RESULT_TIMEOUT_MS):
        # a real double-click: press/release first (an item view ignores a lone double-click event)
        qtbot.mouseClick(view.results.word_table.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
        qtbot.mouseDClick(view.results.word_table.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    qtbot.waitUntil(lambda: window.editor.toPlainText() == row.word, timeout=RESULT_TIMEOUT_MS)
    assert window.model_info is not None and window.model_info.path == two_models[0]


def test_export_writes_the_services_report(window, qtbot, corpus: Corpus, tmp_path: Path,  # type: ignore[no-untyped-def]
                                           two_models: tuple[str, str]) -> None:
    view = open_view(window, qtbot, [corpus.folder], two_models)
    run_to_end(qtbot, view)
    tokens = [expected(open_model(p), corpus.documents).tokens for p in two_models]
    out = tmp_path / "out"
    out.mkdir()
    for name, fmt in (("r.json", "json"), ("r.csv", "csv"), ("r.html", "html")):
        with qtbot.waitSignal(view.exported, timeout=RESULT_TIMEOUT_MS):
            assert view.export_to(str(out / name), fmt)
    data = json.loads((out / "r.json").read_text(encoding="utf-8"))
    assert [m["tokens"] for m in data["models"]] == tokens
    assert [m["path"] for m in data["models"]] == list(two_models)
    assert data["skipped"] == [{"path": corpus.binary, "reason": data["skipped"][0]["reason"]}]
    rows = list(csv.DictReader(io.StringIO((out / "r.csv").read_text(encoding="utf-8"))))
    per_model = {p: sum(int(r["tokens"]) for r in rows if r["path"] == p) for p in two_models}
    assert [per_model[p] for p in two_models] == tokens  # the scripts add up to the model's tokens
    page = (out / "r.html").read_text(encoding="utf-8")
    assert page.startswith("<!DOCTYPE html>") and page.count("<svg") == 3 and "http://" not in page.split("<svg")[0]
    assert sorted(os.listdir(out)) == ["r.csv", "r.html", "r.json"]  # nothing written beside them
    # a file that cannot be written: one line, the previous file kept
    with qtbot.waitSignal(view.exportFailed, timeout=RESULT_TIMEOUT_MS) as blocker:
        view.export_to(str(out / "missing-folder" / "r.json"), "json")
    assert "\n" not in blocker.args[0] and "r.json" in blocker.args[0]


def test_missing_extras_are_named_in_one_line(window, qtbot, corpus: Corpus,  # type: ignore[no-untyped-def]
                                              two_models: tuple[str, str], monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("distributed", "matplotlib", "matplotlib.figure", "matplotlib.backends.backend_qtagg"):
        monkeypatch.setitem(sys.modules, name, None)  # import raises ImportError
    view = open_view(window, qtbot, [corpus.folder], two_models, scheduler="")
    with qtbot.waitSignal(view.failed, timeout=RESULT_TIMEOUT_MS) as blocker:
        view.run()
    assert "pip install tokenprism[corpus]" in blocker.args[0] and "\n" not in blocker.args[0]
    assert view.status.text() == blocker.args[0] and not view.running
    # in-process runs need no Dask; the charts say what they need, the tables work
    view.scheduler_edit.setText(SYNCHRONOUS)
    run_to_end(qtbot, view)
    assert view.results.charts.message.text() == MISSING_MESSAGE and view.results.charts.message.isVisibleTo(view.results.charts)
    assert view.results.model_table.rowCount() == 2


def test_options_are_remembered(window, qtbot, corpus: Corpus, two_models: tuple[str, str]) -> None:  # type: ignore[no-untyped-def]
    view = open_view(window, qtbot, [corpus.folder], two_models)
    view.field_edit.setText("body")
    view.limit_spin.setValue(5)
    view.special_check.setChecked(True)
    view.model_list.item(1).setCheckState(Qt.CheckState.Unchecked)
    view.close()
    saved = cv.options_from_json(window.settings.corpus_options)
    assert saved == cv.CorpusOptions((corpus.folder,), two_models[:1], "body", 0, True, 5, SYNCHRONOUS)
    again = QCorpusWindow(window)
    qtbot.addWidget(again)
    assert again.paths() == [corpus.folder] and again.models() == [two_models[0]]
    assert again.options() == saved
    # a run without texts says what is missing instead of starting
    again.path_list.clear()
    assert not again.run() and again.status.text() == "Add a folder or files to profile."


# ---- Qt-free logic ---------------------------------------------------------------


def test_damaged_saved_options_fall_back_to_defaults() -> None:
    for text in ("", "not json", "[1, 2]", '{"paths": 3, "workers": "x", "limit_mb": -5, "field": ""}'):
        assert cv.options_from_json(text) == cv.CorpusOptions((), ())
    big = cv.options_from_json('{"workers": 10000000, "add_special": 1, "paths": ["a", 4, ""]}')
    assert big.workers == cv.MAX_WORKERS and big.add_special is False and big.paths == ("a",)


def test_progress_text_and_export_format() -> None:
    p = Progress(3, 10, 12_000_000, 40_000_000, 3.0)
    assert cv.progress_text(p) == "3 of 10 parts · 12.0 MB of 40.0 MB · 4.0 MB/s · 7.0 s left"
    assert cv.progress_permille(p) == 300
    assert cv.progress_text(Progress(0, 4, 0, 100, 0.0)) == "0 of 4 parts · 0 B of 100 B"
    assert cv.duration(3725) == "1:02:05" and cv.duration(75) == "1:15"
    assert cv.export_format("/x/report.json", cv.EXPORT_FILTERS["html"]) == ("/x/report.json", "json")
    assert cv.export_format("/x/report", cv.EXPORT_FILTERS["csv"]) == ("/x/report.csv", "csv")
    assert cv.export_format("/x/report.HTM", "") == ("/x/report.HTM", "html")


def test_menu_entry_and_shortcut(window, qtbot) -> None:  # type: ignore[no-untyped-def]
    from PySide6.QtGui import QAction

    from tokenprism.app.qt.qt_corpus import CORPUS_SHORTCUT
    from tokenprism.app.qt.qt_menus import SHORTCUTS

    feature = window.corpus
    assert feature.act in window.menus["view"].actions()
    keys = [a.shortcut().toString() for a in window.findChildren(QAction) if not a.shortcut().isEmpty()]
    assert keys.count(CORPUS_SHORTCUT) == 1
    assert CORPUS_SHORTCUT in [k for k, _ in SHORTCUTS]
    feature.act.trigger()
    assert feature.view is not None and feature.view.isVisible()
    qtbot.addWidget(feature.view)


def test_dropped_folders_are_texts_and_ggufs_are_models(window, qtbot, corpus: Corpus,  # type: ignore[no-untyped-def]
                                                        two_models: tuple[str, str]) -> None:
    from PySide6.QtCore import QMimeData, QPointF, QUrl
    from PySide6.QtGui import QDropEvent

    view = open_view(window, qtbot, [], two_models[:1])
    mime = QMimeData()
    mime.setUrls([QUrl.fromLocalFile(corpus.folder), QUrl.fromLocalFile(two_models[1]),
                  QUrl.fromLocalFile(corpus.folder + "/gone.txt")])
    event = QDropEvent(QPointF(10, 10), Qt.DropAction.CopyAction | Qt.DropAction.MoveAction, mime,
                       Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier)
    view.dropEvent(event)
    assert event.isAccepted() and event.dropAction() == Qt.DropAction.CopyAction  # never a move
    assert view.paths() == [corpus.folder] and view.models() == list(two_models)


def test_a_model_that_cannot_be_opened_is_named_in_one_line(window, qtbot, corpus: Corpus,  # type: ignore[no-untyped-def]
                                                            tmp_path: Path) -> None:
    bad = tmp_path / "broken.gguf"
    bad.write_bytes(b"GGUF" + b"\xff" * 40)
    view = open_view(window, qtbot, [corpus.folder], (str(bad),))
    with qtbot.waitSignal(view.failed, timeout=RESULT_TIMEOUT_MS) as blocker:
        view.run()
    message = blocker.args[0]
    assert "broken.gguf" in message and "\n" not in message
    assert not view.running and view.run_button.isEnabled() and view.report is None
