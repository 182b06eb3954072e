"""Menu contents built on demand (recent files, demo models) and the Help
dialogs of the main window."""

from __future__ import annotations

import html
import importlib.metadata
import os
from pathlib import Path
from typing import Callable

from PySide6.QtCore import Qt
from PySide6.QtGui import QFontMetrics
from PySide6.QtWidgets import QMenu, QMessageBox, QWidget

from . import qt_compat  # noqa: F401  (guards against a PySide6 bug; see there)
from ..logic.demo import demo_models
from .settings import AppSettings

SHORTCUTS = (
    ("Ctrl+O", "Open a model"), ("Ctrl+Shift+C", "Copy token ids"),
    ("Ctrl+Shift+B", "Add special tokens (BOS/EOS)"), ("Ctrl+Shift+P", "Parse special tokens"),
    ("Ctrl+Shift+W", "Show whitespace"), ("Ctrl+Shift+Y", "Label all byte groups with their bytes"),
    ("Ctrl+1 / Ctrl+2", "Token table / chips"),
    ("Ctrl+E", "Focus the editor"), ("Ctrl+T", "Focus the token view"),
    ("Ctrl+Tab", "Leave the editor (Tab types a tab)"), ("Ctrl++ / Ctrl+- / Ctrl+0", "Zoom"),
    ("← → Home End", "Move between tokens in the chips view"),
    ("Esc", "Dismiss a message; cancel tokenizing a huge text"),
    ("F5", "Tokenize again (resumes after a cancel)"),
    ("Ctrl+Shift+S", "Export tokens"), ("Ctrl+Shift+I", "Import tokens"), ("Ctrl+Shift+D", "Decode token ids"),
    ("Ctrl+Shift+L", "Models panel: models found on this computer"),
    ("Ctrl+F / F3 / Shift+F3", "Find in the text / next / previous match"),
    ("Ctrl+G", "Go to token #N or id N"),
    ("Ctrl+Shift+O", "Open a text file"), ("Ctrl+S / Ctrl+Alt+S", "Save text / save text as"),
    ("Ctrl+Shift+K", "Vocabulary: browse, filter and sort every token"),
    ("Ctrl+Shift+M", "Model metadata: GGUF keys, chat template, file facts"),
    ("Ctrl+Shift+E", "Why: every stage of the tokenizer replayed for the selected tokens"),
    ("Ctrl+Shift+A", "Compare models side by side"),
    ("Ctrl+Shift+H", "Chat: a conversation as the model sees it (template, tokens by origin, counts)"),
    ("Ctrl+Shift+U", "Check the model against its source tokenizer"),
    ("Ctrl+Shift+R", "Corpus profile: how models tokenize a folder of texts"),
)
KIND_NAMES = {"spm": "SentencePiece BPE (SPM)", "bpe": "Byte-level BPE (BPE)",
              "ugm": "Unigram (UGM)", "wpm": "WordPiece (WPM)"}


def fill_demo_menu(menu: QMenu, open_path: Callable[[str], None]) -> None:
    """One entry per bundled demo model."""
    menu.clear()
    models = demo_models()
    for i, (kind, path) in enumerate(models.items()):
        act = menu.addAction(f"&{i + 1}  {KIND_NAMES.get(kind, kind)}")
        act.setToolTip(str(path))
        act.triggered.connect(lambda _=False, p=str(path): open_path(p))
    if not models:
        menu.addAction("No demo models installed").setEnabled(False)


RECENT_PATH_CHARS = 60  # room for a recent file's path, in digits


def recent_entry(path: str, fm: QFontMetrics) -> str:
    """"name — …/folder/name.gguf": the file's name, then its full path cut
    in the middle to fit, so two files of the same name read differently
    ("&" doubled: menus read it as a mnemonic)."""
    home = os.path.expanduser("~")
    shown = "~" + path[len(home):] if home not in ("", "/", "~") and path.startswith(home + os.sep) else path
    shown = fm.elidedText(shown, Qt.TextElideMode.ElideMiddle, fm.horizontalAdvance("0") * RECENT_PATH_CHARS)
    return f"{os.path.basename(path)} — {shown}".replace("&", "&&")


def fill_recent_menu(menu: QMenu, settings: AppSettings, open_path: Callable[[str], None]) -> None:
    """The recent models, newest first, and "Clear Recent"."""
    menu.clear()
    files = settings.recent_files()
    menu.setToolTipsVisible(True)
    fm = menu.fontMetrics()
    for i, path in enumerate(files):
        text = recent_entry(path, fm)
        act = menu.addAction(f"&{i + 1}  {text}" if i < 9 else text)
        act.setToolTip(path)
        act.triggered.connect(lambda _=False, p=path: open_path(p))
    if not files:
        menu.addAction("No recent models").setEnabled(False)
    menu.addSeparator()
    clear = menu.addAction("Clear Recent")
    clear.setEnabled(bool(files))
    clear.triggered.connect(settings.clear_recent_files)


def show_shortcuts(parent: QWidget) -> None:
    rows = "".join(f"<tr><td><b>{k}</b></td><td>{v}</td></tr>" for k, v in SHORTCUTS)
    QMessageBox.information(parent, "Keyboard shortcuts", f"<table cellpadding='3'>{rows}</table>")


def app_version() -> str:
    """The installed package's version ("unknown" when run from loose sources)."""
    try:
        return importlib.metadata.version("tokenprism")
    except importlib.metadata.PackageNotFoundError:
        return "unknown"


def build_text() -> str:
    """Whether the hot modules run compiled (mypyc) or as pure Python, in words."""
    try:
        from tokenprism.core.build_info import build_kind

        kind = build_kind()
    except ImportError:
        return "unknown"
    return {"compiled": "compiled (mypyc)", "pure": "pure Python (not compiled: slower)",
            "mixed": "partly compiled (some modules are pure Python)"}.get(kind, kind)


def documentation() -> tuple[str, str]:
    """(link target, text) of where the documentation is: the README of the
    project folder when it is there (a source checkout, an editable
    install), else a documentation or home page from the package metadata,
    else the README kept in that metadata."""
    readme = Path(__file__).resolve().parent.parent / "README.md"
    if readme.is_file():
        return readme.as_uri(), str(readme)
    try:
        meta = importlib.metadata.metadata("tokenprism")
        urls = [u.partition(",") for u in meta.get_all("Project-URL") or []]
    except importlib.metadata.PackageNotFoundError:
        urls = []
    for label, _, url in sorted(urls, key=lambda u: "doc" not in u[0].lower()):  # documentation first
        if url.strip():
            return url.strip(), url.strip()
    return "", "the README in the package metadata (pip show --verbose tokenprism)"


def about_html() -> str:
    target, where = documentation()
    doc = f"<a href='{html.escape(target)}'>{html.escape(where)}</a>" if target else html.escape(where)
    return ("<b>TokenPrism</b> " + html.escape(app_version()) + "<br>"
            "See how a language model's tokenizer cuts text: token boundaries, ids, scores and "
            "byte fallback, live as you type, with llama.cpp-exact token ids.<br><br>"
            f"<b>Build:</b> {html.escape(build_text())}<br>"
            f"<b>Documentation:</b> {doc}<br>"
            "<b>Command line:</b> <code>tokenprism --help</code>")


def show_about(parent: QWidget) -> None:
    QMessageBox.about(parent, "About TokenPrism", about_html())
