"""The compare view: lanes hold each model's own tokens, marks sit where
the models' cuts differ, hover links the lanes, typing updates all lanes,
a bad file does not stop the others, and the export holds every list."""

from __future__ import annotations

import csv
import json
import os

import numpy as np
import pytest
from PySide6.QtCore import QEvent, QPoint, QPointF, Qt
from PySide6.QtGui import QMouseEvent
from PySide6.QtWidgets import QApplication, QWidget

from tests.app.conftest import RESULT_TIMEOUT_MS, type_text
from tokenprism.app.logic.compare_align import cuts, delta_label, difference_marks, wrap_rows
from tokenprism.app.qt.qt_compare import CompareFeature, QCompareWindow
from tokenprism.core import open_model
from tokenprism.core.library.resources import demo_models
from tokenprism.core.vocab import TokenType

TEXT = ("Tokenizers cut text differently: unbelievable, 3.14159 and 2024-06-01.\n"
        "Zażółć gęślą jaźń; CamelCaseWords\tand_snake_case ok")


def demos() -> dict[str, str]:
    found = {k: os.path.abspath(str(p)) for k, p in demo_models().items()}
    if len(found) < 4:
        pytest.skip("the bundled demo models are not installed")
    return found


def compare(qtbot, window, paths: list[str], text: str = TEXT) -> QCompareWindow:  # type: ignore[no-untyped-def]
    window.editor.setPlainText(text)
    feature = window.findChild(CompareFeature)
    assert feature is not None
    view = feature.show(paths=paths)
    qtbot.addWidget(view)
    view.resize(1100, 760)
    wait_ready(qtbot, view)
    return view


def ready(view: QCompareWindow) -> bool:
    lanes = view.view.lanes
    if len(lanes) != len(view.lanes) or any(ln.waiting for ln in view.lanes):
        return False
    text = view.text()
    return all((ld.analysis is not None and ld.analysis.text == text) or lane.failed
               for ld, lane in zip(lanes, view.lanes))


def wait_ready(qtbot, view: QCompareWindow) -> None:  # type: ignore[no-untyped-def]
    qtbot.waitUntil(lambda: ready(view), timeout=RESULT_TIMEOUT_MS)


def move(widget: QWidget, pos: QPointF) -> None:
    """A plain mouse move (``qtbot.mouseMove`` sends none offscreen)."""
    ev = QMouseEvent(QEvent.Type.MouseMove, pos, widget.mapToGlobal(pos), Qt.MouseButton.NoButton,
                     Qt.MouseButton.NoButton, Qt.KeyboardModifier.NoModifier)
    QApplication.sendEvent(widget, ev)


def boundaries(encoding: object, n: int) -> set[int]:
    """Every box edge of one model's encoding strictly inside the text."""
    out: set[int] = set()
    for s, e in zip(encoding.starts, encoding.ends):  # type: ignore[attr-defined]
        if s < e:
            out.update(p for p in (s, e) if 0 < p < n)
    return out


# ---- pure alignment helpers ------------------------------------------------------------


def test_delta_label() -> None:
    assert delta_label(123, 100) == "+23 % tokens"
    assert delta_label(80, 100) == "−20 % tokens"
    assert delta_label(100, 100) == "same"
    assert delta_label(1001, 1000) == "+0.1 % tokens"
    assert delta_label(5, None) == ""


def test_difference_marks_union_minus_common() -> None:
    a = cuts(np.array([0, 3, 5]), np.array([3, 5, 9]), 9)
    b = cuts(np.array([0, 4]), np.array([4, 9]), 9)
    assert a.tolist() == [3, 5] and b.tolist() == [4]
    assert difference_marks([a, b]).tolist() == [3, 4, 5]
    assert difference_marks([a, a]).tolist() == []
    assert difference_marks([a]).tolist() == []


def test_wrap_rows_breaks_after_newline_and_at_spaces() -> None:
    text = "aaa bbb ccc\ndd"
    rows = wrap_rows(np.ones(len(text)), text, 8.0)
    assert rows.tolist() == [0, 8, 12, 14]  # "aaa bbb " | "ccc\n" | "dd"
    assert wrap_rows(np.ones(0), "", 8.0).tolist() == [0, 0]
    assert wrap_rows(np.ones(10), "x" * 10, 4.0).tolist() == [0, 4, 8, 10]


