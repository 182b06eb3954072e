"""File ▸ Export Tokens… and File ▸ Import Tokens….

Export writes the tokens of the editor text, by the open model with the
current options, through ``tokenprism.core.formats.export`` (the same code as
``tokenprism tokenize --format``): the format follows the file name's
extension or the chosen filter, the file is replaced atomically, and a
failed write leaves the old file and says why in the window's banner.

Import reads any export back. A JSON export restores the options and the
text and reopens the model the tokens were made with when that file is
here. JSON Lines, CSV and id files keep neither text nor model: their text
is rebuilt from the ids with the open model (``restore_text``). When the
model's tokens of the restored text arrive they are checked against the
file's, and any difference is reported; when the model is missing, the
banner names the model that is needed.

Reading, tokenizing and writing run in a worker thread.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from PySide6.QtCore import QObject, Signal
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QFileDialog

from tokenprism.core import Encoding, TokenPrismError
from tokenprism.core.formats.export import (FILE_FORMATS, TokenList, TokenRows, first_difference,
                                    format_for_path, load_token_file, restore_text, token_list,
                                    tokenizer_fingerprint, write_export)

from . import qt_compat  # noqa: F401  (guards against a PySide6 bug; see there)
from ..logic.analysis import Analysis
from ..logic.pieces import readable
from .qt_background import QBackground
from .window_parts import WindowParts


EXPORT_SHORTCUT = "Ctrl+Shift+S"
IMPORT_SHORTCUT = "Ctrl+Shift+I"
FILTERS = {
    "json": "JSON, every field, with the text and model (*.json)",
    "jsonl": "JSON Lines, one token a line (*.jsonl)",
    "csv": "CSV for spreadsheets (*.csv)",
    "ids": "Token IDs (*.txt)",
}
EXTENSION = {"json": ".json", "jsonl": ".jsonl", "csv": ".csv", "ids": ".txt"}
KEY_FOLDER = "export/folder"
KEY_FORMAT = "export/format"


def install(window: WindowParts) -> TokenFiles:
    """Add File ▸ Export Tokens… and Import Tokens…, and the decode view
    (View ▸ Decode IDs…, ``qt_decode``), to ``window``."""
    from .qt_decode import install as install_decode

    install_decode(window)
    return TokenFiles(window)


def path_and_format(path: str, selected_filter: str) -> tuple[str, str]:
    """The file to write and its format: a known extension decides; else
    the chosen filter does and its extension is added."""
    fmt = format_for_path(path)
    if fmt in FILE_FORMATS:
        return path, str(fmt)
    fmt = next((f for f, flt in FILTERS.items() if flt == selected_filter), "json")
    return path + EXTENSION[fmt], fmt


def export_failure(name: str, error: BaseException) -> str:
    """One line on why writing the file ``name`` failed (writes are atomic,
    so the file that was there is as it was)."""
    if isinstance(error, TokenPrismError):
        return str(error)
    return f"Cannot export to “{name}”: {type(error).__name__}: {error}. The previous file is unchanged."


IMPORT_FILTER = "TokenPrism token exports (*.json *.jsonl *.ndjson *.csv *.txt *.ids);;All files (*)"


@dataclass(frozen=True)
class _Pending:
    """An import whose model's tokens are still to be compared."""

    tokens: TokenList | TokenRows
    add_special: bool
    parse_special: bool
    file_name: str
    model_path: str
    text: str
    notes: str

    def difference(self, enc: Encoding) -> int:
        """The first token where the model's ``enc`` differs from the file, or -1."""
        if isinstance(self.tokens, TokenRows):
            return self.tokens.first_difference(enc.token_ids, enc.starts, enc.ends)
        return first_difference(self.tokens, enc)


def _clip(text: str, limit: int = 60) -> str:
    text = readable(text, visible_spaces=False)
    return text if len(text) <= limit else text[:limit] + "…"


