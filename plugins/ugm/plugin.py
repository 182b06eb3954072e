"""Registers the UGM tokenizer with TokenPrism's plugin host.

Tiny on purpose: the host imports every plugin's registration module, so
the compiled algorithm (trie, charsmap) is imported by ``build`` when a
file needs it."""

from __future__ import annotations

from tokenprism.core.plugin_api import Tokenizer, TokenizerSpec, Vocab, hookimpl


def build(vocab: Vocab) -> Tokenizer:
    from .ugm import build_ugm

    return build_ugm(vocab)


@hookimpl  # type: ignore[untyped-decorator, unused-ignore]
def tokenprism_tokenizers() -> list[TokenizerSpec]:
    # the Viterbi pass walks its own trie: the piece -> id table is never read
    return [TokenizerSpec("ugm", ("t5",), build, "Unigram (SentencePiece) with precompiled charsmap",
                          reads_token_table=False)]