# ---- the view ---------------------------------------------------------------------------


def test_opens_with_current_model_and_another_type(qtbot, window) -> None:  # type: ignore[no-untyped-def]
    paths = demos()
    with qtbot.waitSignal(window.loader.loaded, timeout=RESULT_TIMEOUT_MS):
        window.open_path(paths["ugm"])
    feature = window.findChild(CompareFeature)
    view = feature.show()
    qtbot.addWidget(view)
    assert [ln.path for ln in view.lanes][0] == paths["ugm"]
    assert len(view.lanes) == 2
    wait_ready(qtbot, view)
    assert view.lanes[0].info is window.model_info  # reused, not loaded again
    assert view.lanes[1].kind != "UGM"


def test_lanes_hold_each_models_encode(qtbot, window) -> None:  # type: ignore[no-untyped-def]
    paths = demos()
    view = compare(qtbot, window, [paths[k] for k in ("spm", "bpe", "ugm", "wpm")])
    assert [ld.kind for ld in view.view.lanes] == ["SPM", "BPE", "UGM", "WPM"]
    for ld, lane in zip(view.view.lanes, view.lanes):
        expected = open_model(lane.path).encode(TEXT)
        assert ld.analysis is not None
        assert ld.analysis.encoding.token_ids == expected.token_ids


def expected_delta(n: int, first: int) -> str:
    """The summary's difference column, worked out here from two counts."""
    if n == first:
        return "same"
    pct = (n - first) * 100 / first
    sign = "+" if n > first else "−"
    whole = int(abs(pct) + 0.5)
    return f"{sign}{abs(pct):.1f} % tokens" if whole == 0 else f"{sign}{whole} % tokens"


def test_summary_rows_match_each_encoding(qtbot, window) -> None:  # type: ignore[no-untyped-def]
    paths = demos()
    text = TEXT + " 🙂 ☃ 𝔘"  # byte fallback in the SPM demo, unknowns in the UGM one
    chosen = [paths[k] for k in ("spm", "bpe", "ugm", "wpm")]
    view = compare(qtbot, window, chosen, text)
    rows = [[view.summary.item(r, c).text() for c in range(view.summary.columnCount())]
            for r in range(view.summary.rowCount())]
    encs = [open_model(p).encode(text) for p in chosen]
    counts = [len(e.ids) for e in encs]
    assert len(set(counts)) == len(counts)  # every lane differs from the first: no "same" shortcut
    n_chars = len(text)
    for r, e, p in zip(rows, encs, chosen):
        unk_id = open_model(p).config.special_ids.get("unk", -1)  # BERT's [UNK] is typed CONTROL
        n = len(e.ids)
        assert r[3] == f"{n:,}"
        assert r[4] == f"{n_chars / n:.2f}"
        assert r[5] == f"{sum(t.type == TokenType.BYTE for t in e.tokens):,}"
        unk = sum(t.type == TokenType.UNKNOWN or t.id == unk_id for t in e.tokens)
        assert r[6] == f"{unk:,}"
    assert rows[0][5] != "0" and rows[2][6] != "0" and rows[3][6] != "0"  # the counts are really exercised
    assert rows[0][7] == ""
    for r, n in zip(rows[1:], counts[1:]):
        assert r[7] == expected_delta(n, counts[0])
        assert r[7].startswith("+" if n > counts[0] else "−")


def test_a_seventh_model_is_refused(qtbot, window, tmp_path) -> None:  # type: ignore[no-untyped-def]
    paths = demos()
    copies = []
    for i in range(7):
        src = list(paths.values())[i % len(paths)]
        dst = tmp_path / f"m{i}.gguf"
        dst.write_bytes(open(src, "rb").read())
        copies.append(str(dst))
    view = compare(qtbot, window, copies[:6], "six models")
    assert len(view.lanes) == 6
    assert not view.add_button.isEnabled()
    assert view.add_model(copies[6]) is None
    assert len(view.lanes) == 6 and "At most 6" in view.status.text()
    view._fill_add_menu()
    found = [a for a in view.add_menu.actions() if a.text() == "Add…"]
    assert found and not found[0].isEnabled()
    view.remove_lane(0)
    assert view.add_model(copies[6]) is not None and len(view.lanes) == 6


