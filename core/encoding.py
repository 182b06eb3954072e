"""The result of tokenization: :class:`Encoding` and its :class:`Token` s.

An encoding keeps its tokens as parallel arrays (ids, spans, groups), the
way Hugging Face ``tokenizers`` does, so a megabyte of text does not create
a quarter of a million Python objects; :class:`Token` objects are made on
request.

A column is an :class:`IntColumn` (int64 values, copied in one go from
the native vectors a plugin and the core's span walk fill), or a tuple of
ints: the groups column when no token is in a group (one -1, repeated). A
tuple's ints are Python objects: ~230 bytes a token over the six columns,
a gigabyte for a 10 MB text, each one allocated and freed; an
:class:`IntColumn` holds 8 bytes a value and is copied, shifted and freed
without holding the GIL for long. Both read alike (index, slice, iterate,
compare equal when their values are).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable, Iterator, Protocol, Sequence

from .int_column import Column, IntColumn
from .frozen import Record
from .tokenizer import Tokenizer, TokenizerConfig
from .vocab import Vocab

__all__ = ["Column", "Encoding", "IntColumn", "Token", "TokenSource"]

# the columns an encoding may make on first use (Encoding.with_char_spans_on_demand)
_CHAR_COLUMNS = ("starts", "ends", "groups")


class TokenSource(Protocol):
    """What an :class:`Encoding` knows of the model that made it
    (:class:`~tokenprism.core.model.Model` is the one there is). A protocol
    rather than the class: the model makes encodings, and the result type
    importing the model back made the two one knot of modules."""

    vocab: Vocab
    config: TokenizerConfig
    tokenizer: Tokenizer

    @property
    def name(self) -> str: ...

    @property
    def kind(self) -> str: ...

    def __len__(self) -> int: ...

    def encode(self, text: str, add_special: bool = False, parse_special: bool = False) -> Encoding: ...

    def merge_ranks(self) -> Sequence[int] | None: ...

    def word_indices(self, enc: Encoding) -> tuple[int, ...] | None: ...

    def display_piece(self, token_id: int) -> str: ...


class Token(Record):
    """One token with its spans into the ORIGINAL text.

    ``start``/``end`` are ``str`` indices, ``byte_start``/``byte_end`` UTF-8
    offsets. Tokens that hold only part of a character (byte fallback, or a
    byte-level piece cutting a character) carry the whole character's span
    and share a ``group`` (the index of the group's first token; ``-1`` when
    the token shares no character with another). Tokens that cover no text
    (BOS/EOS, an inserted prefix space) have an empty span at their place.

    ``rank`` is the BPE merge rank that forms the token and ``word`` the
    index of the word it belongs to (WordPiece); both are ``-1`` where the
    tokenizer has no such notion or the token has none (see
    :attr:`Encoding.ranks` and :attr:`Encoding.words`).
    """

    index: int
    id: int
    piece: str
    score: float
    type: int
    attr: int
    start: int
    end: int
    byte_start: int
    byte_end: int
    group: int
    rank: int
    word: int
    _FIELDS = ("index", "id", "piece", "score", "type", "attr", "start", "end", "byte_start", "byte_end",
               "group", "rank", "word")

    def __init__(self, index: int, id: int, piece: str, score: float, type: int, attr: int,
                 start: int, end: int, byte_start: int, byte_end: int, group: int,
                 rank: int = -1, word: int = -1) -> None:
        self.__dict__.update(index=index, id=id, piece=piece, score=score, type=type, attr=attr,
                             start=start, end=end, byte_start=byte_start, byte_end=byte_end, group=group,
                             rank=rank, word=word)

    @property
    def is_partial(self) -> bool:
        return self.group >= 0




class Encoding(Record):
    """Tokens of one text by one model.

    >>> model = open_model("ggml-vocab-llama-spm.gguf")
    >>> enc = model.encode("Hello world")
    >>> enc.ids, enc.tokens[0].piece
    ([15043, 3186], '▁Hello')
    """

    text: str
    model: TokenSource
    token_ids: Column
    starts: Column
    ends: Column
    byte_starts: Column
    byte_ends: Column
    groups: Column
    add_special: bool
    parse_special: bool
    # per-token columns some tokenizers offer, computed on first use: the
    # encoding itself stays a handful of int columns (not shown, not compared)
    _extras: dict[str, tuple[int, ...] | None]
    _FIELDS = ("text", "model", "token_ids", "starts", "ends", "byte_starts", "byte_ends", "groups",
               "add_special", "parse_special")

    def __init__(self, text: str, model: TokenSource, token_ids: Column, starts: Column, ends: Column,
                 byte_starts: Column, byte_ends: Column, groups: Column, add_special: bool = False,
                 parse_special: bool = False) -> None:
        self.__dict__.update(text=text, model=model, token_ids=token_ids, starts=starts, ends=ends,
                             byte_starts=byte_starts, byte_ends=byte_ends, groups=groups,
                             add_special=add_special, parse_special=parse_special, _extras={})

    @classmethod
    def with_char_spans_on_demand(cls, text: str, model: TokenSource, token_ids: Column, byte_starts: Column,
                                  byte_ends: Column, make: Callable[[], tuple[Column, Column, Column]],
                                  add_special: bool = False, parse_special: bool = False) -> Encoding:
        """An encoding whose ``starts``, ``ends`` and ``groups`` are
        ``make()``, called when one of them is first read (from any
        thread; a race at worst calls it twice, for equal columns).

        The character spans of a long text are a walk over its tokens and
        two fresh arrays (page faults: ~2 us a 4 KB page here), 15-20% of a
        first encode of 5 MB, which a caller that wants the ids or counts
        (a corpus, a tokenizer benchmark) never reads. Everything else
        reads as from the constructor: the columns are plain attributes
        once made, and equality and ``repr`` make them."""
        enc = cls.__new__(cls)
        for name, value in (("text", text), ("model", model), ("token_ids", token_ids),
                            ("byte_starts", byte_starts), ("byte_ends", byte_ends),
                            ("add_special", add_special), ("parse_special", parse_special),
                            ("_extras", {}), ("_make_char_columns", make)):
            object.__setattr__(enc, name, value)
        return enc

    if not TYPE_CHECKING:  # (to the type checker every attribute stays declared)
        def __getattr__(self, name: str) -> Column:
            # reached only for an attribute not set: a char column of an
            # encoding made by with_char_spans_on_demand, on its first read
            if name in _CHAR_COLUMNS:
                d = self.__dict__
                make = d.get("_make_char_columns")
                if make is not None:
                    cols = make()
                    for key, col in zip(_CHAR_COLUMNS, cols):
                        object.__setattr__(self, key, col)
                    # (set after the columns: a thread that finds no maker
                    # finds the columns)
                    object.__setattr__(self, "_make_char_columns", None)
                if name in d:
                    return d[name]
            raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    # ---- access -----------------------------------------------------------

    @property
    def ids(self) -> list[int]:
        """The token ids, as a new list."""
        return list(self.token_ids)

    def __len__(self) -> int:
        return len(self.token_ids)

    def token(self, i: int) -> Token:
        tid = self.token_ids[i]
        v = self.model.vocab
        ranks, words = self.ranks, self.words
        return Token(i, tid, v.pieces[tid], v.scores[tid], v.types[tid], v.attrs[tid],
                     self.starts[i], self.ends[i], self.byte_starts[i], self.byte_ends[i],
                     self.groups[i], -1 if ranks is None else ranks[i], -1 if words is None else words[i])

    @property
    def tokens(self) -> tuple[Token, ...]:
        return tuple(self.token(i) for i in range(len(self.token_ids)))

    def __iter__(self) -> Iterator[Token]:
        for i in range(len(self.token_ids)):
            yield self.token(i)

    # ---- optional per-token columns ---------------------------------------

    @property
    def ranks(self) -> tuple[int, ...] | None:
        """Per token, the rank of the BPE merge that forms it (-1 for byte,
        special and unmerged tokens); ``None`` when the model's tokenizer
        has no merge ranks.

        >>> gpt2 = open_model("ggml-vocab-gpt-2.gguf")
        >>> gpt2.encode(" the").ranks
        (6,)
        """
        if "ranks" not in self._extras:
            table = self.model.merge_ranks()
            self._extras["ranks"] = None if table is None else tuple([table[t] for t in self.token_ids])
        return self._extras["ranks"]

    @property
    def words(self) -> tuple[int, ...] | None:
        """Per token, the index of the word it belongs to (-1 for special
        tokens); ``None`` when the model's tokenizer has no words.

        >>> bert = open_model("ggml-vocab-bert-bge.gguf")
        >>> enc = bert.encode("hello tokenizers")
        >>> [t.piece for t in enc.tokens], enc.words
        (['▁hello', '▁token', 'izer', 's'], (0, 1, 1, 1))
        """
        if "words" not in self._extras:
            self._extras["words"] = self.model.word_indices(self)
        return self._extras["words"]

    # ---- lookups ----------------------------------------------------------

    def token_at(self, char_index: int) -> int:
        """Index of the first token whose span holds ``char_index``, or -1."""
        lo, hi = 0, len(self.token_ids)
        while lo < hi:
            mid = (lo + hi) // 2
            if self.ends[mid] <= char_index:
                lo = mid + 1
            else:
                hi = mid
        while lo < len(self.token_ids):
            if self.starts[lo] <= char_index < self.ends[lo]:
                return lo
            if self.starts[lo] > char_index:
                break
            lo += 1
        return -1

    def group_range(self, i: int) -> tuple[int, int]:
        """``[first, last + 1)`` token indices of the group holding token ``i``."""
        g = self.groups[i]
        if g < 0:
            return i, i + 1
        j = i + 1
        while j < len(self.groups) and self.groups[j] == g:
            j += 1
        return g, j
