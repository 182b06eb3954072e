"""The reference side of a check: the tokenizer a GGUF was converted from,
run by its own library (Hugging Face ``tokenizers`` for a
``tokenizer.json``, ``sentencepiece`` for a ``.model``).

Both libraries are optional (``pip install 'tokenprism[check]'``); they are
imported only when a source is loaded, so the rest of TokenPrism never
needs them. Nothing is written anywhere: files are only read.
"""

from __future__ import annotations

import importlib
import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any, Mapping, Protocol, Sequence

from ..errors import TokenPrismError
from ..formats.source_vocab import ConvertError, load_json
from .lane import SourceTokens, from_byte_offsets, from_char_offsets

__all__ = ["AddedToken", "CheckError", "Reference", "SourceTokens", "load_reference", "INSTALL_HINT"]

INSTALL_HINT = "pip install 'tokenprism[check]'"
_BYTE_PIECE = re.compile(r"<0x[0-9A-Fa-f]{2}>\Z")
# the names Hugging Face repositories and the HF cache use
_JSON_NAMES = ("tokenizer.json",)
_SPM_NAMES = ("tokenizer.model", "spiece.model", "sentencepiece.bpe.model", "sentencepiece.model")


class CheckError(TokenPrismError):
    """A source that cannot be used for a check (one line for the user)."""


def _library(name: str, what: str) -> ModuleType:
    try:
        return importlib.import_module(name)
    except ImportError:
        raise CheckError(f"reading {what} needs the '{name}' package: {INSTALL_HINT}") from None


@dataclass(frozen=True)
class AddedToken:
    """A token the source matches in the text before its model runs."""

    content: str
    id: int
    special: bool


class Reference(Protocol):
    """What a check asks of the source tokenizer."""

    path: str
    library: str
    #: whether the GGUF side should match special tokens in the text the
    #: way this library does (``tokenizers`` always does, ``sentencepiece``
    #: only for user-defined pieces, which llama.cpp matches anyway)
    parse_special: bool
    #: how the file was picked, when that was a choice ("" otherwise): the
    #: snapshot of a Hugging Face cache folder
    note: str

    def encode(self, text: str, add_special: bool) -> list[int]: ...
    def tokens(self, text: str, add_special: bool) -> SourceTokens: ...
    def normalized(self, text: str) -> str | None: ...
    def words(self, text: str) -> list[str] | None: ...
    def encode_words(self, words: Sequence[str]) -> list[int] | None: ...
    def pieces(self) -> list[str]: ...
    def added_tokens(self) -> list[AddedToken]: ...
    def is_byte(self, token_id: int) -> bool: ...
    def is_unknown(self, token_id: int) -> bool: ...


def _read_config(folder: Path) -> dict[str, Any]:
    """``tokenizer_config.json`` and ``special_tokens_map.json`` of a
    folder, merged (the config wins)."""
    out: dict[str, Any] = {}
    for name in ("special_tokens_map.json", "tokenizer_config.json"):
        p = folder / name
        if p.is_file():
            # the converters' reader: size-capped, its errors plain
            try:
                doc = load_json(p)
            except ConvertError as e:
                raise CheckError(f"{p}: not a readable JSON file ({e.reason})") from None
            if isinstance(doc, dict):
                out.update(doc)
    return out


def _config_flag(config: Mapping[str, Any], key: str) -> bool | None:
    v = config.get(key)
    return v if isinstance(v, bool) else None


def _token_text(value: object) -> str | None:
    if isinstance(value, str):
        return value
    if isinstance(value, dict) and isinstance(value.get("content"), str):
        return str(value["content"])
    return None


