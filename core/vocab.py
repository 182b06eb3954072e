"""The vocabulary of a model, as llama.cpp sees it after loading.

:func:`vocab_from_gguf` turns GGUF metadata into a :class:`Vocab`: pieces,
scores, token types, merges, special ids, flags, charsmap. It also applies
the algorithm-independent fix-ups llama.cpp makes while loading (token
attributes derived from types, control-looking tokens promoted to control,
lstrip/rstrip for a few model families), because those decide which text is
split out as special tokens before any tokenizer plugin runs.
"""


import sys
from array import array
from enum import IntEnum
from itertools import chain
from typing import TYPE_CHECKING, Any, Final, Iterator, Mapping, MutableSequence, Sequence, final

from librt.strings import BytesWriter, read_f32_le, read_f64_le, read_i32_le, read_i64_le, write_i64_le
from mypy_extensions import i64

from .errors import GGUFError
from . import undecoded
from .frozen import NATIVE, Column, FrozenDict, TokenIndex, as_tuple, score_bytes
from .gil import offer_gil
from .int_column import le_view
from .record import NativeRecord
from .piece_codes import PieceCodes, PieceIndex, codes_of
from .gguf_file import T_ARRAY, T_BOOL, T_FLOAT32, T_INT8, T_INT32, T_STRING, T_UINT8, GGUFFile, MetadataValue
from .string_array import StringArray

if TYPE_CHECKING:  # numpy is imported where the arrays are first asked for, not to open a file
    import numpy as np

    from .bytes_index import PieceFinder

KEY_MODEL = "tokenizer.ggml.model"
KEY_PRE = "tokenizer.ggml.pre"
KEY_TOKENS = "tokenizer.ggml.tokens"
KEY_SCORES = "tokenizer.ggml.scores"
KEY_TYPES = "tokenizer.ggml.token_type"
KEY_MERGES = "tokenizer.ggml.merges"
KEY_CHARSMAP = "tokenizer.ggml.precompiled_charsmap"


class TokenType(IntEnum):
    """GGUF token types (``tokenizer.ggml.token_type``)."""

    UNDEFINED = 0
    NORMAL = 1
    UNKNOWN = 2
    CONTROL = 3
    USER_DEFINED = 4
    UNUSED = 5
    BYTE = 6


class Attr:
    """llama.cpp token attribute bits (``llama_token_attr``)."""

    UNDEFINED: Final = 0
    UNKNOWN: Final = 1 << 0
    UNUSED: Final = 1 << 1
    NORMAL: Final = 1 << 2
    CONTROL: Final = 1 << 3
    USER_DEFINED: Final = 1 << 4
    BYTE: Final = 1 << 5
    NORMALIZED: Final = 1 << 6
    LSTRIP: Final = 1 << 7
    RSTRIP: Final = 1 << 8
    SINGLE_WORD: Final = 1 << 9


_TYPE_TO_ATTR = {
    TokenType.UNKNOWN: Attr.UNKNOWN,
    TokenType.UNUSED: Attr.UNUSED,
    TokenType.NORMAL: Attr.NORMAL,
    TokenType.CONTROL: Attr.CONTROL,
    TokenType.USER_DEFINED: Attr.USER_DEFINED,
    TokenType.BYTE: Attr.BYTE,
}
# the same indexed by token type (UNDEFINED: no bits); every type past BYTE
# or below 0 has none either
_TYPE_TO_ATTR_TABLE: Final = tuple([Attr.UNDEFINED] + [_TYPE_TO_ATTR[TokenType(t)] for t in range(1, 7)])
_LITTLE: Final = sys.byteorder == "little"

