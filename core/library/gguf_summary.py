"""A GGUF header described for people: facts about the file and short,
bounded texts for metadata values (a 262 144-element array becomes its
length and first items, never one huge string).

>>> facts = header_facts(read_gguf("ggml-vocab-llama-spm.gguf"))
>>> facts.version, facts.key_count, facts.tensor_count
(3, 22, 0)
"""

from __future__ import annotations

import json
from dataclasses import dataclass

import numpy as np

from ..gguf_file import DEFAULT_ALIGNMENT, T_ARRAY, T_BOOL, T_STRING, T_UINT32, GGUFFile, MetadataValue

CHAT_TEMPLATE_KEY = "tokenizer.chat_template"


@dataclass(frozen=True)
class HeaderFacts:
    version: int
    file_size: int
    key_count: int
    tensor_count: int
    tensor_bytes: int
    """Bytes of tensor data: computed from the tensors' shapes and types,
    or the file's bytes after the header when a type is unknown."""
    tensor_bytes_exact: bool
    alignment: int
    data_offset: int


def tensor_nbytes(shape: tuple[int, ...], ggml_type: int) -> int | None:
    """Bytes of one tensor of ``ggml_type``, or None for an unknown type."""
    try:
        from gguf.constants import GGML_QUANT_SIZES, GGMLQuantizationType
        block, size = GGML_QUANT_SIZES[GGMLQuantizationType(ggml_type)]
    except (ImportError, ValueError, KeyError):
        return None
    n = 1
    for d in shape:
        n *= d
    return n // block * size


def header_facts(gf: GGUFFile) -> HeaderFacts:
    alignment = DEFAULT_ALIGNMENT
    al = gf.metadata.get("general.alignment")
    if al is not None and al.type == T_UINT32 and isinstance(al.value, int) and al.value > 0:
        alignment = al.value
    total = 0
    exact = True
    for t in gf.tensors:
        nb = tensor_nbytes(t.shape, t.ggml_type)
        if nb is None:
            exact = False
            break
        total += nb
    if not exact:
        total = max(0, gf.file_size - gf.data_offset)
    return HeaderFacts(gf.version, gf.file_size, len(gf.metadata), len(gf.tensors), total, exact,
                       alignment, gf.data_offset)


def chat_templates(gf: GGUFFile) -> dict[str, str]:
    """The chat templates by name: ``""`` for ``tokenizer.chat_template``,
    ``NAME`` for ``tokenizer.chat_template.NAME``."""
    out: dict[str, str] = {}
    for key, v in gf.metadata.items():
        if key == CHAT_TEMPLATE_KEY or key.startswith(CHAT_TEMPLATE_KEY + "."):
            if v.type == T_STRING and isinstance(v.value, str):
                out[key[len(CHAT_TEMPLATE_KEY) + 1:]] = v.value
    return out


def array_length(v: MetadataValue) -> int:
    return len(v.value) if v.type == T_ARRAY else 0


def _item_text(item: object, elem_type: int) -> str:
    if isinstance(item, MetadataValue):
        return f"[{array_length(item):,} × {item.type_name[6:-1]}]"
    if elem_type == T_BOOL:
        return "true" if item else "false"
    if isinstance(item, str):
        return repr(item)
    if isinstance(item, (float, np.floating)):
        return f"{float(item):.6g}"
    return str(int(item)) if isinstance(item, (int, np.integer)) else repr(item)


def array_items(v: MetadataValue, start: int = 0, count: int = 8) -> list[str]:
    """Short texts of items ``[start, start + count)`` of an array value."""
    seq = v.value
    end = min(len(seq), start + count)
    return [_item_text(seq[i], v.elem_type) for i in range(start, end)]


def value_summary(v: MetadataValue, max_items: int = 8, max_chars: int = 160) -> str:
    """One bounded line: a scalar, a string's start, or an array's length
    and first items."""
    if v.type == T_ARRAY:
        n = array_length(v)
        shown: list[str] = []
        used = 0
        for text in array_items(v, 0, max_items):
            if shown and used + len(text) > max_chars:
                break
            shown.append(text)
            used += len(text) + 2
        more = ", …" if len(shown) < n else ""
        return f"[{', '.join(shown)}{more}]"
    if v.type == T_STRING and isinstance(v.value, str):
        s = v.value
        first = s.split("\n", 1)[0]
        cut = first[:max_chars]
        return repr(cut) + ("…" if len(cut) < len(s) else "")
    if v.type == T_BOOL:
        return "true" if v.value else "false"
    return _item_text(v.value, v.type)


def value_text(v: MetadataValue) -> str:
    """The whole value as text, for copying: strings as they are, arrays as
    JSON."""
    if v.type == T_STRING and isinstance(v.value, str):
        return v.value
    return json.dumps(_plain(v), ensure_ascii=False)


def _plain(v: MetadataValue) -> object:
    if v.type != T_ARRAY:
        return v.value.item() if isinstance(v.value, np.generic) else v.value
    seq = v.value
    if isinstance(seq, (np.ndarray, memoryview)):  # (numbers: the reader's typed view)
        return seq.tolist()
    if isinstance(seq, bytes):
        return list(seq)
    return [_plain(x) if isinstance(x, MetadataValue) else x for x in seq]