@dataclass
class HFReference:
    """A ``tokenizer.json`` run by Hugging Face ``tokenizers``."""

    path: str
    tok: Any
    config: dict[str, Any] = field(default_factory=dict)
    library: str = "tokenizers"
    parse_special: bool = True
    note: str = ""

    def __post_init__(self) -> None:
        self._unk = self._unk_id()
        self._vocab: list[str] | None = None
        self._plain: Any = None
        self._bytes: Any = None
        self._kind: str | None = None

    def _unk_id(self) -> int | None:
        model = self.tok.model
        unk = getattr(model, "unk_token", None)
        if isinstance(unk, str):
            tid = self.tok.token_to_id(unk)
            return int(tid) if tid is not None else None
        uid = getattr(model, "unk_id", None)
        return int(uid) if isinstance(uid, int) else None

    def _end_ids(self, key: str) -> list[int]:
        text = _token_text(self.config.get(key))
        tid = self.tok.token_to_id(text) if text is not None else None
        return [int(tid)] if tid is not None else []

    def _encode(self, text: str, add_special: bool, spans: bool) -> tuple[list[int], list[tuple[int, int]]]:
        # a folder's tokenizer_config.json that says add_bos_token /
        # add_eos_token decides, as transformers' fast tokenizers let it
        bos, eos = _config_flag(self.config, "add_bos_token"), _config_flag(self.config, "add_eos_token")
        if add_special and (bos is not None or eos is not None):
            enc = self.tok.encode(text, add_special_tokens=False)
            head = self._end_ids("bos_token") if bos else []
            tail = self._end_ids("eos_token") if eos else []
            ids = head + list(enc.ids) + tail
            if not spans:
                return ids, []
            return ids, [(0, 0)] * len(head) + list(enc.offsets) + [(len(text), len(text))] * len(tail)
        enc = self.tok.encode(text, add_special_tokens=add_special)
        return list(enc.ids), list(enc.offsets) if spans else []

    def encode(self, text: str, add_special: bool) -> list[int]:
        return self._encode(text, add_special, False)[0]

    def tokens(self, text: str, add_special: bool) -> SourceTokens:
        ids, offsets = self._encode(text, add_special, True)
        pieces = self.pieces()
        return from_char_offsets(text, ids, [pieces[i] if 0 <= i < len(pieces) else "?" for i in ids], offsets)

    def normalized(self, text: str) -> str | None:
        norm = self.tok.normalizer
        return text if norm is None else str(norm.normalize_str(text))

    def words(self, text: str) -> list[str] | None:
        pre = self.tok.pre_tokenizer
        norm = self.normalized(text) or ""
        if pre is None:
            return [norm] if norm else []
        # the pre-tokenizer's own output, not offset slices of the text:
        # what it adds (ByteLevel's prefix space, Metaspace's U+2581) is
        # part of the stage and must show; back from the byte-level
        # alphabet to text with the library's own decoder
        words = [str(w) for w, _ in pre.pre_tokenize_str(norm)]
        kind = self._pre_kind()
        if kind == "ByteLevel":
            decoder = self._byte_decoder()
            return [str(decoder.decode([w])) for w in words]
        if kind == "Metaspace":
            return [w.replace("\u2581", " ") for w in words]
        return words

    def _pre_kind(self) -> str:
        """"ByteLevel" or "Metaspace" when the pre-tokenizer (or a step of
        its sequence) maps words into that alphabet, "" otherwise."""
        if self._kind is None:  # once: to_str() writes the whole vocabulary
            shown = json.dumps(json.loads(self.tok.to_str()).get("pre_tokenizer"))
            self._kind = "ByteLevel" if '"ByteLevel"' in shown else "Metaspace" if '"Metaspace"' in shown else ""
        return self._kind

    def _byte_decoder(self) -> Any:
        if self._bytes is None:
            self._bytes = _library("tokenizers", "a tokenizer.json").decoders.ByteLevel()
        return self._bytes

    def _unsplit(self) -> Any:
        """A copy of the tokenizer without its normalizer and whose
        pre-tokenizer only maps (byte-level) but never splits."""
        if self._plain is None:
            tokenizers = _library("tokenizers", "a tokenizer.json")
            doc = json.loads(self.tok.to_str())
            doc["normalizer"] = None
            doc["pre_tokenizer"] = ({"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": False,
                                     "use_regex": False} if "ByteLevel" in json.dumps(doc.get("pre_tokenizer"))
                                    else None)
            doc["post_processor"] = None
            self._plain = tokenizers.Tokenizer.from_str(json.dumps(doc))
        return self._plain

    def encode_words(self, words: Sequence[str]) -> list[int] | None:
        plain = self._unsplit()
        out: list[int] = []
        for w in words:
            out.extend(plain.encode(w, add_special_tokens=False).ids)
        return out

    def pieces(self) -> list[str]:
        if self._vocab is None:
            vocab: dict[str, int] = self.tok.get_vocab(with_added_tokens=True)
            n = max(vocab.values(), default=-1) + 1
            out = [""] * n
            for piece, tid in vocab.items():
                out[tid] = piece
            self._vocab = out
        return self._vocab

    def added_tokens(self) -> list[AddedToken]:
        return [AddedToken(str(t.content), int(i), bool(t.special))
                for i, t in sorted(self.tok.get_added_tokens_decoder().items())]

    def is_byte(self, token_id: int) -> bool:
        p = self.pieces()
        return 0 <= token_id < len(p) and bool(_BYTE_PIECE.match(p[token_id]))

    def is_unknown(self, token_id: int) -> bool:
        return self._unk is not None and token_id == self._unk