# special-id keys, in llama.cpp's order; the last three are deprecated
# aliases of the fim keys and are read after them, as llama.cpp does
SPECIAL_KEYS: tuple[tuple[str, str], ...] = (
    ("bos", "tokenizer.ggml.bos_token_id"),
    ("eos", "tokenizer.ggml.eos_token_id"),
    ("eot", "tokenizer.ggml.eot_token_id"),
    ("eom", "tokenizer.ggml.eom_token_id"),
    ("unk", "tokenizer.ggml.unknown_token_id"),
    ("sep", "tokenizer.ggml.seperator_token_id"),
    ("pad", "tokenizer.ggml.padding_token_id"),
    ("mask", "tokenizer.ggml.mask_token_id"),
    ("fim_pre", "tokenizer.ggml.fim_pre_token_id"),
    ("fim_suf", "tokenizer.ggml.fim_suf_token_id"),
    ("fim_mid", "tokenizer.ggml.fim_mid_token_id"),
    ("fim_pad", "tokenizer.ggml.fim_pad_token_id"),
    ("fim_rep", "tokenizer.ggml.fim_rep_token_id"),
    ("fim_sep", "tokenizer.ggml.fim_sep_token_id"),
    ("fim_pre", "tokenizer.ggml.prefix_token_id"),
    ("fim_suf", "tokenizer.ggml.suffix_token_id"),
    ("fim_mid", "tokenizer.ggml.middle_token_id"),
)

FLAG_KEYS: dict[str, str] = {
    "add_bos": "tokenizer.ggml.add_bos_token",
    "add_eos": "tokenizer.ggml.add_eos_token",
    "add_sep": "tokenizer.ggml.add_sep_token",
    "add_space_prefix": "tokenizer.ggml.add_space_prefix",
    "remove_extra_whitespaces": "tokenizer.ggml.remove_extra_whitespaces",
    "normalizer_lowercase": "tokenizer.ggml.normalizer.lowercase",
    "normalizer_strip_accents": "tokenizer.ggml.normalizer.strip_accents",
}

# Texts llama.cpp recognises as special tokens when the GGUF does not name
# them (llama-vocab.cpp, "auto-detect special tokens by text"). The matched
# token is promoted to a control token, which changes what parse_special
# splits out.
_AUTO_SPECIAL: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("eot", ("<|eot_id|>", "<|im_end|>", "<|end|>", "<end_of_turn>", "<|endoftext|>",
             "<|end_of_text|>", "<EOT>", "_<EOT>", "[EOT]", "<｜end▁of▁sentence｜>",
             "<end_of_utterance>")),
    ("eom", ("<|eom_id|>",)),
    ("fim_pre", ("<|fim_prefix|>", "<fim-prefix>", "<fim_prefix>", "<｜fim▁begin｜>", "<PRE>",
                 "▁<PRE>", "<|code_prefix|>", "<|prefix|>")),
    ("fim_suf", ("<|fim_suffix|>", "<fim-suffix>", "<fim_suffix>", "<｜fim▁hole｜>", "<SUF>",
                 "▁<SUF>", "<|code_suffix|>", "<|suffix|>")),
    ("fim_mid", ("<|fim_middle|>", "<fim-middle>", "<fim_middle>", "<｜fim▁end｜>", "<MID>",
                 "▁<MID>", "<|code_middle|>", "<|middle|>")),
    ("fim_pad", ("<|fim_pad|>", "<fim-pad>", "<fim_pad>", "<PAD>", "[PAD]")),
    ("fim_rep", ("<|fim_repo|>", "<|repo_name|>", "<fim-repo>", "<REPO>", "<reponame>")),
    ("fim_sep", ("<|file_sep|>",)),
)

_EOG_TEXTS = frozenset((
    "<|eot_id|>", "<|im_end|>", "<|end|>", "<|return|>", "<|call|>", "<|flush|>", "<|calls|>",
    "<end_of_turn>", "<|endoftext|>", "</s>", "<|eom_id|>", "<EOT>", "_<EOT>", "[EOT]", "[EOS]",
    "<|end_of_text|>", "<end_of_utterance>", "<eos>", "<turn|>", "<|tool_response>",
    "<｜end▁of▁sentence｜>", "[e~[",
))


