"""The plugin host: finds tokenizer plugins and picks one for a vocabulary."""

from __future__ import annotations

import importlib.metadata
import threading

import pluggy

from . import hookspecs
from .errors import UnsupportedTokenizerError
from .plugin_types import TokenizerSpec
from .vocab import Vocab

_lock = threading.Lock()
_manager: pluggy.PluginManager | None = None
_failed: dict[str, str] = {}


def plugin_manager() -> pluggy.PluginManager:
    """The process-wide plugin manager, with entry-point plugins loaded.

    A plugin that fails to import is skipped and reported by
    :func:`failed_plugins` instead of taking the whole app down.
    """
    global _manager
    with _lock:
        if _manager is None:
            pm = pluggy.PluginManager(hookspecs.PROJECT)
            pm.add_hookspecs(hookspecs)
            for ep in importlib.metadata.entry_points(group=hookspecs.ENTRY_POINT_GROUP):
                if pm.get_plugin(ep.name) is not None or pm.is_blocked(ep.name):
                    continue
                try:
                    pm.register(ep.load(), name=ep.name)
                except Exception as e:  # a broken third-party plugin must not stop the app
                    _failed[ep.name] = f"{type(e).__name__}: {e}"
            _manager = pm
        return _manager


def failed_plugins() -> dict[str, str]:
    """Entry points that could not be loaded, with the reason."""
    plugin_manager()
    return dict(_failed)


def tokenizer_specs() -> list[TokenizerSpec]:
    """Every tokenizer offered by every registered plugin (later-registered
    plugins first, so a third-party plugin can take over a model type)."""
    specs: list[TokenizerSpec] = []
    for result in plugin_manager().hook.tokenprism_tokenizers():
        specs.extend(result)
    return specs


def spec_for_model(model: str, specs: list[TokenizerSpec] | None = None) -> TokenizerSpec | None:
    """The spec that handles ``tokenizer.ggml.model`` = ``model``, or None."""
    for spec in tokenizer_specs() if specs is None else specs:
        if model in spec.model_types:
            return spec
    return None


def find_spec(vocab: Vocab, path: str = "") -> TokenizerSpec:
    """The spec that handles ``vocab.model``; raises
    :class:`UnsupportedTokenizerError` naming the installed ones otherwise."""
    specs = tokenizer_specs()
    found = spec_for_model(vocab.model, specs)
    if found is not None:
        return found
    known = ", ".join(f"{s.name} ({'/'.join(s.model_types)})" for s in specs) or "none"
    raise UnsupportedTokenizerError(
        path, f"no installed plugin handles tokenizer type {vocab.model!r}; installed: {known}",
        None, "tokenizer.ggml.model")
