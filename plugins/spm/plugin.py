"""Registers the SPM tokenizer with TokenPrism (kept uncompiled: pluggy
inspects this module's functions).

Tiny on purpose: the host imports every plugin's registration module, so
the compiled algorithm is imported by ``build`` when a file needs it."""

from __future__ import annotations

from tokenprism.core.plugin_api import Tokenizer, TokenizerSpec, Vocab, hookimpl


def build(vocab: Vocab) -> Tokenizer:
    from .spm import build_spm

    return build_spm(vocab)


@hookimpl  # type: ignore[untyped-decorator, unused-ignore]
def tokenprism_tokenizers() -> list[TokenizerSpec]:
    return [TokenizerSpec("spm", ("llama",), build, "SentencePiece BPE with byte fallback",
                          reads_token_table=False)]
