"""Bundled resources: where they are, the demo model, the sample text.

Resources live in the installed package (``tokenprism/app/resources``) and,
in a source checkout, in the repository's top-level ``resources/`` folder;
both are searched so the app finds its demo models whichever way it runs.
"""

from __future__ import annotations

import os
from pathlib import Path

_APP_DIR = Path(__file__).resolve().parent

SAMPLE_TEXT = (
    "Tokenizers cut text into pieces. Type here and watch the tokens change!\n"
    "Numbers: 3.14159, 2024-06-01, 1,000,000\n"
    "Code:    def add(a, b):\n"
    "\treturn a + b  # tab-indented\n"
    "Emoji and other scripts fall back to bytes: 🙂 👍🏽 日本語 Ελληνικά русский\n"
    "Special-looking text: <s> [CLS] <|endoftext|>\n"
)


def resource_dirs() -> list[Path]:
    """Folders that may hold TokenPrism resources, most specific first."""
    dirs: list[Path] = []
    env = os.environ.get("TOKENPRISM_RESOURCES")
    if env:
        dirs.append(Path(env))
    dirs.append(_APP_DIR / "resources")
    dirs.append(_APP_DIR.parent / "resources")  # source checkout: <repo>/resources
    try:
        from importlib.resources import files

        pkg = Path(str(files("tokenprism.app") / "resources"))
        if pkg not in dirs:
            dirs.append(pkg)
    except (ImportError, ModuleNotFoundError, TypeError):
        pass
    return [d for d in dirs if d.is_dir()]


def resource_path(name: str) -> Path | None:
    """The first resource called ``name``, or ``None``."""
    for d in resource_dirs():
        p = d / name
        if p.exists():
            return p
    return None


def demo_models() -> list[Path]:
    """Bundled ``.gguf`` files, those named ``*demo*`` first."""
    found: list[Path] = []
    for d in resource_dirs():
        for p in sorted(d.rglob("*.gguf")):
            if p.is_file() and p not in found:
                found.append(p)
    found.sort(key=lambda p: (0 if "demo" in p.name.lower() else 1))
    return found


def demo_model() -> Path | None:
    """The model to open when the user has not chosen one yet."""
    models = demo_models()
    return models[0] if models else None
