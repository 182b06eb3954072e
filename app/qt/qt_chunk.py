"""Tokenize ▸ Split into Chunks…: the editor's text cut into consecutive
pieces of at most N tokens (``tokenprism chunk`` from the window).

Cuts fall only between tokens at character boundaries, so without overlap
the pieces concatenate back to the text. Splitting runs in a worker (a
book takes seconds); the pieces show with their span and token count and
export as the command line's JSON Lines.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass

from PySide6.QtCore import Qt, QTimer
from PySide6.QtGui import QKeySequence
from PySide6.QtWidgets import (QAbstractItemView, QCheckBox, QDialog, QFileDialog, QFormLayout, QHBoxLayout,
                               QHeaderView, QLabel, QPushButton, QSpinBox, QTableWidget, QTableWidgetItem,
                               QVBoxLayout)

from . import qt_compat  # noqa: F401  (guards against a PySide6 bug; see there)
from tokenprism.core import Model
from tokenprism.core.chat import Chunk, chunk_text

from ..logic.pieces import readable
from .qt_background import QBackground
from .window_parts import WindowParts

DEBOUNCE_MS = 300
PREVIEW_CHARS = 80
#: rows listed; a text cut into more pieces still exports them all
MAX_ROWS = 10_000


@dataclass(frozen=True)
class Split:
    text: str
    pieces: list[Chunk]


def write_jsonl(path: str, pieces: list[Chunk]) -> int:
    """The pieces as ``tokenprism chunk --format jsonl`` prints them."""
    with open(path, "w", encoding="utf-8", newline="\n") as f:
        for i, c in enumerate(pieces):
            f.write(json.dumps(c.record(i), ensure_ascii=False) + "\n")
    return len(pieces)


class QChunkDialog(QDialog):
    """Splits a model's text into pieces that fit a token budget."""

    def __init__(self, window: WindowParts) -> None:
        super().__init__(window)
        self._window = window
        self.setWindowTitle("Split into Chunks")
        self.split: Split | None = None
        self._worker = QBackground(self, latest_only=True)
        self._worker.busyChanged.connect(self._on_busy)
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(DEBOUNCE_MS)
        self._timer.timeout.connect(self.run)
        self.max_tokens = QSpinBox()
        self.max_tokens.setRange(1, 1 << 24)
        self.max_tokens.setValue(512)
        self.max_tokens.setGroupSeparatorShown(True)
        self.max_tokens.setMinimumWidth(self.fontMetrics().horizontalAdvance("0") * 12)
        self.max_tokens.setToolTip("Tokens per piece at most (each piece tokenized alone, no BOS/EOS)")
        self.overlap = QSpinBox()
        self.overlap.setRange(0, (1 << 24) - 1)
        self.overlap.setToolTip("Start each piece about this many tokens before the previous one ended "
                                "(with overlap the pieces no longer concatenate to the text)")
        self.parse_special = QCheckBox("Parse special tokens")
        self.parse_special.setChecked(window.act_parse_special.isChecked())
        form = QFormLayout()
        form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.FieldsStayAtSizeHint)
        form.addRow("Max tokens:", self.max_tokens)
        form.addRow("Overlap:", self.overlap)
        form.addRow("", self.parse_special)
        self.status = QLabel()
        self.status.setWordWrap(True)
        self.table = QTableWidget(0, 4)
        self.table.setHorizontalHeaderLabels(["#", "Characters", "Tokens", "Text"])
        self.table.verticalHeader().hide()
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        head = self.table.horizontalHeader()
        for col in range(3):
            head.setSectionResizeMode(col, QHeaderView.ResizeMode.ResizeToContents)
        head.setSectionResizeMode(3, QHeaderView.ResizeMode.Stretch)
        self.split_button = QPushButton("Split Again")
        self.split_button.setToolTip("Split the editor's current text (F5)")
        self.split_button.setShortcut(QKeySequence("F5"))
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.setToolTip("Stop waiting for the split (Esc closes the dialog)")
        self.export_button = QPushButton("Export JSONL…")
        self.export_button.setToolTip("Save the pieces as JSON Lines, as `tokenprism chunk --format jsonl`")
        close = QPushButton("Close")
        buttons = QHBoxLayout()
        for b in (self.split_button, self.cancel_button, self.export_button):
            buttons.addWidget(b)
        buttons.addStretch(1)
        buttons.addWidget(close)
        lay = QVBoxLayout(self)
        lay.addLayout(form)
        lay.addWidget(self.status)
        lay.addWidget(self.table, 1)
        lay.addLayout(buttons)
        self.resize(760, 480)
        for spin in (self.max_tokens, self.overlap):
            spin.valueChanged.connect(lambda _v: self._timer.start())
        self.parse_special.toggled.connect(lambda _on: self._timer.start())
        self.split_button.clicked.connect(self.run)
        self.cancel_button.clicked.connect(self.cancel)
        self.export_button.clicked.connect(self.export_dialog)
        close.clicked.connect(self.close)
        self.export_button.setEnabled(False)
        self.cancel_button.setEnabled(False)

    @property
    def busy(self) -> bool:
        return self._worker.busy or self._timer.isActive()

    def run(self) -> None:
        """Split the editor's text with the window's model, in the background."""
        self._timer.stop()
        info = self._window.model_info
        if info is None:
            self.status.setText("Open a model first.")
            return
        model: Model = info.model
        text = self._window.editor.token_text()
        n, k, special = self.max_tokens.value(), self.overlap.value(), self.parse_special.isChecked()
        self.status.setText(f"Splitting {len(text):,} characters with {model.name}…")
        self._worker.submit(lambda: Split(text, chunk_text(model, text, n, k, special)), self._show, self._failed)

    def cancel(self) -> None:
        # the split cannot be interrupted; its result is dropped instead
        self._worker.submit(lambda: None, lambda _r: None, lambda _e: None)
        self.status.setText("Cancelled.")

    def _on_busy(self, busy: bool) -> None:
        self.cancel_button.setEnabled(busy)
        self.split_button.setEnabled(not busy)

    def _show(self, split: Split | None) -> None:
        if split is None:
            return
        self.split = split
        pieces = split.pieces
        total = sum(c.tokens for c in pieces)
        joined = "" if self.overlap.value() else "; they concatenate back to the text"
        self.status.setText(f"{len(pieces):,} piece{'s' if len(pieces) != 1 else ''}, {total:,} tokens in all"
                            f"{joined}." + (f" The first {MAX_ROWS:,} are listed." if len(pieces) > MAX_ROWS else ""))
        self.table.setRowCount(min(len(pieces), MAX_ROWS))
        for i, c in enumerate(pieces[:MAX_ROWS]):
            preview = readable(c.text[:PREVIEW_CHARS]) + ("…" if len(c.text) > PREVIEW_CHARS else "")
            cells = (str(i), f"{c.start:,}..{c.end:,}", f"{c.tokens:,}", preview)
            for col, value in enumerate(cells):
                item = QTableWidgetItem(value)
                if col < 3:
                    item.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
                self.table.setItem(i, col, item)
        self.export_button.setEnabled(bool(pieces))

    def _failed(self, error: BaseException) -> None:
        self.split = None
        self.table.setRowCount(0)
        self.export_button.setEnabled(False)
        self.status.setText(str(error) or type(error).__name__)

    def export_dialog(self) -> None:
        if self.split is None:
            return
        path, _ = QFileDialog.getSaveFileName(self, "Export chunks", "chunks.jsonl",
                                              "JSON Lines (*.jsonl);;All files (*)")
        if path:
            self.export_to(path)

    def export_to(self, path: str) -> None:
        split = self.split
        if split is None:
            return
        name = os.path.basename(path)
        self._worker.submit(lambda: write_jsonl(path, split.pieces),
                            lambda n: self.status.setText(f"Saved {n:,} pieces to {name}."),
                            lambda e: self.status.setText(f"{name}: {getattr(e, 'strerror', None) or e}"))

    def shutdown(self) -> None:
        self._timer.stop()
        self._worker.shutdown()


class ChunkFeature:
    """The menu entry and the dialog, made when first asked for."""

    def __init__(self, window: WindowParts) -> None:
        self.window = window
        self.dialog: QChunkDialog | None = None

    def show(self) -> QChunkDialog:
        if self.dialog is None:
            self.dialog = QChunkDialog(self.window)
        self.dialog.show()
        self.dialog.raise_()
        self.dialog.run()
        return self.dialog


def install(window: WindowParts) -> ChunkFeature:
    """Add Tokenize ▸ Split into Chunks…."""
    feature = ChunkFeature(window)
    act = window.menus["tokenize"].addAction("Split into &Chunks…")
    act.setToolTip("Cut the text into pieces of at most N tokens, as `tokenprism chunk` does")
    act.triggered.connect(lambda _=False: feature.show())
    window.addAction(act)
    return feature
