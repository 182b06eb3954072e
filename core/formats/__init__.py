"""Services on the kernel: file formats. Converting Hugging Face and
SentencePiece tokenizers to GGUF, exporting and importing token lists, and
reading text files. Built on ``tokenprism.core``; the kernel never imports
them."""
