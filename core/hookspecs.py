"""The plugin contract: every hook a TokenPrism plugin may implement.

A plugin is a module (or object) with functions marked ``@hookimpl``,
registered under the entry-point group ``tokenprism.plugins``::

    [project.entry-points."tokenprism.plugins"]
    mytok = "mypackage.tokenprism_plugin"

TokenPrism's own SPM, BPE, UGM and WPM tokenizers are registered exactly
this way. Plugins never import Qt and never import each other.
"""

from __future__ import annotations

import pluggy

from .plugin_types import TokenizerSpec

PROJECT = "tokenprism"
ENTRY_POINT_GROUP = "tokenprism.plugins"

hookspec = pluggy.HookspecMarker(PROJECT)
hookimpl = pluggy.HookimplMarker(PROJECT)


@hookspec
def tokenprism_tokenizers() -> list[TokenizerSpec]:  # type: ignore[empty-body]
    """Return the tokenizer algorithms this plugin provides, each a
    :class:`TokenizerSpec` naming the ``tokenizer.ggml.model`` values it
    handles and the function that builds a tokenizer for a ``Vocab``."""
