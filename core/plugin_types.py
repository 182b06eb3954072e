"""Data a plugin hands to the host (kept apart from ``hookspecs`` so that
compiled plugin code can import it without pluggy)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable, Protocol

from .frozen import Record
from .tokenizer import Tokenizer
from .vocab import Vocab

if TYPE_CHECKING:  # the explanation records load with the first trace (core.plugin_api)
    from .explain import FragmentTrace


class TokenizerSpec(Record):
    """One tokenizer algorithm offered by a plugin.

    >>> from tokenprism.plugins.spm.spm import build_spm
    >>> spec = TokenizerSpec("spm", ("llama",), build_spm, "SentencePiece BPE")
    >>> tokenizer = spec.build(open_model("ggml-vocab-llama-spm.gguf").vocab)
    >>> tokenizer.encode_fragment("Hello world", True)
    FragmentResult(ids=[15043, 3186], starts=[0, 5], ends=[5, 11])
    """

    name: str
    """Short unique name, e.g. ``"spm"``."""
    model_types: tuple[str, ...]
    """``tokenizer.ggml.model`` values handled, e.g. ``("llama",)``."""
    build: Callable[[Vocab], Tokenizer]
    """Builds a tokenizer; may raise ``GGUFError`` for an unusable vocab."""
    description: str
    reads_token_table: bool
    """Whether ``build`` (or the tokenizer) reads the piece -> id dict
    (``core.vocab.token_table``) or iterates ``vocab.pieces``. When not,
    the loader decodes no piece and builds no dict: the plugin looks
    pieces up in ``core.vocab.piece_index`` (or walks
    ``core.vocab.piece_codes``), made from the file's bytes, which is
    most of a small vocabulary's open (llama-spm: 10.5 -> 6 ms)."""
    _FIELDS = ("name", "model_types", "build", "description", "reads_token_table")

    def __init__(self, name: str, model_types: tuple[str, ...], build: Callable[[Vocab], Tokenizer],
                 description: str = "", reads_token_table: bool = True) -> None:
        self.__dict__.update(name=name, model_types=model_types, build=build, description=description,
                             reads_token_table=reads_token_table)


class TracingTokenizer(Tokenizer, Protocol):
    """A tokenizer that can say why it cut a fragment the way it did
    (optional; ``Model.explain``). Only asked for on demand, for a short
    text: keep the tracing code out of the encoding loops (ours live in an
    uncompiled ``trace.py`` beside the algorithm, imported on first use)."""

    def trace_fragment(self, text: str, after_special: bool) -> FragmentTrace:
        """``encode_fragment(text, after_special)`` replayed stage by stage:
        the fragment normalized, pre-tokenized and cut into words, each with
        its tokens and the algorithm's steps (offsets inside ``text``). The
        words' tokens, in order, must be exactly ``encode_fragment``'s ids."""
        ...
