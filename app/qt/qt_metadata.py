"""View ▸ Model Metadata: every GGUF key of the open model, with its type
and value, and facts about the file.

Large arrays (the vocabulary, scores, merges) show their length and first
items; expanding one lists its first items, never all of them. The value
of the selected key is shown in full below in a monospace view: the chat
template (``tokenizer.chat_template``) is selected first when the model
has one.
"""

from __future__ import annotations

import html
import os

from PySide6.QtCore import QModelIndex, QPersistentModelIndex, QPoint, Qt, QTimer
from PySide6.QtGui import QAction, QFontDatabase, QGuiApplication, QKeySequence
from PySide6.QtWidgets import (QDockWidget, QLabel, QMenu, QPlainTextEdit, QSplitter, QStyledItemDelegate,
                               QStyleOptionViewItem, QTreeWidget, QTreeWidgetItem, QVBoxLayout, QWidget)

from tokenprism.core.gguf_file import T_ARRAY, GGUFFile, MetadataValue
from tokenprism.core.library.gguf_summary import (CHAT_TEMPLATE_KEY, array_items, array_length, header_facts,
                                          value_summary, value_text)

from . import qt_compat  # noqa: F401  (guards against a PySide6 bug; see there)
from ..logic.analysis import ModelInfo
from ..logic.pieces import human_size
from ..logic.pieces import readable
from .qt_vocab import install_side_dock
from .window_parts import WindowParts


SHORTCUT = "Ctrl+Shift+M"
CHILD_ITEMS = 100
"""Items listed under an expanded array."""
VIEW_ITEMS = 2000
"""Items of an array shown in the value view."""
KEY_ROLE = Qt.ItemDataRole.UserRole
COL_KEY, COL_TYPE, COL_VALUE = range(3)


def _count(n: int) -> str:
    return f"{n:,}".replace(",", "\u2009")


def full_view_text(v: MetadataValue) -> str:
    """What the value view shows: a string whole, an array one item a line
    (the first :data:`VIEW_ITEMS`)."""
    if v.type == T_ARRAY:
        n = array_length(v)
        lines = [f"{i}: {readable(t, visible_spaces=False)}"
                 for i, t in enumerate(array_items(v, 0, VIEW_ITEMS))]
        if n > VIEW_ITEMS:
            lines.append(f"… {_count(n - VIEW_ITEMS)} more ({_count(n)} in all; Copy Value copies every item)")
        return "\n".join(lines)
    if isinstance(v.value, str):
        # keep line breaks and tabs, escape what would not show
        return "\n".join(readable(line, visible_spaces=False).replace("\u21e5", "\t")
                         for line in v.value.split("\n"))
    return value_summary(v)


class _MiddleElide(QStyledItemDelegate):
    """Long keys keep their start and end (``gemma4.attenti…window_pattern``)."""

    def initStyleOption(self, option: QStyleOptionViewItem, index: QModelIndex | QPersistentModelIndex) -> None:
        super().initStyleOption(option, index)
        option.textElideMode = Qt.TextElideMode.ElideMiddle


