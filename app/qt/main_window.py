"""The TokenPrism main window and :func:`run_gui`, the desktop app's entry
point (the ``tokenprism`` command calls it).

The window wires the parts together: a :class:`ModelLoader` opens models in
the background, a :class:`LiveTokenizer` retokenizes the editor text after
every change, and each finished :class:`Analysis` goes to the editor, the
token table, the chips view and the status bar at once, so all of them
always show the same tokens of the same model.
"""

from __future__ import annotations

import os
import sys
from typing import Callable

from PySide6.QtCore import QEvent, Qt, QTimer
from PySide6.QtGui import (QAction, QActionGroup, QCloseEvent, QDragEnterEvent, QDropEvent, QGuiApplication,
                           QIcon, QKeySequence)
from PySide6.QtWidgets import (QApplication, QFileDialog, QMenu, QSplitter, QStackedWidget,
                               QTabWidget, QToolBar, QToolButton, QVBoxLayout, QWidget)

from tokenprism.core.memory import map_large_blocks

from ..logic import disposal
from . import qt_compat  # noqa: F401  (guards against a PySide6 bug; see there)
from ..logic.analysis import Analysis, ModelInfo
from ..logic.demo import demo_model, resource_path, welcome_text
from ..logic.pieces import format_ids
from .qt_chips import QChipsView
from .qt_editor import QTokenEditor, accept_file_drop, gguf_paths
from .qt_menus import fill_demo_menu, fill_recent_menu, show_about, show_shortcuts
from .qt_normalized import QNormalizedView
from .qt_slicer import is_huge
from .qt_status import QEmptyState, QMessageBanner, QStatsBar, labelled, titled
from .qt_token_table import QTokenTable
from .qt_zoom import zoom_keys, zoom_widgets
from .settings import APPLICATION, ORGANIZATION, AppSettings
from .styles import QLegend
from .window_parts import WindowParts
from .workers import LiveTokenizer, ModelLoader

BUSY_DELAY_MS = 150  # quick jobs never flash the busy indicator


