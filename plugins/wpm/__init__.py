"""WordPiece (``tokenizer.ggml.model`` = ``bert``), as llama.cpp's WPM tokenizer."""
