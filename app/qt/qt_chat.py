"""View ▸ Chat: what the model sees of a conversation.

A message list editor (role, content, add, remove, reorder), the template
picker (the file's own templates, named ones included, and the common ones
shipped with TokenPrism, with a notice when the template is not the
file's), the generation-prompt and add-special toggles, and the rendering
with every token coloured by its origin and counted, live as the user
types (debounced, rendered in a worker). "Compare with" renders the same
conversation with a second model beside the first.

The conversation belongs to the view, not to a model: switching models
keeps it, and the settings keep it for the next session.
"""

from __future__ import annotations

import os
from typing import Callable

from PySide6.QtCore import QSignalBlocker, Qt, QTimer, Signal
from PySide6.QtGui import QAction, QKeySequence, QResizeEvent
from PySide6.QtWidgets import (QCheckBox, QComboBox, QDockWidget, QFileDialog, QFrame, QHBoxLayout, QLabel,
                               QPlainTextEdit, QPushButton, QScrollArea, QSpinBox, QSplitter, QTabWidget,
                               QToolButton, QVBoxLayout, QWidget)

from . import qt_compat  # noqa: F401  (guards against a PySide6 bug; see there)
from tokenprism.core import Model, open_model
from tokenprism.core.chat import ROLES

from ..logic.analysis import ModelInfo
from ..logic.chat_view import (STARTER, ChatRequest, TemplateOption, conversation_from_json, conversation_to_json,
                               message_colour, preferred_template, template_options)
from .qt_background import QBackground
from .qt_chat_pane import QChatPane
from .qt_vocab import install_side_dock
from .styles import is_dark
from .window_parts import WindowParts

SHORTCUT = "Ctrl+Shift+H"
ADD_SHORTCUT = "Ctrl+Return"
DEBOUNCE_MS = 200
SETTINGS_KEY = "chat/conversation"
MAX_TEMPLATE_FILE = 1 << 20  # a .jinja larger than this is not a chat template
MIN_LINES, MAX_LINES = 2, 8  # a message box's height, in lines


class QMessageCard(QFrame):
    """One message: its role, content, token count and move/remove buttons."""

    changed = Signal()
    moveRequested = Signal(int)
    removeRequested = Signal()

    def __init__(self, role: str, content: str) -> None:
        super().__init__()
        self.setFrameShape(QFrame.Shape.StyledPanel)
        self.marker = QLabel()
        self.marker.setFixedWidth(6)
        self.marker.setAutoFillBackground(True)
        self.role = QComboBox()
        self.role.addItems(list(ROLES))
        self.role.setCurrentText(role)
        self.role.setToolTip("Who says this message")
        self.count = QLabel("")
        self.count.setToolTip("Tokens of this message's content (template and special tokens not included)")
        head = QHBoxLayout()
        head.setContentsMargins(0, 0, 0, 0)
        head.addWidget(self.role)
        head.addWidget(self.count, 1)
        self.buttons: dict[str, QToolButton] = {}
        for name, text, tip in (("up", "▲", "Move up"), ("down", "▼", "Move down"),
                                ("remove", "✕", "Remove this message")):
            b = QToolButton()
            b.setText(text)
            b.setToolTip(tip)
            b.setAutoRaise(True)
            head.addWidget(b)
            self.buttons[name] = b
        self.content = QPlainTextEdit(content)
        self.content.setTabChangesFocus(True)
        self.content.setPlaceholderText("Message text")
        self._fit()
        body = QVBoxLayout()
        body.setContentsMargins(0, 0, 0, 0)
        body.setSpacing(2)
        body.addLayout(head)
        body.addWidget(self.content)
        lay = QHBoxLayout(self)
        lay.setContentsMargins(2, 2, 4, 2)
        lay.addWidget(self.marker)
        lay.addLayout(body, 1)
        self.role.currentTextChanged.connect(lambda _t: self.changed.emit())
        self.content.textChanged.connect(self.changed.emit)
        self.content.textChanged.connect(self._fit)
        self.buttons["up"].clicked.connect(lambda: self.moveRequested.emit(-1))
        self.buttons["down"].clicked.connect(lambda: self.moveRequested.emit(1))
        self.buttons["remove"].clicked.connect(self.removeRequested.emit)

    def _fit(self) -> None:
        # as tall as its text, between MIN_LINES and MAX_LINES (then it scrolls)
        # (a plain text layout measures its document in visual lines)
        doc = self.content.document()
        lines = max(doc.lineCount(), round(doc.documentLayout().documentSize().height()))
        shown = min(max(lines, MIN_LINES), MAX_LINES)
        margins = self.content.contentsMargins()
        frame = 2 * self.content.frameWidth() + margins.top() + margins.bottom()
        self.content.setFixedHeight(shown * self.content.fontMetrics().lineSpacing() + frame + 8)

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        self._fit()

    def message(self) -> tuple[str, str]:
        return self.role.currentText(), self.content.toPlainText()

    def set_colour(self, colour: str) -> None:
        self.marker.setStyleSheet(f"background: {colour}; border-radius: 2px;")


