"""Copies of a GGUF file with some scalar metadata keys changed.

Rewriting only the key/value records keeps everything else byte for byte
(tokens, merges, charsmap), and is far cheaper than writing a 260 000-token
vocabulary again with ``gguf.GGUFWriter``. The files it makes are vocab-only
(no tensors), as the reference vocabs are, so nothing after the metadata
needs to move.
"""

from __future__ import annotations

import os
import struct
from pathlib import Path

from tokenprism.core import read_gguf

# GGUF value types used here
_U32, _BOOL, _STRING = 4, 7, 8
_HEADER = struct.Struct("<4sIQQ")  # magic, version, tensor count, kv count


def _record(key: str, value: bool | int | str) -> bytes:
    k = key.encode()
    head = struct.pack("<Q", len(k)) + k
    if isinstance(value, bool):
        return head + struct.pack("<IB", _BOOL, value)
    if isinstance(value, int):
        return head + struct.pack("<II", _U32, value)
    raw = value.encode()
    return head + struct.pack("<IQ", _STRING, len(raw)) + raw


def _record_span(data: bytes, key: str, type_offset: int) -> tuple[int, int]:
    start = type_offset - 8 - len(key.encode())
    (vtype,) = struct.unpack_from("<I", data, type_offset)
    if vtype == _STRING:
        (n,) = struct.unpack_from("<Q", data, type_offset + 4)
        return start, type_offset + 12 + n
    sizes = {0: 1, 1: 1, 2: 2, 3: 2, 4: 4, 5: 4, 6: 4, 7: 1, 10: 8, 11: 8, 12: 8}
    if vtype not in sizes:
        raise ValueError(f"{key}: cannot rewrite a value of GGUF type {vtype}")
    return start, type_offset + 4 + sizes[vtype]


def patched_gguf(src: str | os.PathLike[str], dest: str | os.PathLike[str],
                 changes: dict[str, bool | int | str | None]) -> Path:
    """Write ``dest``: ``src`` with each key of ``changes`` set (``None``
    removes it). Returns ``dest``."""
    data = Path(src).read_bytes()
    meta = read_gguf(os.fspath(src)).metadata
    magic, version, n_tensors, n_kv = _HEADER.unpack_from(data, 0)
    if n_tensors:
        raise ValueError("only vocab-only GGUF files (no tensors) can be patched")
    cuts = sorted(_record_span(data, k, meta[k].offset) for k in changes if k in meta)
    body = bytearray()
    pos = _HEADER.size
    for start, end in cuts:
        body += data[pos:start]
        pos = end
    body += data[pos:]
    added = [_record(k, v) for k, v in changes.items() if v is not None]
    n_kv = n_kv - len(cuts) + len(added)
    out = _HEADER.pack(magic, version, n_tensors, n_kv) + b"".join(added) + bytes(body)
    Path(dest).write_bytes(out)
    return Path(dest)
