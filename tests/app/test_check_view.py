"""Tokenize ▸ Check Against Source… end to end on a byte-level BPE source
trained here, converted to GGUF, and a copy of it with one stage altered
(its pre-tokenizer cuts spaces off words); and a source as a lane of the
compare view."""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any, Callable

import pytest

from tests.app.conftest import RESULT_TIMEOUT_MS, open_model_in
from tests.check_sources import save_hf, to_gguf, train_byte_level

pytest.importorskip("tokenizers")
pytest.importorskip("sentencepiece")

from tokenprism.app.logic.check_view import divergence_cells, open_source, source_analysis, window_texts  # noqa: E402
from tokenprism.app.qt import qt_check  # noqa: E402
from tokenprism.app.qt.qt_check import CheckFeature, QCheckWindow  # noqa: E402
from tokenprism.app.qt.qt_compare import CompareFeature  # noqa: E402
from tokenprism.app.qt.qt_source_lane import SourceLane  # noqa: E402
from tokenprism.core.check import load_reference  # noqa: E402


@pytest.fixture(scope="module")
def sources(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """The GGUF, its own source, and the source with its split rule altered."""
    from tokenizers import Regex, pre_tokenizers

    work = tmp_path_factory.mktemp("check-view")
    tok = train_byte_level(pre_tokenizers.ByteLevel(add_prefix_space=False))
    clean = save_hf(tok, work / "clean")
    model = to_gguf(clean, work / "tiny.gguf")
    tok.pre_tokenizer = pre_tokenizers.Sequence([
        pre_tokenizers.Split(Regex(r"\p{L}+|\p{N}+|\s+|[^\p{L}\p{N}\s]+"), behavior="isolated"),
        pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)])
    altered = save_hf(tok, work / "altered")
    broken = work / "broken"
    broken.mkdir()
    (broken / "tokenizer.json").write_text("{not json", encoding="utf-8")
    return {"gguf": model.path, "clean": str(clean), "altered": str(altered), "broken": str(broken)}


def check_window(qtbot, window, sources: dict[str, str]) -> tuple[CheckFeature, QCheckWindow]:  # type: ignore[no-untyped-def]
    open_model_in(qtbot, window, sources["gguf"])
    feature = window.findChild(CheckFeature)
    assert feature is not None
    view = feature.show()
    qtbot.addWidget(view)
    return feature, view


def run(qtbot, view: QCheckWindow, source: str) -> Any:  # type: ignore[no-untyped-def]
    with qtbot.waitSignal(view.finished, timeout=60_000) as blocker:
        assert view.start(source)
    return blocker.args[0]


def test_check_lists_the_divergence_and_clicking_shows_both_lanes(qtbot, window, sources) -> None:  # type: ignore[no-untyped-def]
    _, view = check_window(qtbot, window, sources)
    window.editor.setPlainText("")
    outcome = run(qtbot, view, sources["altered"])
    result = outcome.result
    assert not outcome.cancelled and result.texts_checked == len(window_texts(""))
    assert result.divergences and {d.stage for d in result.divergences} == {"pre_tokenizer"}
    assert view.progress.isHidden() and view.cancel_button.isHidden()
    # the list: one row per minimal string, its stage beside it
    t = view.table
    assert t.rowCount() == len(result.divergences)
    assert [t.item(r, 1).text() for r in range(t.rowCount())] == ["pre_tokenizer"] * t.rowCount()
    row = min(range(t.rowCount()), key=lambda r: len(result.divergences[r].text))
    d = result.divergences[row]
    assert len(d.text) <= 3 and t.item(row, 0).text() == repr(d.text)
    # both sides' tokens as id and readable piece (no byte-level Ġ on one side only)
    model = outcome.model
    assert t.item(row, 3).text() == "  ".join(f"{i} '{model.display_piece(i)}'" for i in d.gguf_ids)
    assert t.item(row, 4).text() == "  ".join(f"{i} '{model.display_piece(i)}'" for i in d.reference_ids)
    assert divergence_cells(d, model, outcome.source)[4] == t.item(row, 4).text()
    assert "words: GGUF" in t.item(row, 0).toolTip() and "to do:" in t.item(row, 0).toolTip()
    assert "tokenizer.json" in view.summary.text() and "100.0 % of pieces shared" in view.summary.text()

    with qtbot.waitSignal(view.lanesUpdated, timeout=RESULT_TIMEOUT_MS):
        t.selectRow(row)
    assert window.editor.token_text() == d.text
    gguf_lane, source_lane = view.lanes.lanes
    assert gguf_lane.analysis is not None and source_lane.analysis is not None
    # each lane holds its own side's ids: the GGUF's from llama.cpp's rules,
    # the source's from the tokenizers library itself
    ref = load_reference(sources["altered"])
    assert list(source_lane.analysis.ids) == ref.encode(d.text, False) == d.reference_ids
    assert list(gguf_lane.analysis.ids) == d.gguf_ids != d.reference_ids
    assert source_lane.name == "tokenizer.json (source)" and source_lane.kind == "tokenizers"
    assert len(view.lanes.marks) > 0  # the two cut the string differently


