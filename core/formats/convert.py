"""Converting tokenizer files into vocab-only GGUF files.

Two sources are read:

- a SentencePiece ``.model`` (decoded by :mod:`.spm_proto` with the
  ``protobuf`` package and SentencePiece's own schema, the optional
  ``convert`` extra): BPE models become ``tokenizer.ggml.model = "llama"``
  (SPM), unigram models ``"t5"`` (UGM) with the normalizer's precompiled
  charsmap;
- a Hugging Face ``tokenizer.json`` (read by :mod:`.convert_hf`, with
  ``tokenizer_config.json`` beside it when the file is called
  ``tokenizer.json``): byte-level BPE becomes ``"gpt2"`` with its merges,
  WordPiece ``"bert"``, Unigram ``"t5"``; plain JSON, no ``tokenizers``
  library needed.

Tokens, types and special ids are laid out the way llama.cpp's
``convert_hf_to_gguf.py`` lays them out, so the written file tokenizes in
llama.cpp (and here) like the source tokenizer does. What cannot be carried
over (a normalizer llama.cpp does not run, an unknown pre-tokenizer) is
reported in :attr:`ConvertReport.warnings` rather than silently dropped.

>>> report = convert("tokenizer.model", "demo.gguf")
>>> report.summary()
'demo.gguf: llama (SPM) vocabulary from sentencepiece, 1500 tokens, 31808 bytes'
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Mapping, Sequence

import gguf

from .convert_hf import read_tokenizer_json
from .source_vocab import (
    MAX_JSON_BYTES, MAX_VOCAB, T_BYTE, T_CONTROL, T_NORMAL, T_UNKNOWN, T_UNUSED, T_USER_DEFINED, ConvertError,
    VocabData, load_json, sibling_config,
)
from .spm_proto import (
    MODEL_TYPE_BPE, MODEL_TYPE_NAMES, MODEL_TYPE_UNIGRAM, PIECE_BYTE, PIECE_UNKNOWN, ModelProto, ProtobufUnavailable,
    ProtoError, read_model_proto,
)

__all__ = ["ConvertError", "ConvertReport", "VocabData", "convert", "load_vocab", "write_gguf", "MAX_JSON_BYTES",
           "MAX_VOCAB", "T_BYTE", "T_CONTROL", "T_NORMAL", "T_UNKNOWN", "T_UNUSED", "T_USER_DEFINED", "load_json",
           "sibling_config"]

KINDS = {"llama": "SPM", "gpt2": "BPE", "t5": "UGM", "bert": "WPM"}

# special-id keys written, in llama.cpp's order
_SPECIAL_KEYS = (("bos", "tokenizer.ggml.bos_token_id"), ("eos", "tokenizer.ggml.eos_token_id"),
                 ("unk", "tokenizer.ggml.unknown_token_id"), ("sep", "tokenizer.ggml.seperator_token_id"),
                 ("pad", "tokenizer.ggml.padding_token_id"), ("mask", "tokenizer.ggml.mask_token_id"))
_FLAG_KEYS = (("add_bos", "tokenizer.ggml.add_bos_token"), ("add_eos", "tokenizer.ggml.add_eos_token"),
              ("add_sep", "tokenizer.ggml.add_sep_token"),
              ("add_space_prefix", "tokenizer.ggml.add_space_prefix"),
              ("remove_extra_whitespaces", "tokenizer.ggml.remove_extra_whitespaces"),
              ("normalizer_lowercase", "tokenizer.ggml.normalizer.lowercase"),
              ("normalizer_strip_accents", "tokenizer.ggml.normalizer.strip_accents"))

@dataclass(frozen=True)
class ConvertReport:
    """What :func:`convert` wrote."""

    input_path: str
    output_path: str
    source: str
    model: str
    pre: str
    n_tokens: int
    n_merges: int
    special_ids: Mapping[str, int]
    flags: Mapping[str, bool]
    size: int
    warnings: tuple[str, ...] = ()

    @property
    def kind(self) -> str:
        """Short algorithm name: SPM, BPE, UGM or WPM."""
        return KINDS.get(self.model, self.model)

    def summary(self) -> str:
        """One line for a terminal."""
        parts = [f"{self.output_path}: {self.model} ({self.kind}) vocabulary from {self.source}",
                 f"{self.n_tokens} tokens"]
        if self.n_merges:
            parts.append(f"{self.n_merges} merges")
        if self.model == "gpt2":
            parts.append(f"pre-tokenizer {self.pre!r}")
        parts.append(f"{self.size} bytes")
        if self.warnings:
            parts.append(f"{len(self.warnings)} warning(s)")
        return ", ".join(parts)


# ---- entry points -----------------------------------------------------------

def convert(input_path: str | os.PathLike[str], output_path: str | os.PathLike[str],
            name: str | None = None) -> ConvertReport:
    """Convert a SentencePiece ``.model`` or a Hugging Face ``tokenizer.json``
    (or a folder holding one) into a vocab-only GGUF file.

    >>> convert("tokenizer.json", "out.gguf").model
    'gpt2'

    ``name`` becomes ``general.name`` (default: the file's stem, or the
    folder's name for ``tokenizer.json``). The output is written to a
    temporary file first, so a failed conversion never leaves half a file.
    Raises :class:`ConvertError`.
    """
    src = os.fspath(input_path)
    dst = os.fspath(output_path)
    data = load_vocab(src, name)
    if os.path.exists(dst) and os.path.exists(src) and os.path.samefile(src, dst):
        raise ConvertError(dst, "the output would overwrite the input")
    size = write_gguf(data, dst)
    return ConvertReport(
        input_path=src, output_path=dst, source=data.source, model=data.model, pre=data.pre,
        n_tokens=len(data.tokens), n_merges=len(data.merges), special_ids=dict(data.special_ids),
        flags=dict(data.flags), size=size, warnings=data.warnings)


def load_vocab(input_path: str | os.PathLike[str], name: str | None = None) -> VocabData:
    """Read a tokenizer file into :class:`VocabData` without writing anything."""
    path = Path(input_path)
    if path.is_dir():
        # a folder with a SentencePiece model is an SPM-based model whose
        # tokenizer.json (if any) is a lossy re-description of it, so the
        # .model comes first, as in llama.cpp's converters
        for candidate in ("tokenizer.model", "spiece.model", "tokenizer.json"):
            if (path / candidate).is_file():
                path = path / candidate
                break
        else:
            raise ConvertError(str(path), "no tokenizer.json, tokenizer.model or spiece.model in this folder")
    if not path.is_file():
        raise ConvertError(str(path), "no such file")
    try:
        with open(path, "rb") as f:
            head = f.read(64)
    except OSError as e:
        raise ConvertError(str(path), f"cannot read file: {e.strerror or e}") from None
    if head.startswith(b"GGUF"):
        raise ConvertError(str(path), "this is already a GGUF file")
    if path.suffix.lower() == ".json" or head.lstrip()[:1] == b"{":

        data = read_tokenizer_json(path, name)
    else:
        data = _from_sentencepiece(path, name)
    _check_encodable(data, str(path))
    return data


def _check_encodable(data: VocabData, path: str) -> None:
    # JSON can spell lone surrogates ("\ud800"), which have no UTF-8 form
    # and would fail half-way through writing the GGUF file
    for what, items in (("token", data.tokens), ("merge", data.merges), ("name", (data.name,))):
        for i, text in enumerate(items):
            try:
                text.encode("utf-8")
            except UnicodeEncodeError:
                raise ConvertError(path, f"{what} #{i} {text!r} is not valid Unicode") from None


def write_gguf(data: VocabData, output_path: str | os.PathLike[str]) -> int:
    """Write ``data`` as a vocab-only GGUF file; returns its size in bytes.

    Keys are written in a fixed order and nothing time- or path-dependent is
    stored, so the same input always gives the same bytes.
    """
    dst = os.fspath(output_path)
    tmp = f"{dst}.tmp{os.getpid()}"
    try:
        w = gguf.GGUFWriter(tmp, data.architecture)
        w.add_name(data.name)
        w.add_tokenizer_model(data.model)
        w.add_tokenizer_pre(data.pre)
        w.add_token_list(list(data.tokens))
        if data.scores is not None:
            w.add_token_scores(list(data.scores))
        w.add_token_types(list(data.types))
        if data.merges:
            w.add_token_merges(list(data.merges))
        for kind, key in _SPECIAL_KEYS:
            if kind in data.special_ids:
                w.add_uint32(key, data.special_ids[kind])
        for flag, key in _FLAG_KEYS:
            if flag in data.flags:
                w.add_bool(key, data.flags[flag])
        if data.charsmap:
            w.add_array("tokenizer.ggml.precompiled_charsmap", data.charsmap)
        w.write_header_to_file()
        w.write_kv_data_to_file()
        w.write_tensors_to_file()
        w.close()
        os.replace(tmp, dst)
    except OSError as e:
        _remove_quietly(tmp)
        raise ConvertError(dst, f"cannot write file: {e.strerror or e}") from None
    except BaseException:
        _remove_quietly(tmp)
        raise
    return os.path.getsize(dst)


def _remove_quietly(path: str) -> None:
    try:
        os.remove(path)
    except OSError:
        pass


# ---- SentencePiece ----------------------------------------------------------

def _from_sentencepiece(path: Path, name: str | None) -> VocabData:
    p = str(path)
    try:
        proto = read_model_proto(path)
    except ProtoError as e:
        raise ConvertError(p, f"not a SentencePiece model: {e.reason}", e.offset) from None
    except ProtobufUnavailable as e:
        raise ConvertError(p, str(e)) from None
    except OSError as e:
        raise ConvertError(p, f"cannot read file: {e.strerror or e}") from None
    ts, ns = proto.trainer_spec, proto.normalizer_spec
    if ts.model_type == MODEL_TYPE_BPE:
        model, arch = "llama", "llama"
    elif ts.model_type == MODEL_TYPE_UNIGRAM:
        model, arch = "t5", "t5"
    else:
        kind = MODEL_TYPE_NAMES.get(ts.model_type, str(ts.model_type))
        raise ConvertError(p, f"SentencePiece model type {kind} has no llama.cpp tokenizer "
                              "(only BPE and UNIGRAM can be converted)")
    tokens = proto.tokens
    n = len(tokens)
    if n > MAX_VOCAB:
        raise ConvertError(p, f"{n} pieces: too many for a vocabulary")
    warnings = _spm_warnings(proto, model)

    special: dict[str, int] = {}
    for kind, tid in (("unk", ts.unk_id), ("bos", ts.bos_id), ("eos", ts.eos_id), ("pad", ts.pad_id)):
        if 0 <= tid < n:
            special[kind] = tid
        elif tid >= n:
            warnings.append(f"trainer_spec {kind}_id {tid} is outside the vocabulary; not written")
    unk = special.get("unk")
    if unk is None or proto.types[unk] != PIECE_UNKNOWN:
        # sentencepiece refuses to load such a model; keep going, llama.cpp can
        unk_pieces = [i for i, t in enumerate(proto.types) if t == PIECE_UNKNOWN]
        if unk_pieces:
            special["unk"] = unk_pieces[0]
        warnings.append("the unknown piece does not match trainer_spec.unk_id")

    # A bare .model does not say whether BOS/EOS are added; use the target
    # family's convention (llama adds BOS, t5 appends EOS), which is also
    # what llama.cpp assumes when the keys are missing.
    flags: dict[str, bool] = {
        "add_bos": model == "llama" and "bos" in special,
        "add_eos": model == "t5" and "eos" in special,
        "add_space_prefix": ns.add_dummy_prefix,
        "remove_extra_whitespaces": ns.remove_extra_whitespaces,
    }
    config = sibling_config(path, ("tokenizer.model", "spiece.model"))
    for flag in ("add_bos", "add_eos"):
        v = config.get(f"{flag}_token")
        if isinstance(v, bool):
            flags[flag] = v

    return VocabData(
        model=model, pre="default", architecture=arch, name=name or path.stem,
        tokens=tokens, types=proto.types, scores=proto.scores,
        charsmap=ns.precompiled_charsmap if model == "t5" else b"",
        special_ids=special, flags=flags, source="sentencepiece", warnings=tuple(warnings))


def _spm_warnings(proto: ModelProto, model: str) -> list[str]:
    ts, ns = proto.trainer_spec, proto.normalizer_spec
    out: list[str] = []
    if model == "llama":
        # llama.cpp's SPM tokenizer runs no normalizer at all
        if ns.precompiled_charsmap:
            out.append(f"normalizer {ns.name or 'custom'!r} is not applied by llama.cpp's SPM tokenizer; "
                       "ids differ for text it would change (train with normalization_rule_name=identity)")
        if ns.remove_extra_whitespaces:
            out.append("remove_extra_whitespaces is not applied by llama.cpp's SPM tokenizer; "
                       "ids differ for text with repeated spaces")
        if PIECE_BYTE not in proto.types:
            # llama.cpp looks the byte up with unordered_map::at and throws
            out.append("no byte pieces (trained without byte_fallback): llama.cpp aborts on "
                       "characters outside the vocabulary")
    if model == "t5" and ts.byte_fallback:
        out.append("llama.cpp's UGM tokenizer has no byte fallback: unknown characters become <unk>")
    if not ns.escape_whitespaces:
        out.append("escape_whitespaces is off, but llama.cpp always writes spaces as U+2581")
    if ts.treat_whitespace_as_suffix:
        out.append("treat_whitespace_as_suffix has no GGUF key; llama.cpp puts the space marker in front")
    return out
