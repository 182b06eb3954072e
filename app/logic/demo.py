"""Bundled resources: the demo models, the welcome text, the app's own files.

The demo models and texts live in the repository's top-level ``resources/``
folder (installed as ``tokenprism.resources``); ``tokenprism.core.library.resources``
knows where. The app's own files (its icon) live in ``app/resources``. Both
are also searched here directly, so a missing or changed helper never stops
the app from starting: at worst it starts with the empty state.
"""

from __future__ import annotations

import os
from pathlib import Path

_APP_DIR = Path(__file__).resolve().parents[1]
KIND_ORDER = ("spm", "bpe", "ugm", "wpm")

SAMPLE_TEXT = (
    "Tokenizers cut text into pieces. Type here and watch the tokens change!\n"
    "Numbers: 3.14159, 2024-06-01, 1,000,000\n"
    "Code:    def add(a, b):\n"
    "\treturn a + b  # tab-indented\n"
    "Emoji and other scripts fall back to bytes: 🙂 👍🏽 日本語 Ελληνικά русский\n"
    "Special-looking text: <s> [CLS] <|endoftext|>\n"
)


def resource_dirs() -> list[Path]:
    """Folders that may hold resources, most specific first."""
    dirs: list[Path] = []
    env = os.environ.get("TOKENPRISM_RESOURCES")
    if env:
        dirs.append(Path(env))
    dirs.append(_APP_DIR / "resources")
    try:
        from tokenprism.core.library import resources as core_resources

        dirs.extend(core_resources.resource_dirs())
    except (ImportError, AttributeError):
        pass
    dirs.append(_APP_DIR.parent / "resources")  # a source checkout: <repo>/resources
    unique: list[Path] = []
    for d in dirs:
        if d.is_dir() and d.resolve() not in [u.resolve() for u in unique]:
            unique.append(d)
    return unique


def resource_path(name: str) -> Path | None:
    """The first resource file called ``name``, or ``None``."""
    for d in resource_dirs():
        p = d / name
        if p.is_file():
            return p
    return None


def _kind_of(path: Path) -> str:
    stem = path.stem.lower()
    for kind in KIND_ORDER:
        if kind in stem:
            return kind
    return ""


def demo_models() -> dict[str, Path]:
    """Bundled demo models, label → path: the tokenizer kind ("spm", "bpe",
    "ugm", "wpm") for the known ones, SPM (byte fallback) first."""
    found: dict[str, Path] = {}
    try:
        from tokenprism.core.library import resources as core_resources

        found.update(core_resources.demo_models())
    except (ImportError, AttributeError):
        pass
    for d in resource_dirs():
        for p in sorted(d.glob("*.gguf")):
            if p.is_file() and p not in found.values():
                label = _kind_of(p) if "demo" in p.name.lower() else ""
                found.setdefault(label or p.stem, p)
    order = {k: i for i, k in enumerate(KIND_ORDER)}
    return dict(sorted(found.items(), key=lambda kv: (order.get(kv[0], len(order)), kv[0])))


def demo_model() -> Path | None:
    """The model to open when the user has not chosen one yet."""
    models = demo_models()
    return next(iter(models.values())) if models else None


def welcome_text() -> str:
    """The first-start text: the bundled welcome text, else a built-in sample."""
    try:
        from tokenprism.core.library import resources as core_resources

        text = core_resources.welcome_text()
        if text:
            return text
    except (ImportError, AttributeError, OSError, UnicodeError):
        pass
    p = resource_path("welcome.txt")
    if p is not None:
        try:
            return p.read_text(encoding="utf-8")
        except (OSError, UnicodeError):
            pass
    return SAMPLE_TEXT
