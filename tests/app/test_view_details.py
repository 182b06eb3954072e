"""What the views say about the tokens, checked field by field against
``Model.encode`` of a text with byte fallback: the table's columns (found
by their header names), the editor's tooltip, the status bar, the legend,
and "show whitespace" for line breaks."""

from __future__ import annotations

from typing import Any, Callable

import pytest
from PySide6.QtCore import QEvent, QPoint, QRect, Qt
from PySide6.QtGui import QHelpEvent, QTextOption
from PySide6.QtWidgets import QApplication, QLabel, QToolTip

from tests.app.conftest import open_model_in, wait_result
from tokenprism.core import Attr, Model

TEXT = "Hi 🙂 there,\tworld\nnew line ①"


def _utf8(s: str) -> int:
    return len(s.encode("utf-8"))


@pytest.fixture
def shown(qtbot: Any, window: Any, spm_vocab: str, models: Callable[[str], Model]) -> Any:
    model = models(spm_vocab)
    if not any(model.vocab.attrs[i] & Attr.BYTE for i in model.encode(TEXT).ids):
        pytest.skip("needs an SPM model with byte fallback (llama-spm or the SPM demo)")
    open_model_in(qtbot, window, spm_vocab)
    return wait_result(qtbot, window, lambda: window.editor.setPlainText(TEXT))


def column(window: Any, name: str) -> list[Any]:
    """The display values of the table column whose header is ``name``."""
    m = window.table.model()
    headers = [m.headerData(c, Qt.Orientation.Horizontal) for c in range(m.columnCount())]
    assert name in headers, headers
    c = headers.index(name)
    return [m.data(m.index(r, c)) for r in range(m.rowCount())]


def test_table_columns_match_the_encoding(window: Any, shown: Any, spm_vocab: str,
                                          models: Callable[[str], Model]) -> None:
    model = models(spm_vocab)
    enc = model.encode(TEXT)
    n = len(enc.ids)
    assert column(window, "#") == list(range(n))
    assert column(window, "ID") == list(enc.ids)
    pieces = column(window, "Piece")
    scores = column(window, "Score")
    types = column(window, "Type")
    chars = column(window, "Chars")
    nbytes = column(window, "Bytes")
    for i, tid in enumerate(enc.ids):
        raw = model.vocab.pieces[tid]
        attr = model.vocab.attrs[tid]
        if attr & Attr.BYTE:
            b = model.token_bytes(tid)
            assert len(b) == 1 and pieces[i].startswith(f"<0x{b[0]:02X}>"), pieces[i]
            assert types[i] == "byte"
        else:
            assert types[i] == "normal"
            if raw.isprintable() and " " not in raw:
                assert pieces[i].startswith(raw), (pieces[i], raw)  # ▁ is kept as it is
        assert float(scores[i]) == pytest.approx(model.vocab.scores[tid], rel=1e-5)
        s, e = enc.starts[i], enc.ends[i]
        assert chars[i] == f"{s}–{e}"
        assert nbytes[i] == f"{enc.byte_starts[i]}–{enc.byte_ends[i]}"
        if not attr & Attr.BYTE:  # a whole-character token: its byte span is its text's
            assert (enc.byte_starts[i], enc.byte_ends[i]) == (_utf8(TEXT[:s]), _utf8(TEXT[:e]))
    # the emoji: four byte tokens, each row spanning the whole character
    k = TEXT.index("🙂")
    rows = [i for i in range(n) if chars[i] == f"{k}–{k + 1}"]
    assert [column(window, "ID")[i] for i in rows] == list(enc.ids[rows[0]:rows[0] + 4])
    assert [pieces[i][:6] for i in rows] == ["<0xF0>", "<0x9F>", "<0x99>", "<0x82>"]
    assert all("🙂" in pieces[i] for i in rows)  # the decoded character of the group


