"""Reading the metadata and tensor index of a GGUF file.

Only the header is parsed: key/value metadata and tensor infos. Tensor data
is never touched, so a 40 GB model opens as fast as a vocab-only file. Every
count and length read from the file is checked against the bytes that are
left *before* anything is allocated for it; a file whose structure does not
hold raises :class:`~tokenprism.core.errors.DamagedFileError` (a
:class:`~tokenprism.core.errors.GGUFError`) naming the byte offset and field.

``gguf.GGUFReader`` is not used: it builds numpy views for every string and
took tens of seconds on large vocabularies; this reader is compiled with
mypyc and reads the same files in a fraction of a second.
"""


import mmap
import os
import struct
from typing import Any, Final, Mapping

from librt.strings import BytesWriter, read_i64_le, write_i64_le
from mypy_extensions import i64

from .errors import DamagedFileError, GGUFError
from .frozen import FrozenDict
from .gil import offer_gil
from .int_column import le_view
from .record import NativeRecord
from .string_array import StringArray

GGUF_MAGIC = b"GGUF"
SUPPORTED_VERSIONS = (2, 3)
DEFAULT_ALIGNMENT = 32
MAX_DIMS = 4
MAX_ARRAY_NESTING = 8

# GGUF value types (gguf.GGUFValueType); repeated as plain ints because the
# compiled reader switches on them in its inner loop.
T_UINT8 = 0
T_INT8 = 1
T_UINT16 = 2
T_INT16 = 3
T_UINT32 = 4
T_INT32 = 5
T_FLOAT32 = 6
T_BOOL = 7
T_STRING = 8
T_ARRAY = 9
T_UINT64 = 10
T_INT64 = 11
T_FLOAT64 = 12

TYPE_NAMES: dict[int, str] = {
    T_UINT8: "uint8", T_INT8: "int8", T_UINT16: "uint16", T_INT16: "int16",
    T_UINT32: "uint32", T_INT32: "int32", T_FLOAT32: "float32", T_BOOL: "bool",
    T_STRING: "string", T_ARRAY: "array", T_UINT64: "uint64", T_INT64: "int64",
    T_FLOAT64: "float64",
}

# struct format and size of each scalar type
_SCALAR: dict[int, tuple[str, int]] = {
    T_UINT8: ("<B", 1), T_INT8: ("<b", 1), T_UINT16: ("<H", 2), T_INT16: ("<h", 2),
    T_UINT32: ("<I", 4), T_INT32: ("<i", 4), T_FLOAT32: ("<f", 4), T_BOOL: ("<?", 1),
    T_UINT64: ("<Q", 8), T_INT64: ("<q", 8), T_FLOAT64: ("<d", 8),
}
# the array type code of each numeric element type (a typed memoryview)
_CODE: dict[int, str] = {
    T_UINT16: "H", T_INT16: "h", T_UINT32: "I", T_INT32: "i",
    T_FLOAT32: "f", T_UINT64: "Q", T_INT64: "q", T_FLOAT64: "d",
}
# smallest number of bytes one array element of a type can take
_MIN_ELEM = {T_STRING: 8, T_ARRAY: 12}


class MetadataValue(NativeRecord):
    """One metadata value: ``type`` is a GGUF value type; for arrays,
    ``elem_type`` is the element type and ``value`` is a
    :class:`~tokenprism.core.string_array.StringArray` (strings), a ``list``
    (bools, nested arrays), ``bytes`` (uint8/int8) or, for the other
    numbers, a read-only typed ``memoryview`` (``core.int_column.le_view``:
    ``np.asarray`` takes it without a copy; opening a file imports no
    numpy). Frozen, as the GGUF header's other types (``core.record``)."""

    type: Final[int]
    value: Final[Any]
    elem_type: Final[int]
    offset: Final[int]

    def __init__(self, type: int, value: Any, elem_type: int = -1, offset: int = 0) -> None:
        self.type = type
        self.value = value
        self.elem_type = elem_type
        self.offset = offset

    @property
    def type_name(self) -> str:
        if self.type == T_ARRAY:
            return f"array[{TYPE_NAMES.get(self.elem_type, '?')}]"
        return TYPE_NAMES.get(self.type, "?")

    def _fields(self) -> tuple[str, ...]:
        return ("type", "value", "elem_type", "offset")


