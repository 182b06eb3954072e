"""Registers the WPM tokenizer with TokenPrism (kept uncompiled: pluggy
inspects this module's functions).

Tiny on purpose: the host imports every plugin's registration module, so
the compiled algorithm is imported by ``build`` when a file needs it."""

from __future__ import annotations

from tokenprism.core.plugin_api import Tokenizer, TokenizerSpec, Vocab, hookimpl


def build(vocab: Vocab) -> Tokenizer:
    from .wpm import build_wpm

    return build_wpm(vocab)


@hookimpl  # type: ignore[untyped-decorator, unused-ignore]
def tokenprism_tokenizers() -> list[TokenizerSpec]:
    return [TokenizerSpec("wpm", ("bert",), build, "WordPiece (BERT)",
                          reads_token_table=False)]