class QChatPanel(QWidget):
    """The chat view: conversation editor on top, renderings below."""

    def __init__(self, recent: Callable[[], list[str]], saved: str = "",
                 save: Callable[[str], None] | None = None) -> None:
        super().__init__()
        self._recent = recent
        self._save = save
        self._wanted = True
        self.options: list[TemplateOption] = []
        self.custom: TemplateOption | None = None
        self.cards: list[QMessageCard] = []
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(DEBOUNCE_MS)
        self._timer.timeout.connect(self.refresh)
        self._loader = QBackground(self, latest_only=True)
        self._build()
        self.set_conversation(conversation_from_json(saved) or STARTER)

    # ---- construction -------------------------------------------------------------

    def _build(self) -> None:
        self.template = QComboBox()
        self.template.setToolTip("The chat template: the file's own, or a common one shipped with TokenPrism")
        self.template.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToContents)
        self.load_template = QToolButton()
        self.load_template.setText("Load .jinja…")
        self.load_template.setToolTip("Render with a template from a .jinja file")
        self.generation = QCheckBox("Generation prompt")
        self.generation.setChecked(True)
        self.generation.setToolTip("add_generation_prompt: end with the header of the assistant's reply")
        self.add_special = QCheckBox("Add BOS/EOS")
        self.add_special.setToolTip("Add the model's BOS/EOS as llama.cpp's server does (transformers does "
                                    "not); warns when that doubles a BOS the template already wrote")
        self.context = QSpinBox()
        self.context.setRange(0, 1 << 30)
        self.context.setSingleStep(1024)
        self.context.setSpecialValueText("file's")
        self.context.setGroupSeparatorShown(True)
        self.context.setToolTip("Context length to measure against (file's: {arch}.context_length)")
        self.compare_with = QComboBox()
        self.compare_with.setToolTip("Render the same conversation with a second model, side by side")
        self.compare_with.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToContents)
        self.compare_with.setMinimumContentsLength(12)
        # two rows, so the view fits a side dock
        bar = QHBoxLayout()
        bar.setContentsMargins(0, 0, 0, 0)
        for head in (QLabel("Template:"), self.template, self.load_template):
            bar.addWidget(head)
        bar.addStretch(1)
        bar.addWidget(QLabel("Compare with:"))
        bar.addWidget(self.compare_with)
        toggles = QHBoxLayout()
        toggles.setContentsMargins(0, 0, 0, 0)
        for w in (self.generation, self.add_special, QLabel("Context:"), self.context):
            toggles.addWidget(w)
        toggles.addStretch(1)

        self.message_box = QVBoxLayout()
        self.message_box.setContentsMargins(0, 0, 0, 0)
        self.message_box.setSpacing(4)
        inner = QWidget()
        inner_lay = QVBoxLayout(inner)
        inner_lay.setContentsMargins(2, 2, 2, 2)
        inner_lay.addLayout(self.message_box)
        self.add_button = QPushButton("Add Message")
        self.add_button.setToolTip(f"Add a message after the last one, with the role that usually follows "
                                   f"({ADD_SHORTCUT})")
        add = QAction("Add Message", self)
        add.setShortcut(QKeySequence(ADD_SHORTCUT))
        add.setShortcutContext(Qt.ShortcutContext.WidgetWithChildrenShortcut)  # in this view only
        add.triggered.connect(lambda: self.add_message())
        self.addAction(add)
        inner_lay.addWidget(self.add_button, 0, Qt.AlignmentFlag.AlignLeft)
        inner_lay.addStretch(1)
        self.message_scroll = QScrollArea()
        self.message_scroll.setWidgetResizable(True)
        self.message_scroll.setWidget(inner)
        self.tools = QPlainTextEdit()
        self.tools.setPlaceholderText('Tool definitions as a JSON list, e.g. [{"type": "function", "function": '
                                      '{"name": "get_weather", "parameters": {}}}]')
        self.documents = QPlainTextEdit()
        self.documents.setPlaceholderText('Documents for retrieval templates (command-r\'s rag) as a JSON list, '
                                          'e.g. [{"title": "Notes", "text": "…"}]')
        self.inputs = QTabWidget()
        self.inputs.setDocumentMode(True)
        self.inputs.addTab(self.message_scroll, "Messages")
        self.inputs.addTab(self.tools, "Tools")
        self.inputs.addTab(self.documents, "Documents")

        self.main = QChatPane()
        self.other = QChatPane()
        self.other.hide()
        self.panes = QSplitter(Qt.Orientation.Horizontal)
        self.panes.addWidget(self.main)
        self.panes.addWidget(self.other)
        self.panes.setChildrenCollapsible(False)
        split = QSplitter(Qt.Orientation.Vertical)
        split.addWidget(self.inputs)
        split.addWidget(self.panes)
        split.setStretchFactor(0, 1)
        split.setStretchFactor(1, 1)
        split.setSizes([450, 550])  # the proportions to start with: four short messages show whole
        split.setChildrenCollapsible(False)
        legend = QLabel("Grey: template scaffold · orange: special tokens · each message its colour, as in "
                        "the list · dashed underline: a token that straddles two origins. Hover a token "
                        "for its id.")
        legend.setWordWrap(True)
        font = legend.font()
        font.setPointSizeF(font.pointSizeF() * 0.9)
        legend.setFont(font)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(4, 4, 4, 4)
        lay.addLayout(bar)
        lay.addLayout(toggles)
        lay.addWidget(split, 1)
        lay.addWidget(legend)

        self.template.currentIndexChanged.connect(lambda _i: self.schedule())
        self.load_template.clicked.connect(self._pick_template_file)
        for box in (self.generation, self.add_special):
            box.toggled.connect(lambda _on: self.schedule())
        self.context.valueChanged.connect(lambda _v: self.schedule())
        self.tools.textChanged.connect(self.schedule)
        self.documents.textChanged.connect(self.schedule)
        self.add_button.clicked.connect(lambda: self.add_message())
        self.compare_with.activated.connect(self._on_compare_picked)
        self.main.rendered.connect(self._show_message_counts)
        self.fill_compare()

    # ---- the conversation ------------------------------------------------------------

    def conversation(self) -> tuple[tuple[str, str], ...]:
        return tuple(c.message() for c in self.cards)

    def set_conversation(self, messages: tuple[tuple[str, str], ...] | list[tuple[str, str]]) -> None:
        for card in self.cards:
            card.setParent(None)
            card.deleteLater()
        self.cards = []
        for role, content in messages:
            self._add_card(role, content)
        self._update_cards()
        self.schedule()

    def _add_card(self, role: str, content: str, at: int | None = None) -> QMessageCard:
        card = QMessageCard(role, content)
        at = len(self.cards) if at is None else at
        self.cards.insert(at, card)
        self.message_box.insertWidget(at, card)
        card.changed.connect(self.schedule)
        card.moveRequested.connect(lambda delta, c=card: self.move_message(self.cards.index(c), delta))
        card.removeRequested.connect(lambda c=card: self.remove_message(self.cards.index(c)))
        return card

    def _update_cards(self) -> None:
        dark = is_dark(self.palette())
        for k, card in enumerate(self.cards):
            card.set_colour(message_colour(k, dark))
            card.buttons["up"].setEnabled(k > 0)
            card.buttons["down"].setEnabled(k < len(self.cards) - 1)

    def add_message(self, role: str | None = None, content: str = "") -> QMessageCard:
        """Add a message at the end (by default the role that usually comes next)."""
        if role is None:
            last = self.cards[-1].message()[0] if self.cards else "assistant"
            role = "assistant" if last in ("user", "tool") else "user"
        card = self._add_card(role, content)
        self._update_cards()
        self.schedule()
        card.content.setFocus()
        QTimer.singleShot(0, lambda: self.message_scroll.ensureWidgetVisible(card))
        return card

    def remove_message(self, k: int) -> None:
        card = self.cards.pop(k)
        self.message_box.removeWidget(card)
        card.setParent(None)
        card.deleteLater()
        self._update_cards()
        self.schedule()

    def move_message(self, k: int, delta: int) -> None:
        j = k + delta
        if not (0 <= k < len(self.cards) and 0 <= j < len(self.cards)):
            return
        card = self.cards.pop(k)
        self.cards.insert(j, card)
        self.message_box.removeWidget(card)
        self.message_box.insertWidget(j, card)
        self._update_cards()
        card.buttons["up" if delta < 0 else "down"].setFocus()
        self.schedule()

    # ---- templates and models ----------------------------------------------------------

    def set_model(self, info: ModelInfo | None) -> None:
        """Follow the window's model; the conversation stays as it is."""
        model = info.model if info is not None else None
        if model is self.main.model:
            return
        self.main.set_model(model)
        wanted = self.template.currentText() or None
        self.options = template_options(model) if model is not None else []
        with QSignalBlocker(self.template):
            self.template.clear()
            for o in self.options:
                self.template.addItem(o.label)
                self.template.setItemData(self.template.count() - 1,
                                          "from the file" if o.origin == "file" else "shipped with TokenPrism",
                                          Qt.ItemDataRole.ToolTipRole)
            if self.custom is not None:
                self.template.addItem(self.custom.label)
            if self.options:
                chosen = (self.custom if self.custom is not None and wanted == self.custom.label
                          else preferred_template(self.options, wanted))
                self.template.setCurrentText(chosen.label)
        self.schedule()

    def chosen_template(self) -> TemplateOption | None:
        label = self.template.currentText()
        if self.custom is not None and label == self.custom.label:
            return self.custom
        return next((o for o in self.options if o.label == label), None)

    def set_custom_template(self, name: str, source: str) -> None:
        """Render with ``source`` (a template the user loaded)."""
        if self.custom is not None:
            self.template.removeItem(self.template.findText(self.custom.label))
        self.custom = TemplateOption(name, f"File {name}", "path", source)
        self.template.addItem(self.custom.label)
        self.template.setItemData(self.template.count() - 1, "loaded from a .jinja file",
                                  Qt.ItemDataRole.ToolTipRole)
        self.template.setCurrentText(self.custom.label)
        self.schedule()

    def _pick_template_file(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "Load a chat template", "",
                                              "Jinja templates (*.jinja *.j2 *.txt);;All files (*)")
        if not path:
            return
        try:
            if os.path.getsize(path) > MAX_TEMPLATE_FILE:
                raise OSError(f"larger than {MAX_TEMPLATE_FILE >> 20} MB; not a chat template")
            with open(path, encoding="utf-8", errors="replace") as f:
                source = f.read()
        except OSError as e:
            self.main.error_label.setText(f"{os.path.basename(path)}: {e.strerror or e}")
            self.main.error_label.show()
            return
        self.set_custom_template(os.path.basename(path), source)

    # ---- compare with a second model -------------------------------------------------------

    def fill_compare(self) -> None:
        box = self.compare_with
        current = self.other.model.path if self.other.model is not None else ""
        with QSignalBlocker(box):
            box.clear()
            box.addItem("(none)", "")
            for path in self._recent():
                if os.path.isfile(path) and (self.main.model is None
                                             or os.path.abspath(path) != os.path.abspath(self.main.model.path)):
                    box.addItem(os.path.basename(path), path)
                    box.setItemData(box.count() - 1, path, Qt.ItemDataRole.ToolTipRole)
            box.addItem("Other file…", "?")
            at = box.findData(current) if current else 0
            if current and at < 0:
                box.insertItem(1, os.path.basename(current), current)
                at = 1
            box.setCurrentIndex(max(at, 0))

    def _on_compare_picked(self, index: int) -> None:
        path = str(self.compare_with.itemData(index) or "")
        if path == "?":
            path, _ = QFileDialog.getOpenFileName(self, "Compare with a GGUF model", "",
                                                  "GGUF models (*.gguf);;All files (*)")
            if not path:
                self.fill_compare()
                return
        self.compare_path(path)

    def compare_path(self, path: str) -> None:
        """Show ``path``'s rendering beside the main one ("" hides it)."""
        if not path:
            self.other.set_model(None)
            self.other.hide()
            self.fill_compare()
            return
        self.other.show()
        self.other.title.setText(f"Loading {os.path.basename(path)}…")
        self._loader.submit(lambda: open_model(path), self.compare_model, self._on_compare_failed)

    def compare_model(self, model: Model) -> None:
        """Render the conversation with ``model`` too, beside the window's model."""
        self.other.set_model(model)
        self.other.show()
        self.fill_compare()
        self.schedule()

    def _on_compare_failed(self, error: BaseException) -> None:
        self.other.set_model(None)
        self.other.title.setText("")
        self.other.error_label.setText(str(error))
        self.other.error_label.show()
        self.fill_compare()

    # ---- rendering ----------------------------------------------------------------------

    def set_wanted(self, wanted: bool) -> None:
        """Render only while the view shows."""
        self._wanted = wanted
        if wanted:
            self.schedule()

    def schedule(self) -> None:
        """Render again shortly (typing restarts the wait)."""
        self._timer.start()

    def request(self, template: TemplateOption) -> ChatRequest:
        return ChatRequest(self.conversation(), template, self.generation.isChecked(),
                           self.add_special.isChecked(), self.context.value() or None,
                           self.tools.toPlainText(), self.documents.toPlainText(), is_dark(self.palette()))

    def refresh(self) -> None:
        self._timer.stop()
        if self._save is not None:
            self._save(conversation_to_json(self.conversation()))
        template = self.chosen_template()
        if not self._wanted or template is None:
            return
        self.main.submit(self.request(template))
        other = self.other.model
        if other is not None:
            theirs = template if template.origin == "path" else preferred_template(template_options(other),
                                                                                   template.label)
            self.other.submit(self.request(theirs))

    def _show_message_counts(self) -> None:
        view = self.main.view
        if view is None or self.main.error:
            return
        infos = view.result.messages
        if len(infos) != len(self.cards):
            return  # a rendering of an older conversation; the next one follows
        for card, info in zip(self.cards, infos):
            card.count.setText(f"{info.tokens:,} token" + ("" if info.tokens == 1 else "s"))

    @property
    def busy(self) -> bool:
        return self._timer.isActive() or self.main.busy or self.other.busy or self._loader.busy

    def shutdown(self) -> None:
        self._timer.stop()
        self.main.shutdown()
        self.other.shutdown()
        self._loader.shutdown()


def install(window: WindowParts) -> tuple[QChatPanel, QDockWidget]:
    """Add the Chat dock (hidden until asked for) and View ▸ Chat."""
    settings = window.settings.q
    saved = settings.value(SETTINGS_KEY, "")
    panel = QChatPanel(window.settings.recent_files, saved if isinstance(saved, str) else "",
                       lambda text: settings.setValue(SETTINGS_KEY, text))
    panel.set_wanted(False)  # renders once its dock shows
    dock = install_side_dock(window, panel, "Chat", ("chatDock", "actChat"), ("metadataDock", "actModelMetadata"),
                             ("C&hat", SHORTCUT, "What the model sees of a conversation: chat template "
                              "rendered, tokens by origin, counts"),
                             False, panel.set_model, panel.set_wanted)
    def on_shown(shown: bool) -> None:
        if shown:  # the recent models may have changed meanwhile
            panel.fill_compare()

    dock.visibilityChanged.connect(on_shown)
    return panel, dock
