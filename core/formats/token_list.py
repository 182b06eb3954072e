"""A token list: the tokens of one text by one model, kept independent of
the model so it can be written to a file and read back (``core/formats/export.py``
writes, ``core/formats/token_import.py`` reads).

A :class:`TokenList` is an :class:`~tokenprism.core.Encoding` made
self-contained: the model is kept as a :class:`ModelRef` (where it was, what
it is, and a fingerprint of its tokenizer) and every token field is copied.
Like ``Encoding`` it keeps its tokens in parallel columns;
:meth:`TokenList.token` builds one :class:`TokenRow` on request.

>>> model = open_model("ggml-vocab-llama-spm.gguf")
>>> tl = token_list(model, text="Hello", add_special=True)
>>> tl.ids, tl.token(1).piece
((1, 15043), '▁Hello')
"""

from __future__ import annotations

import hashlib
import json
import threading
import weakref
from dataclasses import dataclass
from typing import Iterator

import numpy as np

from ..encoding import Encoding
from ..gguf_file import MetadataValue
from ..model import Model, sanitize_text
from ..library.names import display_name
from ..vocab import Attr


# ---- data ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class ModelRef:
    """Which model made a token list.

    ``tokenizer_sha256`` is the SHA-256 of the file's ``tokenizer.ggml.*``
    metadata (keys, types and values, sorted by key; see
    :func:`tokenizer_fingerprint`): everything that decides tokenization and
    nothing else, so a re-quantized model with the same tokenizer has the
    same fingerprint, and computing it reads no tensor data.
    """

    path: str
    name: str
    kind: str
    tokenizer: str
    pre: str
    vocab_size: int
    file_size: int
    unk_id: int
    tokenizer_sha256: str

    @staticmethod
    def of(model: Model) -> ModelRef:
        unk = model.config.special_ids.get("unk", -1)
        return ModelRef(
            path=model.path, name=model.name, kind=model.kind, tokenizer=model.vocab.model,
            pre=model.vocab.pre, vocab_size=len(model), file_size=model.gguf.file_size,
            unk_id=unk if 0 <= unk < len(model) else -1, tokenizer_sha256=tokenizer_fingerprint(model))

    def describe(self) -> str:
        """``name (KIND, 32,000 tokens)``, named as the app shows models (core.names)."""
        return f"{display_name(self.name, self.path)} ({self.kind}, {self.vocab_size:,} tokens)"


@dataclass(frozen=True)
class TokenRow:
    """Every field of one token. ``piece`` is what a person reads (byte-level
    glyphs decoded, as :meth:`Model.display_piece`), ``piece_raw`` the
    vocabulary entry as stored; ``char`` is the text of the character(s) a
    group of tokens spells together (byte fallback), else ``None``.
    ``rank`` (BPE merge rank) and ``word`` (WordPiece word index) are -1
    where the model or the token has none, as in :class:`Token`."""

    index: int
    id: int
    piece: str
    piece_raw: str
    score: float
    type: int
    attr: int
    start: int
    end: int
    byte_start: int
    byte_end: int
    group: int
    char: str | None
    rank: int = -1
    word: int = -1


