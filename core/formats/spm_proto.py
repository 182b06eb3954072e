"""Reading SentencePiece ``.model`` files with SentencePiece's own schema.

A ``.model`` file is one serialized ``sentencepiece.ModelProto`` message.
It is decoded by the ``protobuf`` package with the generated
``sentencepiece_model_pb2`` module that the ``sentencepiece`` package ships,
so the schema (field numbers, defaults, enums) is SentencePiece's, not a
copy of it. Both packages are the optional ``convert`` extra
(``pip install 'tokenprism[convert]'``); without them :func:`read_model_proto`
raises :class:`ProtobufUnavailable` with that line, and nothing else in
TokenPrism needs them (the module imports them only when a file is read).

The generated classes are untyped, so this module turns the message into
small frozen dataclasses holding only what a GGUF vocabulary needs, with
the pieces as three columns (``tokens``, ``scores``, ``types``) because that
is the shape the GGUF writer takes.

Guards for hostile files, on top of the protobuf decoder's own (which
checks every length and varint against the bytes that are there, and
limits nesting): the file is read up to :data:`MAX_MODEL_BYTES` and refused
beyond it, before anything is decoded, so no size a file states is
allocated; decoder errors, strings that are not UTF-8 and a message without
pieces all raise :class:`ProtoError`. Where the hand-written reader was
stricter than SentencePiece, this module now reads as SentencePiece does:
an ``int32`` field written as a wider varint keeps its low 32 bits, and a
piece type outside the enum reads as NORMAL. A ``model_type`` outside the
enum is still reported as its number (see :func:`_raw_model_type`), so such
a model is refused rather than converted as unigram.

Measured on a generated unigram model of 250 000 pieces (5.3 MB), fresh
processes taking turns on this busy 2-core machine: the hand-written wire
reader this module replaces decoded it in 3.7-4.0 s; the protobuf package
(upb) with the columns below takes 1.1-1.2 s, importing protobuf and the
schema (~0.2 s) included. ``tokenprism convert`` on it went from 9.3-12.6 s
to 4.1-6.5 s, writing the same bytes. The decoder itself takes ~0.1 s; the
rest is reading the fields out of 250 000 piece messages, three passes,
which beat one pass building tuples (0.5 s against 0.8 s). So the library
is faster as well as better kept: no reason to keep a reader of our own.

>>> proto = read_model_proto("tokenizer.model")
>>> proto.trainer_spec.model_type == MODEL_TYPE_BPE
True
"""

from __future__ import annotations

import importlib
import os
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Protocol, Sequence, cast

# TrainerSpec.ModelType
MODEL_TYPE_UNIGRAM = 1
MODEL_TYPE_BPE = 2
MODEL_TYPE_WORD = 3
MODEL_TYPE_CHAR = 4
MODEL_TYPE_NAMES = {MODEL_TYPE_UNIGRAM: "UNIGRAM", MODEL_TYPE_BPE: "BPE", MODEL_TYPE_WORD: "WORD",
                    MODEL_TYPE_CHAR: "CHAR"}

# ModelProto.SentencePiece.Type (the same numbers as GGUF token types)
PIECE_NORMAL = 1
PIECE_UNKNOWN = 2
PIECE_CONTROL = 3
PIECE_USER_DEFINED = 4
PIECE_UNUSED = 5
PIECE_BYTE = 6

# A real model is a few MB (the largest known ones ~20 MB); the cap keeps a
# wrongly chosen multi-gigabyte file from being read into memory, and it is
# checked before the decoder sees a byte.
MAX_MODEL_BYTES = 512 << 20

INSTALL_HINT = "pip install 'tokenprism[convert]'"
UPGRADE_HINT = "pip install -U sentencepiece protobuf"

# TrainerSpec.model_type's field number: an enum value the schema does not
# know is kept among the unknown fields (proto2 enums are closed), where
# _raw_model_type looks for it
_MODEL_TYPE_FIELD = 3


class ProtoError(ValueError):
    """The bytes are not a well-formed ``ModelProto``. ``offset`` is where
    the problem is, when known (the protobuf decoder does not say where it
    failed, so decoder errors have none)."""

    def __init__(self, message: str, offset: int | None = None) -> None:
        self.offset = offset
        self.reason = message
        super().__init__(message if offset is None else f"{message} at byte {offset}")


