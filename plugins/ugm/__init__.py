"""Unigram (SentencePiece) with a precompiled charsmap (``tokenizer.ggml.model`` = ``t5``)."""