@dataclass
class SPReference:
    """A SentencePiece ``.model`` run by ``sentencepiece``."""

    path: str
    sp: Any
    config: dict[str, Any] = field(default_factory=dict)
    library: str = "sentencepiece"
    parse_special: bool = False
    note: str = ""

    def __post_init__(self) -> None:
        sp = self.sp
        self._vocab = [str(sp.id_to_piece(i)) for i in range(sp.get_piece_size())]
        self._config_added = _config_added_tokens(self.config)
        for t in self._config_added:
            if t.id >= len(self._vocab):
                self._vocab.extend([""] * (t.id + 1 - len(self._vocab)))
            self._vocab[t.id] = t.content
        # transformers matches a folder's added tokens (special ones too) in
        # the text before sentencepiece runs, so the GGUF side should as well
        self.parse_special = bool(self._config_added)
        self._splitter = (re.compile("|".join(re.escape(c) for c in sorted(
            {t.content for t in self._config_added}, key=len, reverse=True))) if self._config_added else None)
        by_content = {t.content: t.id for t in self._config_added}
        # sentencepiece's Python API cannot tell user-defined pieces apart;
        # the file's own piece types (read with protobuf, as convert reads
        # them) can, and give the model type
        self._user: list[int] = []
        unigram = False
        self.dummy_prefix = True
        try:
            from ..formats.spm_proto import MODEL_TYPE_UNIGRAM, PIECE_USER_DEFINED, read_model_proto
            proto = read_model_proto(Path(self.path))
            self._user = [i for i, t in enumerate(proto.types) if t == PIECE_USER_DEFINED]
            unigram = proto.trainer_spec.model_type == MODEL_TYPE_UNIGRAM
            self.dummy_prefix = bool(proto.normalizer_spec.add_dummy_prefix)
        except Exception:  # without protobuf: no added tokens known, BPE's convention
            pass
        # the folder's config names BOS/EOS by their text (an added token or
        # a piece); the .model's own ids otherwise
        self.bos_id = self._named_id("bos_token", int(sp.bos_id()))
        self.eos_id = self._named_id("eos_token", int(sp.eos_id()))
        # the convention convert follows for a bare .model: llama (BPE) adds
        # BOS, t5 (unigram) appends EOS; the folder's config may say otherwise
        add_bos = _config_flag(self.config, "add_bos_token")
        add_eos = _config_flag(self.config, "add_eos_token")
        self.add_bos = self.bos_id >= 0 and (add_bos if add_bos is not None else not unigram)
        self.add_eos = self.eos_id >= 0 and (add_eos if add_eos is not None else unigram)
        self._by_content = by_content

    def _named_id(self, key: str, default: int) -> int:
        text = _token_text(self.config.get(key))
        if text is None:
            return default
        for t in self._config_added:
            if t.content == text:
                return t.id
        tid = int(self.sp.piece_to_id(text))
        return tid if 0 <= tid < self.sp.get_piece_size() and self._vocab[tid] == text else default

    def _parts(self, text: str) -> list[tuple[int, str]]:
        """``text`` cut at the folder's added tokens: (str offset, part)."""
        if self._splitter is None:
            return [(0, text)]
        out: list[tuple[int, str]] = []
        at = 0
        for m in self._splitter.finditer(text):
            if m.start() > at:
                out.append((at, text[at:m.start()]))
            out.append((m.start(), m.group()))
            at = m.end()
        if at < len(text) or not out:
            out.append((at, text[at:]))
        return out

    def _proto(self, text: str) -> Any:
        """The pieces of ``text`` with their UTF-8 offsets (sentencepiece
        0.2.0 named the option differently)."""
        try:
            return self.sp.encode(text, return_type="proto")
        except TypeError:
            return self.sp.encode(text, out_type="immutable_proto")

    def tokens(self, text: str, add_special: bool) -> SourceTokens:
        ids: list[int] = []
        offsets: list[tuple[int, int]] = []
        is_byte: list[bool] = []
        for start, part in self._parts(text):
            b0 = len(text[:start].encode("utf-8", "surrogatepass"))
            tid = self._by_content.get(part)
            if tid is not None:
                ids.append(tid)
                offsets.append((b0, b0 + len(part.encode("utf-8", "surrogatepass"))))
                is_byte.append(False)
                continue
            if not part:
                continue
            for p in self._proto(part).pieces:
                ids.append(int(p.id))
                offsets.append((b0 + int(p.begin), b0 + int(p.end)))
                is_byte.append(self.is_byte(int(p.id)))
        if add_special:
            end = len(text.encode("utf-8", "surrogatepass"))
            if self.add_bos:
                ids, offsets, is_byte = [self.bos_id] + ids, [(0, 0)] + offsets, [False] + is_byte
            if self.add_eos:
                ids, offsets, is_byte = ids + [self.eos_id], offsets + [(end, end)], is_byte + [False]
        pieces = [self._vocab[i] if 0 <= i < len(self._vocab) else "?" for i in ids]
        return from_byte_offsets(text, ids, pieces, offsets, is_byte)

    def encode(self, text: str, add_special: bool) -> list[int]:
        if self._splitter is None:  # the common case, without building spans
            ids = [int(i) for i in self.sp.encode(text)]
            if add_special:
                ids = ([self.bos_id] if self.add_bos else []) + ids + ([self.eos_id] if self.add_eos else [])
            return ids
        return self.tokens(text, add_special).ids

    def normalized(self, text: str) -> str | None:
        # as text: U+2581 back to spaces, without the dummy prefix
        out = str(self.sp.normalize(text)).replace("\u2581", " ")
        return out[1:] if self.dummy_prefix and out.startswith(" ") else out

    def words(self, text: str) -> list[str] | None:
        return None  # sentencepiece has no separate pre-tokenizer stage to show

    def encode_words(self, words: Sequence[str]) -> list[int] | None:
        return None

    def pieces(self) -> list[str]:
        return self._vocab

    def added_tokens(self) -> list[AddedToken]:
        # user-defined pieces are matched in the text before the model runs,
        # and so are the folder's added tokens
        config_ids = {t.id for t in self._config_added}
        return [AddedToken(self._vocab[i], i, False) for i in self._user if i not in config_ids] + self._config_added

    def is_byte(self, token_id: int) -> bool:
        return 0 <= token_id < self.sp.get_piece_size() and bool(self.sp.is_byte(token_id))

    def is_unknown(self, token_id: int) -> bool:
        return 0 <= token_id < self.sp.get_piece_size() and bool(self.sp.is_unknown(token_id))