@dataclass(frozen=True)
class TokenList:
    """The tokens of one text by one model, independent of the model."""

    model: ModelRef
    text: str
    add_special: bool
    parse_special: bool
    ids: tuple[int, ...]
    pieces: tuple[str, ...]
    pieces_raw: tuple[str, ...]
    scores: tuple[float, ...]
    types: tuple[int, ...]
    attrs: tuple[int, ...]
    starts: tuple[int, ...]
    ends: tuple[int, ...]
    byte_starts: tuple[int, ...]
    byte_ends: tuple[int, ...]
    groups: tuple[int, ...]
    ranks: tuple[int, ...] | None = None
    """Per token, the BPE merge rank (see :attr:`Encoding.ranks`); None when
    the model has no merge ranks."""
    words: tuple[int, ...] | None = None
    """Per token, the word index (see :attr:`Encoding.words`); None when
    the model has no words."""

    def __len__(self) -> int:
        return len(self.ids)

    def token(self, i: int) -> TokenRow:
        g = self.groups[i]
        char = None
        if g >= 0:
            j = i
            while j + 1 < len(self.groups) and self.groups[j + 1] == g:
                j += 1
            char = self.text[min(self.starts[g:j + 1]):max(self.ends[g:j + 1])]
        return TokenRow(i, self.ids[i], self.pieces[i], self.pieces_raw[i], self.scores[i], self.types[i],
                        self.attrs[i], self.starts[i], self.ends[i], self.byte_starts[i], self.byte_ends[i],
                        g, char, self._rank(i), self._word(i))

    def _rank(self, i: int) -> int:
        return -1 if self.ranks is None else self.ranks[i]

    def _word(self, i: int) -> int:
        return -1 if self.words is None else self.words[i]

    def __iter__(self) -> Iterator[TokenRow]:
        # group characters computed once per group, not once per token
        n = len(self.ids)
        i = 0
        while i < n:
            g = self.groups[i]
            if g < 0:
                yield TokenRow(i, self.ids[i], self.pieces[i], self.pieces_raw[i], self.scores[i],
                               self.types[i], self.attrs[i], self.starts[i], self.ends[i],
                               self.byte_starts[i], self.byte_ends[i], -1, None, self._rank(i), self._word(i))
                i += 1
                continue
            j = i
            while j < n and self.groups[j] == g:
                j += 1
            char = self.text[min(self.starts[i:j]):max(self.ends[i:j])]
            for k in range(i, j):
                yield TokenRow(k, self.ids[k], self.pieces[k], self.pieces_raw[k], self.scores[k],
                               self.types[k], self.attrs[k], self.starts[k], self.ends[k],
                               self.byte_starts[k], self.byte_ends[k], g, char, self._rank(k), self._word(k))
            i = j

    @property
    def tokens(self) -> tuple[TokenRow, ...]:
        return tuple(self)

    def sublist(self, first: int, last: int) -> TokenList:
        """Tokens ``[first, last)`` as a list of their own: the text is the
        part they cover and every span, group and word index is counted
        from there, so the list is whole (it writes and reads back like
        any other). A byte group cut by the range is cut with it."""
        if not 0 <= first <= last <= len(self.ids):
            raise IndexError(f"tokens {first}..{last} are outside 0..{len(self.ids)}")
        if first == last:
            cs = be0 = 0
            text = ""
        else:
            cs, ce = min(self.starts[first:last]), max(self.ends[first:last])
            # bytes count from the first character's first byte (a byte
            # token's span can start inside that character)
            be0 = utf8_size(self.text[:cs])
            text = self.text[cs:ce]
        words = None
        if self.words is not None:
            w0 = min((w for w in self.words[first:last] if w >= 0), default=0)
            words = tuple(w - w0 if w >= 0 else -1 for w in self.words[first:last])
        return TokenList(
            model=self.model, text=text, add_special=self.add_special, parse_special=self.parse_special,
            ids=self.ids[first:last], pieces=self.pieces[first:last], pieces_raw=self.pieces_raw[first:last],
            scores=self.scores[first:last], types=self.types[first:last], attrs=self.attrs[first:last],
            starts=tuple(x - cs for x in self.starts[first:last]), ends=tuple(x - cs for x in self.ends[first:last]),
            byte_starts=tuple(x - be0 for x in self.byte_starts[first:last]),
            byte_ends=tuple(x - be0 for x in self.byte_ends[first:last]),
            groups=tuple(g - first if g >= first else -1 for g in self.groups[first:last]),
            ranks=None if self.ranks is None else self.ranks[first:last], words=words)


@dataclass(frozen=True)
class ListStats:
    """The counts people compare models by."""

    tokens: int
    chars: int
    bytes: int
    byte_fallback: int
    unknown: int

    @property
    def chars_per_token(self) -> float:
        return self.chars / self.tokens if self.tokens else 0.0

    @property
    def bytes_per_token(self) -> float:
        return self.bytes / self.tokens if self.tokens else 0.0


def stats(tl: TokenList) -> ListStats:
    unk = tl.model.unk_id
    return ListStats(
        tokens=len(tl), chars=len(tl.text), bytes=utf8_size(tl.text),
        byte_fallback=sum(1 for a in tl.attrs if a & Attr.BYTE),
        unknown=sum(1 for a, t in zip(tl.attrs, tl.ids) if a & Attr.UNKNOWN or t == unk))


# ---- building ---------------------------------------------------------------------------------

_fingerprints: weakref.WeakKeyDictionary[Model, str] = weakref.WeakKeyDictionary()
_fingerprint_lock = threading.Lock()


