"""The GGUF reader: every value type, real files, and broken files."""

from __future__ import annotations

import glob
import os
import struct
from pathlib import Path

import gguf
import numpy as np
import pytest

from tests.refdata import VOCAB_DIR, SKIP_REASON
from tokenprism.core import GGUFError, read_gguf
from tokenprism.core.errors import DamagedFileError
from tokenprism.core.gguf_file import T_ARRAY, T_STRING
from tokenprism.core.string_array import StringArray

REF_FILES = sorted(glob.glob(os.path.join(VOCAB_DIR, "ggml-vocab-*.gguf"))) if VOCAB_DIR else []
ref_params = [pytest.param(f, id=os.path.basename(f)) for f in REF_FILES] or [
    pytest.param(None, marks=pytest.mark.skip(reason=SKIP_REASON))]


@pytest.mark.parametrize("path", ref_params)
def test_reads_every_reference_vocab(path: str) -> None:
    f = read_gguf(path)
    assert f.version in (2, 3)
    md = f.metadata
    tokens = md["tokenizer.ggml.tokens"]
    assert tokens.type == T_ARRAY and tokens.elem_type == T_STRING
    assert isinstance(tokens.value, StringArray) and len(tokens.value) > 1000
    assert md["tokenizer.ggml.model"].value in ("llama", "gpt2", "bert", "t5", "gemma4")
    for key in ("tokenizer.ggml.scores", "tokenizer.ggml.token_type"):
        if key in md:
            assert len(md[key].value) == len(tokens.value)  # type: ignore[arg-type]


@pytest.mark.parametrize("name", ["bert-bge", "llama-spm"])
def test_agrees_with_gguf_package(name: str) -> None:
    if VOCAB_DIR is None:
        pytest.skip(SKIP_REASON)
    path = os.path.join(VOCAB_DIR, f"ggml-vocab-{name}.gguf")
    ours = read_gguf(path)
    ref = gguf.GGUFReader(path)
    assert set(ours.metadata) == {k for k in ref.fields if not k.startswith("GGUF.")}
    toks = ref.fields["tokenizer.ggml.tokens"]
    ref_tokens = [bytes(toks.parts[i]).decode("utf-8") for i in toks.data]
    assert ours.metadata["tokenizer.ggml.tokens"].value == ref_tokens
    types = ref.fields["tokenizer.ggml.token_type"]
    ref_types = [int(types.parts[i][0]) for i in types.data]
    assert list(ours.metadata["tokenizer.ggml.token_type"].value) == ref_types  # type: ignore[call-overload]


def _write_all_types(path: Path) -> None:
    w = gguf.GGUFWriter(str(path), "testarch")
    w.add_uint8("t.u8", 200)
    w.add_int8("t.i8", -5)
    w.add_uint16("t.u16", 60000)
    w.add_int16("t.i16", -30000)
    w.add_uint32("t.u32", 4_000_000_000)
    w.add_int32("t.i32", -2_000_000_000)
    w.add_float32("t.f32", 1.5)
    w.add_uint64("t.u64", 2**63 + 5)
    w.add_int64("t.i64", -(2**62))
    w.add_float64("t.f64", 2.25)
    w.add_bool("t.bool", True)
    w.add_string("t.str", "héllo ▁ 🙂")
    w.add_array("t.arr_i32", [1, -2, 3])
    w.add_array("t.arr_f32", [0.5, -1.25])
    w.add_array("t.arr_str", ["a", "", "ü"])
    w.add_array("t.arr_bool", [True, False, True])
    w.add_array("t.arr_nested", [[1, 2], [3]])
    w.add_tensor("weight", np.zeros((3, 4), dtype=np.float32))
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


def test_every_value_type(tmp_path: Path) -> None:
    path = tmp_path / "types.gguf"
    _write_all_types(path)
    f = read_gguf(path)
    md = f.metadata
    assert md["t.u8"].value == 200 and md["t.i8"].value == -5
    assert md["t.u16"].value == 60000 and md["t.i16"].value == -30000
    assert md["t.u32"].value == 4_000_000_000 and md["t.i32"].value == -2_000_000_000
    assert md["t.f32"].value == 1.5 and md["t.f64"].value == 2.25
    assert md["t.u64"].value == 2**63 + 5 and md["t.i64"].value == -(2**62)
    assert md["t.bool"].value is True
    assert md["t.str"].value == "héllo ▁ 🙂"
    assert list(md["t.arr_i32"].value) == [1, -2, 3]  # type: ignore[call-overload]
    assert list(md["t.arr_f32"].value) == [0.5, -1.25]  # type: ignore[call-overload]
    assert md["t.arr_str"].value == ["a", "", "ü"]
    assert md["t.arr_bool"].value == [True, False, True]
    nested = md["t.arr_nested"].value
    assert isinstance(nested, list) and [list(x.value) for x in nested] == [[1, 2], [3]]
    assert md["t.arr_str"].type_name == "array[string]"
    assert [(t.name, t.shape) for t in f.tensors] == [("weight", (4, 3))]
    assert f.data_offset % 32 == 0 and f.data_offset <= f.file_size


