"""Registers the UGM tokenizer with TokenPrism's plugin host."""

from __future__ import annotations

from tokenprism.core.plugin_api import TokenizerSpec, hookimpl

from .ugm import build_ugm


@hookimpl
def tokenprism_tokenizers() -> list[TokenizerSpec]:
    # the Viterbi pass walks its own trie: the piece -> id table is never read
    return [TokenizerSpec("ugm", ("t5",), build_ugm, "Unigram (SentencePiece) with precompiled charsmap",
                          reads_token_table=False)]
