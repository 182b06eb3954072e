"""File ▸ Open Text…, Save Text, Save Text As… — text files in the editor.

Files are decoded by ``tokenprism.core.formats.textfile``: bytes that are not valid
UTF-8 show as U+FFFD, outlined in red, and a banner (plus a status-bar
note that stays) says how many bytes were replaced. Saving writes the
original bytes of every replacement still in place, so opening and saving
never alters a file by itself; when the user edited through replaced bytes,
saving asks whether to write U+FFFD there instead (or not save). BOMs
(UTF-8, UTF-16) and the file's line breaks are kept. Big files are read in
a worker thread; writes are atomic (``core.formats.export.write_atomic``).

The title shows the file name with a modified marker; closing the window
or opening another text file with unsaved edits asks first. A file dropped
on the editor opens as text unless it is a GGUF model.
"""

from __future__ import annotations

import os
from typing import Callable

from PySide6.QtCore import QEvent, QObject, QRect, Qt
from PySide6.QtGui import QAction, QCloseEvent, QColor, QKeySequence, QPainter, QPaintEvent, QPen, QTextCursor
from PySide6.QtWidgets import QFileDialog, QLabel, QMessageBox, QWidget

from tokenprism.core.formats.export import ExportError, write_atomic
from tokenprism.core.formats.textfile import EditedInvalidBytes, RunTracker, TextFile, decode, encode, read_text_file

from . import qt_compat  # noqa: F401  (guards against a PySide6 bug; see there)
from .qt_background import QBackground
from .qt_status import titled
from . import qt_slicer
from .window_parts import WindowParts


OPEN_SHORTCUT = "Ctrl+Shift+O"
SAVE_SHORTCUT = "Ctrl+S"
SAVE_AS_SHORTCUT = "Ctrl+Alt+S"
BACKGROUND_BYTES = 1 << 20  # bigger files are read off the GUI thread
GGUF_MAGIC = b"GGUF"
KEY_FOLDER = "textfile/folder"
FILTER = "Text files (*.txt *.md *.json *.jsonl *.csv *.py *.c *.h *.cpp *.rs *.js *.html *.xml);;All files (*)"
SAVE, DISCARD, CANCEL = "save", "discard", "cancel"


# ---- dialogs (module functions, so tests can answer them) ----------------------------------

def ask_open_name(parent: QWidget, folder: str) -> str:
    path, _ = QFileDialog.getOpenFileName(parent, "Open text file", folder, FILTER)
    return path


def ask_save_name(parent: QWidget, start: str) -> str:
    path, _ = QFileDialog.getSaveFileName(parent, "Save text as", start, FILTER)
    return path


def ask_unsaved(parent: QWidget, name: str) -> str:
    """SAVE, DISCARD or CANCEL for unsaved edits of ``name``."""
    box = QMessageBox(QMessageBox.Icon.Warning, "Unsaved text",
                      f"The text in the editor ({name}) has changes that are not saved.",
                      QMessageBox.StandardButton.Save | QMessageBox.StandardButton.Discard
                      | QMessageBox.StandardButton.Cancel, parent)
    box.setInformativeText("Save them first?")
    box.setDefaultButton(QMessageBox.StandardButton.Save)
    answer = box.exec()
    if answer == QMessageBox.StandardButton.Save:
        return SAVE
    return DISCARD if answer == QMessageBox.StandardButton.Discard else CANCEL


def ask_replace_edited(parent: QWidget, name: str, count: int) -> bool:
    """True: write U+FFFD where the user edited through replaced bytes."""
    box = QMessageBox(QMessageBox.Icon.Warning, "Replaced bytes were edited",
                      f"{count:,} of the invalid byte sequences in “{name}” (shown as �) were edited "
                      "or deleted, so their original bytes cannot be written back.",
                      QMessageBox.StandardButton.Cancel, parent)
    box.setInformativeText("Save anyway, writing the character U+FFFD (�) for any that are left? "
                           "The untouched ones keep their original bytes.")
    write = box.addButton("Save with U+FFFD", QMessageBox.ButtonRole.AcceptRole)
    box.setDefaultButton(QMessageBox.StandardButton.Cancel)
    box.exec()
    return box.clickedButton() is write


def ask_open_as_model(parent: QWidget, name: str) -> bool:
    """True: open ``name``, a GGUF file picked as text, as the model instead."""
    box = QMessageBox(QMessageBox.Icon.Question, "Open as model?",
                      f"“{name}” is a GGUF model file, not text.",
                      QMessageBox.StandardButton.Cancel, parent)
    box.setInformativeText("Open it as the model to tokenize with?")
    model = box.addButton("Open as &Model", QMessageBox.ButtonRole.AcceptRole)
    box.setDefaultButton(model)
    box.exec()
    return box.clickedButton() is model


