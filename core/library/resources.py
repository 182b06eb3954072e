"""Finding TokenPrism's bundled files: the demo models and texts.

The files live in the top-level ``resources/`` folder of the repository,
which an installed build ships as the package ``tokenprism.resources``.
Both layouts put that folder beside ``core/``, so one relative lookup covers
a source checkout, an editable install and an installed wheel;
``importlib.resources`` is asked as well, for installs where the package is
not a plain folder on disk (a zip, or a relocated data package).

>>> demo_models()["spm"].name
'demo-spm.gguf'
"""

from __future__ import annotations

import importlib.resources
from pathlib import Path, PurePosixPath

RESOURCE_PACKAGE = "tokenprism.resources"
DEMO_MODELS: dict[str, str] = {
    "spm": "demo-spm.gguf",
    "bpe": "demo-bpe.gguf",
    "ugm": "demo-ugm.gguf",
    "wpm": "demo-wpm.gguf",
}
"""Demo model file of each tokenizer kind, in the order to offer them."""
WELCOME_TEXT = "welcome.txt"

_BESIDE_CORE = Path(__file__).resolve().parents[2] / "resources"


def resource_dirs() -> list[Path]:
    """Folders that may hold the resources, the installed package first."""
    dirs: list[Path] = []
    try:
        root = importlib.resources.files(RESOURCE_PACKAGE)
        if isinstance(root, Path):  # only a real folder can hand out file paths
            dirs.append(root)
    except (ImportError, TypeError, ValueError):
        pass  # not installed as a package (a source checkout before install)
    if _BESIDE_CORE not in dirs:
        dirs.append(_BESIDE_CORE)
    return [d for d in dirs if d.is_dir()]


def resource_path(name: str) -> Path | None:
    """The bundled file ``name`` (a relative path such as ``"welcome.txt"``),
    or ``None`` when it is not there.

    >>> resource_path("welcome.txt").is_file()
    True
    """
    rel = PurePosixPath(name)
    if not name or rel.is_absolute() or ".." in rel.parts or "\\" in name:
        # resources are looked up by fixed names; anything else is a bug
        raise ValueError(f"not a resource name: {name!r}")
    for d in resource_dirs():
        p = d.joinpath(*rel.parts)
        if p.is_file():
            return p
    return None


def demo_models() -> dict[str, Path]:
    """The bundled demo models that are present, kind ("spm", "bpe", "ugm",
    "wpm") → path."""
    out: dict[str, Path] = {}
    for kind, filename in DEMO_MODELS.items():
        p = resource_path(filename)
        if p is not None:
            out[kind] = p
    return out


def welcome_text() -> str:
    """The text shown on the app's first start ("" when it is missing)."""
    p = resource_path(WELCOME_TEXT)
    return p.read_text(encoding="utf-8") if p is not None else ""
