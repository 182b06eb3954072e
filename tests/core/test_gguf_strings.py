"""String arrays read by one decode and split must equal decoding each
string on its own, whatever bytes the strings hold."""

from __future__ import annotations

import struct
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tokenprism.core.gguf_file import T_ARRAY, T_STRING, read_gguf
from tokenprism.core.string_array import StringArray


def _gguf_with_strings(path: Path, items: list[bytes]) -> None:
    key = b"tokenizer.ggml.tokens"
    out = bytearray(b"GGUF" + struct.pack("<IQQ", 3, 0, 1))
    out += struct.pack("<Q", len(key)) + key + struct.pack("<IIQ", T_ARRAY, T_STRING, len(items))
    for it in items:
        out += struct.pack("<Q", len(it)) + it
    path.write_bytes(bytes(out))


def _read_back(tmp_path: Path, items: list[bytes]) -> StringArray:
    p = tmp_path / "s.gguf"
    _gguf_with_strings(p, items)
    value = read_gguf(p).metadata["tokenizer.ggml.tokens"].value
    assert isinstance(value, StringArray)
    return value


def _expected(items: list[bytes]) -> list[str]:
    return [it.decode("utf-8", "surrogateescape") for it in items]


CASES = {
    "plain": [b"a", b"", b"hello", "\u2581the".encode(), "日本".encode(), b""],
    "invalid utf-8 at the edges": [b"\xe2\x96", b"\x81x", b"\xff", b"ab\xe2", b"\x96\x81", b"\xc3", b"\xa9"],
    "first markers inside": [b"\x1e", b"a\x1fb", b"x"],
    "every marker inside": [b"\x1e\x1f\x1d\x1c\x01\x02", b"\x00", b"z"],
    "separator runs inside": [b"\x1e" * 8, b"a" + b"\x1e" * 16 + b"b", b"", b"\x1e" * 7, b"x"],
    "only the last marker free": [b"\x1e\x1f\x1d", b"\x1c\x01", b"\x1f" * 9, b"", b"\xe2\x96"],
    "separator-like lengths": [bytes([30]) * 30, bytes([31]) * 31, b"\x00" * 3],
    "one empty": [b""],
    # lengths past one byte: the reader's offsets take another path
    "long strings": [b"x" * 300, b"", "\u00e9".encode() * 40000, b"y", b"\xff" * 256],
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_string_array_matches_per_string_decode(tmp_path: Path, name: str) -> None:
    items = CASES[name]
    assert _read_back(tmp_path, items) == _expected(items)


def test_many_strings_cross_buffer_growth(tmp_path: Path) -> None:
    # more than the first 1 MiB the reader maps in, so the buffer grows
    # while the prefixes are scanned
    items = [f"tok{i}\u2581{'x' * (i % 40)}".encode() for i in range(60_000)] + [b"\xe2\x96\x81" * 5]
    got = _read_back(tmp_path, items)
    assert len(got) == len(items)
    assert got == _expected(items)


@pytest.mark.parametrize("name", sorted(CASES))
def test_items_read_one_at_a_time_before_all_are_decoded(tmp_path: Path, name: str) -> None:
    items = CASES[name]
    arr = _read_back(tmp_path, items)
    want = _expected(items)
    assert not arr.decoded()
    assert [arr[i] for i in range(len(arr))] == want
    assert [arr[-1 - i] for i in range(len(arr))] == want[::-1]
    assert arr[1:] == want[1:] and arr[::2] == want[::2]
    with pytest.raises(IndexError):
        arr[len(arr)]
    assert not arr.decoded()  # single items and slices decode only themselves
    assert arr.tolist() == want and arr.decoded()
    assert [arr[i] for i in range(len(arr))] == want and arr[1:] == want[1:]
    assert (want[0] in arr) and arr == tuple(want) and arr != want + ["extra"]


def test_decoded_strings_cannot_be_changed_through_the_array(tmp_path: Path) -> None:
    arr = _read_back(tmp_path, [b"a", b"b"])
    got = arr.tolist()
    got[0] = "changed"
    assert arr[0] == "a" and arr.tolist() == ["a", "b"]
    with pytest.raises(TypeError):
        arr[0] = "x"  # type: ignore[index]


def test_raw_parts_only_while_undecoded(tmp_path: Path) -> None:
    items = [b"a b", "\u2581t he".encode(), b""]
    arr = _read_back(tmp_path, items)
    raw = arr.raw()
    assert raw is not None
    region, starts, end = raw
    assert [region[s + 8:e].decode() for s, e in zip(starts.tolist(), StringArray.ends_of(starts, end).tolist())] \
        == _expected(items)
    arr.tolist()
    # decoded: the bytes are let go, and nobody gets half of them
    assert arr.raw() is None and arr.region == b"" and len(arr) == 3 and arr[1] == "\u2581t he"


_PIECES = [b"", b"a", b"\x1e", b"\x1f", b"\x1d", b"\x1c", b"\x01", b"\x02", b"\x00", b"\xe2\x96", b"\x81",
           "\u2581".encode(), "\U0001f642".encode()[:3], "\U0001f642".encode(), b"\xff", b"\x1e" * 8]


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(items=st.lists(st.lists(st.sampled_from(_PIECES), max_size=5).map(b"".join), min_size=1, max_size=40))
def test_random_strings_match_per_string_decode(tmp_path: Path, items: list[bytes]) -> None:
    """Any mix of separator bytes, NULs and cut UTF-8 sequences, in and
    across strings, reads back as each string decoded on its own."""
    assert _read_back(tmp_path, items) == _expected(items)
