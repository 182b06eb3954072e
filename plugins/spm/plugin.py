"""Registers the SPM tokenizer with TokenPrism (kept uncompiled: pluggy
inspects this module's functions)."""

from __future__ import annotations

from tokenprism.core.plugin_api import TokenizerSpec, hookimpl

from .spm import build_spm


@hookimpl
def tokenprism_tokenizers() -> list[TokenizerSpec]:
    return [TokenizerSpec("spm", ("llama",), build_spm, "SentencePiece BPE with byte fallback",
                          reads_token_table=False)]
