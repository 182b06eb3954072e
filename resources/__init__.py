"""TokenPrism's bundled data: demo models (``*.gguf``) and texts (``*.txt``).

Use :mod:`tokenprism.core.library.resources` to find them; this file only makes the
folder an installable package.
"""