def test_render_compare_screenshot(qtbot, tmp_path) -> None:  # type: ignore[no-untyped-def]
    from PySide6.QtGui import QImage

    from tokenprism.app.qt.screenshots import render_compare

    paths = demos()
    out = render_compare(tmp_path / "cmp.png", [paths["spm"], paths["bpe"], paths["wpm"]], size=(900, 500))
    img = QImage(str(out))
    assert not img.isNull()
    assert (img.width(), img.height()) == (900, 500)
    # many colours: token boxes drawn, not a blank window
    colours = {img.pixel(x, y) for x in range(0, 900, 7) for y in range(250, 500, 7)}
    assert len(colours) > 20


@pytest.mark.parametrize("ignore_spaces", [False, True])
def test_difference_marks_where_cuts_differ(qtbot, window, ignore_spaces: bool) -> None:  # type: ignore[no-untyped-def]
    paths = demos()
    view = compare(qtbot, window, [paths["spm"], paths["wpm"], paths["bpe"]])
    view.space_box.setChecked(ignore_spaces)
    n = len(TEXT)  # all BMP: UTF-16 positions are character positions
    sets = [boundaries(open_model(p).encode(TEXT), n) for p in (paths["spm"], paths["wpm"], paths["bpe"])]
    expected = set.union(*sets) - set.intersection(*sets)
    if ignore_spaces:
        expected = {p for p in expected if not (TEXT[p - 1].isspace() or TEXT[p].isspace())}
    assert expected  # the models do cut differently
    assert view.view.marks.tolist() == sorted(expected)
    assert f"{len(expected):,} position" in view.status.text()


def test_reference_vocabs_of_three_types(qtbot, window, vocab_dir: str) -> None:  # type: ignore[no-untyped-def]
    names = ("llama-spm", "gpt-2", "bert-bge")
    paths = [os.path.join(vocab_dir, f"ggml-vocab-{n}.gguf") for n in names]
    text = TEXT + " 🙂 日本語"
    view = compare(qtbot, window, paths, text)
    for ld, p in zip(view.view.lanes, paths):
        assert ld.analysis is not None
        assert ld.analysis.encoding.token_ids == open_model(p).encode(text).token_ids
    assert len(view.view.marks) > 0


def test_hover_lights_the_same_range_in_every_lane(qtbot, window) -> None:  # type: ignore[no-untyped-def]
    paths = demos()
    view = compare(qtbot, window, [paths["spm"], paths["bpe"], paths["wpm"]])
    lanes = view.view
    a = lanes.lanes[0].analysis
    assert a is not None
    start = TEXT.index("unbelievable")
    k = a.span_at(start)
    s, e = int(a.span_start16[k]), int(a.span_end16[k])
    rect0 = lanes.range_rects(0, s, e)[0]
    other = lanes.range_rects(2, s, e)[0]
    before = lanes.viewport().grab().toImage()
    move(lanes.viewport(), rect0.center())
    assert lanes.hover_range == (s, e)
    after = lanes.viewport().grab().toImage()
    px = other.center().toPoint()
    # the same characters in the last lane are now drawn highlighted
    changed = [before.pixel(QPoint(px.x() + dx, px.y() + 3)) != after.pixel(QPoint(px.x() + dx, px.y() + 3))
               for dx in range(-2, 3)]
    assert any(changed)
    sel = view.editor.extraSelections()
    assert [(x.cursor.selectionStart(), x.cursor.selectionEnd()) for x in sel] == [(s, e)]
    qtbot.mouseClick(lanes.viewport(), Qt.MouseButton.LeftButton, pos=rect0.center().toPoint())
    c = view.editor.textCursor()
    assert (c.selectionStart(), c.selectionEnd()) == (s, e)
    assert view.editor.toPlainText()[s:e] == TEXT[s:e]


def test_typing_updates_every_lane(qtbot, window) -> None:  # type: ignore[no-untyped-def]
    paths = demos()
    view = compare(qtbot, window, [paths["bpe"], paths["ugm"]], "Hello")
    view.editor.moveCursor(view.editor.textCursor().MoveOperation.End)
    type_text(view.editor, " wörld, tokens!")
    wait_ready(qtbot, view)
    text = "Hello wörld, tokens!"
    assert view.text() == text
    for ld, lane in zip(view.view.lanes, view.lanes):
        assert ld.analysis is not None and ld.analysis.text == text
        assert ld.analysis.encoding.token_ids == open_model(lane.path).encode(text).token_ids