class TensorInfo(NativeRecord):
    name: Final[str]
    shape: Final[tuple[int, ...]]
    ggml_type: Final[int]
    offset: Final[int]

    def __init__(self, name: str, shape: tuple[int, ...], ggml_type: int, offset: int) -> None:
        self.name = name
        self.shape = shape
        self.ggml_type = ggml_type
        self.offset = offset

    def _fields(self) -> tuple[str, ...]:
        return ("name", "shape", "ggml_type", "offset")


class GGUFFile(NativeRecord):
    """The parsed header of a GGUF file. ``metadata`` is read-only: one
    parsed file is shared by every view and worker thread."""

    path: Final[str]
    version: Final[int]
    file_size: Final[int]
    metadata: Final[Mapping[str, MetadataValue]]
    tensors: Final[tuple[TensorInfo, ...]]
    data_offset: Final[int]

    def __init__(self, path: str, version: int, file_size: int, metadata: Mapping[str, MetadataValue],
                 tensors: tuple[TensorInfo, ...] = (), data_offset: int = 0) -> None:
        self.path = path
        self.version = version
        self.file_size = file_size
        self.metadata = metadata
        self.tensors = tensors
        self.data_offset = data_offset

    def get(self, key: str) -> MetadataValue | None:
        return self.metadata.get(key)

    def _fields(self) -> tuple[str, ...]:
        return ("path", "version", "file_size", "metadata", "tensors", "data_offset")


_WHOLE_FILE = 32 << 20  # past the first megabyte, files up to this size are read whole
# a string array shares the header buffer, instead of copying its part,
# when that holds at most this many times the array's bytes: an undecoded
# array (a BPE vocabulary's merges) keeps the whole buffer alive
_SHARE_FACTOR = 4


