"""Menu contents built on demand (recent files, demo models) and the Help
dialogs of the main window."""

from __future__ import annotations

import os
from typing import Callable

from PySide6.QtWidgets import QMenu, QMessageBox, QWidget

from . import qt_compat  # noqa: F401  (guards against a PySide6 bug; see there)
from .demo import demo_models
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
    ("Ctrl+Shift+A", "Compare models side by side"),
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


def fill_recent_menu(menu: QMenu, settings: AppSettings, open_path: Callable[[str], None]) -> None:
    """The recent models, newest first, and "Clear Recent"."""
    menu.clear()
    files = settings.recent_files()
    for i, path in enumerate(files):
        name = os.path.basename(path)
        act = menu.addAction(f"&{i + 1}  {name}" if i < 9 else name)
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


def show_about(parent: QWidget) -> None:
    QMessageBox.about(parent, "About TokenPrism",
                      "<b>TokenPrism</b><br>See how a language model's tokenizer cuts text: "
                      "token boundaries, ids, scores and byte fallback, live as you type, "
                      "with llama.cpp-exact token ids.")
