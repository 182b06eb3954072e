"""Reading SentencePiece ``.model`` files without the protobuf library.

A ``.model`` file is one serialized ``sentencepiece.ModelProto`` message
(``sentencepiece_model.proto``). Only the fields a GGUF vocabulary needs are
decoded; every other field is skipped by its wire type, so files written by
newer SentencePiece versions still load. The reader checks every length and
varint against the bytes that are left, so a truncated or hostile file
raises :class:`ProtoError` (with the byte offset) instead of reading past
the end or allocating without bound.

>>> proto = read_model_proto("tokenizer.model")
>>> proto.trainer_spec.model_type == MODEL_TYPE_BPE
True
"""

from __future__ import annotations

import os
import struct
from dataclasses import dataclass, field
from typing import Iterator

# protobuf wire types
WIRE_VARINT = 0
WIRE_I64 = 1
WIRE_LEN = 2
WIRE_I32 = 5

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

# A real model is a few MB (the largest known ones ~20 MB); the cap only
# keeps a wrongly chosen multi-gigabyte file from being read into memory.
MAX_MODEL_BYTES = 512 << 20
_MAX_VARINT_BYTES = 10


class ProtoError(ValueError):
    """The bytes are not a well-formed ``ModelProto``; ``offset`` is where
    reading failed (absolute, from the start of the file)."""

    def __init__(self, message: str, offset: int) -> None:
        self.offset = offset
        self.reason = message
        super().__init__(f"{message} at byte {offset}")


@dataclass(frozen=True)
class SentencePiece:
    """One vocabulary entry (``ModelProto.SentencePiece``)."""

    piece: str
    score: float = 0.0
    type: int = PIECE_NORMAL


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
    """A decoded SentencePiece model."""

    pieces: tuple[SentencePiece, ...]
    trainer_spec: TrainerSpec = field(default_factory=TrainerSpec)
    normalizer_spec: NormalizerSpec = field(default_factory=NormalizerSpec)
    has_trainer_spec: bool = False
    has_normalizer_spec: bool = False


# ---- wire format ------------------------------------------------------------

class _Wire:
    """Fields of one message in ``data[start:end]``. Nested messages are
    read in place (no copies), so every offset is absolute and an error in a
    nested message points into the file."""

    def __init__(self, data: bytes, start: int, end: int) -> None:
        self.data = data
        self.pos = start
        self.end = end

    def varint(self) -> int:
        start = self.pos
        result = 0
        for i in range(_MAX_VARINT_BYTES):
            if self.pos >= self.end:
                raise ProtoError("truncated varint", start)
            b = self.data[self.pos]
            self.pos += 1
            result |= (b & 0x7F) << (7 * i)
            if b < 0x80:
                # the tenth byte may only carry the top bit of a 64-bit value
                if i == _MAX_VARINT_BYTES - 1 and b > 1:
                    raise ProtoError("varint longer than 64 bits", start)
                return result
        raise ProtoError("varint longer than 10 bytes", start)

    def fields(self) -> Iterator[tuple[int, int, int, int]]:
        """``(field number, wire type, value, offset)``: ``value`` is the
        integer for VARINT/I32/I64 and the payload start for LEN (the
        payload then ends at :attr:`pos`)."""
        while self.pos < self.end:
            offset = self.pos
            key = self.varint()
            number, wire = key >> 3, key & 7
            if number == 0 or number > 0x1FFFFFFF:
                raise ProtoError(f"invalid field number {number}", offset)
            if wire == WIRE_VARINT:
                yield number, wire, self.varint(), offset
            elif wire == WIRE_I64 or wire == WIRE_I32:
                size = 8 if wire == WIRE_I64 else 4
                if size > self.end - self.pos:
                    raise ProtoError(f"truncated {size * 8}-bit field {number}", offset)
                value = int.from_bytes(self.data[self.pos:self.pos + size], "little")
                self.pos += size
                yield number, wire, value, offset
            elif wire == WIRE_LEN:
                n = self.varint()
                if n > self.end - self.pos:
                    raise ProtoError(f"field {number} declares {n} bytes, "
                                     f"{self.end - self.pos} left", offset)
                start = self.pos
                self.pos += n
                yield number, wire, start, offset
            else:
                # groups (3, 4) are not used by sentencepiece_model.proto and
                # 6/7 do not exist: this is not a protobuf message
                raise ProtoError(f"invalid wire type {wire} for field {number}", offset)


def _expect(wire: int, want: int, name: str, offset: int) -> None:
    if wire != want:
        raise ProtoError(f"field {name} has wire type {wire}, expected {want}", offset)


def _int32(value: int) -> int:
    """A varint as ``int32`` (negative numbers are sign-extended to 64 bits)."""
    value &= 0xFFFFFFFFFFFFFFFF
    if value >= 1 << 63:
        value -= 1 << 64
    if not -(1 << 31) <= value < 1 << 31:
        raise OverflowError(value)
    return value


def _float(bits: int) -> float:
    v: float = struct.unpack("<f", bits.to_bytes(4, "little"))[0]
    return v


def _utf8(data: bytes, start: int, end: int, name: str) -> str:
    try:
        return data[start:end].decode("utf-8")
    except UnicodeDecodeError as e:
        raise ProtoError(f"field {name} is not valid UTF-8", start + e.start) from None


