"""What the converters read from a source tokenizer, whatever its format:
:class:`VocabData`, :class:`ConvertError`, GGUF token type numbers, and
the file helpers both readers (:mod:`.convert` for SentencePiece,
:mod:`.convert_hf` for ``tokenizer.json``) share. Kept apart so the two
readers build on it instead of on each other."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Mapping, Sequence

from ..errors import TokenPrismError
from .spm_proto import PIECE_BYTE, PIECE_CONTROL, PIECE_NORMAL, PIECE_UNKNOWN, PIECE_UNUSED, PIECE_USER_DEFINED

# GGUF token types (gguf.TokenType), as plain ints for the token_type array
T_NORMAL = PIECE_NORMAL
T_UNKNOWN = PIECE_UNKNOWN
T_CONTROL = PIECE_CONTROL
T_USER_DEFINED = PIECE_USER_DEFINED
T_UNUSED = PIECE_UNUSED
T_BYTE = PIECE_BYTE

MAX_JSON_BYTES = 512 << 20
MAX_VOCAB = 1 << 24  # ids beyond this are a corrupt file, not a big vocabulary


class ConvertError(TokenPrismError):
    """An input file cannot be converted: unreadable, malformed, or a
    tokenizer kind llama.cpp has no GGUF form for. ``offset`` is a byte
    offset in the input when the problem is tied to one place."""

    def __init__(self, path: str, message: str, offset: int | None = None) -> None:
        self.path = path
        self.offset = offset
        self.reason = message
        where = f" at byte {offset}" if offset is not None else ""
        super().__init__(f"{path}: {message}{where}")


@dataclass(frozen=True)
class VocabData:
    """Everything written to the GGUF file, independent of the source format."""

    model: str
    """``tokenizer.ggml.model``: llama, gpt2, t5 or bert."""
    pre: str
    architecture: str
    name: str
    tokens: tuple[str, ...]
    types: tuple[int, ...]
    scores: tuple[float, ...] | None = None
    merges: tuple[str, ...] = ()
    charsmap: bytes = b""
    special_ids: Mapping[str, int] = field(default_factory=dict)
    flags: Mapping[str, bool] = field(default_factory=dict)
    source: str = ""
    """"sentencepiece" or "tokenizers"."""
    warnings: tuple[str, ...] = ()


def sibling_config(path: Path, names: Sequence[str]) -> dict[str, object]:
    """``tokenizer_config.json`` beside a file with one of the usual names."""
    if path.name not in names:
        return {}
    cfg_path = path.with_name("tokenizer_config.json")
    if not cfg_path.is_file():
        return {}
    cfg = load_json(cfg_path)
    if not isinstance(cfg, dict):
        raise ConvertError(str(cfg_path), "expected a JSON object")
    return cfg


# ---- JSON files ---------------------------------------------------------------

def load_json(path: Path) -> object:
    """A JSON document, size-capped, with errors as :class:`ConvertError`."""
    p = str(path)
    try:
        with open(path, "rb") as f:
            raw = f.read(MAX_JSON_BYTES + 1)
    except OSError as e:
        raise ConvertError(p, f"cannot read file: {e.strerror or e}") from None
    if len(raw) > MAX_JSON_BYTES:
        raise ConvertError(p, f"file is larger than {MAX_JSON_BYTES >> 20} MB")
    try:
        doc: object = json.loads(raw.decode("utf-8"))
    except UnicodeDecodeError as e:
        raise ConvertError(p, "not UTF-8 text", e.start) from None
    except json.JSONDecodeError as e:
        raise ConvertError(p, f"invalid JSON: {e.msg} (line {e.lineno}, column {e.colno})") from None
    except RecursionError:
        raise ConvertError(p, "invalid JSON: nested too deeply") from None
    return doc
