"""Whether the hot modules run compiled (mypyc) or as pure Python."""

from __future__ import annotations

import importlib

HOT_MODULES = (
    "tokenprism.core.gguf_file",
    "tokenprism.core.vocab",
    "tokenprism.core.spans",
    "tokenprism.core.special",
    "tokenprism.core.pair_cache",
    "tokenprism.core.columns",
    "tokenprism.core.piece_codes",
    "tokenprism.core.unicode_ranges",
    "tokenprism.plugins.spm.spm",
    "tokenprism.plugins.bpe.bpe",
    "tokenprism.plugins.bpe.ranks",
    "tokenprism.plugins.bpe.pretokenize",
    "tokenprism.plugins.ugm.ugm",
    "tokenprism.plugins.ugm.charsmap",
    "tokenprism.plugins.ugm.trie",
    "tokenprism.plugins.wpm.wpm",
)


def module_status() -> dict[str, str]:
    """``{module: "compiled" | "pure" | "missing"}`` for every hot module."""
    out: dict[str, str] = {}
    for name in HOT_MODULES:
        try:
            mod = importlib.import_module(name)
        except ImportError:
            out[name] = "missing"
            continue
        path = getattr(mod, "__file__", "") or ""
        out[name] = "pure" if path.endswith(".py") else "compiled"
    return out


def build_kind() -> str:
    """"compiled", "pure", or "mixed"."""
    kinds = {v for v in module_status().values() if v != "missing"}
    if kinds == {"compiled"}:
        return "compiled"
    if kinds == {"pure"} or not kinds:
        return "pure"
    return "mixed"