# every text _apply_special_fixups and _apply_strip_rules look up by name
# (an open that leaves the piece -> id table unbuilt finds just these)
_FIXUP_TEXTS: frozenset[str] = frozenset(
    [t for _, texts in _AUTO_SPECIAL for t in texts] + list(_EOG_TEXTS)
    + ["<|channel|>", "<|message|>", "<|start|>", "<|constrain|>", "<|end|>", "</s>", "<|return|>",
       "<|call|>", "<|calls|>", "<|flush|>", "<|tool_response>", "<|plamo:eos|>",
       "<mask>", "<unk>", "<s>", "<|endoftext|>", "[MASK]"])


class VocabArrays:
    """A :class:`Vocab`'s per-token columns as read-only numpy arrays: the
    same values as its tuples, for vectorised work (a 250k vocabulary's
    tuples took ~4 ms each to turn back into arrays).

    Made from the loader's own columns (typed views of the file's bytes,
    an ``array``), each the first time it is read: numpy is imported
    then, not by opening a file (~65 ms of every command-line call)."""

    def __init__(self, scores: Any, types: Any, attrs: Any) -> None:
        self._sources: tuple[Any, Any, Any] = (scores, types, attrs)
        self._made: list[Any] = [None, None, None]

    def _array(self, k: int, dtype: str) -> "np.ndarray":
        a: "np.ndarray | None" = self._made[k]
        if a is None:
            import numpy as np

            # a copy (a few MB at most, through the buffer protocol): the
            # source may be in another type or written to (the fix-ups'
            # attributes array)
            a = np.array(self._sources[k], dtype=dtype)
            a.flags.writeable = False  # one vocab is shared by every view and thread
            self._made[k] = a  # two threads may both make it: the same values
        return a

    @property
    def scores(self) -> "np.ndarray":
        """float32, as the file stores them."""
        return self._array(0, "float32")

    @property
    def types(self) -> "np.ndarray":
        """int64."""
        return self._array(1, "int64")

    @property
    def attrs(self) -> "np.ndarray":
        """int64, after the load-time fix-ups."""
        return self._array(2, "int64")


class Vocab(NativeRecord):
    """Everything a tokenizer needs from a GGUF file, and nothing from Qt.

    ``types`` are the GGUF token types as stored; ``attrs`` are llama.cpp's
    attribute bits after its load-time fix-ups (use these to decide what a
    token is). ``flags`` and ``special_ids`` hold only what the file says;
    each tokenizer plugin applies its own defaults for missing entries.
    The mappings are read-only (:class:`~tokenprism.core.frozen.FrozenDict`):
    one vocab is shared by every view and worker thread.
    """

    model: Final[str]
    pre: Final[str]
    pieces: Final[Sequence[str]]
    """Read from a file for a tokenizer that does not read the piece ->
    id dict, an undecoded :class:`~tokenprism.core.string_array.StringArray`
    (one item decodes alone, iterating decodes all once); else a tuple."""
    scores: Final[Sequence[float]]
    types: Final[Sequence[int]]
    attrs: Final[Sequence[int]]
    """Read from a file, each a :class:`~tokenprism.core.frozen.Column`:
    a tuple made on first use (``frozen.as_tuple`` gives it)."""
    merges: Final[Sequence[str]]
    """Merge lines in rank order: a tuple, or, read from a file, an
    undecoded :class:`~tokenprism.core.string_array.StringArray`."""
    token_to_id: Final[Mapping[str, int]]
    """Piece -> id (the last of duplicates). Read from a file, a
    :class:`~tokenprism.core.frozen.TokenIndex` that builds its dict on
    first use; :func:`token_table` gives the dict itself."""
    special_ids: Final[Mapping[str, int]]
    flags: Final[Mapping[str, bool]]
    precompiled_charsmap: Final[bytes]
    special_tokens: Final[tuple[int, ...]]
    """Ids split out of text before tokenizing, longest text first."""
    eog_ids: Final[frozenset[int]]
    name: Final[str]
    architecture: Final[str]
    max_piece_chars: Final[int]
    metadata: Final[Mapping[str, MetadataValue]]
    columns: Final[VocabArrays | None]
    """What :meth:`arrays` returns, when the loader kept it."""

    def __init__(self, model: str, pre: str, pieces: Sequence[str], scores: Sequence[float],
                 types: Sequence[int], attrs: Sequence[int], merges: Sequence[str],
                 token_to_id: Mapping[str, int], special_ids: Mapping[str, int], flags: Mapping[str, bool],
                 precompiled_charsmap: bytes, special_tokens: tuple[int, ...], eog_ids: frozenset[int],
                 name: str = "", architecture: str = "", max_piece_chars: int = 0,
                 metadata: Mapping[str, MetadataValue] | None = None, columns: VocabArrays | None = None) -> None:
        self.model = model
        self.pre = pre
        self.pieces = pieces
        self.scores = scores
        self.types = types
        self.attrs = attrs
        self.merges = merges
        self.token_to_id = token_to_id
        self.special_ids = special_ids
        self.flags = flags
        self.precompiled_charsmap = precompiled_charsmap
        self.special_tokens = special_tokens
        self.eog_ids = eog_ids
        self.name = name
        self.architecture = architecture
        self.max_piece_chars = max_piece_chars
        self.metadata = FrozenDict() if metadata is None else metadata
        self.columns = columns

    def _fields(self) -> tuple[str, ...]:  # (metadata is compared, not shown; columns neither)
        return ("model", "pre", "pieces", "scores", "types", "attrs", "merges", "token_to_id", "special_ids",
                "flags", "precompiled_charsmap", "special_tokens", "eog_ids", "name", "architecture",
                "max_piece_chars")

    def _compared(self) -> tuple[str, ...]:
        return self._fields() + ("metadata",)

    def _arguments(self) -> tuple[str, ...]:
        return self._compared() + ("columns",)

    def __len__(self) -> int:
        return len(self.pieces)

    def arrays(self) -> VocabArrays:
        """Scores, types and attributes as numpy arrays (made on first read
        from what the loader kept)."""
        if self.columns is not None:
            return self.columns
        return VocabArrays(self.scores, self.types, self.attrs)

    def flag(self, name: str, default: bool) -> bool:
        """The flag ``name`` (see ``FLAG_KEYS``) if the file sets it, else ``default``."""
        return self.flags.get(name, default)

    def has_attr(self, token_id: int, attr: int) -> bool:
        return (self.attrs[token_id] & attr) != 0