def is_gguf_file(path: str) -> bool:
    try:
        with open(path, "rb") as f:
            return f.read(4) == GGUF_MAGIC
    except OSError:
        return False


class QReplacementOverlay(QWidget):
    """Outlines the U+FFFD that stand for invalid bytes, over the editor's
    viewport (the editor's own formats belong to the tokens)."""

    def __init__(self, files: TextFiles) -> None:
        editor = files.window.editor
        super().__init__(editor.viewport())
        self._files = files
        self.setAttribute(Qt.WidgetAttribute.WA_TransparentForMouseEvents)
        self.setAttribute(Qt.WidgetAttribute.WA_NoSystemBackground)
        self.setGeometry(editor.viewport().rect())
        editor.viewport().installEventFilter(self)
        editor.updateRequest.connect(self._on_update_request)

    def _on_update_request(self, rect: QRect, dy: int) -> None:
        # only what the editor repaints can move an outline; and this widget
        # covers the whole viewport without an opaque background, so updating
        # all of it repaints all of the editor's text under it (every keystroke)
        f = self._files.file
        if f is None or not f.invalid_runs:
            return  # no outlines
        if dy:
            self.update()
        else:
            self.update(rect)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if event.type() == QEvent.Type.Resize and isinstance(watched, QWidget):
            self.setGeometry(QRect(0, 0, watched.width(), watched.height()))
        return False

    def paintEvent(self, event: QPaintEvent) -> None:
        positions = self._files.visible_replacements()
        if not positions:
            return
        editor = self._files.window.editor
        p = QPainter(self)
        red = QColor("#e8403a")
        fill = QColor(red)
        fill.setAlphaF(0.25)
        p.setPen(QPen(red, 1.5))
        p.setBrush(fill)
        for pos in positions[:5000]:
            for r in editor.range_rects(pos, pos + 1):
                p.drawRect(r.adjusted(0.5, 0.5, -0.5, -0.5))
        p.end()