class TokenFiles(QObject):
    """The export and import commands of one window."""

    exported = Signal(str, int)
    """(path, number of tokens) after a successful export."""
    exportFailed = Signal(str)
    imported = Signal(object)
    """The :class:`TokenList` shown after an import."""
    importFailed = Signal(str)
    verified = Signal(bool)
    """After an import: whether the reopened model gave the file's tokens."""

    def __init__(self, window: WindowParts) -> None:
        super().__init__(window)
        self.window = window
        self.jobs = QBackground(self)
        self.jobs.busyChanged.connect(self._on_busy)
        self._busy_text = ""
        self._pending: _Pending | None = None

        self.act_export = QAction("&Export Tokens…", window)
        self.act_export.setShortcut(QKeySequence(EXPORT_SHORTCUT))
        self.act_export.setToolTip(f"Save the tokens as JSON, JSON Lines, CSV or plain ids ({EXPORT_SHORTCUT})")
        self.act_export.triggered.connect(self.export_dialog)
        self.act_import = QAction("&Import Tokens…", window)
        self.act_import.setShortcut(QKeySequence(IMPORT_SHORTCUT))
        self.act_import.setToolTip("Open a token export: a JSON one brings back its text, options and model; "
                                   f"JSON Lines, CSV and id files their tokens ({IMPORT_SHORTCUT})")
        self.act_import.triggered.connect(self.import_dialog)
        for act in (self.act_export, self.act_import):
            window.addAction(act)  # shortcuts work even with the menu bar hidden
        menu = window.menus["file"]
        menu.setToolTipsVisible(True)
        menu.insertActions(window.act_quit, [self.act_export, self.act_import])
        menu.insertSeparator(window.act_quit)

        window.live.resultReady.connect(self._on_result)
        window.loader.failed.connect(self._on_load_failed)
        # the token table's context menu: Export… of the selected tokens, and
        # Copy IDs in the format Edit ▸ Copy Token IDs uses
        window.table.exportRequested.connect(self.export_selection)
        window.table.id_format = lambda: window.id_format

    # ---- export -----------------------------------------------------------------------

    def export_dialog(self) -> None:
        chosen = self._ask_path("tokens")
        if chosen is not None:
            self.export_to(*chosen)

    def export_selection(self, first: int, last: int) -> None:
        """The token table's Export…: tokens ``[first, last)`` of the
        analysis on screen, as a list of their own (``TokenList.sublist``)."""
        a = self.window.analysis
        if a is None or not 0 <= first < last <= len(a):
            return
        chosen = self._ask_path("selection")
        if chosen is not None:
            self.export_to(*chosen, rows=(first, last))

    def _ask_path(self, what: str) -> tuple[str, str] | None:
        w = self.window
        if w.model_info is None:
            w.banner.show_message("Open a model first: there are no tokens to export yet.", error=False)
            return None
        q = w.settings.q
        folder = q.value(KEY_FOLDER, "")
        if not isinstance(folder, str) or not os.path.isdir(folder):
            folder = os.path.expanduser("~")
        fmt = q.value(KEY_FORMAT, "json")
        fmt = fmt if isinstance(fmt, str) and fmt in FILTERS else "json"
        stem = os.path.splitext(os.path.basename(w.model_info.path))[0]
        suggested = os.path.join(folder, f"{stem}-{what}{EXTENSION[fmt]}")
        path, chosen = QFileDialog.getSaveFileName(w, "Export Tokens", suggested, ";;".join(FILTERS.values()),
                                                   FILTERS[fmt])
        if not path:
            return None
        path, fmt = path_and_format(path, chosen)
        q.setValue(KEY_FOLDER, os.path.dirname(path))
        q.setValue(KEY_FORMAT, fmt)
        return path, fmt

    def export_to(self, path: str, fmt: str, rows: tuple[int, int] | None = None) -> bool:
        """Write the editor text's tokens (only tokens ``rows`` of the
        analysis on screen, when given) to ``path`` in the background;
        False (with a message) when there is nothing to export."""
        w = self.window
        info = w.model_info
        if info is None:
            w.banner.show_message("Open a model first: there are no tokens to export yet.", error=False)
            return False
        if rows is not None:
            a = w.analysis
            if a is None or a.info is not info:
                return False
            shown, first, last = a.encoding, rows[0], rows[1]

            def part() -> int:
                tl = token_list(info.model, shown, rows=(first, last))
                write_export(path, [tl], fmt)
                return len(tl)

            self._busy_text = f"Exporting to {os.path.basename(path)}…"
            self.jobs.submit(part, lambda n: self._exported(path, n),
                             lambda e: self._export_failed(os.path.basename(path), e))
            return True
        text = w.editor.token_text()
        add, parse = w.act_add_special.isChecked(), w.act_parse_special.isChecked()
        a = w.analysis
        encoding: Encoding | None = None
        if a is not None and a.info is info and a.text == text and \
                (a.encoding.add_special, a.encoding.parse_special) == (add, parse):
            encoding = a.encoding  # what is on screen; no need to tokenize again
        model = info.model

        def job() -> int:
            tl = token_list(model, encoding) if encoding is not None else \
                token_list(model, text=text, add_special=add, parse_special=parse)
            write_export(path, [tl], fmt)
            return len(tl)

        name = os.path.basename(path)
        self._busy_text = f"Exporting to {name}…"
        self.jobs.submit(job, lambda n: self._exported(path, n), lambda e: self._export_failed(name, e))
        return True

    def _exported(self, path: str, n: int) -> None:
        self.window.stats.flash(f"Exported {n:,} tokens to {os.path.basename(path)}", 4000)
        self.exported.emit(path, n)

    def _export_failed(self, name: str, error: BaseException) -> None:
        message = export_failure(name, error)
        self.window.banner.show_message(message, error=True)
        self.exportFailed.emit(message)

    def _on_busy(self, busy: bool) -> None:
        if busy:
            self.window.stats.set_busy(self._busy_text)
        elif not self.window.loader.busy:
            self.window.stats.set_busy("")

    # ---- import -----------------------------------------------------------------------

    def import_dialog(self) -> None:
        q = self.window.settings.q
        folder = q.value(KEY_FOLDER, "")
        if not isinstance(folder, str) or not os.path.isdir(folder):
            folder = os.path.expanduser("~")
        path, _ = QFileDialog.getOpenFileName(self.window, "Import Tokens", folder, IMPORT_FILTER)
        if path:
            q.setValue(KEY_FOLDER, os.path.dirname(path))
            self.import_from(path)

    def import_from(self, path: str) -> None:
        """Read ``path`` in the background, then show what it holds."""
        self._busy_text = f"Reading {os.path.basename(path)}…"
        self.jobs.submit(lambda: load_token_file(path), lambda got: self._apply(path, got), self._import_failed)

    def _import_failed(self, error: BaseException) -> None:
        message = str(error) if isinstance(error, TokenPrismError) else \
            f"Cannot import: {type(error).__name__}: {error}"
        self.window.banner.show_message(message, error=True)
        self.importFailed.emit(message)

    def _apply(self, path: str, got: list[TokenList] | TokenRows) -> None:
        if isinstance(got, TokenRows):
            self._apply_rows(path, got)
            return
        w = self.window
        lists = got
        tl = lists[0]
        name = os.path.basename(path)
        notes: list[str] = []
        if len(lists) > 1:
            notes.append(f"“{name}” compares {len(lists)} models; the first one's tokens are used.")
        w.act_add_special.setChecked(tl.add_special)
        w.act_parse_special.setChecked(tl.parse_special)
        w.editor.setPlainText(tl.text)
        shown = w.editor.token_text()
        if shown != tl.text:
            notes.append("The editor changed the text's line breaks, so its tokens can differ from the file's.")
        model_path = find_model(tl.model.path, path)
        current = w.model_info
        if model_path is None:
            self._pending = None
            using = f"with {current.name}" if current is not None else "without a model"
            w.banner.show_message(" ".join((
                f"The tokens in “{name}” were made with {tl.model.describe()}, whose file "
                f"“{tl.model.path}” is not here. Open that model to compare; the text is shown {using}.",
                *notes)), error=False)
        else:
            self._pending = _Pending(tl, tl.add_special, tl.parse_special, name, model_path, shown, " ".join(notes))
            if current is None or os.path.abspath(current.path) != model_path:
                w.open_path(model_path)
            else:
                w.live.refresh()
                self._check(w.analysis)  # the result may be on screen already
        self.imported.emit(tl)

    def _apply_rows(self, path: str, rows: TokenRows) -> None:
        """A JSON Lines, CSV or id file: its text is rebuilt from the ids
        with the open model, then checked like any import."""
        w = self.window
        name = os.path.basename(path)
        info = w.model_info
        kind = {"jsonl": "JSON Lines", "csv": "CSV", "ids": "id"}[rows.fmt]
        if info is None:
            self._import_failed(TokenPrismError(
                f"“{name}” is a {kind} file: it keeps the tokens but not the text or the model. Open the model "
                "the tokens were made with, then import it again (a JSON export brings its model along)."))
            return
        try:
            text, add, parse = restore_text(rows, info.model)
        except TokenPrismError as e:
            self._import_failed(e)
            return
        notes = [f"“{name}” is a {kind} file, which keeps no text: the text was rebuilt from its "
                 f"{len(rows):,} ids with {info.name}."]
        if rows.lists > 1:
            first = f" ({rows.model_name})" if rows.model_name else ""
            notes.append(f"It compares {rows.lists} models; the first one's tokens{first} are used.")
        w.act_add_special.setChecked(add)
        w.act_parse_special.setChecked(parse)
        w.editor.setPlainText(text)
        self._pending = _Pending(rows, add, parse, name, os.path.abspath(info.path), w.editor.token_text(),
                                 " ".join(notes))
        w.live.refresh()
        self._check(w.analysis)
        self.imported.emit(rows)

    def _on_result(self, a: Analysis) -> None:
        self._check(a)

    def _check(self, a: Analysis | None) -> None:
        p = self._pending
        w = self.window
        if p is None or a is None or a.info is not w.model_info or os.path.abspath(a.info.path) != p.model_path:
            return
        enc = a.encoding
        if a.text != p.text or (enc.add_special, enc.parse_special) != (p.add_special, p.parse_special):
            if a.generation == w.live.generation:  # changed by the user since: nothing to compare
                self._pending = None
            return
        self._pending = None
        tl = p.tokens
        k = p.difference(enc)
        if k < 0:
            w.stats.flash(f"Imported {len(tl):,} tokens from {p.file_name}: {a.info.name} gives the same tokens",
                          5000)
            if p.notes:
                w.banner.show_message(p.notes, error=False)
            self.verified.emit(True)
            return
        model = a.model
        if k < min(len(tl), len(enc)):
            here = f"id {enc.token_ids[k]} “{_clip(model.display_piece(enc.token_ids[k]))}”"
            piece = tl.pieces[k] if isinstance(tl, TokenList) else model.display_piece(tl.ids[k])
            there = f"id {tl.ids[k]} “{_clip(piece)}”"
            what = f"from token #{k}: the file has {there}, the model gives {here}"
        else:
            what = f"after token #{k - 1}: the file has {len(tl):,} tokens, the model gives {len(enc):,}"
        why = ""
        if isinstance(tl, TokenList) and tokenizer_fingerprint(model) != tl.model.tokenizer_sha256:
            why = " The model file's tokenizer is not the one the tokens were made with."
        w.banner.show_message(f"{a.info.name} tokenizes the imported text differently from “{p.file_name}” "
                              f"{what}.{why} {p.notes}".rstrip(), error=True)
        self.verified.emit(False)

    def _on_load_failed(self, path: str, message: str) -> None:
        p = self._pending
        if p is not None and os.path.abspath(path) == p.model_path:
            self._pending = None
            self.window.banner.show_message(
                f"{message} The tokens in “{p.file_name}” need {_needs(p.tokens)}.", error=True)

    def shutdown(self) -> None:
        self.jobs.shutdown()


def _needs(tokens: TokenList | TokenRows) -> str:
    return tokens.model.describe() if isinstance(tokens, TokenList) else "the model they were made with"


def find_model(ref_path: str, import_file: str) -> str | None:
    """The model file a token list names, as an absolute path, if it exists:
    a relative path (``tokenprism tokenize`` keeps what it was given) is
    tried beside the imported file, then in the working folder."""
    candidates = [ref_path] if os.path.isabs(ref_path) else \
        [os.path.join(os.path.dirname(os.path.abspath(import_file)), ref_path), ref_path]
    for c in candidates:
        if c and os.path.isfile(c):
            return os.path.abspath(c)
    return None