def token_table(vocab: Vocab) -> dict[str, int]:
    """``vocab``'s piece -> id table as a plain ``dict`` (the tokenizers'
    hot loops read it as one), built now if the vocabulary has not yet."""
    t = vocab.token_to_id
    if isinstance(t, TokenIndex):
        return t.table()
    if isinstance(t, dict):
        return t
    return dict(t)


def decoded_pieces(vocab: Vocab) -> tuple[str, ...]:
    """Every piece of ``vocab`` as one tuple, all decoded now if not yet:
    a loop over every piece should take this (an item of an undecoded
    array decodes alone, ~1 µs each)."""
    return as_tuple(vocab.pieces)


def piece_codes(vocab: Vocab) -> PieceCodes:
    """``vocab``'s pieces as code points (``core.piece_codes``), made now
    if not yet: read from the file's bytes, with no ``str`` per piece."""
    t = vocab.token_to_id
    if isinstance(t, TokenIndex):
        return t.codes()
    return codes_of(vocab.pieces)


def piece_index(vocab: Vocab) -> PieceIndex:
    """``vocab``'s native piece -> id index, built now if not yet: what a
    compiled tokenizer looks pieces up in when it does not read the dict
    (see ``TokenizerSpec.reads_token_table``)."""
    t = vocab.token_to_id
    if isinstance(t, TokenIndex):
        return t.native()
    # some other mapping: its texts at their ids (the index leaves out
    # empty pieces, which a file's vocabulary never has: they are renamed)
    texts = [""] * len(vocab.pieces)
    for text, tid in t.items():
        if 0 <= tid < len(texts):
            texts[tid] = text
    return PieceIndex(codes_of(texts))


