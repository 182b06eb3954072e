"""A corpus's paths cut into partitions, and the documents read back from
one partition, streamed.

A partition is a list of :class:`Piece` s of about :data:`PART_BYTES` (1 MB:
seconds of work for a pure-Python worker, so progress moves and the last
partitions spread over the workers):
whole text files, byte ranges of a JSON Lines file (a record belongs to the
range its first byte lies in) or row groups of a Parquet file. A text file
is one document and is never split across partitions; a big one is its own
partition and is read :data:`READ_BYTES` at a time (:func:`read_text`).

What cannot be read is reported as :class:`~.stats.Skipped` with the
reason: binary files (a NUL byte in the first 8 KB, no UTF-16 byte-order
mark), unreadable files, files gone by the time a worker reads them, JSON
Lines records that are not JSON objects with a text ``field``.
"""

from __future__ import annotations

import codecs
import importlib
import json
import os
import stat
import threading
from dataclasses import dataclass
from typing import IO, Any, Iterator, Sequence

from ..errors import TokenPrismError
from ..formats.textfile import BOMS
from .stats import Skipped

PART_BYTES = 1 << 20
READ_BYTES = 1 << 20
_SNIFF = 8192
STDIN = "-"

TEXT, JSONL, PARQUET = "text", "jsonl", "parquet"


class CorpusError(TokenPrismError):
    """A corpus cannot be profiled (no path given, a missing extra...)."""


@dataclass(frozen=True)
class Piece:
    """Part of one file: bytes ``[start, end)`` (text, jsonl) or row groups
    ``[start, end)`` (parquet)."""

    path: str
    kind: str
    start: int
    end: int
    size: int
    """Bytes it covers (an estimate for parquet), for progress."""


@dataclass(frozen=True)
class Partition:
    index: int
    pieces: tuple[Piece, ...]

    @property
    def size(self) -> int:
        return sum(p.size for p in self.pieces)

    def describe(self) -> str:
        """Its files, for a report of what is missing."""
        names = sorted({p.path for p in self.pieces})
        more = f" and {len(names) - 3} more" if len(names) > 3 else ""
        return ", ".join(names[:3]) + more


@dataclass(frozen=True)
class Plan:
    partitions: tuple[Partition, ...]
    skipped: tuple[Skipped, ...]
    stdin: bool
    """``-`` was given: standard input is one more document."""

    @property
    def size(self) -> int:
        return sum(p.size for p in self.partitions)


def kind_of(path: str) -> str:
    low = path.lower()
    if low.endswith(".jsonl") or low.endswith(".ndjson"):
        return JSONL
    if low.endswith(".parquet"):
        return PARQUET
    return TEXT


def _expand(paths: Sequence[str], skipped: list[Skipped]) -> Iterator[str]:
    """Files named or found in the folders named (recursively, sorted,
    hidden entries left out), each once."""
    seen: set[str] = set()
    for path in paths:
        if path == STDIN:
            continue
        if os.path.isdir(path):
            for root, dirs, files in os.walk(path, onerror=lambda e: skipped.append(
                    Skipped(str(e.filename), f"unreadable: {e.strerror}"))):
                dirs[:] = sorted(d for d in dirs if not d.startswith("."))
                for name in sorted(files):
                    if not name.startswith("."):
                        full = os.path.join(root, name)
                        if full not in seen:
                            seen.add(full)
                            yield full
        elif path not in seen:
            seen.add(path)
            yield path


def _sniff(path: str) -> tuple[int, str | None]:
    """The file's size and why it cannot be read as text (None: it can)."""
    try:
        st = os.stat(path)
        if not stat.S_ISREG(st.st_mode):
            return 0, "not a regular file" if os.path.exists(path) else "no such file"
        with open(path, "rb") as f:
            head = f.read(_SNIFF)
    except FileNotFoundError:
        return 0, "no such file"
    except OSError as e:
        return 0, f"unreadable: {e.strerror or e}"
    if kind_of(path) == PARQUET:
        return st.st_size, None if head.startswith(b"PAR1") else "not a Parquet file"
    if b"\0" in head and not head.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        return st.st_size, "binary"
    return st.st_size, None


def plan(paths: Sequence[str], *, limit_bytes: int | None = None, part_bytes: int = PART_BYTES) -> Plan:
    """Cut ``paths`` into partitions of about ``part_bytes``. With
    ``limit_bytes`` only the first that many bytes (in path order) are
    taken: the last file is cut there."""
    skipped: list[Skipped] = []
    pieces: list[Piece] = []
    left = limit_bytes if limit_bytes is not None else -1
    for path in _expand(paths, skipped):
        if left == 0:
            break
        size, why = _sniff(path)
        if why is not None:
            skipped.append(Skipped(path, why))
            continue
        kind = kind_of(path)
        if kind == PARQUET:
            new = _parquet_pieces(path, size, skipped)
        else:
            end = size if left < 0 else min(size, left)
            step = part_bytes if kind == JSONL else max(end, 1)
            new = [Piece(path, kind, a, min(end, a + step), min(end, a + step) - a) for a in range(0, end, step)]
            if not new:
                new = [Piece(path, kind, 0, 0, 0)]  # an empty file: one document all the same
        pieces.extend(new)
        if left > 0:
            left = max(0, left - sum(p.size for p in new))
    return Plan(tuple(_group(pieces, part_bytes)), tuple(skipped), STDIN in paths)