class QMetadataPanel(QWidget):
    """Header facts, the key tree and the selected value in full."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.gguf: GGUFFile | None = None
        self._wanted = False
        self._shown_for: GGUFFile | None = None
        self.name = ""

        self.facts = QLabel()
        self.facts.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.facts.setWordWrap(True)
        self.tree = QTreeWidget()
        self.tree.setColumnCount(3)
        self.tree.setHeaderLabels(["Key", "Type", "Value"])
        self.tree.setUniformRowHeights(True)
        self.tree.setItemDelegateForColumn(COL_KEY, _MiddleElide(self.tree))
        self.tree.setAlternatingRowColors(True)
        self.tree.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        self.tree.customContextMenuRequested.connect(self._context_menu)
        self.tree.itemExpanded.connect(self._fill_array)
        self.tree.currentItemChanged.connect(self._on_current)
        fm = self.fontMetrics()
        self.tree.setColumnWidth(COL_KEY, fm.horizontalAdvance("0") * 30)
        self.tree.setColumnWidth(COL_TYPE, fm.horizontalAdvance("0") * 14)
        self.value_title = QLabel()
        self.value_title.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.value = QPlainTextEdit()
        self.value.setReadOnly(True)
        self.value.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
        self.value.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        self.value.setPlaceholderText("Select a key to see its whole value.")

        self.act_copy = QAction("&Copy Value", self)
        self.act_copy.setShortcut(QKeySequence.StandardKey.Copy)
        self.act_copy.setShortcutContext(Qt.ShortcutContext.WidgetShortcut)
        self.act_copy.triggered.connect(self.copy_value)
        self.tree.addAction(self.act_copy)
        self.act_copy_key = QAction("Copy &Key", self)
        self.act_copy_key.triggered.connect(self.copy_key)

        bottom = QWidget()
        bl = QVBoxLayout(bottom)
        bl.setContentsMargins(0, 0, 0, 0)
        bl.setSpacing(2)
        bl.addWidget(self.value_title)
        bl.addWidget(self.value, 1)
        split = QSplitter(Qt.Orientation.Vertical)
        split.addWidget(self.tree)
        split.addWidget(bottom)
        split.setStretchFactor(0, 3)
        split.setStretchFactor(1, 2)
        split.setChildrenCollapsible(False)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(4, 4, 4, 4)
        lay.setSpacing(4)
        lay.addWidget(self.facts)
        lay.addWidget(split, 1)

    # ---- model ------------------------------------------------------------------------------

    def set_model(self, info: ModelInfo | None) -> None:
        self.set_gguf(info.model.gguf if info is not None else None, info.name if info is not None else "")

    def set_gguf(self, gf: GGUFFile | None, name: str = "") -> None:
        """Show ``gf`` (any GGUF file, tokenizer or not) once the panel is shown."""
        self.gguf = gf
        self.name = name
        if self._wanted:
            self._show()

    def set_wanted(self, shown: bool) -> None:
        self._wanted = shown  # a hidden one catches up when shown again
        if shown:
            self._show()

    def _show(self) -> None:
        gf = self.gguf
        if gf is self._shown_for:
            return
        self._shown_for = gf
        self.tree.clear()
        self.value.clear()
        self.value_title.clear()
        if gf is None:
            self.facts.setText("No model")
            return
        f = header_facts(gf)
        size = human_size(f.tensor_bytes) + ("" if f.tensor_bytes_exact else " (estimated)")
        self.facts.setText(
            f"<b>{html.escape(readable(self.name or os.path.basename(gf.path), visible_spaces=False))}</b><br>"
            f"GGUF v{f.version} · {human_size(f.file_size)} ({_count(f.file_size)} bytes) · "
            f"{_count(f.key_count)} keys · " + (
                f"{_count(f.tensor_count)} tensor{'s' if f.tensor_count != 1 else ''}, {size} of tensor data · "
                if f.tensor_count else "no tensors (a vocabulary-only file) · ") +
            f"alignment {f.alignment}")
        self.facts.setToolTip(gf.path)
        chat: QTreeWidgetItem | None = None
        for key, v in gf.metadata.items():
            item = QTreeWidgetItem([readable(key, visible_spaces=False), self._type_text(v),
                                    readable(value_summary(v), visible_spaces=False)])
            item.setData(COL_KEY, KEY_ROLE, key)
            item.setToolTip(COL_KEY, readable(key, visible_spaces=False))
            if v.type == T_ARRAY and array_length(v):
                item.addChild(QTreeWidgetItem(["…"]))  # filled when expanded
            self.tree.addTopLevelItem(item)
            if key == CHAT_TEMPLATE_KEY:
                chat = item
        first = chat or self.tree.topLevelItem(0)
        if first is not None:
            self.tree.setCurrentItem(first)
            QTimer.singleShot(0, lambda: self._scroll_to(first))

    def _scroll_to(self, item: QTreeWidgetItem) -> None:
        if self.tree.currentItem() is item:  # (not cleared by another model meanwhile)
            self.tree.scrollToItem(item)

    @staticmethod
    def _type_text(v: MetadataValue) -> str:
        if v.type == T_ARRAY:
            return f"{v.type_name[6:-1]}[{_count(array_length(v))}]"
        return v.type_name

    def _fill_array(self, item: QTreeWidgetItem) -> None:
        v = self._value_of(item)
        if v is None or item.parent() is not None or item.data(COL_VALUE, KEY_ROLE) == "filled":
            return
        item.setData(COL_VALUE, KEY_ROLE, "filled")
        item.takeChildren()
        n = array_length(v)
        children = [QTreeWidgetItem([f"[{i}]", "", readable(t, visible_spaces=False)])
                    for i, t in enumerate(array_items(v, 0, CHILD_ITEMS))]
        if n > CHILD_ITEMS:
            children.append(QTreeWidgetItem(["…", "", f"{_count(n - CHILD_ITEMS)} more"]))
        item.addChildren(children)

    # ---- selection and copying ------------------------------------------------------------------

    def _value_of(self, item: QTreeWidgetItem | None) -> MetadataValue | None:
        while item is not None and item.parent() is not None:
            item = item.parent()
        if item is None or self.gguf is None:
            return None
        return self.gguf.metadata.get(str(item.data(COL_KEY, KEY_ROLE)))

    def selected_key(self) -> str | None:
        item = self.tree.currentItem()
        while item is not None and item.parent() is not None:
            item = item.parent()
        return None if item is None else str(item.data(COL_KEY, KEY_ROLE))

    def _on_current(self, item: QTreeWidgetItem | None, _prev: QTreeWidgetItem | None) -> None:
        v = self._value_of(item)
        key = self.selected_key()
        if v is None or key is None:
            self.value.clear()
            self.value_title.clear()
            return
        if v.type == T_ARRAY:
            what = f"{_count(array_length(v))} items"
        elif isinstance(v.value, str):
            lines = v.value.count("\n") + 1
            what = f"{_count(len(v.value))} characters, {_count(lines)} line{'s' if lines != 1 else ''}"
        else:
            what = v.type_name
        self.value_title.setText(f"<b>{html.escape(readable(key, visible_spaces=False))}</b> · {what}")
        self.value.setPlainText(full_view_text(v))

    def copy_value(self) -> None:
        item = self.tree.currentItem()
        if item is None:
            return
        if item.parent() is not None:  # one array item: its text
            QGuiApplication.clipboard().setText(item.text(COL_VALUE))
            return
        v = self._value_of(item)
        if v is not None:
            QGuiApplication.clipboard().setText(value_text(v))

    def copy_key(self) -> None:
        key = self.selected_key()
        if key is not None:
            QGuiApplication.clipboard().setText(key)

    def _context_menu(self, pos: QPoint) -> None:
        if self.tree.itemAt(pos) is None:
            return
        menu = QMenu(self)
        menu.addActions([self.act_copy, self.act_copy_key])
        menu.exec(self.tree.viewport().mapToGlobal(pos))


def install(window: WindowParts) -> tuple[QMetadataPanel, QDockWidget]:
    """Add the Model Metadata dock (hidden until asked for) and View ▸ Model Metadata."""
    panel = QMetadataPanel()
    dock = install_side_dock(window, panel, "Model Metadata", ("metadataDock", "actModelMetadata"),
                             ("vocabularyDock", "actVocabulary"),
                             ("Model &Metadata", SHORTCUT,
                              "Every GGUF key of the model, the chat template and file facts"),
                             False, panel.set_model, panel.set_wanted)
    return panel, dock