def piece_finder(vocab: Vocab) -> "PieceFinder":
    """Piece text -> id for a merge loop (a new :class:`PieceFinder` each
    call: a tokenizer keeps its own): over the file's bytes while the
    pieces are undecoded and the vocabulary's table is over exactly them
    (no piece empty: see ``_index_pieces``), so that both answer alike;
    else the native index (:func:`piece_index`). The pure build reads the
    native index, whose dict it has made anyway."""
    from .bytes_index import PieceFinder, raw_index  # (loaded with the first tokenizer that asks)

    t = vocab.token_to_id
    pieces = vocab.pieces
    if NATIVE and isinstance(t, TokenIndex) and t.over(pieces):
        raw = raw_index(pieces, True)
        if raw is not None:
            return PieceFinder(raw, None)
    return PieceFinder(None, piece_index(vocab))


@final
class Scores:
    """A vocabulary's scores read natively where the file's array holds
    them (:func:`score_bytes`: float32 as files store them, int32, or
    float64 converted), no tuple of floats: SPM's was 316 fresh pages of a
    3 600-page command-line process. SPM's merge loop and UGM's matchers
    read their scores here."""

    def __init__(self, values: Sequence[float]) -> None:
        raw, code = score_bytes(values)
        self.raw = raw
        self.kind: i64 = 0 if code == "f" else 1 if code == "i" else 2  # (an int compare per read)
        self.n: i64 = len(raw) // (8 if self.kind == 2 else 4)

    def __len__(self) -> int:
        return self.n

    def at(self, i: i64) -> float:
        """The score of token ``i`` (``0 <= i < len(self)``)."""
        kind = self.kind
        if kind == 0:
            return read_f32_le(self.raw, i * 4)
        if kind == 1:
            return float(read_i32_le(self.raw, i * 4))
        return read_f64_le(self.raw, i * 8)


def _string(gf: GGUFFile, key: str, default: str) -> str:
    v = gf.metadata.get(key)
    if v is None:
        return default
    if v.type != T_STRING or not isinstance(v.value, str):
        raise GGUFError(gf.path, f"expected a string, found {v.type_name}", v.offset, key)
    return v.value


def _array(gf: GGUFFile, key: str, elem_types: tuple[int, ...], required: bool) -> MetadataValue | None:
    v = gf.metadata.get(key)
    if v is None:
        if required:
            raise GGUFError(gf.path, f"missing tokenizer key {key!r}", None, key)
        return None
    if v.type != T_ARRAY or v.elem_type not in elem_types:
        raise GGUFError(gf.path, f"invalid type {v.type_name} for tokenizer key", v.offset, key)
    return v


def _int_value(v: MetadataValue) -> int | None:
    if isinstance(v.value, bool) or not isinstance(v.value, int):
        return None
    return v.value