class ProtobufUnavailable(ImportError):
    """``sentencepiece`` or ``protobuf`` is missing, or the two do not fit
    together; the message ends with the command that installs them."""


@dataclass(frozen=True)
class TrainerSpec:
    """The ``TrainerSpec`` fields a tokenizer needs; defaults are the proto's."""

    model_type: int = MODEL_TYPE_UNIGRAM
    vocab_size: int = 8000
    byte_fallback: bool = False
    treat_whitespace_as_suffix: bool = False
    unk_id: int = 0
    bos_id: int = 1
    eos_id: int = 2
    pad_id: int = -1


@dataclass(frozen=True)
class NormalizerSpec:
    """The ``NormalizerSpec`` fields; defaults are the proto's."""

    name: str = ""
    precompiled_charsmap: bytes = b""
    add_dummy_prefix: bool = True
    remove_extra_whitespaces: bool = True
    escape_whitespaces: bool = True


@dataclass(frozen=True)
class ModelProto:
    """A decoded SentencePiece model: piece ``i`` is ``tokens[i]`` with
    ``scores[i]`` and ``types[i]`` (a ``PIECE_*`` number)."""

    tokens: tuple[str, ...]
    scores: tuple[float, ...]
    types: tuple[int, ...]
    trainer_spec: TrainerSpec = field(default_factory=TrainerSpec)
    normalizer_spec: NormalizerSpec = field(default_factory=NormalizerSpec)
    has_trainer_spec: bool = False
    has_normalizer_spec: bool = False


# ---- the generated classes, as far as they are used -------------------------

class _PieceMessage(Protocol):
    piece: str | bytes  # bytes when the file's string is not UTF-8
    score: float
    type: int

    def HasField(self, name: str) -> bool: ...


class _TrainerMessage(Protocol):
    model_type: int
    vocab_size: int
    byte_fallback: bool
    treat_whitespace_as_suffix: bool
    unk_id: int
    bos_id: int
    eos_id: int
    pad_id: int

    def HasField(self, name: str) -> bool: ...


class _NormalizerMessage(Protocol):
    name: str | bytes
    precompiled_charsmap: bytes
    add_dummy_prefix: bool
    remove_extra_whitespaces: bool
    escape_whitespaces: bool


class _ModelMessage(Protocol):
    @property
    def pieces(self) -> Sequence[_PieceMessage]: ...
    @property
    def trainer_spec(self) -> _TrainerMessage: ...
    @property
    def normalizer_spec(self) -> _NormalizerMessage: ...

    def ParseFromString(self, data: bytes) -> int: ...
    def HasField(self, name: str) -> bool: ...


@dataclass(frozen=True)
class _Schema:
    new_model: Callable[[], _ModelMessage]
    decode_error: type[Exception]
    unknown_fields: Callable[[Any], Iterable[Any]] | None


_schema: _Schema | None = None


def _load_schema() -> _Schema:
    """Import the generated module on first use (it costs ~50 ms and needs
    the optional packages; HF conversions and the app never pay for it)."""
    global _schema
    if _schema is None:
        try:
            # through importlib: the generated module builds its classes at
            # run time, so there is nothing for mypy to read in it
            pb2 = importlib.import_module("sentencepiece.sentencepiece_model_pb2")
            message = importlib.import_module("google.protobuf.message")
        except Exception as e:
            # ImportError when a package is missing; protobuf's VersionError
            # or TypeError when the installed protobuf is older than the code
            # sentencepiece generated with, or too new for it: then the
            # extra is installed already and only an upgrade helps
            hint = INSTALL_HINT if isinstance(e, ImportError) else UPGRADE_HINT
            text = str(e).strip()
            reason = text.splitlines()[0] if text else type(e).__name__
            raise ProtobufUnavailable(
                f"reading a SentencePiece .model needs the sentencepiece and protobuf packages "
                f"({reason}): {hint}") from e
        try:
            unknown: Callable[[Any], Iterable[Any]] | None = \
                importlib.import_module("google.protobuf.unknown_fields").UnknownFieldSet
        except ImportError:  # protobuf < 4.24
            unknown = None
        _schema = _Schema(pb2.ModelProto, message.DecodeError, unknown)
    return _schema


