"""Byte-level BPE (``tokenizer.ggml.model`` = ``gpt2``, ``gemma4``,
``hybriddna``, ``whitespace``), exactly as llama.cpp tokenizes."""
