"""A TokenPrism plugin for ByT5's byte-level tokenizer (see ``plugin``)."""

from .plugin import ByT5Tokenizer, tokenprism_tokenizers

__all__ = ["ByT5Tokenizer", "tokenprism_tokenizers"]