class TextFiles(QObject):
    """The text file shown in the editor, and its commands."""

    def __init__(self, window: WindowParts) -> None:
        super().__init__(window)
        self.window = window
        self.path: str | None = None
        self.file: TextFile | None = None
        self.tracker: RunTracker | None = None
        self._loading = False
        self._reader = QBackground(self)
        self._writer = QBackground(self)
        editor = window.editor
        self.act_open = self._action("Open &Text…", OPEN_SHORTCUT, self.open_dialog,
                                     f"Open a text file in the editor ({OPEN_SHORTCUT})")
        self.act_save = self._action("&Save Text", SAVE_SHORTCUT, self.save,
                                     f"Save the editor text to its file ({SAVE_SHORTCUT})")
        self.act_save_as = self._action("Save Text &As…", SAVE_AS_SHORTCUT, self.save_as,
                                        f"Save the editor text to a new file ({SAVE_AS_SHORTCUT})")
        menu = window.menus["file"]
        # after the model entries, before the next group (export, quit)
        before = next((a for a in menu.actions() if a.isSeparator()), None)
        if before is None:
            menu.addActions([self.act_open, self.act_save, self.act_save_as])
        else:
            menu.insertActions(before, [self.act_open, self.act_save, self.act_save_as])
        menu.insertSeparator(self.act_open)
        self.note = QLabel("")
        self.note.setStyleSheet("color: #e8403a;")
        self.note.hide()
        window.statusBar().addPermanentWidget(self.note)
        self.overlay = QReplacementOverlay(self)
        editor.document().contentsChange.connect(self._on_change)
        editor.document().modificationChanged.connect(lambda _m: self.update_title())
        editor.textFilesDropped.connect(self._on_dropped)
        window.loader.loaded.connect(lambda _info: self.update_title())
        window.installEventFilter(self)

    def _action(self, text: str, shortcut: str, slot: Callable[[], object], tip: str) -> QAction:
        act = QAction(text, self.window)
        act.setShortcut(QKeySequence(shortcut))
        act.setToolTip(tip)
        act.triggered.connect(slot)
        self.window.addAction(act)
        return act

    # ---- state -----------------------------------------------------------------------

    @property
    def modified(self) -> bool:
        return self.window.editor.document().isModified()

    @property
    def name(self) -> str:
        return os.path.basename(self.path) if self.path else "untitled text"

    def update_title(self) -> None:
        w = self.window
        info = w.model_info
        base = f"{titled(info.name, info.kind)} — TokenPrism" if info is not None else "TokenPrism"
        w.setWindowTitle(f"{self.name}[*] — {base}" if self.path else base)
        w.setWindowModified(self.path is not None and self.modified)

    def _on_change(self, pos: int, removed: int, added: int) -> None:
        if self.tracker is not None and not self._loading:
            self.tracker.change(pos, removed, added)

    def visible_replacements(self) -> list[int]:
        """Positions of the replaced-byte characters in the visible text."""
        if self.tracker is None or self.file is None or not self.file.invalid_runs:
            return []
        begin, end = self.window.editor.visible_range()
        text_at = self.window.editor.document().characterAt
        return [p for p in self.tracker.alive_in(begin, end) if text_at(p) == "\ufffd"]

    def positions(self) -> list[int | None]:
        return self.tracker.positions() if self.tracker is not None else []

    # ---- opening -----------------------------------------------------------------------

    def confirm_discard(self) -> bool:
        """True when the editor text may be replaced (saved or discarded by
        the user, or not modified)."""
        if not self.modified:
            return True
        answer = ask_unsaved(self.window, self.name)
        if answer == SAVE:
            return self.save(wait=True)
        return answer == DISCARD

    def open_dialog(self) -> None:
        if not self.confirm_discard():
            return
        folder = str(self.window.settings.q.value(KEY_FOLDER, "") or "")
        path = ask_open_name(self.window, folder)
        if not path:
            return
        if is_gguf_file(path) or path.lower().endswith(".gguf"):
            # its bytes as text help nobody: a model picked here is meant as a model
            if ask_open_as_model(self.window, os.path.basename(path)):
                self.window.open_path(path)
            return
        self.open_path(path, confirmed=True)

    def _on_dropped(self, paths: list[str]) -> None:
        path = paths[0]
        if is_gguf_file(path):
            self.window.open_path(path)
        else:
            self.open_path(path)

    def open_path(self, path: str, confirmed: bool = False) -> None:
        """Open ``path`` in the editor (read in the background when big)."""
        if not confirmed and not self.confirm_discard():
            return
        path = os.path.abspath(path)
        self.window.settings.q.setValue(KEY_FOLDER, os.path.dirname(path))
        try:
            size = os.path.getsize(path)
        except OSError as e:
            self._open_failed(path, e)
            return
        if size <= BACKGROUND_BYTES:
            try:
                tf, _ = read_text_file(path)
            except OSError as e:
                self._open_failed(path, e)
                return
            self._show(path, tf)
            return
        self.window.stats.set_busy(f"Reading {os.path.basename(path)}…")
        self._reader.submit(lambda: read_text_file(path)[0], lambda tf: self._show(path, tf),
                            lambda e: self._open_failed(path, e))

    def _open_failed(self, path: str, error: BaseException) -> None:
        self.window.stats.set_busy("")
        reason = error.strerror if isinstance(error, OSError) and error.strerror else str(error)
        self.window.banner.show_message(f"Cannot open “{os.path.basename(path)}”: {reason}. "
                                        "The editor text is unchanged.")

    @property
    def loading(self) -> bool:
        """A huge text file is going into the editor a slice at a time."""
        return self._loading

    def _show(self, path: str, tf: TextFile) -> None:
        self.window.stats.set_busy("")
        editor = self.window.editor
        editor.slicer.abort()  # a text still going in is replaced anyway
        if len(tf.text) >= qt_slicer.SLICED_MIN:
            self._show_sliced(path, tf)
            return
        self._loading = True
        try:
            editor.setPlainText(tf.text)
        finally:
            self._loading = False
        self._shown(path, tf)

    def _shown(self, path: str, tf: TextFile) -> None:
        editor = self.window.editor
        editor.document().setModified(False)
        self.path, self.file, self.tracker = path, tf, RunTracker(tf)
        self._report(tf)
        self.update_title()
        self.overlay.update()

    def _show_sliced(self, path: str, tf: TextFile) -> None:
        """``setPlainText`` a slice at a time (see :mod:`.qt_slicer`): the
        same document, no undo step, one tokenization at the end."""
        editor = self.window.editor
        doc = editor.document()
        self._loading = True  # Qt reports it all as one edit at the end: not the user's
        doc.setUndoRedoEnabled(False)
        editor.setPlainText("")

        def done() -> None:
            self._loading = False
            doc.setUndoRedoEnabled(True)
            editor.moveCursor(QTextCursor.MoveOperation.Start)
            self._shown(path, tf)

        editor.replace_sliced(QTextCursor(doc), tf.text, f"Loading {os.path.basename(path)}", done)

    def _report(self, tf: TextFile) -> None:
        name = self.name
        if tf.invalid_bytes:
            self.note.setText(f"⚠ {tf.invalid_bytes:,} invalid bytes shown as �")
            self.note.setToolTip(f"{tf.invalid_bytes:,} bytes of {name} are not valid "
                                 f"{tf.describe().split(',')[0]}; saving writes them back unchanged")
            self.note.show()
            self.window.banner.show_message(
                f"“{name}” is not valid {tf.describe().split(',')[0].replace(' with BOM', '')}: "
                f"{tf.invalid_bytes:,} byte{'s' if tf.invalid_bytes != 1 else ''} in "
                f"{tf.invalid_runs:,} place{'s' if tf.invalid_runs != 1 else ''} are shown as � "
                "(outlined in red) and tokenized as U+FFFD. Saving writes the original bytes back "
                "unless you edit through them.", error=True)
        else:
            self.note.hide()
            self.window.banner.hide()
            self.window.stats.flash(f"Opened {name} ({tf.describe()})")

    # ---- saving ---------------------------------------------------------------------------

    def _data(self, target: str) -> bytes | None:
        """The bytes to write, or None when the user cancelled."""
        editor = self.window.editor
        text = editor.token_text()
        tf = self.file if self.file is not None else decode(b"")
        positions = self.positions() if self.file is not None else []
        try:
            data: bytes = encode(tf, text, positions)
        except EditedInvalidBytes as e:
            if not ask_replace_edited(self.window, os.path.basename(target), e.count):
                self.window.stats.flash("Not saved")
                return None
            data = encode(tf, text, positions, replace_edited=True)
        return data

    def save(self, wait: bool = False) -> bool:
        """Save to the open file (Save As when there is none). True when written
        (``wait``: the write is finished before this returns)."""
        if self.path is None:
            return self.save_as(wait)
        return self._write(self.path, wait)

    def save_as(self, wait: bool = False) -> bool:
        start = self.path or os.path.join(str(self.window.settings.q.value(KEY_FOLDER, "") or ""), "text.txt")
        path = ask_save_name(self.window, start)
        if not path:
            return False
        return self._write(os.path.abspath(path), wait)

    def _write(self, path: str, wait: bool) -> bool:
        data = self._data(path)
        if data is None:
            return False
        text = self.window.editor.token_text()
        if wait or len(data) <= BACKGROUND_BYTES:
            try:
                write_atomic(path, data)
            except ExportError as e:
                self._write_failed(e)
                return False
            self._written(path, data, text)
            return True
        self.window.stats.set_busy(f"Saving {os.path.basename(path)}…")
        self._writer.submit(lambda: write_atomic(path, data), lambda _r: self._written(path, data, text),
                            self._write_failed)
        return True

    def _write_failed(self, error: BaseException) -> None:
        self.window.stats.set_busy("")
        self.window.banner.show_message(f"{error} The file on disk is unchanged; the text is still here.")

    def _written(self, path: str, data: bytes, text: str) -> None:
        self.window.stats.set_busy("")
        tf = decode(data)
        editor = self.window.editor
        if editor.token_text() == text:
            if tf.text != text:
                # bytes kept on both sides of a deleted stretch joined into a
                # valid character: show the file as it now reads
                self._show(path, tf)
                self.window.banner.show_message(
                    f"Saved “{os.path.basename(path)}”; replaced bytes that the edit brought together "
                    "now read as text, shown as the file reads now.", error=False)
                return
            editor.document().setModified(False)
            self.file, self.tracker = tf, RunTracker(tf)
        self.path = path
        self._report_saved(tf)

    def _report_saved(self, tf: TextFile) -> None:
        if not tf.invalid_bytes:
            self.note.hide()
        self.update_title()
        self.overlay.update()
        self.window.stats.flash(f"Saved {self.name} ({tf.describe()})")

    # ---- closing --------------------------------------------------------------------------------

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if watched is self.window and event.type() == QEvent.Type.Close and self.path is not None:
            # text typed without a file is kept in the settings; a file's edits are not
            if not self.confirm_discard():
                assert isinstance(event, QCloseEvent)
                event.ignore()
                return True
        return False


def install(window: WindowParts) -> TextFiles:
    """Add File ▸ Open Text…, Save Text and Save Text As… to ``window``."""
    return TextFiles(window)
