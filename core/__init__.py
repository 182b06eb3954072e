"""TokenPrism core: GGUF reading, the vocabulary, the plugin host and the
``open_model`` facade. No Qt and no tokenizer algorithm live here.

>>> from tokenprism.core import open_model
>>> model = open_model("ggml-vocab-llama-spm.gguf")
>>> model.encode("Hello world").ids
[15043, 3186]
"""

from .encoding import Encoding, Token
from .errors import GGUFError, TokenPrismError, UnsupportedTokenizerError
from .gguf_file import GGUFFile, read_gguf
from .model import Model, open_model
from .tokenizer import FragmentResult, Tokenizer, TokenizerConfig
from .vocab import Attr, TokenType, Vocab, vocab_from_gguf

__all__ = [
    "Attr", "Encoding", "FragmentResult", "GGUFError", "GGUFFile", "Model", "Token",
    "TokenPrismError", "TokenType", "Tokenizer", "TokenizerConfig", "UnsupportedTokenizerError",
    "Vocab", "open_model", "read_gguf", "vocab_from_gguf",
]
