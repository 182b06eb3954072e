"""Registers the WPM tokenizer with TokenPrism (kept uncompiled: pluggy
inspects this module's functions)."""

from __future__ import annotations

from tokenprism.core.plugin_api import TokenizerSpec, hookimpl

from .wpm import build_wpm


@hookimpl
def tokenprism_tokenizers() -> list[TokenizerSpec]:
    return [TokenizerSpec("wpm", ("bert",), build_wpm, "WordPiece (BERT)",
                          reads_token_table=False)]