def protobuf_available() -> bool:
    """Whether :func:`read_model_proto` can work here."""
    try:
        _load_schema()
    except ProtobufUnavailable:
        return False
    return True


# ---- decoding -----------------------------------------------------------------

def _text(value: str | bytes, what: str) -> str:
    # proto2 strings are not checked by the decoder: upb hands out the raw
    # bytes when they are not UTF-8
    if isinstance(value, bytes):
        raise ProtoError(f"{what} is not valid UTF-8")
    return value


def _raw_model_type(schema: _Schema, trainer: _TrainerMessage) -> int:
    """``model_type`` as SentencePiece reads it, or the number written when
    the schema's enum lacks it: the decoder would read a future or damaged
    value as the default, UNIGRAM, and convert a model of another kind."""
    if trainer.HasField("model_type") or schema.unknown_fields is None:
        return trainer.model_type
    model_type = trainer.model_type
    for f in schema.unknown_fields(trainer):
        if f.field_number == _MODEL_TYPE_FIELD and isinstance(f.data, int):
            model_type = f.data  # the last one, as for a known value
    return model_type


def parse_model_proto(data: bytes) -> ModelProto:
    """Decode a serialized ``ModelProto``; raises :class:`ProtoError`, or
    :class:`ProtobufUnavailable` when the packages are not installed."""
    schema = _load_schema()
    msg = schema.new_model()
    try:
        msg.ParseFromString(data)
    except schema.decode_error as e:
        # upb says "Error parsing message with type ...: <why>"
        raise ProtoError(f"the protobuf decoder refuses it ({str(e).rpartition(': ')[2]})") from None
    pieces = msg.pieces
    raw_tokens = [p.piece for p in pieces]
    if not raw_tokens:
        raise ProtoError("no vocabulary pieces: not a SentencePiece model")
    for i, t in enumerate(raw_tokens):
        if not isinstance(t, str):
            _text(t, f"piece #{i}")
        elif not t and not pieces[i].HasField("piece"):
            raise ProtoError(f"vocabulary entry #{i} has no piece string")
    tokens = cast("tuple[str, ...]", tuple(raw_tokens))  # all str: checked above
    scores = tuple([p.score for p in pieces])
    types = tuple([p.type for p in pieces])

    ts, ns = msg.trainer_spec, msg.normalizer_spec
    trainer = TrainerSpec(
        model_type=_raw_model_type(schema, ts), vocab_size=ts.vocab_size, byte_fallback=ts.byte_fallback,
        treat_whitespace_as_suffix=ts.treat_whitespace_as_suffix,
        unk_id=ts.unk_id, bos_id=ts.bos_id, eos_id=ts.eos_id, pad_id=ts.pad_id)
    normalizer = NormalizerSpec(
        name=_text(ns.name, "normalizer_spec.name"), precompiled_charsmap=bytes(ns.precompiled_charsmap),
        add_dummy_prefix=ns.add_dummy_prefix, remove_extra_whitespaces=ns.remove_extra_whitespaces,
        escape_whitespaces=ns.escape_whitespaces)
    return ModelProto(tokens, scores, types, trainer, normalizer,
                      msg.HasField("trainer_spec"), msg.HasField("normalizer_spec"))


def read_model_proto(path: str | os.PathLike[str]) -> ModelProto:
    """Read and decode the ``.model`` file at ``path``.

    Raises :class:`ProtoError` for malformed content,
    :class:`ProtobufUnavailable` without the optional packages and
    :class:`OSError` when the file cannot be read.
    """
    _load_schema()  # say what to install before reading a large file
    with open(path, "rb") as f:
        data = f.read(MAX_MODEL_BYTES + 1)
    if len(data) > MAX_MODEL_BYTES:
        raise ProtoError(f"file is larger than {MAX_MODEL_BYTES >> 20} MB: not a SentencePiece model",
                         MAX_MODEL_BYTES)
    return parse_model_proto(data)