def test_a_matching_source_finds_nothing(qtbot, window, sources) -> None:  # type: ignore[no-untyped-def]
    _, view = check_window(qtbot, window, sources)
    outcome = run(qtbot, view, sources["clean"])
    assert outcome.result.divergences == [] and view.table.rowCount() == 0
    assert "no divergence" in view.summary.text()
    assert view.warnings.count() == 1 and "Nothing" in view.warnings.item(0).text()


def test_cancel_keeps_what_was_checked(qtbot, window, sources, monkeypatch: pytest.MonkeyPatch) -> None:  # type: ignore[no-untyped-def]
    _, view = check_window(qtbot, window, sources)
    reached, release = threading.Event(), threading.Event()
    real = qt_check.run_check

    def gated(model: Any, path: str, texts: list[str], add: bool, progress: Callable[[int, int], None],
              cancel: threading.Event) -> Any:
        def report(done: int, total: int) -> None:
            progress(done, total)
            if done == 5:  # hold the worker here until Cancel was pressed
                reached.set()
                release.wait(30)
        return real(model, path, texts, add, report, cancel)

    monkeypatch.setattr(qt_check, "run_check", gated)
    with qtbot.waitSignal(view.finished, timeout=60_000) as blocker:
        assert view.start(sources["altered"])
        qtbot.waitUntil(reached.is_set, timeout=RESULT_TIMEOUT_MS)
        assert view.cancel_button.isVisible() and not view.choose_button.isEnabled()
        qtbot.mouseClick(view.cancel_button, qt_check.Qt.MouseButton.LeftButton)
        release.set()
    outcome = blocker.args[0]
    assert outcome.cancelled and outcome.result.texts_checked == 5
    assert "before Cancel" in view.summary.text()
    assert view.choose_button.isEnabled() and view.cancel_button.isHidden()


def test_a_broken_source_says_why_in_one_line(qtbot, window, sources) -> None:  # type: ignore[no-untyped-def]
    _, view = check_window(qtbot, window, sources)
    assert run(qtbot, view, sources["broken"]) is None
    assert "tokenizers cannot read it" in view.error and "\n" not in view.error
    assert view.summary.text() == view.error and view.table.rowCount() == 0
    assert run(qtbot, view, str(Path(sources["broken"]) / "missing")) is None
    assert "no such file or folder" in view.error


def test_without_a_model_the_check_asks_for_one(qtbot, window, sources) -> None:  # type: ignore[no-untyped-def]
    feature = window.findChild(CheckFeature)
    assert feature is not None and feature.act.shortcut().toString() == qt_check.CHECK_SHORTCUT
    assert feature.act in window.menus["tokenize"].actions()
    assert window.model_info is None  # a window made without restoring opens nothing
    feature.choose()
    assert window.banner.isVisible() and "Open a GGUF model first" in window.banner.text
    assert feature.view is None  # no dialog, no results window


