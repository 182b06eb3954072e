"""TokenPrism core: GGUF reading, the vocabulary, the plugin host and the
``open_model`` facade. No Qt and no tokenizer algorithm live here.

>>> from tokenprism.core import open_model
>>> model = open_model("ggml-vocab-llama-spm.gguf")
>>> model.encode("Hello world").ids
[15043, 3186]
"""

from __future__ import annotations

import importlib

TYPE_CHECKING = False  # (not typing's: importing it was ~4 ms of `tokenprism --version`)
if TYPE_CHECKING:
    from typing import Any

    from .encoding import Encoding, Token
    from .errors import GGUFError, TokenPrismError, UnsupportedTokenizerError
    from .gguf_file import GGUFFile, read_gguf
    from .model import Model, open_model
    from .tokenizer import FragmentResult, Tokenizer, TokenizerConfig
    from .vocab import Attr, TokenType, Vocab, vocab_from_gguf

# Each name is imported on first use (PEP 562), not when the package is:
# importing any tokenprism.core.* module runs this file first, and the
# names below pull in numpy and the whole kernel, which `tokenprism
# --version`, the errors module or the build check do not need.
_HOME = {
    "Encoding": "encoding", "Token": "encoding",
    "GGUFError": "errors", "TokenPrismError": "errors", "UnsupportedTokenizerError": "errors",
    "GGUFFile": "gguf_file", "read_gguf": "gguf_file",
    "Model": "model", "open_model": "model",
    "FragmentResult": "tokenizer", "Tokenizer": "tokenizer", "TokenizerConfig": "tokenizer",
    "Attr": "vocab", "TokenType": "vocab", "Vocab": "vocab", "vocab_from_gguf": "vocab",
}


def __getattr__(name: str) -> Any:
    home = _HOME.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{home}", __name__), name)
    globals()[name] = value  # later lookups skip this function
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *_HOME])


__all__ = [
    "Attr", "Encoding", "FragmentResult", "GGUFError", "GGUFFile", "Model", "Token",
    "TokenPrismError", "TokenType", "Tokenizer", "TokenizerConfig", "UnsupportedTokenizerError",
    "Vocab", "open_model", "read_gguf", "vocab_from_gguf",
]
