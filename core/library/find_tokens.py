"""Which tokens can produce a string: for stop strings and logit bias.

A model streams text token by token, so a stop string (or a word to ban)
can arrive split over several tokens. :func:`find_tokens` lists every token
whose bytes are a prefix, a suffix or a substring of the string's UTF-8,
and the string's own tokenization. A token's bytes are what llama.cpp's
detokenizer writes for it (:meth:`Model.token_bytes` with special text on):
byte-level BPE glyphs mapped back to bytes, ``<0xNN>`` byte tokens as their
one byte, SentencePiece's ``▁`` as a space, control and user-defined
tokens as their text. Tokens that write nothing (unused, undefined, empty)
are never listed.

Word-start pieces. SPM and Unigram models that add a space prefix, and
WordPiece models, write a word's first piece with a leading ``▁`` that is
not in the user's text: it stands for "a word starts here" (llama.cpp's
WordPiece converter marks word starts so and strips the ``##`` of
continuation pieces, which are stored bare). Prefix, suffix and substring
are literal by bytes (``▁hello`` writes `` hello``, so it is not a prefix
of ``hello``): what a stop string or a logit bias needs. The pieces that
the tokenizer itself would start the string with, a NORMAL token whose
bytes are that space followed by a prefix of the string, are listed apart
as ``word_start``. Byte-level BPE spaces (``Ġ``) are real spaces and
never count there.

>>> table = TokenBytes(open_model("ggml-vocab-gpt-2.gguf"))
>>> found = find_tokens(table, "Hello")
>>> found.tokenization, 15496 in found.prefix, found.word_start
((15496,), True, ())
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Final

import numpy as np

from ..errors import TokenPrismError
from ..model import Model
from ..vocab import Attr
from .vocab_query import KIND_NAMES, QueryCancelled, kind_codes

MAX_BYTES: Final = 8192
"""Longest string looked up (its UTF-8 bytes): the lookups grow with its
length times the number of distinct token lengths."""
BUILD_STEP: Final = 1 << 15
"""Tokens a :class:`TokenBytes` build does between looks at ``cancelled``."""
RELATIONS: Final = ("prefix", "suffix", "substring")
"""The literal relations, by bytes; ``word_start`` is listed apart."""


class FindError(TokenPrismError, ValueError):
    """A string that cannot be looked up (the message is for the user)."""


def phantom_space(model: Model) -> bool:
    """True when the model's word-start pieces carry a ``▁`` the text does
    not have (see the module docstring)."""
    cfg = model.config
    return cfg.kind == "WPM" or (cfg.kind in ("SPM", "UGM") and cfg.add_space_prefix)


class TokenBytes:
    """Every token of a model by its bytes, built once (one pass over the
    vocabulary, ~0.6 s for 262 144 tokens in pure Python: meant for a worker
    thread), then asked many times; a lookup costs the string's length
    times the number of distinct token lengths, whatever the vocabulary's
    size."""

    def __init__(self, model: Model, cancelled: Callable[[], bool] | None = None) -> None:
        self.model = model
        n = len(model)
        attrs = model.vocab.arrays().attrs
        self.kinds = kind_codes(attrs)
        normal = (attrs & Attr.NORMAL) != 0
        phantom = phantom_space(model)
        by_bytes: dict[bytes, list[int]] = {}
        word_start: dict[bytes, list[int]] = {}
        token_bytes = model.token_bytes
        for lo in range(0, n, BUILD_STEP):
            if cancelled is not None and cancelled():
                raise QueryCancelled()
            for i in range(lo, min(lo + BUILD_STEP, n)):
                b = token_bytes(i)
                if not b:
                    continue
                by_bytes.setdefault(b, []).append(i)
                if phantom and len(b) > 1 and b[0] == 0x20 and normal[i]:
                    word_start.setdefault(b[1:], []).append(i)
        self._by_bytes = by_bytes
        self._word_start = word_start
        # longest first: a caller listing matches reads the long ones first
        self._lengths = sorted({len(b) for b in by_bytes}, reverse=True)
        self._word_lengths = sorted({len(b) for b in word_start}, reverse=True)

    def __len__(self) -> int:
        return len(self.kinds)

    def ids_of(self, data: bytes) -> list[int]:
        """The tokens whose bytes are exactly ``data``."""
        return list(self._by_bytes.get(data, ()))

    def kind_name(self, token_id: int) -> str:
        return KIND_NAMES[int(self.kinds[token_id])]


@dataclass(frozen=True)
class FoundTokens:
    """The tokens that can produce ``string``, ids ascending in each list.
    ``substring`` holds every token found anywhere (prefixes and suffixes
    too), so a token equal to the whole string is in all three."""

    string: str
    prefix: tuple[int, ...]
    suffix: tuple[int, ...]
    substring: tuple[int, ...]
    tokenization: tuple[int, ...]
    word_start: tuple[int, ...] = ()
    """Word-start pieces (see the module docstring) whose bytes after the
    space are a prefix of the string: not literal, so in none of the three."""

    def to_json(self) -> dict[str, list[int]]:
        return {"prefix": list(self.prefix), "suffix": list(self.suffix), "substring": list(self.substring),
                "tokenization": list(self.tokenization), "word_start": list(self.word_start)}

    def relation(self, name: str) -> tuple[int, ...]:
        """One of :data:`RELATIONS` by name."""
        if name not in RELATIONS:
            raise KeyError(name)
        found: tuple[int, ...] = getattr(self, name)
        return found


def string_bytes(string: str) -> bytes:
    """``string``'s UTF-8; characters a command line could not decode
    (``surrogateescape``) become their original bytes again."""
    try:
        return string.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:
        raise FindError("the string holds a lone surrogate (not valid Unicode text)") from None


def find_tokens(table: TokenBytes, string: str, parse_special: bool = False) -> FoundTokens:
    """The tokens whose bytes are a prefix, a suffix or a substring of
    ``string``'s UTF-8, the word-start pieces that can begin it, and the ids ``string`` itself tokenizes to (no
    BOS/EOS; special-token text matched when ``parse_special``)."""
    data = string_bytes(string)
    if not data:
        raise FindError("the string is empty: give the text to look for")
    if len(data) > MAX_BYTES:
        raise FindError(f"the string is {len(data):,} bytes long; at most {MAX_BYTES:,} are looked up")
    size = len(data)
    prefix: set[int] = set()
    suffix: set[int] = set()
    inside: set[int] = set()
    by_bytes = table._by_bytes
    for length in table._lengths:
        if length > size:
            continue
        last = size - length
        for start in range(last + 1):
            ids = by_bytes.get(data[start:start + length])
            if ids is None:
                continue
            inside.update(ids)
            if start == 0:
                prefix.update(ids)
            if start == last:
                suffix.update(ids)
    starts: set[int] = set()
    word_start = table._word_start
    for length in table._word_lengths:
        if length <= size:
            starts.update(word_start.get(data[:length], ()))
    enc = table.model.encode(string, add_special=False, parse_special=parse_special)
    return FoundTokens(string, tuple(sorted(prefix)), tuple(sorted(suffix)), tuple(sorted(inside)),
                       tuple(enc.ids), tuple(sorted(starts)))


def by_kind(table: TokenBytes, ids: tuple[int, ...] | list[int]) -> dict[str, list[int]]:
    """``ids`` grouped by token kind (:data:`KIND_NAMES` order), longest
    bytes first within a kind, kinds without any left out."""
    if not ids:
        return {}
    arr = np.asarray(ids, dtype=np.int64)
    codes = table.kinds[arr]
    lengths = np.fromiter((len(table.model.token_bytes(i)) for i in ids), dtype=np.int64, count=len(ids))
    out: dict[str, list[int]] = {}
    for code, name in enumerate(KIND_NAMES):
        sel = codes == code
        if sel.any():
            part, lens = arr[sel], lengths[sel]
            order = np.lexsort((part, -lens))
            out[name] = [int(i) for i in part[order]]
    return out