class TokenPrismWindow(WindowParts):
    """The main window: editor with live tokens, token table and chips."""

    def __init__(self, settings: AppSettings | None = None, restore: bool = True) -> None:
        super().__init__()
        map_large_blocks()  # so a model switched away from gives its arrays back whole
        self.settings = settings or AppSettings()
        self.model_info: ModelInfo | None = None
        self.setWindowTitle("TokenPrism")
        self.setAcceptDrops(True)
        self._zoom = 0
        self._tokenize_error = False
        self._pending_focus: QWidget | None = None

        self.loader = ModelLoader(self)
        self.editor = QTokenEditor()
        self.live = LiveTokenizer(self.editor.token_text, self)
        self.table = QTokenTable()
        self.chips = QChipsView()
        self.normalized = QNormalizedView()
        self.stats = QStatsBar()
        self.banner = QMessageBanner()
        self.empty = QEmptyState()
        self._busy_timer = QTimer(self)
        self._busy_timer.setSingleShot(True)
        self._busy_timer.setInterval(BUSY_DELAY_MS)
        self._busy_timer.timeout.connect(lambda: self.stats.set_busy("Tokenizing…"))
        self.editor.slicer.progress.connect(self.stats.set_busy)  # a huge paste or file going in

        self._build_layout()
        self._build_actions()
        self._connect()
        self._install_features()
        if restore:
            self._restore()
        else:
            self.editor.setPlainText(welcome_text())
            self.resize(1200, 760)
        self.live.set_options(self.act_add_special.isChecked(), self.act_parse_special.isChecked())
        self.editor.set_show_whitespace(self.act_show_ws.isChecked())
        self._show_empty_state(True)

    # ---- construction -------------------------------------------------------------

    def _build_layout(self) -> None:
        left = QWidget()
        lv = QVBoxLayout(left)
        lv.setContentsMargins(0, 0, 0, 0)
        lv.setSpacing(2)
        lv.addWidget(self.editor, 1)
        self.legend = QLegend()
        lv.addWidget(self.legend)
        self.tabs = QTabWidget()
        self.tabs.setDocumentMode(True)
        self.tabs.addTab(self.table, "Tokens")
        self.tabs.addTab(self.chips, "Chips")
        self.tabs.addTab(self.normalized, "Normalized")
        self.tabs.setTabToolTip(0, "One row per token (Ctrl+1)")
        self.tabs.setTabToolTip(1, "Token pieces as chips with their ids (Ctrl+2)")
        self.tabs.setTabToolTip(2, "The text as the model sees it after its normalizer")
        self.tabs.setTabVisible(2, False)  # only for models that normalize (UGM)
        self.splitter = QSplitter(Qt.Orientation.Horizontal)
        self.splitter.addWidget(left)
        self.splitter.addWidget(self.tabs)
        # halves: at the default size the token table shows every column
        # of a 1 MB text (seven-digit spans) and still a readable piece
        self.splitter.setStretchFactor(0, 1)
        self.splitter.setStretchFactor(1, 1)
        self.splitter.setChildrenCollapsible(False)
        self.stack = QStackedWidget()
        self.stack.addWidget(self.empty)
        self.stack.addWidget(self.splitter)
        central = QWidget()
        cv = QVBoxLayout(central)
        cv.setContentsMargins(4, 4, 4, 0)
        cv.addWidget(self.banner)
        cv.addWidget(self.stack, 1)
        self.setCentralWidget(central)
        self.statusBar().addPermanentWidget(self.stats, 1)
        self.statusBar().setSizeGripEnabled(True)
        QWidget.setTabOrder(self.editor, self.tabs)
        QWidget.setTabOrder(self.tabs, self.table)
        QWidget.setTabOrder(self.table, self.chips)

    def _action(self, text: str, shortcut: str | QKeySequence.StandardKey | None = None,
                slot: object = None, checkable: bool = False, tip: str = "") -> QAction:
        act = QAction(text, self)
        if shortcut is not None:
            act.setShortcut(QKeySequence(shortcut))
        act.setCheckable(checkable)
        if tip:
            act.setToolTip(tip)
        if slot is not None:
            act.triggered.connect(slot)
        self.addAction(act)  # shortcuts work even with the menu bar hidden
        return act

    def _build_actions(self) -> None:
        self.act_open = self._action("&Open Model…", QKeySequence.StandardKey.Open, self.open_dialog,
                                     tip="Open a GGUF model (Ctrl+O)")
        self.act_quit = self._action("&Quit", QKeySequence.StandardKey.Quit, self.close)
        self.act_copy_ids = self._action("Copy Token &IDs", "Ctrl+Shift+C", self.copy_ids,
                                         tip="Copy the token ids (Ctrl+Shift+C)")
        self.act_add_special = self._action("Add &Special Tokens (BOS/EOS)", "Ctrl+Shift+B", checkable=True,
                                            tip="Add the model's BOS/EOS tokens as llama.cpp does (Ctrl+Shift+B)")
        self.act_parse_special = self._action("&Parse Special Tokens", "Ctrl+Shift+P", checkable=True,
                                              tip="Turn special-token text such as <s> into control tokens "
                                                  "(Ctrl+Shift+P)")
        self.act_show_ws = self._action("Show &Whitespace", "Ctrl+Shift+W", checkable=True,
                                        tip="Show spaces, tabs and line breaks in the editor (Ctrl+Shift+W)")
        self.act_byte_labels = self._action("&Label All Byte Groups", "Ctrl+Shift+Y", checkable=True,
                                            tip="Label every byte-fallback group in the editor with its bytes "
                                                "(else only the current token's) (Ctrl+Shift+Y)")
        self.act_table = self._action("Token &Table", "Ctrl+1", lambda: self.tabs.setCurrentIndex(0))
        self.act_chips = self._action("Token &Chips", "Ctrl+2", lambda: self.tabs.setCurrentIndex(1))
        self.act_focus_editor = self._action("Focus &Editor", "Ctrl+E", lambda: self._focus(self.editor))
        self.act_focus_tokens = self._action("Focus Token &View", "Ctrl+T",
                                             lambda: self._focus(self.tabs.currentWidget()))
        self.act_zoom_in = self._action("Zoom &In", QKeySequence.StandardKey.ZoomIn, lambda: self.zoom(1))
        self.act_zoom_out = self._action("Zoom &Out", QKeySequence.StandardKey.ZoomOut, lambda: self.zoom(-1))
        self.act_zoom_reset = self._action("&Reset Zoom", "Ctrl+0", lambda: self.zoom(0))
        self.act_zoom_in.setShortcuts(zoom_keys(1))
        self.act_dismiss = self._action("Dismiss Message", "Esc", self.banner.hide)
        self.act_dismiss.setShortcutContext(Qt.ShortcutContext.WindowShortcut)
        self._build_edit_actions()
        self.id_formats = QActionGroup(self)
        self.act_fmt_space = self._action("Space-separated", checkable=True, tip="1 15043 3186")
        self.act_fmt_json = self._action("JSON List", checkable=True, tip="[1, 15043, 3186]")
        for act, fmt in ((self.act_fmt_space, "space"), (self.act_fmt_json, "json")):
            act.setData(fmt)
            self.id_formats.addAction(act)
        self.act_fmt_space.setChecked(True)
        self._build_toolbar(self._build_menus())

    def _build_menus(self) -> QMenu:
        """The menu bar; returns the Token ID Format menu (the toolbar's
        Copy IDs button shows it too)."""
        mb = self.menuBar()
        self.menus: dict[str, QMenu] = {}
        m = self.menus["file"] = mb.addMenu("&File")
        m.addAction(self.act_open)
        self.recent_menu = m.addMenu("Open &Recent")
        self.demo_menu = m.addMenu("Open &Demo Model")
        self.demo_menu.setToolTipsVisible(True)
        m.addSeparator()
        m.addAction(self.act_quit)
        # self.edit_menu: feature modules add their editing commands (find, go to) here
        m = self.edit_menu = self.menus["edit"] = mb.addMenu("&Edit")
        m.addActions([self.act_undo, self.act_redo])
        m.addSeparator()
        m.addActions([self.act_cut, self.act_copy, self.act_paste])
        m.addSeparator()
        m.addAction(self.act_select_all)
        m.addSeparator()
        m.addAction(self.act_copy_ids)
        m.aboutToShow.connect(self._update_edit_actions)
        fm = m.addMenu("Token ID &Format")
        fm.addActions([self.act_fmt_space, self.act_fmt_json])
        m = self.menus["tokenize"] = mb.addMenu("&Tokenize")
        m.addActions([self.act_add_special, self.act_parse_special])
        m = self.menus["view"] = mb.addMenu("&View")
        m.addActions([self.act_show_ws, self.act_byte_labels])
        m.addSeparator()
        m.addActions([self.act_table, self.act_chips, self.act_focus_editor, self.act_focus_tokens])
        m.addSeparator()
        m.addActions([self.act_zoom_in, self.act_zoom_out, self.act_zoom_reset])
        m = self.menus["help"] = mb.addMenu("&Help")
        m.addAction(self._action("&Keyboard Shortcuts", QKeySequence.StandardKey.HelpContents, self.show_shortcuts))
        m.addAction(self._action("&About TokenPrism", None, self.show_about))
        return fm

    def _build_toolbar(self, id_format_menu: QMenu) -> None:
        tb = QToolBar("Main")
        tb.setObjectName("mainToolbar")
        tb.setMovable(False)
        tb.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextOnly)
        tb.addAction(self.act_open)
        demo_btn = QToolButton()
        demo_btn.setText("Demo Models")
        demo_btn.setToolTip("Open one of the bundled demo models (one per tokenizer type)")
        demo_btn.setPopupMode(QToolButton.ToolButtonPopupMode.InstantPopup)
        demo_btn.setMenu(self.demo_menu)
        tb.addWidget(demo_btn)
        tb.addSeparator()
        for act, short in ((self.act_add_special, "Add special"), (self.act_parse_special, "Parse special"),
                           (self.act_show_ws, "Show whitespace")):
            act.setIconText(short)  # toolbar buttons show the short text, menus the long one
            tb.addAction(act)
        tb.addSeparator()
        copy_btn = QToolButton()
        copy_btn.setDefaultAction(self.act_copy_ids)
        copy_btn.setText("Copy IDs")
        copy_btn.setPopupMode(QToolButton.ToolButtonPopupMode.MenuButtonPopup)
        copy_btn.setMenu(id_format_menu)
        tb.addWidget(copy_btn)
        self.addToolBar(tb)
        self.toolbar = tb

    def _edit_action(self, text: str, key: QKeySequence.StandardKey, slot: Callable[[], None],
                     tip: str) -> QAction:
        act = QAction(text, self)
        act.setShortcut(QKeySequence(key))
        # The keys reach the editor itself (it claims them while it has the
        # focus); the shortcut lives on the editor only so that a filter box,
        # the table or a panel with the focus keeps Ctrl+C and the others
        # for itself, and no other Copy action becomes ambiguous with it.
        act.setShortcutContext(Qt.ShortcutContext.WidgetShortcut)
        self.editor.addAction(act)
        act.setToolTip(tip)

        def run() -> None:
            self.editor.setFocus()  # picked from the menu: the user sees where it acted
            slot()

        act.triggered.connect(run)
        return act

    def _build_edit_actions(self) -> None:
        """Edit ▸ Undo … Select All act on the text editor; each is enabled
        when the editor could do it."""
        ed = self.editor
        self.act_undo = self._edit_action("&Undo", QKeySequence.StandardKey.Undo, ed.undo,
                                          "Undo the last change to the text")
        self.act_redo = self._edit_action("&Redo", QKeySequence.StandardKey.Redo, ed.redo,
                                          "Redo the change last undone")
        self.act_cut = self._edit_action("Cu&t", QKeySequence.StandardKey.Cut, self.cut_text,
                                         "Cut the selected text to the clipboard")
        self.act_copy = self._edit_action("&Copy", QKeySequence.StandardKey.Copy, ed.copy,
                                          "Copy the selected text to the clipboard")
        self.act_paste = self._edit_action("&Paste", QKeySequence.StandardKey.Paste, ed.paste,
                                           "Paste the clipboard's text into the editor")
        self.act_select_all = self._edit_action("Select &All", QKeySequence.StandardKey.SelectAll, ed.selectAll,
                                                "Select the whole text")
        doc = ed.document()
        self.act_undo.setEnabled(doc.isUndoAvailable())
        self.act_redo.setEnabled(doc.isRedoAvailable())
        ed.undoAvailable.connect(self.act_undo.setEnabled)
        ed.redoAvailable.connect(self.act_redo.setEnabled)
        ed.copyAvailable.connect(self._on_selection)
        # per keystroke only the cheap check; asking the clipboard (a round
        # trip to its owner on X11) waits for the clipboard to change
        ed.textChanged.connect(lambda: self.act_select_all.setEnabled(not doc.isEmpty()))
        QGuiApplication.clipboard().dataChanged.connect(self._update_edit_actions)
        self._update_edit_actions()

    def _on_selection(self, selected: bool) -> None:
        self.act_cut.setEnabled(selected and not self.editor.isReadOnly())
        self.act_copy.setEnabled(selected)

    def _update_edit_actions(self) -> None:
        ed = self.editor
        self._on_selection(ed.textCursor().hasSelection())
        self.act_paste.setEnabled(not ed.isReadOnly() and ed.canPaste())
        self.act_select_all.setEnabled(not ed.document().isEmpty())

    def cut_text(self) -> None:
        """Cut the editor's selection; a huge one goes out in slices, as
        when it is cut with the keys (see :meth:`QTokenEditor.keyPressEvent`)."""
        ed = self.editor
        cursor = ed.textCursor()
        if ed.isReadOnly() or not cursor.hasSelection():
            return
        if is_huge(cursor, ""):
            ed.copy()
            ed.replace_sliced(cursor, "", "Deleting")
        else:
            ed.cut()

    def _connect(self) -> None:
        self.loader.loaded.connect(self._on_model_loaded)
        self.loader.failed.connect(self._on_load_failed)
        self.loader.busyChanged.connect(self._on_loader_busy)
        self.editor.document().contentsChange.connect(self._on_text_change)
        self.live.resultReady.connect(self._on_result)
        self.live.failed.connect(self._on_tokenize_failed)
        self.live.busyChanged.connect(self._on_tokenizer_busy)
        self.editor.cursorTokenChanged.connect(self._on_cursor_tokens)
        self.editor.modelFilesDropped.connect(lambda paths: self.open_path(paths[0]))
        self.table.tokensActivated.connect(self.show_tokens)
        self.chips.tokensActivated.connect(self.show_tokens)
        self.normalized.tokensActivated.connect(self.show_tokens)
        self.normalized.tokensHovered.connect(self.editor.box_tokens)
        self.tabs.currentChanged.connect(self._on_tab_changed)
        for act in (self.act_add_special, self.act_parse_special):
            act.toggled.connect(self._on_options)
        self.act_show_ws.toggled.connect(self.editor.set_show_whitespace)
        self.act_byte_labels.toggled.connect(self.editor.set_label_all_bytes)
        self.empty.openRequested.connect(self.open_dialog)
        self.empty.recentRequested.connect(self.open_path)
        self.recent_menu.aboutToShow.connect(self._fill_recent_menu)
        self.demo_menu.aboutToShow.connect(self._fill_demo_menu)

    def _install_features(self) -> None:
        """Add the features built on the window's parts (each module's
        ``install(window)`` keeps its wiring in one place, sees the window
        as :class:`WindowParts` only, and hands back what it made)."""
        from . import qt_chat, qt_check, qt_chunk, qt_compare, qt_corpus, qt_export, qt_find, qt_metadata
        from . import qt_models, qt_progress, qt_shortcuts, qt_textfile, qt_vocab, qt_why
        # ---- feature installs: one line each, keep this list sorted ----
        self.chat_panel, self.chat_dock = qt_chat.install(self)
        self.check = qt_check.install(self)
        self.chunks = qt_chunk.install(self)
        self.compare = qt_compare.install(self)
        self.corpus = qt_corpus.install(self)
        self.token_files = qt_export.install(self)
        self.find_controller = qt_find.install(self.editor, self.edit_menu, lambda: self.analysis,
                                               self.show_tokens)
        self.metadata_panel, self.metadata_dock = qt_metadata.install(self)
        self.models_panel = qt_models.install(self)
        self.progress_control = qt_progress.install(self)
        self.shortcut_keeper = qt_shortcuts.install(self)
        self.text_files = qt_textfile.install(self)
        self.vocab_browser, self.vocab_dock = qt_vocab.install(self)
        self.why_panel, self.why_dock = qt_why.install(self)

    def compare_models(self, paths: list[str]) -> None:
        info = self.model_info
        if (self.compare.view is None and info is not None
                and all(os.path.abspath(info.path) != os.path.abspath(p) for p in paths)):
            paths = [info.path, *paths]
        self.compare.show(paths=paths)

    # ---- settings ---------------------------------------------------------------------

    def _restore(self) -> None:
        s = self.settings
        geo = s.geometry()
        if geo is None or not self.restoreGeometry(geo):
            self.resize(1200, 760)
        state = s.window_state()
        if state is not None:
            self.restoreState(state)
        split = s.splitter_state()
        if split is not None:
            self.splitter.restoreState(split)
        self.act_add_special.setChecked(s.option("addSpecial", False))
        self.act_parse_special.setChecked(s.option("parseSpecial", False))
        self.act_show_ws.setChecked(s.option("showWhitespace", False))
        self.act_byte_labels.setChecked(s.option("labelAllBytes", False))
        (self.act_fmt_json if s.id_format == "json" else self.act_fmt_space).setChecked(True)
        self.tabs.setCurrentIndex(min(max(s.current_tab, 0), 1))
        text = s.last_text
        self.editor.setPlainText(welcome_text() if text is None else text)

    def save_settings(self) -> None:
        s = self.settings
        s.save_window(self.saveGeometry(), self.saveState(), self.splitter.saveState())
        s.set_option("addSpecial", self.act_add_special.isChecked())
        s.set_option("parseSpecial", self.act_parse_special.isChecked())
        s.set_option("showWhitespace", self.act_show_ws.isChecked())
        s.set_option("labelAllBytes", self.act_byte_labels.isChecked())
        s.id_format = self.id_format
        s.current_tab = self.tabs.currentIndex()
        s.last_text = self.editor.token_text()
        if self.model_info is not None:
            s.last_model = self.model_info.path
        s.sync()

    @property
    def id_format(self) -> str:
        act = self.id_formats.checkedAction()
        return str(act.data()) if act is not None else "space"

    # ---- models --------------------------------------------------------------------------

    def start(self, paths: list[str]) -> None:
        """Open what the command line names, else the last model, else the demo."""
        if paths:
            for p in reversed(paths[1:]):
                self.settings.add_recent_file(p)
            self.open_path(paths[0])
            return
        for candidate in [self.settings.last_model, *self.settings.recent_files()]:
            if candidate and os.path.isfile(candidate):
                self.open_path(candidate)
                return
        self.open_demo(quiet=True)

    def open_demo(self, quiet: bool = False) -> None:
        path = demo_model()
        if path is not None:
            self.open_path(str(path))
        elif not quiet:
            self.banner.show_message("No demo model is bundled with this installation; "
                                     "open any .gguf file instead.", error=False)

    def open_dialog(self) -> None:
        start = os.path.dirname(self.model_info.path) if self.model_info else ""
        path, _ = QFileDialog.getOpenFileName(self, "Open GGUF model", start,
                                              "GGUF models (*.gguf);;All files (*)")
        if path:
            self.open_path(path)

    def open_path(self, path: str) -> None:
        """Load ``path`` in the background; the current model stays usable."""
        self.stats.set_busy(f"Loading {os.path.basename(path)}…")
        if self.model_info is None:  # no empty-state flash while the first model loads
            self.stack.setCurrentWidget(self.splitter)
        self.loader.load(os.path.abspath(path))

    def _on_loader_busy(self, busy: bool) -> None:
        if not busy:
            self.stats.set_busy("")

    def _on_model_loaded(self, info: ModelInfo) -> None:
        old = self.model_info
        if old is not None and old.model is not info.model:
            # the views below let go of it; its heap goes back to the OS then
            disposal.trim_when_freed(old.model)
        del old
        self.model_info = info
        self.settings.add_recent_file(info.path)
        self.settings.last_model = info.path
        self.banner.hide()
        self.setWindowTitle(f"{titled(info.name, info.kind)} — TokenPrism")
        normalizes = info.model.config.normalizes
        if not normalizes and self.tabs.currentWidget() is self.normalized:
            self.tabs.setCurrentWidget(self.table)
        self.tabs.setTabVisible(self.tabs.indexOf(self.normalized), normalizes)
        self._show_analysis(None)  # never show the old model's tokens under the new name
        self.stats.show_analysis(None, labelled(info.name, info.kind))
        self._show_empty_state(False)
        self.live.set_model(info)

    def _on_load_failed(self, path: str, message: str) -> None:
        if not os.path.exists(path):
            self.settings.remove_recent_file(path)
        if self.model_info is not None:
            message += f" Still using {self.model_info.name}."
        self.banner.show_message(message)
        self._show_empty_state(True)

    def _show_empty_state(self, empty: bool) -> None:
        if empty and self.model_info is None:
            self.empty.set_recent([p for p in self.settings.recent_files() if os.path.isfile(p)])
            self.stack.setCurrentWidget(self.empty)
            self.demo_menu.setEnabled(demo_model() is not None)
        else:
            self.stack.setCurrentWidget(self.splitter)

    def _fill_demo_menu(self) -> None:
        fill_demo_menu(self.demo_menu, self.open_path)

    def _fill_recent_menu(self) -> None:
        fill_recent_menu(self.recent_menu, self.settings, self.open_path)

    # ---- tokenization ------------------------------------------------------------------------

    def _on_text_change(self, pos: int, removed: int, added: int) -> None:
        if removed or added:
            self.live.text_changed()

    def _on_tab_changed(self, _index: int) -> None:
        # the normalized text is made (in the worker) only while its tab shows
        want = self.tabs.currentWidget() is self.normalized
        self.live.want_normalized = want
        a = self.analysis
        if want and a is not None and "normalized" not in a.extra:
            self.live.refresh()

    def _on_options(self) -> None:
        self.live.set_options(self.act_add_special.isChecked(), self.act_parse_special.isChecked())

    def _on_tokenizer_busy(self, busy: bool) -> None:
        if busy:
            if not self._busy_timer.isActive() and not self.stats.busy.isVisible():
                self._busy_timer.start()
        else:
            self._busy_timer.stop()
            if not self.loader.busy:
                self.stats.set_busy("")

    def _on_tokenize_failed(self, message: str) -> None:
        self.banner.show_message(message)
        self._tokenize_error = True

    def _on_result(self, a: Analysis) -> None:
        if a.info is not self.model_info:
            return  # belongs to a model the window no longer shows
        if self._tokenize_error:  # the text tokenizes again: the message is stale
            self._tokenize_error = False
            self.banner.hide()
        self._show_analysis(a)
        self.editor.emit_cursor_token()

    def _show_analysis(self, a: Analysis | None) -> None:
        # the views drop the old analysis here: a huge one is freed in the
        # background instead of in one long deallocation (see disposal.py)
        disposal.retire(self.analysis, a)
        self.editor.set_analysis(a)
        self.table.set_analysis(a)
        self.chips.set_analysis(a)
        self.normalized.set_analysis(a)
        if a is not None:
            self.stats.show_analysis(a)

    @property
    def analysis(self) -> Analysis | None:
        """The analysis on screen."""
        return self.table.token_model.analysis

    # ---- linked selection ------------------------------------------------------------------------

    def _on_cursor_tokens(self, first: int, last: int) -> None:
        if first < 0:
            self.table.clear_token_selection()
            self.chips.select_tokens(-1, -1)
            return
        self.table.select_tokens(first, last)
        self.chips.select_tokens(first, last)
        self.normalized.select_tokens(first, last)

    def show_tokens(self, first: int, last: int) -> None:
        self.editor.select_tokens(first, last)
        if self.sender() is not self.table:
            self.table.select_tokens(first, last)
        if self.sender() is not self.chips:
            self.chips.select_tokens(first, last)
        if self.sender() is not self.normalized:
            self.normalized.select_tokens(first, last)

    # ---- commands ---------------------------------------------------------------------------------

    def copy_ids(self) -> None:
        a = self.analysis
        if a is None:
            self.stats.flash("Nothing to copy yet")
            return
        QGuiApplication.clipboard().setText(format_ids(a.encoding.token_ids, self.id_format))
        self.stats.flash(f"Copied {len(a):,} ids")

    def _focus(self, widget: QWidget) -> None:
        widget.setFocus(Qt.FocusReason.ShortcutFocusReason)
        if not self.isActiveWindow():
            # from a floating panel (its own window): the focus comes back
            # here once the window is active (activation is asynchronous)
            self._pending_focus = widget
            self.activateWindow()

    def changeEvent(self, event: QEvent) -> None:
        super().changeEvent(event)
        if event.type() == QEvent.Type.ActivationChange and self.isActiveWindow():
            widget, self._pending_focus = self._pending_focus, None
            if widget is not None:  # after Qt gives the focus back to where it last was
                QTimer.singleShot(0, widget, lambda: widget.setFocus(Qt.FocusReason.ShortcutFocusReason))

    def zoom(self, step: int) -> None:
        self._zoom = zoom_widgets((self.editor, self.table, self.chips), self._zoom, step)
        self.editor.setTabStopDistance(self.editor.fontMetrics().horizontalAdvance(" ") * 4)

    def show_shortcuts(self) -> None:
        show_shortcuts(self)

    def show_about(self) -> None:
        show_about(self)

    # ---- window events ---------------------------------------------------------------------------

    def dragEnterEvent(self, event: QDragEnterEvent) -> None:
        if gguf_paths(event.mimeData()):
            accept_file_drop(event)

    def dropEvent(self, event: QDropEvent) -> None:
        paths = gguf_paths(event.mimeData())
        if paths and accept_file_drop(event):
            self.open_path(paths[0])

    def closeEvent(self, event: QCloseEvent) -> None:
        self.save_settings()
        self.shutdown()
        super().closeEvent(event)

    def shutdown(self) -> None:
        """Stop background work (waits for a running job to end)."""
        self.live.shutdown()
        self.loader.shutdown()
        self.chips.shutdown()
        self.chat_panel.shutdown()
        if self.chunks.dialog is not None:
            self.chunks.dialog.shutdown()


def app_icon() -> QIcon:
    path = resource_path("tokenprism.svg")
    return QIcon(str(path)) if path is not None else QIcon()


def run_gui(paths: list[str]) -> int:
    """Start the desktop app: open ``paths`` (or the last/demo model) and
    run the event loop; returns the exit code."""
    app = QApplication.instance()
    if app is None:
        QApplication.setOrganizationName(ORGANIZATION)
        QApplication.setApplicationName(APPLICATION)
        app = QApplication(sys.argv[:1])
    assert isinstance(app, QApplication)
    app.setApplicationDisplayName("TokenPrism")
    app.setWindowIcon(app_icon())
    window = TokenPrismWindow()
    window.show()
    window.start(list(paths))
    return _run_event_loop(app)


def _run_event_loop(app: QApplication) -> int:
    """``app.exec()`` (a separate function so tests can run their own loop)."""
    return int(app.exec())