#: more added tokens than this in a tokenizer_config.json is not a tokenizer
MAX_ADDED = 1 << 20


def _config_added_tokens(config: Mapping[str, Any]) -> list[AddedToken]:
    """``added_tokens_decoder`` of a tokenizer_config.json: ``{"id":
    {"content": ..., "special": ...}}`` (malformed entries are skipped)."""
    table = config.get("added_tokens_decoder")
    if not isinstance(table, dict):
        return []
    out: list[AddedToken] = []
    for key, value in table.items():
        text = _token_text(value)
        try:
            tid = int(key)
        except ValueError:
            continue
        if text and 0 <= tid < MAX_ADDED:
            out.append(AddedToken(text, tid, bool(value.get("special", False)) if isinstance(value, dict) else False))
    return sorted(out, key=lambda t: t.id)


def _hf_snapshot(path: Path) -> tuple[Path, str]:
    """The snapshot folder of a Hugging Face cache root
    (``models--org--name/`` with ``snapshots/<hash>/``): the one
    ``refs/main`` names, else the only or the newest one; and a note
    saying which was taken and why."""
    try:
        snapshots = sorted((p for p in (path / "snapshots").iterdir() if p.is_dir()), key=lambda p: p.name)
    except OSError as e:
        raise CheckError(f"{path}: cannot list its snapshots ({e.strerror or e})") from None
    if not snapshots:
        raise CheckError(f"{path}: a Hugging Face cache folder without snapshots")
    ref = path / "refs" / "main"
    if ref.is_file():
        try:
            want = ref.read_text(encoding="utf-8", errors="replace")[:100].strip()
        except OSError:
            want = ""
        for p in snapshots:
            if p.name == want:
                return p, f"Hugging Face cache: snapshot {p.name} (refs/main)"
    if len(snapshots) == 1:
        return snapshots[0], f"Hugging Face cache: snapshot {snapshots[0].name} (the only one)"
    def mtime(p: Path) -> float:
        try:
            return p.stat().st_mtime
        except OSError:
            return 0.0

    newest = max(snapshots, key=lambda p: (mtime(p), p.name))
    return newest, f"Hugging Face cache: snapshot {newest.name} (the newest of {len(snapshots)})"


