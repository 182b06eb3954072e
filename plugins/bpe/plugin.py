"""Registers the BPE tokenizer with TokenPrism's plugin host.

The host imports every plugin's registration module to learn which
``tokenizer.ggml.model`` values it handles, so this module stays tiny: the
compiled algorithm (and its pre-tokenizer and rank tables) is imported by
``build`` when a file actually needs it, not on every first open."""

from __future__ import annotations

from tokenprism.core.plugin_api import Tokenizer, TokenizerSpec, Vocab, hookimpl


def build(vocab: Vocab) -> Tokenizer:
    from .bpe import build_bpe

    return build_bpe(vocab)


@hookimpl  # type: ignore[untyped-decorator, unused-ignore]
def tokenprism_tokenizers() -> list[TokenizerSpec]:
    return [TokenizerSpec("bpe", ("gpt2", "gemma4", "hybriddna", "whitespace"), build, "Byte-level BPE",
                          reads_token_table=False)]