class _Cursor:
    """Sequential reader over a growing in-memory prefix of the file.

    The header is read through one ``bytes`` object (fast to slice in
    compiled code); it is extended from the memory map only as far as the
    header really goes, so a multi-gigabyte file costs no more than its
    metadata.
    """

    def __init__(self, path: str, mm: mmap.mmap | None, size: int, whole: bytes = b"") -> None:
        self.path = path
        self.mm = mm
        self.size = size
        # without a map, ``whole`` is the file's every byte
        self.buf = mm[0:min(size, 1 << 20)] if mm is not None else whole
        self.pos = 0

    def fail(self, message: str, field: str, offset: int = -1) -> GGUFError:
        return DamagedFileError(self.path, message, self.pos if offset < 0 else offset, field)

    def need(self, n: int, field: str) -> None:
        if n < 0 or n > self.size - self.pos:
            # the field is named once, after the offset (a misread key name
            # can be megabytes of the file: GGUFError shows an excerpt)
            raise self.fail(f"{n} bytes needed, {self.size - self.pos} left", field)
        end = self.pos + n
        if end > len(self.buf):
            # grow geometrically, but never past the file; one copy per step.
            # A small file whose header outgrows the first megabyte is most
            # likely a vocab-only file, all header: read whole at once, not
            # in steps
            # (1, 4 and 5.9 MB for qwen35's 5.9 MB; each new page is a page
            # fault in a fresh process)
            new_len = self.size if self.size <= _WHOLE_FILE else min(self.size, max(end, 4 * len(self.buf)))
            if self.mm is not None:
                self.buf = self.mm[0:new_len]

    def u32(self, field: str) -> int:
        self.need(4, field)
        v: int = struct.unpack_from("<I", self.buf, self.pos)[0]
        self.pos += 4
        return v

    def u64(self, field: str) -> int:
        self.need(8, field)
        v: int = struct.unpack_from("<Q", self.buf, self.pos)[0]
        self.pos += 8
        return v

    def string(self, field: str) -> str:
        n = self.u64(field)
        self.need(n, field)
        s = self.buf[self.pos:self.pos + n].decode("utf-8", "surrogateescape")
        self.pos += n
        return s

    def count(self, field: str, min_size: int) -> int:
        """Read an element count and check that the file can hold it."""
        start = self.pos
        n = self.u64(field)
        if min_size > 0 and n > (self.size - self.pos) // min_size:
            raise self.fail(
                f"declared count {n} cannot fit in the {self.size - self.pos} bytes left",
                field, start)
        return n

    def strings(self, n: int, field: str) -> StringArray:
        """``n`` length-prefixed strings, undecoded: one pass over the length
        prefixes only (bounds checks, no objects)."""
        begin = self.pos
        # each prefix's offset in the buffer as 8 little-endian bytes, read
        # as a typed view (a list of lengths made one int object per
        # string, and turning that list into an array was a quarter of
        # reading a file); n is at most the bytes left / 8, so this is no
        # bigger than what the file holds
        out = BytesWriter()
        buf = self.buf
        pos: i64 = begin
        for i in range(n):
            if pos + 8 > len(buf):
                self.pos = pos
                self.need(8, field)
                buf = self.buf
            write_i64_le(out, pos)
            # one native 8-byte read (librt) instead of struct or eight byte
            # reads: this loop runs ~800k times on large vocabularies
            ln: i64 = read_i64_le(buf, pos)
            if ln < 0:
                # 2**63 bytes or more: past any file (need() says so)
                self.pos = pos + 8
                self.need(int.from_bytes(buf[pos:pos + 8], "little"), f"{field}[{i}]")
            pos += 8
            if ln > len(buf) - pos:
                self.pos = pos
                self.need(ln, f"{field}[{i}]")
                buf = self.buf
            pos += ln
        self.pos = pos
        # decoded on first use (string_array.py): opening gemma-4 need not
        # make 515k merge strings a BPE tokenizer mostly never reads
        if len(buf) <= _SHARE_FACTOR * (pos - begin):
            # the buffer is mostly this array (a vocab-only file's tokens or
            # merges): kept as it is, not copied a second time, and the
            # prefixes' offsets in the file are its starts as written
            return StringArray(buf, le_view(out.getvalue(), "q"), pos)
        return StringArray(buf[begin:pos], le_view(_shifted(out.getvalue(), begin), "q"))

    def scalar(self, vtype: int, field: str) -> object:
        if vtype == T_STRING:
            return self.string(field)
        spec = _SCALAR.get(vtype)
        if spec is None:
            raise self.fail(f"unknown value type {vtype}", field)
        fmt, size = spec
        self.need(size, field)
        v: object = struct.unpack_from(fmt, self.buf, self.pos)[0]
        self.pos += size
        return v

    def array(self, field: str, depth: int) -> MetadataValue:
        start = self.pos
        elem = self.u32(field)
        if elem == T_STRING or elem == T_ARRAY:
            min_size = _MIN_ELEM[elem]
        elif elem in _SCALAR:
            min_size = _SCALAR[elem][1]
        else:
            raise self.fail(f"unknown array element type {elem}", field, start)
        n = self.count(field, min_size)
        value: object
        if elem == T_STRING:
            value = self.strings(n, field)
        elif elem == T_ARRAY:
            if depth >= MAX_ARRAY_NESTING:
                raise self.fail("arrays nested too deeply", field, start)
            value = [self.array(f"{field}[{i}]", depth + 1) for i in range(n)]
        elif elem == T_UINT8 or elem == T_INT8:
            self.need(n, field)
            value = bytes(self.buf[self.pos:self.pos + n])
            self.pos += n
        elif elem == T_BOOL:
            self.need(n, field)
            value = [b != 0 for b in self.buf[self.pos:self.pos + n]]
            self.pos += n
        else:
            size = _SCALAR[elem][1]
            self.need(n * size, field)
            # a copy of the bytes (the buffer may be a large map's prefix),
            # read-only: shared like the metadata that holds it
            value = le_view(self.buf[self.pos:self.pos + n * size], _CODE[elem])
            self.pos += n * size
        return MetadataValue(T_ARRAY, value, elem, start)


def _shifted(offsets: bytes, d: i64) -> bytes:
    """Little-endian int64 ``offsets`` less ``d`` each (one native pass)."""
    out = BytesWriter()
    i: i64 = 0
    n: i64 = len(offsets)
    while i < n:
        write_i64_le(out, read_i64_le(offsets, i) - d)
        i += 8
    return out.getvalue()