def vocab_from_gguf(gf: GGUFFile, table_now: bool = True) -> Vocab:
    """Build the :class:`Vocab` of a parsed GGUF file.

    Raises :class:`GGUFError` when tokenizer keys are missing, have the wrong
    type, or disagree in length. ``table_now``: build the piece -> id table
    now (the tokenizer will read it: the fix-ups then ask it, as it is
    warm); else it waits for its first reader.
    """
    model = _string(gf, KEY_MODEL, "")
    if not model:
        raise GGUFError(gf.path, "the file has no tokenizer (tokenizer.ggml.model is missing)", None, KEY_MODEL)
    pre = _string(gf, KEY_PRE, "")

    tok_v = _array(gf, KEY_TOKENS, (T_STRING,), True)
    assert tok_v is not None and isinstance(tok_v.value, StringArray)
    raw_pieces = tok_v.value
    n = len(raw_pieces)
    if n == 0:
        raise GGUFError(gf.path, "the vocabulary is empty", tok_v.offset, KEY_TOKENS)

    # typed views of the file's bytes (gguf_file), sliced without a copy
    sc_v = _array(gf, KEY_SCORES, (T_FLOAT32, T_INT32), False)
    scores_arr: memoryview
    if sc_v is None:
        scores_arr = le_view(bytes(4 * n), "f")
    else:
        arr = sc_v.value
        assert isinstance(arr, memoryview)
        if len(arr) < n:
            raise GGUFError(gf.path, f"{len(arr)} scores for {n} tokens", sc_v.offset, KEY_SCORES)
        scores_arr = arr[:n]  # (int32 scores stay ints, as the file has them)
    scores: Column[float] = Column(scores_arr)

    ty_v = _array(gf, KEY_TYPES, (T_INT32,), False)
    types_arr: Any
    if ty_v is None:
        types_arr = array("i", [int(TokenType.NORMAL)]) * n
    else:
        arr = ty_v.value
        assert isinstance(arr, memoryview)
        if len(arr) < n:
            raise GGUFError(gf.path, f"{len(arr)} token types for {n} tokens", ty_v.offset, KEY_TYPES)
        types_arr = arr[:n]

    merges: Sequence[str] = ()
    mg_v = _array(gf, KEY_MERGES, (T_STRING,), False)
    if mg_v is not None:
        assert isinstance(mg_v.value, StringArray)
        # left undecoded: a BPE plugin reads the ranks it needs from the bytes
        merges = mg_v.value

    charsmap = b""
    cm_v = _array(gf, KEY_CHARSMAP, (T_UINT8, T_INT8), False)
    if cm_v is not None:
        assert isinstance(cm_v.value, bytes)
        charsmap = cm_v.value

    pieces, token_to_id, max_len = _index_pieces(raw_pieces, table_now)
    attrs_arr = attrs_of_types(types_arr)
    special_ids = special_ids_of(gf, n)

    flags: dict[str, bool] = {}
    for name, key in FLAG_KEYS.items():
        v = gf.metadata.get(key)
        if v is not None and v.type == T_BOOL and isinstance(v.value, bool):
            flags[name] = v.value

    general_name = _string(gf, "general.name", "")
    arch = _string(gf, "general.architecture", "")
    eog, special_tokens = fix_up(pieces, attrs_arr, special_ids, general_name, pre, arch,
                                 token_to_id.table() if table_now else token_to_id)

    return Vocab(
        model=model, pre=pre, pieces=pieces, scores=scores, types=Column(types_arr),
        attrs=Column(attrs_arr), merges=merges, token_to_id=token_to_id,
        special_ids=FrozenDict(special_ids), flags=FrozenDict(flags), precompiled_charsmap=charsmap,
        special_tokens=tuple(special_tokens), eog_ids=frozenset(eog),
        name=general_name, architecture=arch, max_piece_chars=max_len,
        metadata=gf.metadata,
        columns=VocabArrays(scores_arr, types_arr, attrs_arr),
    )


def attrs_of_types(types: Sequence[int]) -> "array[int]":
    """llama.cpp's attribute bits of stored token types, before the
    fix-ups, as an int64 ``array`` (a type below 0 or past BYTE has none).
    From the reader's int32 view: one native pass over its bytes."""
    table = _TYPE_TO_ATTR_TABLE
    k: i64 = len(table)
    out = array("q")
    if _LITTLE and isinstance(types, memoryview) and types.format == "i":
        data = types.tobytes()
        w = BytesWriter()
        pos: i64 = 0
        end: i64 = len(data)
        while pos < end:
            t: i64 = i64(read_i32_le(data, pos))
            write_i64_le(w, table[t] if 0 <= t < k else 0)
            pos += 4
        out.frombytes(w.getvalue())
        return out
    out.fromlist([table[t] if 0 <= t < k else 0 for t in _ints(types)])
    return out


def _ids_with(attrs: MutableSequence[int], mask: int, want: int) -> list[int]:
    """The ids whose ``attrs & mask == want`` (``want`` -1: ``!= 0``),
    ascending; a native pass over an int64 ``array``'s bytes (any
    sequence of ints is taken)."""
    out: list[int] = []
    if _LITTLE and isinstance(attrs, array) and attrs.itemsize == 8:
        data = attrs.tobytes()
        m: i64 = mask
        wv: i64 = want
        pos: i64 = 0
        end: i64 = len(data)
        while pos < end:
            v = read_i64_le(data, pos) & m
            if v == wv or (wv < 0 and v != 0):
                out.append(pos >> 3)
            pos += 8
        return out
    return [i for i, a in enumerate(_ints(attrs)) if (a & mask != 0 if want < 0 else a & mask == want)]