def test_bad_file_shows_error_others_keep_working(qtbot, window, tmp_path) -> None:  # type: ignore[no-untyped-def]
    paths = demos()
    bad = tmp_path / "broken.gguf"
    bad.write_bytes(b"this is not a GGUF file at all")
    view = compare(qtbot, window, [paths["spm"], str(bad), paths["wpm"]])
    assert view.lanes[1].failed and "broken.gguf" in view.lanes[1].message
    assert view.view.lanes[1].analysis is None
    assert "Cannot open" in view.summary.item(1, 3).text()
    for i in (0, 2):
        ld = view.view.lanes[i]
        assert ld.analysis is not None
        assert ld.analysis.encoding.token_ids == open_model(view.lanes[i].path).encode(TEXT).token_ids
    type_text(view.editor, "x")
    wait_ready(qtbot, view)
    assert view.view.lanes[0].analysis.text == view.text()  # type: ignore[union-attr]
    missing = view.add_model(str(tmp_path / "missing.gguf"))
    assert missing is not None
    qtbot.waitUntil(lambda: missing.failed, timeout=RESULT_TIMEOUT_MS)
    assert "missing.gguf" in missing.message and "No such file" in missing.message
    view.remove_lane(3)
    view.remove_lane(1)
    assert [ln.path for ln in view.lanes] == [paths["spm"], paths["wpm"]]


def test_export_holds_every_models_tokens(qtbot, window, tmp_path) -> None:  # type: ignore[no-untyped-def]
    paths = demos()
    view = compare(qtbot, window, [paths["spm"], paths["ugm"], paths["wpm"]])
    out = tmp_path / "cmp.json"
    with qtbot.waitSignal(view.exported, timeout=RESULT_TIMEOUT_MS):
        assert view.export_to(str(out), "json")
    data = json.loads(out.read_text(encoding="utf-8"))
    assert data["text"] == TEXT
    assert [tl["ids"] for tl in data["lists"]] == \
        [list(open_model(paths[k]).encode(TEXT).token_ids) for k in ("spm", "ugm", "wpm")]
    out_csv = tmp_path / "cmp.csv"
    with qtbot.waitSignal(view.exported, timeout=RESULT_TIMEOUT_MS):
        view.export_to(str(out_csv), "csv")
    with open(out_csv, encoding="utf-8-sig", newline="") as f:
        rows = list(csv.DictReader(f))
    assert len(rows) == sum(len(open_model(paths[k]).encode(TEXT)) for k in ("spm", "ugm", "wpm"))


def test_positions_after_an_emoji_map_to_the_editor(qtbot, window) -> None:  # type: ignore[no-untyped-def]
    paths = demos()
    text = "a🙂b 日本 tokenizer"
    view = compare(qtbot, window, [paths["spm"], paths["bpe"]], text)
    lanes = view.view
    a = lanes.lanes[1].analysis
    assert a is not None
    pos16 = len("a🙂b 日本 tok".encode("utf-16-le")) // 2
    k = a.span_at(pos16)
    s, e = int(a.span_start16[k]), int(a.span_end16[k])
    rect = lanes.range_rects(1, s, e)[0]
    qtbot.mouseClick(lanes.viewport(), Qt.MouseButton.LeftButton, pos=rect.center().toPoint())
    chosen = view.editor.textCursor().selectedText()
    tok = a.encoding.token_at(len("a🙂b 日本 tok"))
    assert chosen == text[a.encoding.starts[tok]:a.encoding.ends[tok]]
    assert "tok" in chosen


def test_menu_entry_and_shortcut(qtbot, window) -> None:  # type: ignore[no-untyped-def]
    from PySide6.QtGui import QAction

    from tokenprism.app.qt.qt_compare import COMPARE_SHORTCUT
    from tokenprism.app.qt.qt_menus import SHORTCUTS

    demos()
    feature = window.findChild(CompareFeature)
    assert feature.act in window.menus["view"].actions()
    keys = [a.shortcut().toString() for a in window.findChildren(QAction) if not a.shortcut().isEmpty()]
    assert keys.count(COMPARE_SHORTCUT) == 1
    assert COMPARE_SHORTCUT in [k for k, _ in SHORTCUTS]
    feature.act.trigger()
    assert feature.view is not None and feature.view.isVisible()
    qtbot.addWidget(feature.view)
    wait_ready(qtbot, feature.view)
    assert len(feature.view.lanes) == 2
    feature.view.zoom(2)
    assert feature.view.view.lane_height > 0