def _truncation_points(size: int) -> list[int]:
    pts = set(range(0, min(size, 200)))
    pts.update(range(0, size, max(1, size // 300)))
    return sorted(p for p in pts if p < size)


def test_every_truncation_raises_gguf_error(tmp_path: Path) -> None:
    src = tmp_path / "types.gguf"
    _write_all_types(src)
    data = src.read_bytes()
    header_end = read_gguf(src).data_offset
    bad = tmp_path / "cut.gguf"
    # the last 32 bytes before the data may be alignment padding only
    for n in _truncation_points(header_end - 32):
        bad.write_bytes(data[:n])
        with pytest.raises(GGUFError) as info:
            read_gguf(bad)
        assert str(bad) in str(info.value)


def _header(version: int = 3, n_tensors: int = 0, n_kv: int = 1) -> bytes:
    return b"GGUF" + struct.pack("<IQQ", version, n_tensors, n_kv)


def _kv_string(key: str, value: str) -> bytes:
    k, v = key.encode(), value.encode()
    return struct.pack("<Q", len(k)) + k + struct.pack("<I", 8) + struct.pack("<Q", len(v)) + v


DAMAGED = "the file looks truncated or damaged"


@pytest.mark.parametrize("blob,needle,damaged", [
    (b"GGML" + bytes(40), "not a GGUF file", False),
    (b"GGUF" + struct.pack("<I", 1) + bytes(40), "unsupported GGUF version 1", False),
    (b"GGUF" + struct.pack(">IQQ", 3, 0, 1) + bytes(40), "big-endian", False),
    (_header(n_kv=2**60) + bytes(40), "cannot fit", True),
    (_header(n_tensors=2**62) + bytes(40), "cannot fit", True),
    (_header() + struct.pack("<Q", 2**62) + bytes(40), "4611686018427387904 bytes needed", True),
    (_header() + struct.pack("<Q", 1) + b"k" + struct.pack("<I", 99) + bytes(20), "unknown value type 99", True),
    (_header() + struct.pack("<Q", 1) + b"k" + struct.pack("<IIQ", 9, 8, 2**61) + bytes(20), "cannot fit", True),
    (_header() + struct.pack("<Q", 1) + b"k" + struct.pack("<IIQ", 9, 6, 2**40) + bytes(20), "cannot fit", True),
    (_header(n_kv=2) + _kv_string("a", "x") + _kv_string("a", "y"), "a metadata key appears twice", True),
    # a string of an array claiming 2**64 - 1 bytes (negative as a signed
    # 8-byte read), or 2**40: the error gives the unsigned size asked for
    (_header() + struct.pack("<Q", 1) + b"k" + struct.pack("<IIQ", 9, 8, 2) + struct.pack("<Q", 1) + b"a"
     + b"\xff" * 8 + bytes(20), "18446744073709551615 bytes needed, 20 left at byte 66 (k[1])", True),
    (_header() + struct.pack("<Q", 1) + b"k" + struct.pack("<IIQ", 9, 8, 2) + struct.pack("<Q", 2**40)
     + bytes(20), "1099511627776 bytes needed, 20 left at byte 57 (k[0])", True),
    (b"GGUF" + bytes(10), "only 14 bytes, less than a GGUF header", True),
    (b"GGML" + bytes(10), "not a GGUF file: only 14 bytes", False),
])
def test_hostile_headers_raise_clear_errors(tmp_path: Path, blob: bytes, needle: str, damaged: bool) -> None:
    path = tmp_path / "bad.gguf"
    path.write_bytes(blob)
    with pytest.raises(GGUFError) as info:
        read_gguf(path)
    e = info.value
    assert needle in str(e)
    assert e.path == str(path)
    # a broken structure says what that means first, the detail after it
    assert isinstance(e, DamagedFileError) == damaged
    if damaged:
        assert e.reason.startswith(DAMAGED + ": ") and needle in e.lines()[1]
        assert e.lines()[0] == f"{path}: {DAMAGED}"
    else:
        assert DAMAGED not in str(e) and e.lines() == [str(e)]


def test_error_names_offset_and_field(tmp_path: Path) -> None:
    path = tmp_path / "bad.gguf"
    path.write_bytes(_header() + struct.pack("<Q", 3) + b"abc" + struct.pack("<I", 8) + struct.pack("<Q", 1000) + b"xy")
    with pytest.raises(GGUFError) as info:
        read_gguf(path)
    assert info.value.field == "abc"
    assert info.value.offset == 4 + 4 + 8 + 8 + 8 + 3 + 4 + 8


def test_missing_file_and_tiny_file(tmp_path: Path) -> None:
    with pytest.raises(GGUFError, match="cannot open"):
        read_gguf(tmp_path / "nope.gguf")
    (tmp_path / "tiny.gguf").write_bytes(b"GGUF")
    with pytest.raises(GGUFError, match="only 4 bytes"):
        read_gguf(tmp_path / "tiny.gguf")
