"""The name a person knows a model by.

A GGUF file names its model in ``general.name``, but converters fill that
field with whatever they had at hand: a commit hash (llama.cpp's gemma-4
vocabulary is named ``47b6801b…``), the folder they read from
(``D:\\Diverses\\models``), or the name of a sibling model (qwen2 and
qwen35 both say ``qwen2``). Every place that shows a model (window title,
compare view, CLI tables, exports) asks here, so they all show the same
name: the metadata name when it says something, else the file's name, and
when two models shown together would read the same, the file names (and if
need be their folders) that tell them apart.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence

MAX_NAME_CHARS = 100
"""Longer metadata names are prose or junk, not a name; the file name is used."""

MODEL_EXTENSIONS = (".gguf", ".bin", ".safetensors", ".pth", ".pt", ".ggml")

# A digest, optionally tagged with its algorithm ("sha256:…", "sha256-…" as
# ollama names its blobs), or a UUID: identifiers, not names.
_HASH = re.compile(r"(?:(?:sha|md|blake|xxh)\w*[:-])?[0-9a-f]{16,}|"
                   r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}", re.IGNORECASE)
# An absolute or home- or dot-relative path, or a Windows drive path. A
# plain "org/model" is left alone: that is how Hugging Face names models.
_PATH = re.compile(r"(?:[/\\~]|\.\.?[/\\]|[A-Za-z]:[/\\]?$|[A-Za-z]:[/\\])")
_SEPARATORS = re.compile(r"[/\\]+")


def _parts(path: str) -> list[str]:
    return [p for p in _SEPARATORS.split(path) if p]


def file_label(path: str) -> str:
    """The file's name without its model-file extension (``.gguf``)."""
    parts = _parts(path)
    base = parts[-1] if parts else ""
    low = base.lower()
    for ext in MODEL_EXTENSIONS:
        if low.endswith(ext) and len(base) > len(ext):
            return base[:-len(ext)]
    return base


def _clean(name: str) -> str:
    # runs of any whitespace (tabs, line breaks, no-break spaces) read as one space
    return " ".join(name.split())


def is_hash(name: str) -> bool:
    return _HASH.fullmatch(name.strip()) is not None


def is_path(name: str) -> bool:
    n = name.strip()
    return "\\" in n or _PATH.match(n) is not None or n.lower().endswith(MODEL_EXTENSIONS)


def name_problem(name: str) -> str | None:
    """Why the metadata name ``name`` is no name for a person, or None when it is one."""
    n = _clean(name)
    if not n:
        return "empty"
    if any(unicodedata.category(c) in ("Cc", "Cs") for c in n):
        return "control characters"
    if len(n) > MAX_NAME_CHARS:
        return "too long"
    if is_hash(n):
        return "a hash"
    if is_path(n):
        return "a path"
    return None


def display_name(name: str, path: str) -> str:
    """What to call the model whose ``general.name`` is ``name`` and whose file is ``path``.

    The metadata name when it is a name (``Baichuan-7B``); the file name
    (``ggml-vocab-gemma-4``) when it is missing, a hash, a path, control
    characters or prose. Alone, this cannot tell apart two models of one
    name: :func:`display_names` does that for models shown together.
    """
    if name_problem(name) is None:
        return _clean(name)
    stem = file_label(path)
    if stem:
        return stem
    return _clean(name)


def _tail(path: str, k: int) -> str:
    """The last ``k`` parts of ``path``, the last one without its extension."""
    parts = _parts(path)
    if not parts:
        return ""
    return "/".join(parts[max(0, len(parts) - k):-1] + [file_label(path)])


def _key(label: str) -> str:
    # names that differ only in case read as the same name
    return label.casefold()


def _repeats(labels: Sequence[str]) -> dict[str, list[int]]:
    where: dict[str, list[int]] = {}
    for i, label in enumerate(labels):
        where.setdefault(_key(label), []).append(i)
    return {k: v for k, v in where.items() if len(v) > 1}


def _told_apart(labels: list[str], paths: Sequence[str], group: list[int]) -> None:
    """Give each model of ``group`` (all with one label) the shortest tail of
    its path that no other file of the group shares: the file name, else
    the file name with as many folders as it takes. One file given twice
    keeps one label (numbered at the end by :func:`display_names`)."""
    files = list(dict.fromkeys(paths[i] for i in group))
    if len(files) < 2:
        return
    depth = max(len(_parts(f)) for f in files)
    tails: dict[str, str] = {}
    for k in range(1, depth + 1):
        tails = {f: _tail(f, k) for f in files}
        if len({_key(t) for t in tails.values()}) == len(files):
            break
    else:
        return  # two spellings of one path ("a//b", "a/b"): nothing to add
    for i in group:
        tail = tails[paths[i]]
        # a label that already is its file name needs no repeat of it
        if _key(tail) != _key(labels[i]):
            labels[i] = f"{labels[i]} ({tail})"


def display_names(models: Sequence[tuple[str, str]]) -> list[str]:
    """The :func:`display_name` of each ``(name, path)``, made different
    where two would read the same.

    Models that share a name keep it and add their file name:
    ``qwen2 (ggml-vocab-qwen35)``; a model whose file is called as its name
    is left as it is. When the file names are the same too, folders are
    added until they differ (``Llama (a/model)``, ``Llama (b/model)``). The
    same file given twice is numbered (``qwen2 #2``), so every label is
    different.
    """
    labels = [display_name(n, p) for n, p in models]
    paths = [p for _n, p in models]
    for _round in range(3):  # a label made longer could meet a third model's label
        repeats = _repeats(labels)
        if not repeats:
            return labels
        for group in repeats.values():
            _told_apart(labels, paths, group)
    for group in _repeats(labels).values():
        for k, i in enumerate(group):
            labels[i] = f"{labels[i]} #{k + 1}"
    return labels
