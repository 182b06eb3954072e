"""A string array may keep the file's bytes instead of a copy of its own
part: whatever follows it in the file must never show up in its strings,
its searches or its merge ranks."""

from __future__ import annotations

import struct
from pathlib import Path

import pytest

from tokenprism.core.gguf_file import T_ARRAY, T_STRING, read_gguf
from tokenprism.core.string_array import StringArray
from tokenprism.plugins.bpe.ranks import RankTable, merges_containing, rank_dict, rank_of

MERGES = ["a b", "ab c", "\u0120 t", "\u0120t he", "x y", "a b", "q r"]
# bytes after the merges that look like merges, and hold their texts
TRAILER = ["zz qq", "a bzz", "x yq r", "\u0120t hezz"]


def _key(name: str) -> bytes:
    raw = name.encode()
    return struct.pack("<Q", len(raw)) + raw


def _strings(items: list[str]) -> bytes:
    out = struct.pack("<IIQ", T_ARRAY, T_STRING, len(items))
    for it in items:
        raw = it.encode()
        out += struct.pack("<Q", len(raw)) + raw
    return out


def _write(path: Path, merges: list[str], trailer: list[str]) -> None:
    out = bytearray(b"GGUF" + struct.pack("<IQQ", 3, 0, 2))
    out += _key("tokenizer.ggml.merges") + _strings(merges)
    out += _key("zz.after") + _strings(trailer)
    path.write_bytes(bytes(out))


def _merges(path: Path) -> StringArray:
    value = read_gguf(path).metadata["tokenizer.ggml.merges"].value
    assert isinstance(value, StringArray) and not value.decoded()
    return value


# few trailing strings: the array is most of the file (kept as the file's
# bytes); many: the file is mostly trailer (the array's part copied)
@pytest.mark.parametrize("n_trailer", [1, 400])
def test_strings_end_where_the_array_ends(tmp_path: Path, n_trailer: int) -> None:
    p = tmp_path / "m.gguf"
    _write(p, MERGES, (TRAILER * n_trailer)[:max(1, n_trailer)])
    arr = _merges(p)
    assert [arr[i] for i in range(len(MERGES))] == MERGES
    assert arr[-1] == "q r"
    assert arr[2:] == MERGES[2:]
    raw = arr.raw()
    assert raw is not None
    region, starts, end = raw
    # both ways of holding the bytes are exercised
    assert (len(region) > end - int(starts[0])) == (n_trailer == 1)
    ends = StringArray.ends_of(starts, end).tolist()
    assert [region[s + 8:e].decode() for s, e in zip(starts.tolist(), ends)] == MERGES
    assert [x for x in merges_containing(arr, "zz")] == []
    assert merges_containing(arr, "q") == ["q r"]
    assert merges_containing(arr, "b") == ["a b", "ab c", "a b"]
    assert merges_containing(arr, "\u0120t") == ["\u0120t he"]
    table = RankTable(arr)
    want = rank_dict(MERGES)
    for text in MERGES + TRAILER + ["q rzz", "r"]:
        assert rank_of(table, table.ranks, text) == want.get(text, -1), text
    assert want["a b"] == 0  # the first of duplicates wins
    table.complete_all()
    assert table.ranks == want
    assert arr.tolist() == MERGES and arr.raw() is None


def test_equal_arrays_compare_equal_whatever_follows_them(tmp_path: Path) -> None:
    a, b, c = tmp_path / "a.gguf", tmp_path / "b.gguf", tmp_path / "c.gguf"
    _write(a, MERGES, ["one"])
    _write(b, MERGES, TRAILER * 300)
    _write(c, MERGES[:-1] + ["q s"], ["one"])
    ma, mb, mc = _merges(a), _merges(b), _merges(c)
    # compared by their bytes while both are undecoded
    assert ma == mb and ma != mc and not ma.decoded() and not mb.decoded() and not mc.decoded()
    assert ma == MERGES and mc != MERGES
    assert "StringArray(7 strings" in repr(ma)
    # decoding one side changes nothing
    assert mb.tolist() == MERGES and ma == mb


def test_an_array_that_ends_the_file(tmp_path: Path) -> None:
    p = tmp_path / "e.gguf"
    out = bytearray(b"GGUF" + struct.pack("<IQQ", 3, 0, 1))
    out += _key("tokenizer.ggml.merges") + _strings(MERGES)
    p.write_bytes(bytes(out))
    arr = _merges(p)
    assert arr[len(MERGES) - 1] == "q r" and merges_containing(arr, "r") == ["q r"]
    assert arr.tolist() == MERGES
