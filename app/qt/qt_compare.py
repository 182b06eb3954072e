"""View ▸ Compare Models: one text tokenized by 2 to 6 models side by side.

Each model is a *lane* with its own :class:`ModelLoader` and
:class:`LiveTokenizer` (each a one-thread pool), so models load and
tokenize in the background, in parallel, and a stale result is dropped as
in the main window. The lanes widget is updated only when every lane that
has a model holds the tokens of the same text, so lanes never show a mix of
old and new cuts while the user types. A file that cannot be opened shows
its message in its lane; the other lanes keep working.
"""

from __future__ import annotations

import os
from typing import Callable

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QAction, QCloseEvent, QColor, QKeySequence, QTextCursor
from PySide6.QtWidgets import (QAbstractItemView, QCheckBox, QFileDialog, QHBoxLayout, QHeaderView, QLabel, QMenu,
                               QPlainTextEdit, QPushButton, QSplitter, QTableWidget, QTableWidgetItem, QTextEdit,
                               QToolButton, QVBoxLayout, QWidget)

from tokenprism.core import TokenPrismError
from tokenprism.core.check.reference import INSTALL_HINT
from tokenprism.core.formats.export import token_list, write_export
from tokenprism.core.library.names import display_name, display_names
from tokenprism.core.library.resources import demo_models

from . import qt_compat  # noqa: F401  (guards against a PySide6 bug; see there)
from ..logic.analysis import ModelInfo
from ..logic.compare_align import LaneSummary
from .qt_background import QBackground
from .qt_compare_lane import CompareLane
from .qt_compare_lanes import LaneData, QCompareLanes
from .qt_export import EXTENSION, FILTERS, export_failure, path_and_format
from .qt_feature import WindowFeature, bring_up
from .qt_menus import KIND_NAMES
from .qt_models import QModelsPanel
from .qt_source_lane import SourceLane, choose_source
from .qt_text import document_text
from .qt_zoom import add_zoom_and_close, zoom_widgets
from .window_parts import WindowParts


COMPARE_SHORTCUT = "Ctrl+Shift+A"
EXPORT_SHORTCUT = "Ctrl+Shift+S"
MIN_MODELS = 2
MAX_MODELS = 6
DEFAULT_MODELS = 3
"""Lanes the view opens with: the open model and the two used before it."""
MAX_FOUND_ENTRIES = 40
"""A menu longer than this is hard to use; the Models panel filters the rest."""
COLUMNS = ("#", "Model", "Type", "Tokens", "Chars/token", "Byte fallback", "Unknown", "vs first")


