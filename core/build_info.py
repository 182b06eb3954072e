"""Whether the hot modules run compiled (mypyc) or as pure Python."""

from __future__ import annotations

import importlib
import importlib.util

HOT_MODULES = (
    "tokenprism.core.gguf_file",
    "tokenprism.core.vocab",
    "tokenprism.core.undecoded",
    "tokenprism.core.spans",
    "tokenprism.core.special",
    "tokenprism.core.pair_cache",
    "tokenprism.core.columns",
    "tokenprism.core.piece_codes",
    "tokenprism.core.bytes_index",
    "tokenprism.core.unicode_ranges",
    "tokenprism.core.record",
    "tokenprism.core.hash_slots",
    "tokenprism.plugins.spm.spm",
    "tokenprism.plugins.bpe.bpe",
    "tokenprism.plugins.bpe.ranks",
    "tokenprism.plugins.bpe.pretokenize",
    "tokenprism.plugins.bpe.custom_split",
    "tokenprism.plugins.bpe.word_cache",
    "tokenprism.plugins.ugm.ugm",
    "tokenprism.plugins.ugm.charsmap",
    "tokenprism.plugins.ugm.trie",
    "tokenprism.plugins.ugm.xcda",
    "tokenprism.plugins.wpm.wpm",
    "tokenprism.plugins.wpm.chunks",
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


def _found_kind(name: str) -> str:
    """What importing ``name`` would load, found without importing it (only
    its parent packages): the spec's origin is the extension or the source
    the import system picked, so an import hook that forces sources counts."""
    try:
        spec = importlib.util.find_spec(name)
    except ImportError:
        return "missing"
    if spec is None or not spec.origin:
        return "missing"
    return "pure" if spec.origin.endswith(".py") else "compiled"


def build_kind() -> str:
    """"compiled", "pure", or "mixed".

    Asked by ``tokenprism --version`` and at start-up, so it only locates
    the hot modules: importing them would cost numpy and every plugin's
    algorithm (most of a --version's time) to answer a question about
    file names."""
    kinds = {_found_kind(name) for name in HOT_MODULES} - {"missing"}
    if kinds == {"compiled"}:
        return "compiled"
    if kinds == {"pure"} or not kinds:
        return "pure"
    return "mixed"