def hover(qtbot: Any, window: Any, index: int) -> str:
    """The tooltip over the character at ``index`` of ``TEXT`` (a str
    index: Qt counts UTF-16 units, and the emoji before "world" is two)."""
    ed = window.editor
    c = ed.textCursor()
    c.setPosition(len(TEXT[:index].encode("utf-16-le")) // 2)
    r = ed.cursorRect(c)
    pt = QPoint(r.x() + 3, r.center().y())
    QApplication.sendEvent(ed.viewport(), QHelpEvent(QEvent.Type.ToolTip, pt, ed.viewport().mapToGlobal(pt)))
    qtbot.waitUntil(QToolTip.isVisible, timeout=2000)
    tip = QToolTip.text()
    QToolTip.hideText()
    return tip


def test_tooltip_has_id_piece_score_type_and_bytes(qtbot: Any, window: Any, shown: Any, spm_vocab: str,
                                                   models: Callable[[str], Model]) -> None:
    model = models(spm_vocab)
    enc = model.encode(TEXT)
    at = TEXT.index("world")
    i = enc.token_at(at)
    tid = enc.ids[i]
    piece = model.vocab.pieces[tid]
    tip = hover(qtbot, window, at)
    assert f"id {tid}" in tip
    assert piece in tip
    assert f"{model.vocab.scores[tid]:.6g}" in tip
    assert "normal" in tip
    word = TEXT[enc.starts[i]:enc.ends[i]].encode("utf-8")
    assert " ".join(f"{b:02X}" for b in word) in tip
    # the byte-fallback group: every byte token and the character's bytes
    tip = hover(qtbot, window, TEXT.index("🙂"))
    for b in "🙂".encode("utf-8"):
        assert f"&lt;0x{b:02X}&gt;" in tip or f"<0x{b:02X}>" in tip
    assert "F0 9F 99 82" in tip and "byte" in tip


def test_status_bar_shows_the_real_stats(window: Any, shown: Any, spm_vocab: str,
                                         models: Callable[[str], Model]) -> None:
    model = models(spm_vocab)
    ids = model.encode(TEXT).ids
    n, chars, nbytes = len(ids), len(TEXT), _utf8(TEXT)
    unknown = sum(1 for t in ids if model.vocab.attrs[t] & Attr.UNKNOWN)
    fallback = sum(1 for t in ids if model.vocab.attrs[t] & Attr.BYTE)
    assert fallback == 4 + 1 + 1 + 3  # 🙂, tab, line break, ①
    counts = window.stats.counts_label.text()
    assert counts == (f"<b>{n:,}</b> tokens · {chars:,} chars · {nbytes:,} bytes · "
                      f"{chars / n:.2f} chars/tok · {nbytes / n:.2f} bytes/tok")
    assert window.stats.special_label.text() == f"{unknown} unknown · {fallback} byte-fallback"
    t = window.stats.time_label.text()
    assert t.endswith(" ms") and float(t[:-3].replace(",", "")) >= 0
    assert f"{shown.stats.encode_ms:.2f} ms" in window.stats.time_label.toolTip()


def test_legend_lists_every_style(window: Any, shown: Any) -> None:
    legend = window.legend
    assert legend.isVisible()
    texts = [w.text() for w in legend.findChildren(QLabel)]
    for name in ("token", "byte fallback", "user-defined", "control / special", "unknown"):
        assert name in texts
        label = next(w for w in legend.findChildren(QLabel) if w.text() == name)
        assert label.isVisible() and label.toolTip()


def test_show_whitespace_shows_line_breaks(qtbot: Any, window: Any, shown: Any) -> None:
    ed = window.editor
    opts = ed.document().defaultTextOption
    both = QTextOption.Flag.ShowTabsAndSpaces | QTextOption.Flag.ShowLineAndParagraphSeparators
    assert not opts().flags() & both
    block = ed.document().firstBlock()  # "Hi 🙂 there,\tworld", then a line break
    layout = block.layout()
    line = layout.lineAt(layout.lineCount() - 1)
    geo = ed.blockBoundingGeometry(block).translated(ed.contentOffset())
    x = geo.left() + line.cursorToX(block.length() - 1)[0]
    area = QRect(int(x), int(geo.top() + line.y()), ed.fontMetrics().horizontalAdvance("MM"),
                 int(line.height()))  # where the line break's mark goes

    def end_of_line() -> Any:
        ed.viewport().repaint()
        return ed.viewport().grab(area).toImage()

    before = end_of_line()
    window.act_show_ws.trigger()
    assert opts().flags() & QTextOption.Flag.ShowLineAndParagraphSeparators
    assert opts().flags() & QTextOption.Flag.ShowTabsAndSpaces
    after = end_of_line()
    assert after != before  # a mark is drawn for the line break
    window.act_show_ws.trigger()
    assert not opts().flags() & both
    assert end_of_line() == before
