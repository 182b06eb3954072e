"""The contract between the core and a tokenizer plugin (the "model" stage).

A plugin builds a :class:`Tokenizer` for a :class:`~tokenprism.core.vocab.Vocab`.
The core does everything that is the same for every algorithm: splitting
special-token text out of the input, adding BOS/EOS, turning byte offsets
into character spans and groups, and detokenizing. The plugin only sees
plain text fragments.
"""

from __future__ import annotations

from typing import Callable, Mapping, Protocol, Sequence, cast

from librt.vecs import vec
from mypy_extensions import i64

from .frozen import Record
from .vocab import Vocab


class FragmentResult(Record):
    """Tokens of one plain-text fragment.

    ``starts``/``ends`` are UTF-8 byte offsets into the fragment as given
    (the original text, before any normalization). A token that covers no
    original text (an inserted prefix space) has ``start == end``; a token
    that holds part of a character gives the byte offsets inside it, and the
    core widens it to whole characters and groups it with its neighbours.
    """

    ids: list[int]
    starts: list[int]
    ends: list[int]
    _FIELDS = ("ids", "starts", "ends")

    def __init__(self, ids: list[int], starts: list[int], ends: list[int]) -> None:
        self.__dict__.update(ids=ids, starts=starts, ends=ends)


class TokenizerConfig(Record):
    """What the core needs to know about a tokenizer, resolved from the
    file's flags and the algorithm's defaults."""

    kind: str
    """Short algorithm name shown to users: "SPM", "BPE", "UGM", "WPM", ..."""
    special_ids: Mapping[str, int]
    """Resolved special ids (bos, eos, unk, sep, pad, mask, ...)."""
    special_prefix: tuple[int, ...]
    """Ids put before the text when ``add_special`` is on (e.g. BOS)."""
    special_suffix: tuple[int, ...]
    """Ids put after the text when ``add_special`` is on (e.g. EOS, SEP)."""
    add_bos: bool
    add_eos: bool
    add_space_prefix: bool
    """Decoding drops the one leading space this prefix added."""
    clean_spaces: bool
    """Decoding applies llama.cpp's clean-up of spaces before punctuation."""
    byte_level: bool
    """Pieces are GPT-2 byte-level glyphs; show their decoded bytes instead."""
    normalizes: bool
    """The tokenizer rewrites text before splitting it (see ``normalized``)."""
    _FIELDS = ("kind", "special_ids", "special_prefix", "special_suffix", "add_bos", "add_eos",
               "add_space_prefix", "clean_spaces", "byte_level", "normalizes")

    def __init__(self, kind: str, special_ids: Mapping[str, int] | None = None,
                 special_prefix: tuple[int, ...] = (), special_suffix: tuple[int, ...] = (),
                 add_bos: bool = False, add_eos: bool = False, add_space_prefix: bool = False,
                 clean_spaces: bool = False, byte_level: bool = False, normalizes: bool = False) -> None:
        self.__dict__.update(
            kind=kind, special_ids={} if special_ids is None else special_ids, special_prefix=special_prefix,
            special_suffix=special_suffix, add_bos=add_bos, add_eos=add_eos, add_space_prefix=add_space_prefix,
            clean_spaces=clean_spaces, byte_level=byte_level, normalizes=normalizes)


class Tokenizer(Protocol):
    """One algorithm bound to one vocabulary. Implementations must be safe to
    call from a worker thread and keep no per-call state between calls."""

    vocab: Vocab
    config: TokenizerConfig

    def encode_fragment(self, text: str, after_special: bool) -> FragmentResult:
        """Tokenize one plain fragment. ``after_special`` is true for the
        first fragment of the text and for a fragment that follows a
        special token (SPM adds its space prefix only there)."""
        ...

    def piece_bytes(self, token_id: int) -> bytes:
        """The text a NORMAL token stands for, as llama.cpp's
        ``token_to_piece`` gives it (``▁`` unescaped, byte-level decoded)."""
        ...

    def normalized(self, text: str) -> str:
        """The text as the model sees it after normalization."""
        ...


class CuttableTokenizer(Tokenizer, Protocol):
    """A tokenizer that can say where a fragment may be cut (optional; see
    :func:`cut_points`). Incremental retokenization uses it to redo only the
    text around an edit."""

    def cut_points(self, text: str, lo: int, hi: int) -> list[int]:
        """Positions ``p`` with ``lo <= p < hi`` and ``0 < p < len(text)``
        where the plain fragment ``text`` may be cut: no token of
        ``encode_fragment(text, s)`` crosses ``p``, and the tokens on each
        side are exactly ``encode_fragment(text[:p], s)`` and
        ``encode_fragment(text[p:], False)`` (spans shifted). Cuts must also
        compose: for cut points ``a < b`` of ``text``, ``b - a`` is a cut
        point of ``text[a:]`` and ``a`` one of ``text[:b]``. Missing a cut
        costs speed only; a wrong one changes ids, so answer conservatively
        (sorted, no duplicates)."""
        ...


class ColumnTokenizer(Tokenizer, Protocol):
    """A tokenizer that can hand over a fragment's tokens as native int64
    vectors (optional; see :func:`fragment_columns`)."""

    def encode_columns(self, text: str, after_special: bool) -> tuple[vec[i64], vec[i64], vec[i64]]:
        """``encode_fragment``'s ids, starts and ends as ``librt.vecs``
        ``vec[i64]``: no int object per value on the way to the
        :class:`~tokenprism.core.encoding.Encoding`'s arrays. The core never
        changes them, so they may be the plugin's own (a cache's)."""
        ...


