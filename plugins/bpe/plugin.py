"""Registers the BPE tokenizer with TokenPrism's plugin host."""

from __future__ import annotations

from tokenprism.core.plugin_api import TokenizerSpec, hookimpl

from .bpe import build_bpe


@hookimpl  # type: ignore[untyped-decorator, unused-ignore]
def tokenprism_tokenizers() -> list[TokenizerSpec]:
    return [TokenizerSpec("bpe", ("gpt2", "gemma4", "hybriddna", "whitespace"), build_bpe, "Byte-level BPE",
                          reads_token_table=False)]