def _piece(data: bytes, start: int, end: int) -> SentencePiece:
    piece: str | None = None
    score = 0.0
    ptype = PIECE_NORMAL
    w = _Wire(data, start, end)
    for number, wire, value, offset in w.fields():
        if number == 1:
            _expect(wire, WIRE_LEN, "piece", offset)
            piece = _utf8(data, value, w.pos, "piece")
        elif number == 2:
            _expect(wire, WIRE_I32, "score", offset)
            score = _float(value)
        elif number == 3:
            _expect(wire, WIRE_VARINT, "type", offset)
            if not PIECE_NORMAL <= value <= PIECE_BYTE:
                raise ProtoError(f"unknown piece type {value}", offset)
            ptype = value
    if piece is None:
        raise ProtoError("vocabulary entry without a piece string", start)
    return SentencePiece(piece, score, ptype)


_TRAINER_INTS = {4: "vocab_size", 40: "unk_id", 41: "bos_id", 42: "eos_id", 43: "pad_id"}
_TRAINER_BOOLS = {24: "treat_whitespace_as_suffix", 35: "byte_fallback"}


def _trainer_spec(data: bytes, start: int, end: int) -> TrainerSpec:
    model_type = MODEL_TYPE_UNIGRAM
    ints: dict[str, int] = {}
    bools: dict[str, bool] = {}
    w = _Wire(data, start, end)
    for number, wire, value, offset in w.fields():
        if number == 3:
            _expect(wire, WIRE_VARINT, "model_type", offset)
            model_type = value
        elif number in _TRAINER_INTS:
            name = _TRAINER_INTS[number]
            _expect(wire, WIRE_VARINT, name, offset)
            try:
                ints[name] = _int32(value)
            except OverflowError:
                raise ProtoError(f"{name} {value} does not fit in int32", offset) from None
        elif number in _TRAINER_BOOLS:
            name = _TRAINER_BOOLS[number]
            _expect(wire, WIRE_VARINT, name, offset)
            bools[name] = value != 0
    d = TrainerSpec()
    return TrainerSpec(
        model_type=model_type,
        vocab_size=ints.get("vocab_size", d.vocab_size),
        byte_fallback=bools.get("byte_fallback", d.byte_fallback),
        treat_whitespace_as_suffix=bools.get("treat_whitespace_as_suffix", d.treat_whitespace_as_suffix),
        unk_id=ints.get("unk_id", d.unk_id), bos_id=ints.get("bos_id", d.bos_id),
        eos_id=ints.get("eos_id", d.eos_id), pad_id=ints.get("pad_id", d.pad_id))


_NORMALIZER_BOOLS = {3: "add_dummy_prefix", 4: "remove_extra_whitespaces", 5: "escape_whitespaces"}


def _normalizer_spec(data: bytes, start: int, end: int) -> NormalizerSpec:
    name = ""
    charsmap = b""
    flags: dict[int, bool] = {}
    w = _Wire(data, start, end)
    for number, wire, value, offset in w.fields():
        if number == 1:
            _expect(wire, WIRE_LEN, "name", offset)
            name = _utf8(data, value, w.pos, "name")
        elif number == 2:
            _expect(wire, WIRE_LEN, "precompiled_charsmap", offset)
            charsmap = bytes(data[value:w.pos])
        elif number in _NORMALIZER_BOOLS:
            _expect(wire, WIRE_VARINT, _NORMALIZER_BOOLS[number], offset)
            flags[number] = value != 0
    # the proto defaults of all three flags are true
    return NormalizerSpec(name=name, precompiled_charsmap=charsmap,
                          add_dummy_prefix=flags.get(3, True),
                          remove_extra_whitespaces=flags.get(4, True),
                          escape_whitespaces=flags.get(5, True))


def parse_model_proto(data: bytes) -> ModelProto:
    """Decode a serialized ``ModelProto``; raises :class:`ProtoError`."""
    pieces: list[SentencePiece] = []
    trainer: TrainerSpec | None = None
    normalizer: NormalizerSpec | None = None
    w = _Wire(data, 0, len(data))
    for number, wire, value, offset in w.fields():
        # proto2 merges repeated occurrences of a message field; sentencepiece
        # never writes them twice, so the last one simply wins here
        if number == 1:
            _expect(wire, WIRE_LEN, "pieces", offset)
            pieces.append(_piece(data, value, w.pos))
        elif number == 2:
            _expect(wire, WIRE_LEN, "trainer_spec", offset)
            trainer = _trainer_spec(data, value, w.pos)
        elif number == 3:
            _expect(wire, WIRE_LEN, "normalizer_spec", offset)
            normalizer = _normalizer_spec(data, value, w.pos)
    if not pieces:
        raise ProtoError("no vocabulary pieces: not a SentencePiece model", 0)
    return ModelProto(tuple(pieces), trainer or TrainerSpec(), normalizer or NormalizerSpec(),
                      trainer is not None, normalizer is not None)


def read_model_proto(path: str | os.PathLike[str]) -> ModelProto:
    """Read and decode the ``.model`` file at ``path``.

    Raises :class:`ProtoError` for malformed content and :class:`OSError`
    when the file cannot be read.
    """
    with open(path, "rb") as f:
        data = f.read(MAX_MODEL_BYTES + 1)
    if len(data) > MAX_MODEL_BYTES:
        raise ProtoError(f"file is larger than {MAX_MODEL_BYTES >> 20} MB: not a SentencePiece model",
                         MAX_MODEL_BYTES)
    return parse_model_proto(data)