def test_add_menu_offers_open_recent_and_demo_models(qtbot, window) -> None:  # type: ignore[no-untyped-def]
    paths = demos()
    window.settings.add_recent_file(paths["ugm"])
    view = compare(qtbot, window, [paths["spm"], paths["bpe"]])
    view._fill_add_menu()
    entries: dict[str, bool] = {}

    def walk(menu) -> None:  # type: ignore[no-untyped-def]
        for act in menu.actions():
            if act.menu() is not None:
                walk(act.menu())
            elif act.text():
                entries[act.toolTip() or act.text()] = act.isEnabled()

    walk(view.add_menu)
    assert entries[paths["spm"]] is False  # already compared
    assert entries[paths["wpm"]] is True
    assert entries[paths["ugm"]] is True  # from the recent files (and the demos)
    assert any(t.startswith("Choose GGUF") for t in entries)
    for k in ("ugm", "wpm"):
        view.add_model(paths[k])
    assert view.add_model(paths["spm"]) is None  # no duplicate lanes
    wait_ready(qtbot, view)
    assert [ld.kind for ld in view.view.lanes] == ["SPM", "BPE", "UGM", "WPM"]


# ---- characters Qt's toPlainText rewrites -------------------------------------------------


@pytest.mark.parametrize("text", ["a\u00a0b c\u00a0d", "x\u2028y"])
def test_lanes_tokenize_the_exact_text(qtbot, window, tmp_path, text: str) -> None:  # type: ignore[no-untyped-def]
    paths = demos()
    chosen = [paths["bpe"], paths["spm"]]
    view = compare(qtbot, window, chosen, "start")
    view.editor.setPlainText(text)
    wait_ready(qtbot, view)
    assert view.text() == text
    rewritten = text.replace("\u00a0", " ").replace("\u2028", "\n")
    changed = False
    for ld, p in zip(view.view.lanes, chosen):
        assert ld.analysis is not None and ld.analysis.text == text
        expected = open_model(p).encode(text).token_ids
        assert ld.analysis.encoding.token_ids == expected
        changed |= expected != open_model(p).encode(rewritten).token_ids
    assert changed  # otherwise the test could not tell the two texts apart

    # typed key by key into the compare editor too
    view.editor.clear()
    type_text(view.editor, text)
    wait_ready(qtbot, view)
    assert view.text() == text
    for ld, p in zip(view.view.lanes, chosen):
        assert ld.analysis is not None
        assert ld.analysis.encoding.token_ids == open_model(p).encode(text).token_ids

    out = tmp_path / "exact.json"
    with qtbot.waitSignal(view.exported, timeout=RESULT_TIMEOUT_MS):
        assert view.export_to(str(out), "json")
    data = json.loads(out.read_text(encoding="utf-8"))
    assert data["text"] == text
    assert [tl["ids"] for tl in data["lists"]] == [list(open_model(p).encode(text).token_ids) for p in chosen]


def test_line_separator_breaks_a_lane_row() -> None:
    assert wrap_rows(np.ones(3), "x\u2028y", 80.0).tolist() == [0, 2, 3]


def test_nbsp_and_line_separator_draw_visibly(qtbot, window) -> None:  # type: ignore[no-untyped-def]
    paths = demos()
    view = compare(qtbot, window, [paths["bpe"], paths["wpm"]], "a\u00a0b")
    lanes = view.view
    vp = lanes.viewport()

    def colours(text: str) -> int:
        """Distinct colours inside the first lane's box of the character at 1
        (a blank box is its fill and little else; a drawn mark adds shades)."""
        view.editor.setPlainText(text)
        wait_ready(qtbot, view)
        vp.repaint()
        img = vp.grab().toImage()
        r = lanes.range_rects(0, 1, 2)[0].toRect().adjusted(2, 2, -2, -2)
        assert r.width() > 2 and r.height() > 2
        return len({img.pixel(x, y) for x in range(r.left(), r.right()) for y in range(r.top(), r.bottom())})

    assert colours("a\u00a0b") > 4
    assert colours("a\u2028b") > 4