def tokenizer_fingerprint(model: Model) -> str:
    """SHA-256 (hex) of the model's ``tokenizer.ggml.*`` metadata; computed
    once per model (a 256k vocabulary takes a few tens of milliseconds)."""
    with _fingerprint_lock:
        cached = _fingerprints.get(model)
    if cached is not None:
        return cached
    h = hashlib.sha256()
    meta = model.gguf.metadata
    for key in sorted(k for k in meta if k.startswith("tokenizer.ggml.")):
        mv = meta[key]
        h.update(f"{key}\0{mv.type}\0{mv.elem_type}\0".encode("utf-8", "surrogateescape"))
        h.update(_value_bytes(mv))
    digest = h.hexdigest()
    with _fingerprint_lock:
        _fingerprints[model] = digest
    return digest


def _value_bytes(mv: MetadataValue) -> bytes:
    v = mv.value
    if isinstance(v, memoryview):
        # the reader's typed view of numbers: the bytes a numpy array of
        # them gave, so a fingerprint stays what it was
        v = np.asarray(v)
    if isinstance(v, np.ndarray):
        return b"np\0" + str(v.dtype).encode() + b"\0" + v.tobytes()
    if isinstance(v, (bytes, bytearray)):
        return b"b\0" + bytes(v)
    # lists of strings (pieces, merges) and scalars; json escapes lone
    # surrogates, so every string has exactly one form
    return b"j\0" + json.dumps(v, default=repr).encode("ascii")


def token_list(model: Model, encoding: Encoding | None = None, text: str | None = None,
               add_special: bool | None = None, parse_special: bool | None = None,
               rows: tuple[int, int] | None = None) -> TokenList:
    """The :class:`TokenList` of ``encoding`` (an encoding by ``model``), or
    of ``text`` encoded with the given flags when no encoding is passed.

    >>> model = open_model("ggml-vocab-llama-spm.gguf")
    >>> token_list(model, text="Hello", add_special=True).ids
    (1, 15043)
    """
    if encoding is None:
        if text is None:
            raise ValueError("token_list needs an encoding or a text")
        encoding = model.encode(text, add_special=bool(add_special), parse_special=bool(parse_special))
    else:
        if encoding.model is not model:
            raise ValueError("the encoding was made by another model")
        if text is not None and sanitize_text(text) != encoding.text:
            raise ValueError("the text is not the encoding's text")
        if (add_special is not None and add_special != encoding.add_special) or \
                (parse_special is not None and parse_special != encoding.parse_special):
            raise ValueError("the flags are not the encoding's flags")
    v = model.vocab
    if rows is not None:  # only tokens [first, last): see TokenList.sublist
        first, last = rows
        if not 0 <= first <= last <= len(encoding.token_ids):
            raise IndexError(f"tokens {first}..{last} are outside 0..{len(encoding.token_ids)}")
        part = slice(first, last)
    else:
        first, part = 0, slice(None)
    ids = encoding.token_ids[part]
    display: dict[int, str] = {}
    pieces: list[str] = []
    for tid in ids:
        p = display.get(tid)
        if p is None:
            p = display[tid] = model.display_piece(tid)
        pieces.append(p)
    ranks, words = encoding.ranks, encoding.words
    tl = TokenList(
        model=ModelRef.of(model), text=encoding.text, add_special=encoding.add_special,
        parse_special=encoding.parse_special, ids=tuple(ids), pieces=tuple(pieces),
        pieces_raw=tuple(v.pieces[t] for t in ids), scores=tuple(v.scores[t] for t in ids),
        types=tuple(v.types[t] for t in ids), attrs=tuple(v.attrs[t] for t in ids),
        starts=tuple(encoding.starts[part]), ends=tuple(encoding.ends[part]),
        byte_starts=tuple(encoding.byte_starts[part]), byte_ends=tuple(encoding.byte_ends[part]),
        groups=tuple(g - first if g >= first else -1 for g in encoding.groups[part]),
        ranks=None if ranks is None else tuple(ranks[part]), words=None if words is None else tuple(words[part]))
    # a part's spans still count from the whole text's start: rebase them
    return tl if rows is None else tl.sublist(0, len(tl))


def first_difference(a: TokenList, b: TokenList | Encoding) -> int:
    """Index of the first token where ``a`` and ``b`` (another list, or a
    fresh encoding of the same text) differ in id or span (``min(len)`` when
    one is a prefix of the other), or -1 when they agree."""
    b_ids = b.token_ids if isinstance(b, Encoding) else b.ids
    n = min(len(a), len(b))
    for i in range(n):
        if a.ids[i] != b_ids[i] or a.starts[i] != b.starts[i] or a.ends[i] != b.ends[i]:
            return i
    return -1 if len(a) == len(b) else n


def utf8_size(text: str) -> int:
    return len(text) if text.isascii() else len(text.encode("utf-8", "surrogatepass"))