def _find_source(path: Path) -> tuple[Path, Path | None, str]:
    """(the tokenizer file, the folder whose configs apply or None, a note
    on how it was picked)."""
    note = ""
    if path.is_dir() and (path / "snapshots").is_dir():
        path, note = _hf_snapshot(path)
    if path.is_dir():
        for name in _JSON_NAMES + _SPM_NAMES:
            if (path / name).is_file():
                return path / name, path, note
        models = sorted(path.glob("*.model"))
        if models:
            return models[0], path, note
        raise CheckError(f"{path}: the folder holds no tokenizer.json and no SentencePiece .model")
    if not path.exists():
        raise CheckError(f"{path}: no such file or folder")
    folder = path.parent if path.name in _JSON_NAMES + _SPM_NAMES else None
    return path, folder, note


def load_reference(source: str | os.PathLike[str]) -> Reference:
    """The source tokenizer of ``source``: a ``tokenizer.json``, a
    SentencePiece ``.model``, or a folder holding one (with
    ``tokenizer_config.json`` / ``special_tokens_map.json`` beside it)."""
    file, folder, note = _find_source(Path(source))
    config = _read_config(folder) if folder is not None else {}
    if file.suffix == ".model":
        spm = _library("sentencepiece", "a SentencePiece .model")
        sp = spm.SentencePieceProcessor()
        try:
            sp.Load(str(file))
        except Exception as e:  # sentencepiece raises OSError or RuntimeError
            raise CheckError(f"{file}: sentencepiece cannot read it ({str(e).strip() or type(e).__name__})") from None
        return SPReference(str(file), sp, config, note=note)
    tokenizers = _library("tokenizers", "a tokenizer.json")
    try:
        tok = tokenizers.Tokenizer.from_file(str(file))
    except Exception as e:  # tokenizers raises its own Exception subclass
        raise CheckError(f"{file}: tokenizers cannot read it ({str(e).strip() or type(e).__name__})") from None
    return HFReference(str(file), tok, config, note=note)
