"""SentencePiece BPE with byte fallback (``tokenizer.ggml.model`` = ``llama``)."""