def _ints(values: Sequence[int]) -> list[int]:
    """``values`` as Python ints (a numpy array's items are numpy ints,
    which compiled code does not take as ``int``)."""
    tolist = getattr(values, "tolist", None)
    return list(tolist()) if tolist is not None else list(values)


def special_ids_of(gf: GGUFFile, n: int) -> dict[str, int]:
    """The special ids the file names (``SPECIAL_KEYS``), those in range."""
    special_ids: dict[str, int] = {}
    for name, key in SPECIAL_KEYS:
        v = gf.metadata.get(key)
        if v is None:
            continue
        iv = _int_value(v)
        if iv is not None and 0 <= iv < n:
            special_ids[name] = iv
    return special_ids


def fix_up(pieces: Sequence[str], attrs: MutableSequence[int], special_ids: dict[str, int], name: str, pre: str,
           arch: str, table: Mapping[str, int]) -> tuple[set[int], list[int]]:
    """llama.cpp's load-time fix-ups, in place on ``attrs`` and
    ``special_ids``: the end-of-generation ids, and the special tokens
    longest text first. ``table`` is the piece -> id table they look texts
    up in. From a :class:`TokenIndex` with nothing built, only the texts
    they can ask for are found, in one pass that builds no table: their
    own, the pieces of the special ids, and the control pieces that say
    "unused"."""
    if isinstance(table, TokenIndex) and not table.built():
        wanted = set(_FIXUP_TEXTS)
        wanted.update([pieces[i] for i in special_ids.values()])
        control = _ids_with(attrs, Attr.CONTROL, Attr.CONTROL)
        wanted.update([p for p in (pieces[i] for i in control) if "unused" in p])  # each decoded once
        # from the file's bytes while undecoded: table.some() would make
        # every piece's code points (the compiled build's way), which only
        # a tokenizer's piece index needs, when it first looks a piece up
        found = undecoded.ids_of(pieces, wanted) if NATIVE and isinstance(pieces, StringArray) else None
        table = found if found is not None else table.some(wanted)
    eog = _apply_special_fixups(pieces, table, attrs, special_ids)
    special_tokens = _ids_with(attrs, Attr.CONTROL | Attr.USER_DEFINED | Attr.UNKNOWN, -1)
    # llama.cpp sorts by text length, longest first; ties keep id order here
    special_tokens.sort(key=lambda i: -len(pieces[i].encode("utf-8", "surrogateescape")))
    _apply_strip_rules(pieces, table, attrs, special_tokens, name, pre, arch)
    return eog, special_tokens


def _numbered(pieces: tuple[str, ...]) -> Iterator[Iterator[tuple[str, int]]]:
    """``(piece, id)`` pairs a slice at a time, offering the GIL between
    slices: one dict(zip(...)) over 262k pieces held it for 50-90 ms (the
    GUI thread's too, while a worker opens a model)."""
    n = len(pieces)
    for a in range(0, n, _INDEX_SLICE):
        yield zip(pieces[a:a + _INDEX_SLICE], range(a, min(n, a + _INDEX_SLICE)))
        offer_gil()


_INDEX_SLICE: Final = 32768


def _build_table(pieces: tuple[str, ...]) -> dict[str, int]:
    # built in order, so the last duplicate wins, as in llama.cpp's
    # token_to_id; read-only at once (no copy of a 262k-entry table)
    return FrozenDict(chain.from_iterable(_numbered(pieces)))