def test_compare_source_lane_matches_the_gguf_lane(qtbot, window, sources, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    open_model_in(qtbot, window, sources["gguf"])
    text = "Hello world, naïve café 12345 😀"
    window.editor.setPlainText(text)
    feature = window.findChild(CompareFeature)
    assert feature is not None
    view = feature.show(paths=[sources["gguf"]])
    qtbot.addWidget(view)
    lane = view.add_source(sources["clean"])
    assert isinstance(lane, SourceLane)

    def ready() -> bool:
        lanes = view.view.lanes
        return (len(lanes) == 2 and all(ld.analysis is not None and ld.analysis.text == text for ld in lanes))

    qtbot.waitUntil(ready, timeout=RESULT_TIMEOUT_MS)
    gguf, source = view.view.lanes
    assert list(source.analysis.ids) == list(gguf.analysis.ids) == load_reference(sources["clean"]).encode(text, False)
    assert list(source.analysis.span_start16) == list(gguf.analysis.span_start16)
    assert len(view.view.marks) == 0 and source.kind == "tokenizers"
    # the export holds the source's list beside the GGUF's
    out = tmp_path / "cmp.json"
    with qtbot.waitSignal(view.exported, timeout=RESULT_TIMEOUT_MS):
        assert view.export_to(str(out), "json")
    lists = json.loads(out.read_text(encoding="utf-8"))["lists"]
    assert [tl["ids"] for tl in lists] == [list(gguf.analysis.ids)] * 2
    # typing goes on updating the source lane, and an unreadable source says so in its lane
    view.editor.setPlainText("plain words")
    qtbot.waitUntil(lambda: ready_text(view, "plain words"), timeout=RESULT_TIMEOUT_MS)
    bad = view.add_source(sources["broken"])
    assert bad is not None
    qtbot.waitUntil(lambda: bad.failed, timeout=RESULT_TIMEOUT_MS)
    assert "tokenizers cannot read it" in bad.message


def ready_text(view: Any, text: str) -> bool:
    lanes = view.view.lanes
    return len(lanes) >= 2 and all(ld.analysis is not None and ld.analysis.text == text for ld in lanes[:2])


def test_source_analysis_of_a_sentencepiece_model(tmp_path: Path) -> None:
    from tests.check_sources import train_spm

    src = train_spm(tmp_path / "sp" / "tokenizer.model", model_type="bpe", vocab_size=500, byte_fallback=True,
                    normalization_rule_name="identity")
    source = open_source(str(src))
    text = "Hi 漢"
    a = source_analysis(source, text, True)
    ref = load_reference(src)
    assert list(a.ids) == ref.encode(text, True)
    # BOS covers no text; the byte pieces of 漢 are one box in the lane
    assert a.empty_tokens.tolist()[:1] == [0]
    assert a.span_start16.tolist()[-1] == 3 and a.span_end16.tolist()[-1] == 4 and a.span_style.tolist()[-1] >= 1


def test_a_hanging_source_gives_up_on_the_lane(sources, monkeypatch: pytest.MonkeyPatch) -> None:  # type: ignore[no-untyped-def]
    from tokenprism.app.logic import check_view
    from tokenprism.core.check import CheckError

    source = open_source(sources["clean"])
    release = threading.Event()
    monkeypatch.setattr(check_view, "LANE_TIMEOUT_S", 0.2)
    monkeypatch.setattr(source.ref, "tokens", lambda text, add: release.wait(5))
    try:
        with pytest.raises(CheckError, match=r"did not tokenize the text: no answer within 0.2 s"):
            source_analysis(source, "Hello", False)
    finally:
        release.set()


def test_missing_library_names_the_install(qtbot, window, sources, monkeypatch: pytest.MonkeyPatch) -> None:  # type: ignore[no-untyped-def]
    from tokenprism.core.check import reference

    _, view = check_window(qtbot, window, sources)

    def no(name: str) -> Any:
        raise ImportError(name)

    monkeypatch.setattr(reference.importlib, "import_module", no)
    assert run(qtbot, view, sources["clean"]) is None
    assert "needs the 'tokenizers' package: pip install 'tokenprism[check]'" in view.error


def test_compare_offers_a_source_lane(qtbot, window, sources) -> None:  # type: ignore[no-untyped-def]
    open_model_in(qtbot, window, sources["gguf"])
    feature = window.findChild(CompareFeature)
    assert feature is not None
    view = feature.show(paths=[sources["gguf"]])
    qtbot.addWidget(view)
    view._fill_add_menu()
    entry = next(a for a in view.add_menu.actions() if a.text() == "Add Source Tokenizer…")
    assert entry.isEnabled() and "tokenprism[check]" in entry.toolTip()


def test_the_source_dialog_takes_a_folder_too(qtbot, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    from PySide6.QtWidgets import QDialog

    from tokenprism.app.qt.qt_source_lane import QSourceDialog

    folder = tmp_path / "models--org--name"
    folder.mkdir()
    dialog = QSourceDialog(None, str(tmp_path))
    qtbot.addWidget(dialog)
    dialog.setDirectory(str(folder))
    dialog.show()
    assert dialog.folder_button.isVisible()
    qtbot.mouseClick(dialog.folder_button, qt_check.Qt.MouseButton.LeftButton)
    assert dialog.result() == QDialog.DialogCode.Accepted.value and dialog.path() == str(folder)