def _group(pieces: list[Piece], part_bytes: int) -> Iterator[Partition]:
    batch: list[Piece] = []
    size = 0
    n = 0
    for p in pieces:
        if batch and size + p.size > part_bytes:
            yield Partition(n, tuple(batch))
            n += 1
            batch, size = [], 0
        batch.append(p)
        size += p.size
    if batch:
        yield Partition(n, tuple(batch))


def _parquet_pieces(path: str, size: int, skipped: list[Skipped]) -> list[Piece]:
    pq = parquet_module()
    try:
        meta = pq.ParquetFile(path).metadata
    except Exception as e:  # pyarrow raises its own errors for damaged files
        skipped.append(Skipped(path, f"not a readable Parquet file: {e}"))
        return []
    groups = meta.num_row_groups
    if groups == 0:
        return []
    per = max(1, size // groups)
    return [Piece(path, PARQUET, g, g + 1, per) for g in range(groups)]


def parquet_module() -> Any:
    try:
        # (through importlib: pyarrow ships no type information)
        pq = importlib.import_module("pyarrow.parquet")
    except ImportError:
        raise CorpusError("reading .parquet needs pyarrow: pip install tokenprism[corpus]") from None
    return pq


# ---- reading ------------------------------------------------------------------

_ERRORS = "tokenprism-corpus-count"
_local = threading.local()


def _count_invalid(exc: UnicodeError) -> tuple[str, int]:
    if not isinstance(exc, UnicodeDecodeError):
        raise exc
    _local.invalid = getattr(_local, "invalid", 0) + 1
    return "\ufffd", exc.end


codecs.register_error(_ERRORS, _count_invalid)


def invalid_count() -> int:
    """Invalid sequences this thread decoded since the last call."""
    n: int = getattr(_local, "invalid", 0)
    _local.invalid = 0
    return n


def decode(data: bytes) -> str:
    """UTF-8 bytes as text, invalid sequences as U+FFFD (counted)."""
    return data.decode("utf-8", _ERRORS)


def read_text(f: IO[bytes], limit: int | None = None) -> Iterator[str]:
    """The text of a file read :data:`READ_BYTES` at a time (the byte-order
    mark chooses UTF-8 or UTF-16), invalid sequences as U+FFFD (counted)."""
    head = f.read(4)
    encoding, skip = "utf-8", 0
    for mark, enc in BOMS:
        if head.startswith(mark):
            encoding, skip = enc, len(mark)
            break
    dec = codecs.getincrementaldecoder(encoding)(_ERRORS)
    left = -1 if limit is None else limit - len(head)
    out = dec.decode(head[skip:])
    if out:
        yield out
    while left != 0:
        block = f.read(READ_BYTES if left < 0 else min(READ_BYTES, left))
        if not block:
            break
        if left > 0:
            left -= len(block)
        out = dec.decode(block)
        if out:
            yield out
    out = dec.decode(b"", final=True)
    if out:
        yield out


def jsonl_records(f: IO[bytes], start: int, end: int, field: str, path: str,
                  skipped: list[Skipped]) -> Iterator[str]:
    """The ``field`` of each record whose first byte lies in ``[start, end)``."""
    if start > 0:
        f.seek(start - 1)
        f.readline()  # the rest of the record the previous range reads
    else:
        f.seek(0)
    pos = f.tell()
    while pos < end:
        line = f.readline()
        if not line:
            break
        at = pos
        pos += len(line)
        if not line.strip():
            continue
        try:
            record = json.loads(decode(line))
        except ValueError as e:
            skipped.append(Skipped(f"{path}@{at}", f"not JSON: {e}"))
            continue
        value = record.get(field) if isinstance(record, dict) else None
        if not isinstance(value, str):
            skipped.append(Skipped(f"{path}@{at}", f"no text field {field!r}"))
            continue
        yield value


def parquet_values(path: str, group: int, field: str, skipped: list[Skipped]) -> Iterator[str]:
    """The text column ``field`` of one row group, one cell at a time."""
    pq = parquet_module()
    pf = pq.ParquetFile(path)
    if field not in pf.schema_arrow.names:
        if group == 0:
            skipped.append(Skipped(path, f"no column {field!r}"))
        return
    table = pf.read_row_group(group, columns=[field])
    column = table.column(0)
    for chunk in column.chunks:
        for value in chunk.to_pylist():
            if isinstance(value, bytes):
                value = decode(value)
            if isinstance(value, str):
                yield value