def _index_pieces(raw: StringArray, decode: bool) -> tuple[Sequence[str], TokenIndex, int]:
    """The pieces (empty ones renamed, as llama.cpp does so that they stay
    addressable), their piece -> id table (built on first use) and the
    longest piece's length. ``decode``: the pieces as a tuple now (the
    tokenizer reads the dict); else they stay undecoded and the length
    comes from their bytes (``core.undecoded``; in the pure build, from
    their code points, which it makes from the decoded pieces)."""
    if not decode:
        index = TokenIndex(raw, _build_table)
        # the facts from the byte lengths, not every piece's code points
        # (core.undecoded; the pure build decodes for the dict anyway)
        facts = undecoded.facts(raw) if NATIVE else None
        if facts is not None:
            if not facts[0]:
                return raw, index, facts[1]
        else:
            codes = index.codes()
            if not codes.has_empty():
                return raw, index, int(codes.max_length())
    pieces: tuple[str, ...] = raw.totuple()
    max_len = 0
    empty = False
    for p in pieces:  # compiled: a native length read per piece
        n = len(p)
        if n > max_len:
            max_len = n
        elif n == 0:
            empty = True
    if empty:
        pieces = tuple([p if p else f"[EMPTY_{i}]" for i, p in enumerate(pieces)])
        for p in pieces:
            if len(p) > max_len:
                max_len = len(p)
    return pieces, TokenIndex(pieces, _build_table), max_len


def _apply_special_fixups(pieces: Sequence[str], token_to_id: Mapping[str, int], attrs: MutableSequence[int],
                          special_ids: dict[str, int]) -> set[int]:
    for name, texts in _AUTO_SPECIAL:
        if name in special_ids:
            continue
        for text in texts:
            tid = token_to_id.get(text)
            if tid is not None:
                special_ids[name] = tid
                attrs[tid] |= Attr.CONTROL
                break

    candidates = _ids_with(attrs, Attr.CONTROL | Attr.UNUSED, Attr.CONTROL)
    for tid in candidates:
        text = pieces[tid]
        if "unused" in text and token_to_id.get(text) == tid:
            attrs[tid] |= Attr.UNUSED

    eog: set[int] = {special_ids[k] for k in ("fim_pad", "fim_rep", "fim_sep") if k in special_ids}
    for text in _EOG_TEXTS:
        tid = token_to_id.get(text)
        if tid is not None:
            eog.add(tid)
            attrs[tid] |= Attr.CONTROL
    for text in ("<|channel|>", "<|message|>", "<|start|>", "<|constrain|>"):
        tid = token_to_id.get(text)
        if tid is not None:
            attrs[tid] = Attr.USER_DEFINED
    for k in ("eos", "eot", "eom"):
        if k in special_ids:
            eog.add(special_ids[k])

    present = {pieces[tid] for tid in eog if token_to_id.get(pieces[tid]) == tid}
    if "<|end|>" in present and (("<|return|>" in present and "<|call|>" in present)
                                 or ({"<|call|>", "<|calls|>"} & present and "<|flush|>" in present)):
        end_id = token_to_id["<|end|>"]
        eog.discard(end_id)
        attrs[end_id] = Attr.USER_DEFINED
    if "</s>" in present and ({"<|tool_response>", "<|plamo:eos|>"} & present):
        s_id = token_to_id["</s>"]
        eog.discard(s_id)
        attrs[s_id] = Attr.NORMAL
    return eog


def _apply_strip_rules(pieces: Sequence[str], token_to_id: Mapping[str, int], attrs: MutableSequence[int],
                       special_tokens: list[int], name: str, pre: str, arch: str) -> None:
    lname = name.lower()
    if any(s in pre for s in ("jina-v2-de", "jina-v2-es", "jina-v2-code")) or \
            any(s in arch for s in ("nomic-bert-moe", "jina-bert-v3")):
        if "<mask>" in token_to_id:
            attrs[token_to_id["<mask>"]] |= Attr.LSTRIP
    elif "phi-3" in lname or "phi3" in lname:
        for tid in special_tokens:
            attrs[tid] |= Attr.RSTRIP
        for text, on in (("</s>", True), ("<unk>", False), ("<s>", False), ("<|endoftext|>", False)):
            if text in token_to_id:
                tid = token_to_id[text]
                attrs[tid] = int(attrs[tid]) | Attr.RSTRIP if on else int(attrs[tid]) & ~Attr.RSTRIP
    elif "modern-bert" in lname:
        if "[MASK]" in token_to_id:
            attrs[token_to_id["[MASK]"]] |= Attr.LSTRIP