class RankedTokenizer(Tokenizer, Protocol):
    """A tokenizer whose tokens come from ranked merges (optional; BPE)."""

    def merge_ranks(self) -> Sequence[int]:
        """For each token id, the rank of the merge that forms its piece, or
        -1. Called only for displays, so it may be built on first use."""
        ...


class PreparedTokenizer(Tokenizer, Protocol):
    """A tokenizer that makes some tables on first use (optional; BPE)."""

    def prepare(self) -> None:
        """Build now whatever would otherwise be built while encoding.
        ``open_model`` returns as soon as a short text can be tokenized;
        a caller about to tokenize a lot (a benchmark, a worker thread after
        opening) may pay the rest up front. Must not change any result."""
        ...


class WordTokenizer(Tokenizer, Protocol):
    """A tokenizer that splits text into words first (optional; WPM)."""

    def word_indices(self, text: str) -> list[int]:
        """For each token ``encode_fragment(text, ...)`` gives, the index of
        its word within ``text`` (0, 1, ...: every index has a token)."""
        ...


ColumnsMethod = Callable[[str, bool], "tuple[vec[i64], vec[i64], vec[i64]]"]
"""A plugin's ``encode_columns``, or the same made from ``encode_fragment``."""


def columns_method(tokenizer: Tokenizer) -> ColumnsMethod:
    """What :func:`fragment_columns` calls: the plugin's ``encode_columns``
    when it has one, else its ``encode_fragment`` with the lists converted.
    Looked up once by a caller with many fragments."""
    method = getattr(tokenizer, "encode_columns", None)
    if method is not None:
        return cast(ColumnsMethod, method)

    def from_lists(text: str, after_special: bool) -> tuple[vec[i64], vec[i64], vec[i64]]:
        res = tokenizer.encode_fragment(text, after_special)
        return vec[i64](res.ids), vec[i64](res.starts), vec[i64](res.ends)
    return from_lists


def fragment_columns(tokenizer: Tokenizer, text: str,
                     after_special: bool) -> tuple[vec[i64], vec[i64], vec[i64]]:
    """The ids, starts and ends of ``encode_fragment(text, after_special)``
    as vectors."""
    return columns_method(tokenizer)(text, after_special)


def merge_ranks(tokenizer: Tokenizer) -> Sequence[int] | None:
    """The plugin's per-id merge ranks, or None for a plugin without them."""
    method = getattr(tokenizer, "merge_ranks", None)
    return None if method is None else method()


def prepare(tokenizer: Tokenizer) -> None:
    """The plugin's ``prepare``, for a plugin that has one."""
    method = getattr(tokenizer, "prepare", None)
    if method is not None:
        method()


def cut_points(tokenizer: Tokenizer, text: str, lo: int, hi: int) -> list[int]:
    """The plugin's cut points of ``text`` in ``[lo, hi)``, or none for a
    plugin that does not offer them (the whole fragment is redone then)."""
    method = getattr(tokenizer, "cut_points", None)
    if method is None:
        return []
    lo = max(lo, 1)
    hi = min(hi, len(text))
    if lo >= hi:
        return []
    return [p for p in method(text, lo, hi) if lo <= p < hi]


def resolve_special_ids(vocab: Vocab, defaults: Mapping[str, int]) -> dict[str, int]:
    """Special ids as llama.cpp resolves them: the algorithm's defaults
    (dropped when outside the vocabulary), overridden by the file's keys."""
    n = len(vocab.pieces)
    out = {k: v for k, v in defaults.items() if 0 <= v < n}
    out.update(vocab.special_ids)
    return out


def config_from_vocab(vocab: Vocab, kind: str, default_ids: Mapping[str, int], *,
                      add_bos: bool, add_eos: bool, force_bos: bool = False,
                      prefix: str = "bos", suffix: str = "eos", wrap_always: bool = False,
                      add_space_prefix: bool = False, clean_spaces: bool = False,
                      byte_level: bool = False, normalizes: bool = False) -> TokenizerConfig:
    """A plugin's :class:`TokenizerConfig`, set up as llama.cpp sets up a
    vocabulary of its kind.

    The special ids are ``default_ids`` (the algorithm's) overridden by the
    file's (:func:`resolve_special_ids`). ``add_bos`` and ``add_eos`` are
    the algorithm's defaults of the file's ``add_bos_token`` and
    ``add_eos_token`` flags; ``force_bos`` turns BOS on whatever the file
    says (some BPE pre-tokenizers). With ``add_special`` the text is put
    between the tokens named ``prefix`` and ``suffix``: when the flags ask
    for them, or always with ``wrap_always`` (WPM's CLS and SEP: llama.cpp
    adds them whatever the flags say). A named token the vocabulary does
    not have is left out. The remaining arguments are passed on as they
    are. WPM's, for example::

        config_from_vocab(vocab, "WPM", {"bos": 101, "sep": 102}, add_bos=True,
                          add_eos=False, suffix="sep", wrap_always=True)
    """
    special = resolve_special_ids(vocab, default_ids)
    bos = force_bos or vocab.flag("add_bos", add_bos)
    eos = vocab.flag("add_eos", add_eos)
    before = (special[prefix],) if (bos or wrap_always) and prefix in special else ()
    after = (special[suffix],) if (eos or wrap_always) and suffix in special else ()
    return TokenizerConfig(kind=kind, special_ids=special, special_prefix=before, special_suffix=after,
                           add_bos=bos, add_eos=eos, add_space_prefix=add_space_prefix,
                           clean_spaces=clean_spaces, byte_level=byte_level, normalizes=normalizes)