def read_gguf(path: str | os.PathLike[str]) -> GGUFFile:
    """Parse the header of the GGUF file at ``path``.

    >>> f = read_gguf("ggml-vocab-llama-spm.gguf")
    >>> f.metadata["tokenizer.ggml.model"].value
    'llama'
    """
    p = os.fspath(path)
    try:
        fd = open(p, "rb")
    except OSError as e:
        raise GGUFError(p, f"cannot open file: {e.strerror or e}") from None
    with fd:
        size = os.fstat(fd.fileno()).st_size
        if size < 24:
            if fd.read(4) == GGUF_MAGIC:  # a GGUF file cut short
                raise DamagedFileError(p, f"only {size} bytes, less than a GGUF header", 0, "header")
            raise GGUFError(p, f"not a GGUF file: only {size} bytes", 0, "header")
        if size <= _WHOLE_FILE:
            # read whole anyway (see _Cursor.need): one read() into the
            # buffer the parse keeps, not a map copied in two steps (the
            # first megabyte, then all), where every mapped page was a fault
            # and every copied page another (bert-bge: 330 -> ~170 faults)
            try:
                data = fd.read(size)
            except OSError as e:
                raise GGUFError(p, f"cannot read file: {e.strerror or e}") from None
            return _parse(p, None, len(data), data)
        try:
            mm = mmap.mmap(fd.fileno(), 0, access=mmap.ACCESS_READ)
        except (OSError, ValueError) as e:
            raise GGUFError(p, f"cannot map file: {e}") from None
        try:
            return _parse(p, mm, size)
        finally:
            mm.close()


def _parse(path: str, mm: mmap.mmap | None, size: int, whole: bytes = b"") -> GGUFFile:
    cur = _Cursor(path, mm, size, whole)
    magic = cur.buf[0:4]
    if magic != GGUF_MAGIC:
        raise GGUFError(path, f"not a GGUF file (magic {magic!r})", 0, "magic")
    cur.pos = 4
    version = cur.u32("version")
    if version not in SUPPORTED_VERSIONS:
        swapped = int.from_bytes(version.to_bytes(4, "little"), "big")
        if swapped in SUPPORTED_VERSIONS or (version & 0xFFFF) == 0:
            raise GGUFError(path, "big-endian GGUF files are not supported", 4, "version")
        raise GGUFError(path, f"unsupported GGUF version {version} (supported: 2, 3)", 4, "version")
    n_tensors = cur.count("tensor_count", 24)
    n_kv = cur.count("metadata_kv_count", 13)

    metadata: dict[str, MetadataValue] = {}
    for i in range(n_kv):
        start = cur.pos
        key = cur.string(f"metadata key #{i}")
        if key in metadata:
            raise cur.fail("a metadata key appears twice", key, start)
        vstart = cur.pos
        vtype = cur.u32(key)
        if vtype == T_ARRAY:
            metadata[key] = cur.array(key, 0)
        elif vtype == T_STRING or vtype in _SCALAR:
            metadata[key] = MetadataValue(vtype, cur.scalar(vtype, key), -1, vstart)
        else:
            raise cur.fail(f"unknown value type {vtype}", key, vstart)

    tensors: list[TensorInfo] = []
    for i in range(n_tensors):
        name = cur.string(f"tensor #{i} name")
        start = cur.pos
        n_dims = cur.u32(f"tensor {name!r} n_dims")
        if n_dims > MAX_DIMS:
            raise cur.fail(f"tensor has {n_dims} dimensions (at most {MAX_DIMS})", name, start)
        shape = tuple(cur.u64(f"tensor {name!r} dims") for _ in range(n_dims))
        ggml_type = cur.u32(f"tensor {name!r} type")
        offset = cur.u64(f"tensor {name!r} offset")
        tensors.append(TensorInfo(name, shape, ggml_type, offset))

    alignment = DEFAULT_ALIGNMENT
    al = metadata.get("general.alignment")
    if al is not None and al.type == T_UINT32 and isinstance(al.value, int) and al.value > 0:
        alignment = al.value
    data_offset = cur.pos + (-cur.pos) % alignment
    return GGUFFile(path, version, size, FrozenDict(metadata), tuple(tensors), data_offset)