class QCompareWindow(QWidget):
    """The compare view: model list with summary, its own editor, lanes."""

    lanesUpdated = Signal()
    """The lanes now show every ready model's tokens of one text."""
    exported = Signal(str, int)
    """(path, number of lists) after an export."""
    exportFailed = Signal(str)

    def __init__(self, window: WindowParts) -> None:
        super().__init__(window, Qt.WindowType.Window)
        self.main = window
        self.setWindowTitle("Compare Models — TokenPrism")
        self.resize(1200, 800)
        self.lanes: list[CompareLane | SourceLane] = []
        self._infos: dict[str, ModelInfo] = {}
        self.jobs = QBackground(self)
        self._zoom = 0

        self.editor = QPlainTextEdit()
        self.editor.setPlaceholderText("Type or paste text: every model tokenizes it as you type")
        self.editor.setPlainText(window.editor.token_text())
        self.view = QCompareLanes()
        self.summary = self._make_summary()
        self._make_bar()
        self._add_shortcuts()
        self._lay_out()

        self.editor.textChanged.connect(self._on_text_changed)
        self.view.rangeHovered.connect(self._on_hover)
        self.view.rangeClicked.connect(self.select_range)
        window.act_add_special.toggled.connect(self._on_options)
        window.act_parse_special.toggled.connect(self._on_options)
        self._update_buttons()

    @staticmethod
    def _make_summary() -> QTableWidget:
        """The table of models, one row each with its summary numbers."""
        summary = QTableWidget(0, len(COLUMNS))
        summary.setHorizontalHeaderLabels(list(COLUMNS))
        summary.verticalHeader().hide()
        summary.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        summary.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        summary.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        summary.setWordWrap(False)
        hh = summary.horizontalHeader()
        hh.setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        hh.setSectionResizeMode(1, QHeaderView.ResizeMode.Stretch)
        summary.setToolTip("One row per model: token count, characters per token, byte-fallback and "
                           "unknown tokens, and the token count against the first model")
        return summary

    def _make_bar(self) -> None:
        """The controls above the table: add, remove, export, the spaces
        option and the status line."""
        self.add_button = QToolButton()
        self.add_button.setText("Add Model")
        self.add_button.setToolTip(f"Add a model to compare (up to {MAX_MODELS})")
        self.add_button.setPopupMode(QToolButton.ToolButtonPopupMode.InstantPopup)
        self.add_menu = QMenu(self.add_button)
        self.add_menu.setToolTipsVisible(True)
        self.add_menu.aboutToShow.connect(self._fill_add_menu)
        self.add_button.setMenu(self.add_menu)
        self.remove_button = QPushButton("Remove")
        self.remove_button.setToolTip("Remove the selected model from the comparison (Delete)")
        self.remove_button.clicked.connect(self.remove_selected)
        self.act_export = QAction("Export…", self)
        self.act_export.setShortcut(QKeySequence(EXPORT_SHORTCUT))
        self.act_export.setToolTip(f"Save every model's tokens in one file: JSON, JSON Lines, CSV or ids "
                                   f"({EXPORT_SHORTCUT})")
        self.act_export.triggered.connect(self.export_dialog)
        self.addAction(self.act_export)
        self.export_button = QToolButton()
        self.export_button.setDefaultAction(self.act_export)
        self.space_box = QCheckBox("Ignore cuts at spaces")
        self.space_box.setChecked(True)
        self.space_box.setToolTip("Do not mark cuts next to whitespace: models that attach a space to the next "
                                  "word and models that drop spaces (WordPiece) differ at every space")
        self.space_box.toggled.connect(self._on_space_toggled)
        self.status = QLabel()
        self.status.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.status.setWordWrap(True)
        self.status.setToolTip("Hover a token to light up its characters in every lane; click it to select "
                                "them in the editor")

    def _add_shortcuts(self) -> None:
        """Delete removes the selected model; zoom in, out and back; close."""
        act_remove = QAction(self)
        act_remove.setShortcut(QKeySequence(QKeySequence.StandardKey.Delete))
        act_remove.triggered.connect(self.remove_selected)
        self.summary.addAction(act_remove)
        add_zoom_and_close(self, self.zoom)  # Ctrl+= too, as in the main window

    def _lay_out(self) -> None:
        """Bar and table on top, then the editor, then the lanes, in a
        splitter that gives the lanes most of the height."""
        bar = QHBoxLayout()
        bar.addWidget(self.add_button)
        bar.addWidget(self.remove_button)
        bar.addWidget(self.export_button)
        bar.addSpacing(12)
        bar.addWidget(self.space_box)
        bar.addSpacing(12)
        bar.addWidget(self.status, 1)
        top = QWidget()
        tv = QVBoxLayout(top)
        tv.setContentsMargins(0, 0, 0, 0)
        tv.addLayout(bar)
        tv.addWidget(self.summary, 1)
        self.splitter = QSplitter(Qt.Orientation.Vertical)
        self.splitter.addWidget(top)
        self.splitter.addWidget(self.editor)
        self.splitter.addWidget(self.view)
        self.splitter.setStretchFactor(0, 0)
        self.splitter.setStretchFactor(1, 1)
        self.splitter.setStretchFactor(2, 4)
        self.splitter.setChildrenCollapsible(False)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(6, 6, 6, 6)
        lay.addWidget(self.splitter)

    def text(self) -> str:
        """The editor's text exactly as typed (``toPlainText`` would turn
        U+00A0 into a space and U+2028 into a line feed)."""
        return document_text(self.editor.document())

    # ---- models ----------------------------------------------------------------------

    def default_paths(self) -> list[str]:
        """The open model and the models used most recently (Open Recent),
        up to :data:`DEFAULT_MODELS`: what the user works with, not a demo.
        Demo models (each of a type not yet there) fill up to
        :data:`MIN_MODELS` only when too few recent models still exist."""
        paths: list[str] = []
        kinds: set[str] = set()
        info = self.main.model_info
        if info is not None:
            paths.append(os.path.abspath(info.path))
            kinds.add(info.kind.lower())
        for p in self.main.settings.recent_files():
            if len(paths) >= DEFAULT_MODELS:
                break
            p = os.path.abspath(p)
            if p not in paths and os.path.isfile(p):
                paths.append(p)
        for kind, path in demo_models().items():
            if len(paths) >= MIN_MODELS:
                break
            if kind not in kinds and os.path.abspath(path) not in paths:
                paths.append(os.path.abspath(path))
                kinds.add(kind)
        return paths

    def add_model(self, path: str) -> CompareLane | None:
        """Add ``path`` as a new lane (loaded in the background); None when
        it is already compared or the view is full."""
        path = os.path.abspath(path)
        if not self._room_for(path):
            return None
        info = self._infos.get(path)
        main = self.main.model_info
        if info is None and main is not None and os.path.abspath(main.path) == path:
            info = main  # already loaded by the window
        lane = CompareLane(path, self.text, info, self)
        self._add_lane(lane)
        if info is not None:
            self._on_lane_changed(lane)
        self._refresh()
        return lane

    def _room_for(self, path: str) -> bool:
        """Whether ``path`` can become a lane (the status line says why not)."""
        if any(ln.path == path for ln in self.lanes):
            self.status.setText(f"{os.path.basename(path)} is already in the comparison.")
            return False
        if len(self.lanes) >= MAX_MODELS:
            self.status.setText(f"At most {MAX_MODELS} models can be compared; remove one first.")
            return False
        return True

    def _add_lane(self, lane: CompareLane | SourceLane) -> None:
        lane.set_options(self.main.act_add_special.isChecked(), self.main.act_parse_special.isChecked())
        lane.changed.connect(lambda ln=lane: self._on_lane_changed(ln))
        self.lanes.append(lane)

    def add_source(self, path: str) -> SourceLane | None:
        """Add a source tokenizer (tokenizer.json, .model, or a folder
        holding one) as a lane, run by its own library; None when it is
        already compared or the view is full."""
        path = os.path.abspath(path)
        if not self._room_for(path):
            return None
        lane = SourceLane(path, self.text, self)
        self._add_lane(lane)
        self._refresh()
        return lane

    def add_source_dialog(self) -> None:
        start = os.path.dirname(self.lanes[-1].path) if self.lanes else ""
        path = choose_source(self, start)
        if path:
            self.add_source(path)

    def remove_lane(self, index: int) -> None:
        lane = self.lanes.pop(index)
        lane.changed.disconnect()
        lane.shutdown()
        lane.deleteLater()
        self._refresh()

    def remove_selected(self) -> None:
        rows = self.summary.selectionModel().selectedRows()
        if rows and len(self.lanes) > 1:
            self.remove_lane(rows[0].row())

    def add_dialog(self) -> None:
        start = os.path.dirname(self.lanes[-1].path) if self.lanes else ""
        paths, _ = QFileDialog.getOpenFileNames(self, "Add GGUF models to compare", start,
                                                "GGUF models (*.gguf);;All files (*)")
        for p in paths:
            self.add_model(p)

    def _fill_add_menu(self) -> None:
        m = self.add_menu
        m.clear()
        have = {ln.path for ln in self.lanes}
        full = len(self.lanes) >= MAX_MODELS

        def entry(menu: QMenu, label: str, path: str) -> None:
            act = menu.addAction(label)
            act.setToolTip(path)
            act.setEnabled(not full and os.path.abspath(path) not in have)
            act.triggered.connect(lambda _=False, p=path: self.add_model(p))

        info = self.main.model_info
        if info is not None:
            entry(m, f"Open Model: {display_name(info.name, info.path)} ({info.kind})", info.path)
        recent = [p for p in self.main.settings.recent_files() if os.path.isfile(p)]
        if recent:
            sub = m.addMenu("Recent")
            sub.setToolTipsVisible(True)
            for p in recent:
                entry(sub, os.path.basename(p), p)
        demos = demo_models()
        if demos:
            sub = m.addMenu("Demo Models")
            sub.setToolTipsVisible(True)
            for kind, demo in demos.items():
                entry(sub, KIND_NAMES.get(kind, kind), str(demo))
        self._fill_found_menu(m.addMenu("Found on This Computer"), entry)
        m.addSeparator()
        browse = m.addAction("Add…")
        browse.setToolTip("Choose GGUF files")
        browse.setEnabled(not full)
        browse.triggered.connect(self.add_dialog)
        source = m.addAction("Add Source Tokenizer…")
        source.setToolTip("A tokenizer.json or SentencePiece .model (or a folder holding one), run by its own "
                          f"library ({INSTALL_HINT}), tokenizing live beside the GGUF models")
        source.setEnabled(not full)
        source.triggered.connect(self.add_source_dialog)

    def _fill_found_menu(self, sub: QMenu, entry: Callable[[QMenu, str, str], None]) -> None:
        """The Models panel's discovery results (the scan starts here when
        the panel has not run it yet; the menu shows its rows next time)."""
        sub.setToolTipsVisible(True)
        panel = self.main.findChild(QModelsPanel)
        if panel is None:
            sub.setEnabled(False)
            return
        if not panel.scanned:
            act = sub.addAction("Look for Models")
            act.setToolTip("Scan this computer as the Models panel does; the models found are listed here")
            act.triggered.connect(panel.rescan)
            return
        found = panel.comparable()
        kinds = panel.table_model.kinds
        for fm in found[:MAX_FOUND_ENTRIES]:
            entry(sub, f"{fm.name} ({kinds[fm.tokenizer]})", fm.path)
        if len(found) > MAX_FOUND_ENTRIES:
            more = sub.addAction(f"{len(found) - MAX_FOUND_ENTRIES:,} more in the Models panel")
            more.setEnabled(False)
        if panel.scanning:
            busy = sub.addAction("Scanning…")
            busy.setEnabled(False)
        elif not found:
            none = sub.addAction("No models found")
            none.setEnabled(False)

    # ---- updates ---------------------------------------------------------------------

    def _on_lane_changed(self, lane: CompareLane | SourceLane) -> None:
        if isinstance(lane, CompareLane) and lane.info is not None:
            self._infos[lane.path] = lane.info
        self._refresh()

    def _on_text_changed(self) -> None:
        for lane in self.lanes:
            if lane.info is not None:
                lane.text_changed()
        self._update_status()

    def _on_space_toggled(self, on: bool) -> None:
        self.view.set_ignore_space_cuts(on)
        self._update_status()

    def _on_options(self) -> None:
        add, parse = self.main.act_add_special.isChecked(), self.main.act_parse_special.isChecked()
        for lane in self.lanes:
            lane.set_options(add, parse)

    def _refresh(self) -> None:
        """Show the lanes when every model with tokens agrees on the text."""
        ready = [ln.result for ln in self.lanes if ln.result is not None]
        waiting = any(ln.info is not None and ln.waiting for ln in self.lanes)
        if not waiting and len({a.text for a in ready}) <= 1:
            text = ready[0].text if ready else self.text()
            data = [LaneData(name, ln.kind, ln.result, ln.message or ("Loading…" if ln.loading else ""), ln.path)
                    for ln, name in zip(self.lanes, self.lane_names())]
            self.view.set_lanes(text, data)
            self._fill_summary()
            self.lanesUpdated.emit()
        elif len(self.view.lanes) != len(self.lanes):
            # a lane was added or removed: show the structure now, tokens follow
            self.view.set_lanes(self.view.text, [LaneData(name, ln.kind, None, ln.message or "…", ln.path)
                                                  for ln, name in zip(self.lanes, self.lane_names())])
            self._fill_summary()
        self._update_buttons()
        self._update_status()

    def lane_names(self) -> list[str]:
        """What each lane is called: its model's name, or its file's name
        when that name is a hash, a path or the same as another lane's."""
        return display_names([(ln.metadata_name, ln.path) for ln in self.lanes])

    def summaries(self) -> list[LaneSummary | None]:
        """The summary of every lane with tokens (None for the others)."""
        out: list[LaneSummary | None] = []
        first: int | None = None
        for i, ld in enumerate(self.view.lanes):
            a = ld.analysis
            if a is None:
                out.append(None)
                continue
            s = a.stats
            out.append(LaneSummary(s.tokens, s.chars, s.byte_fallback, s.unknown, None if i == 0 else first))
            if i == 0:
                first = s.tokens
        return out

    def _fill_summary(self) -> None:
        t = self.summary
        lanes = self.view.lanes
        t.setRowCount(len(lanes))
        first_ok = bool(lanes) and lanes[0].analysis is not None
        for i, (ld, sm) in enumerate(zip(lanes, self.summaries())):
            path = ld.path
            cells = [str(i + 1), ld.name, ld.kind]
            if sm is None:
                cells += [ld.message or "…", "", "", "", ""]
            else:
                cells += [f"{sm.tokens:,}", f"{sm.chars_per_token:.2f}", f"{sm.byte_fallback:,}",
                          f"{sm.unknown:,}", sm.delta if first_ok else ""]
            for c, value in enumerate(cells):
                item = QTableWidgetItem(value)
                item.setToolTip(path if c == 1 else (ld.message if sm is None and c == 3 else value))
                if c >= 3 and sm is not None:
                    item.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
                if sm is None and c == 3 and ld.message and self.lanes[i].failed:
                    item.setForeground(QColor("#d02c26"))
                t.setItem(i, c, item)
            if sm is None:
                t.setSpan(i, 3, 1, len(COLUMNS) - 3)
            elif t.columnSpan(i, 3) > 1:
                t.setSpan(i, 3, 1, 1)
        h = t.horizontalHeader().height() + sum(t.rowHeight(r) for r in range(t.rowCount())) + 2 * t.frameWidth()
        t.setFixedHeight(h + 2)  # every model's row, never a scroll bar

    def _update_buttons(self) -> None:
        self.add_button.setEnabled(len(self.lanes) < MAX_MODELS)
        self.remove_button.setEnabled(len(self.lanes) > 1)
        self.act_export.setEnabled(any(ln.analysis is not None for ln in self.view.lanes))

    def _update_status(self) -> None:
        n = len(self.lanes)
        marks = len(self.view.marks)
        if n < MIN_MODELS:
            self.status.setText("Add another model to compare.")
        elif any(ln.waiting for ln in self.lanes):
            self.status.setText("Tokenizing…")
        else:
            self.status.setText(f"{marks:,} position{'s' if marks != 1 else ''} where the models cut "
                                "differently (red marks)")

    def zoom(self, step: int) -> None:
        """Larger (1) or smaller (-1) text in the editor and lanes, or back to normal (0)."""
        self._zoom = zoom_widgets((self.editor, self.view), self._zoom, step)

    # ---- linked ranges --------------------------------------------------------------------

    def _on_hover(self, start: int, end: int) -> None:
        sel: list[QTextEdit.ExtraSelection] = []
        if start >= 0:
            es = QTextEdit.ExtraSelection()
            c = QTextCursor(self.editor.document())
            c.setPosition(start)
            c.setPosition(end, QTextCursor.MoveMode.KeepAnchor)
            es.cursor = c
            color = QColor(self.palette().highlight().color())
            color.setAlphaF(0.3)
            es.format.setBackground(color)
            sel.append(es)
        self.editor.setExtraSelections(sel)

    def select_range(self, start: int, end: int) -> None:
        """Select UTF-16 ``[start, end)`` in the compare editor."""
        c = self.editor.textCursor()
        n = self.editor.document().characterCount() - 1
        c.setPosition(min(start, n))
        c.setPosition(min(end, n), QTextCursor.MoveMode.KeepAnchor)
        self.editor.setTextCursor(c)

    # ---- export -----------------------------------------------------------------------

    def export_dialog(self) -> None:
        q = self.main.settings.q
        folder = q.value("export/folder", "")
        if not isinstance(folder, str) or not os.path.isdir(folder):
            folder = os.path.expanduser("~")
        fmt = q.value("export/format", "json")
        fmt = fmt if isinstance(fmt, str) and fmt in FILTERS else "json"
        path, chosen = QFileDialog.getSaveFileName(self, "Export Compared Tokens",
                                                   os.path.join(folder, f"compare-tokens{EXTENSION[fmt]}"),
                                                   ";;".join(FILTERS.values()), FILTERS[fmt])
        if not path:
            return
        path, fmt = path_and_format(path, chosen)
        q.setValue("export/folder", os.path.dirname(path))
        q.setValue("export/format", fmt)
        self.export_to(path, fmt)

    def export_to(self, path: str, fmt: str) -> bool:
        """Write every shown lane's tokens to ``path`` (in the background)."""
        shown = [ld.analysis for ld in self.view.lanes if ld.analysis is not None]
        if not shown:
            self.status.setText("No tokens to export yet.")
            return False
        encodings = [(a.model, a.encoding) for a in shown]

        def job() -> int:
            write_export(path, [token_list(m, e) for m, e in encodings], fmt)
            return len(encodings)

        name = os.path.basename(path)
        self.status.setText(f"Exporting to {name}…")
        self.jobs.submit(job, lambda n: self._exported(path, n), lambda e: self._export_failed(name, e))
        return True

    def _exported(self, path: str, n: int) -> None:
        self.status.setText(f"Exported {n} models' tokens to {os.path.basename(path)}.")
        self.exported.emit(path, n)

    def _export_failed(self, name: str, error: BaseException) -> None:
        message = export_failure(name, error)
        self.status.setText(message)
        self.exportFailed.emit(message)

    # ---- lifetime ---------------------------------------------------------------------

    def closeEvent(self, event: QCloseEvent) -> None:
        self.view.set_hover(-1, -1)
        super().closeEvent(event)

    def shutdown(self) -> None:
        for lane in self.lanes:
            lane.shutdown()
        self.jobs.shutdown()


class CompareFeature(WindowFeature):
    """View ▸ Compare Models of one main window (the view is made on first use)."""

    def __init__(self, window: WindowParts) -> None:
        super().__init__(window, "compareFeature", "Compare &Models…", COMPARE_SHORTCUT,
                         f"Tokenize one text with 2 to {MAX_MODELS} models side by side", "view", separate=True)
        self.view: QCompareWindow | None = None
        self.act.triggered.connect(self.show)

    def show(self, _checked: bool = False, paths: list[str] | None = None) -> QCompareWindow:
        """Open the compare view (with ``paths``, else the defaults, the first time)."""
        if self.view is None:
            self.view = QCompareWindow(self.window)
            for p in paths if paths is not None else self.view.default_paths():
                self.view.add_model(p)
        elif paths is not None:
            for p in paths:
                self.view.add_model(p)
        bring_up(self.view)
        return self.view

    def shutdown(self) -> None:
        if self.view is not None:
            self.view.shutdown()


def install(window: WindowParts) -> CompareFeature:
    """Add View ▸ Compare Models… to ``window``."""
    return CompareFeature(window)
