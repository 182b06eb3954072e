"""core/formats/textfile.py: decoding with visible replacement, byte-exact saving."""

from __future__ import annotations

import codecs
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tokenprism.core.formats import textfile
from tokenprism.core.formats.textfile import (REPLACEMENT, EditedInvalidBytes, RunTracker, TextFile, decode, encode,
                                      read_text_file)


def _roundtrip(data: bytes) -> bytes:
    tf = decode(data)
    return encode(tf, tf.text, tf.positions())


def _edit(tf: TextFile, text: str, pos: int, removed: int, insert: str) -> tuple[str, RunTracker]:
    tracker = RunTracker(tf)
    tracker.change(pos, removed, len(insert))
    return text[:pos] + insert + text[pos + removed:], tracker


def test_invalid_bytes_are_shown_as_replacement_and_counted() -> None:
    tf = decode(b"ok \xff\xfe and \xed\xa0\x80 and \xe2\x82 end")
    assert tf.text == "ok \ufffd\ufffd and \ufffd\ufffd\ufffd and \ufffd end"
    assert tf.invalid_bytes == 2 + 3 + 2
    assert tf.invalid_runs == 6
    assert [tf.text[r.start] for r in tf.runs] == [REPLACEMENT] * 6


def test_a_real_replacement_character_is_not_a_run() -> None:
    data = "valid \ufffd here".encode() + b" \xff"
    tf = decode(data)
    assert tf.invalid_bytes == 1 and len(tf.runs) == 1
    assert _roundtrip(data) == data


@pytest.mark.parametrize("data", [
    b"", b"plain\n", b"no newline at end", b"\xef\xbb\xbfbom utf-8\r\nline 2\r\n",
    b"crlf\r\nonly\r\n", b"cr\ronly\r", b"mixed\r\nlf\nand cr\rend", b"para\xe2\x80\xa9sep\n",
    codecs.BOM_UTF16_LE + "utf-16 le \U0001F600\r\nx".encode("utf-16-le"),
    codecs.BOM_UTF16_BE + "utf-16 be \u00e9\n".encode("utf-16-be"),
    codecs.BOM_UTF16_LE + b"\x00\xd8a\x00" + b"z",  # lone surrogate and an odd byte
    b"\x00nul\x00", b"\xc0\xaf overlong", b"\xf4\x90\x80\x80 too big", b"\x80" * 100,
])
def test_open_and_save_without_edits_is_byte_identical(data: bytes) -> None:
    assert _roundtrip(data) == data


def test_bom_and_line_breaks_are_recognised() -> None:
    tf = decode(b"\xef\xbb\xbfa\r\nb\r\n")
    assert (tf.text, tf.bom, tf.newline, tf.runs) == ("a\nb\n", codecs.BOM_UTF8, "\r\n", ())
    assert tf.describe() == "UTF-8 with BOM, CRLF"
    tf = decode(codecs.BOM_UTF16_BE + "hi\n".encode("utf-16-be"))
    assert (tf.text, tf.encoding) == ("hi\n", "utf-16-be")
    tf = decode(b"a\r\nb\r\nc\nd")
    assert tf.newline == "\r\n" and tf.mixed_newlines and tf.describe().endswith("(mixed)")


def test_new_lines_get_the_file_s_line_break() -> None:
    tf = decode(b"a\r\nb")
    assert encode(tf, "a\nb\nnew\n", tf.positions()) == b"a\r\nb\r\nnew\r\n"


def test_edits_elsewhere_keep_the_invalid_bytes() -> None:
    data = b"head \xff\xfe middle \xc3 tail\n"
    tf = decode(data)
    text, tracker = _edit(tf, tf.text, 0, 4, "HEAD and more")
    text2 = text.replace(" tail", " TAIL!")
    tracker.change(text.index(" tail"), 5, 6)
    assert encode(tf, text2, tracker.positions()) == b"HEAD and more \xff\xfe middle \xc3 TAIL!\n"


def test_editing_through_invalid_bytes_needs_a_choice() -> None:
    tf = decode(b"a\xffb\xfec")
    at = tf.text.index(REPLACEMENT)
    text, tracker = _edit(tf, tf.text, at, 2, "X")  # removes the first run and "b"
    with pytest.raises(EditedInvalidBytes) as info:
        encode(tf, text, tracker.positions())
    assert info.value.count == 1
    # the explicit choice: what is left is written as text, the untouched run as its byte
    assert encode(tf, text, tracker.positions(), replace_edited=True) == b"aX\xfec"


def test_a_retyped_replacement_character_is_written_as_utf8() -> None:
    tf = decode(b"a\xffb")
    text, tracker = _edit(tf, tf.text, 1, 1, REPLACEMENT)
    assert encode(tf, text, tracker.positions(), replace_edited=True) == "a\ufffdb".encode()


def test_typing_right_before_and_after_a_run_keeps_it() -> None:
    tf = decode(b"a\xffb")
    tracker = RunTracker(tf)
    tracker.change(1, 0, 2)  # before the run
    tracker.change(4, 0, 1)  # right after it
    assert tracker.positions() == [3]
    assert encode(tf, "axx\ufffdyb", tracker.positions()) == b"axx\xffyb"


def test_minority_line_breaks_survive_edits_elsewhere() -> None:
    data = b"one\r\ntwo\nthree\r\n"
    tf = decode(data)
    assert tf.text == "one\ntwo\nthree\n"
    text, tracker = _edit(tf, tf.text, 0, 3, "ONE")
    assert encode(tf, text, tracker.positions()) == b"ONE\r\ntwo\nthree\r\n"
    # a line break the user replaced gets the file's usual one
    text, tracker = _edit(tf, tf.text, 7, 1, "\n")
    assert encode(tf, text, tracker.positions()) == b"one\r\ntwo\r\nthree\r\n"


def test_read_text_file(tmp_path) -> None:  # type: ignore[no-untyped-def]
    p = tmp_path / "t.txt"
    p.write_bytes(b"x\xffy")
    tf, raw = read_text_file(p)
    assert raw == b"x\xffy" and tf.text == "x\ufffdy" and tf.size == 3


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=300))
def test_any_bytes_round_trip(data: bytes) -> None:
    tf = decode(data)
    assert len(tf.text) >= 0 and all(tf.text[r.start] == r.shown for r in tf.runs)
    assert _roundtrip(data) == data


_UTF8_BITS = st.lists(st.sampled_from([b"a", b"\r", b"\n", b"\r\n", "\u00e9".encode(), "\u65e5".encode(),
                                         "\U0001F600".encode(), b"\xff", b"\xe2\x82", b"\x80", b"\xed\xa0\x80",
                                         "\ufffd".encode(), "\u2029".encode()]), max_size=80).map(b"".join)


@settings(max_examples=300, deadline=None)
@given(_UTF8_BITS, st.integers(1, 9))
def test_decoding_in_slices_is_decoding_whole(data: bytes, size: int) -> None:
    # a big file is decoded a slice at a time (the GIL offered between
    # slices); with slices of a few bytes, every cut lands next to a
    # multi-byte character, an invalid sequence or a "\r\n"
    whole = decode(data)
    saved = textfile._DECODE_SLICE
    textfile._DECODE_SLICE = size
    try:
        sliced = decode(data)
    finally:
        textfile._DECODE_SLICE = saved
    assert sliced == whole
    assert whole.text == _reference_text(data, whole.newline)


def _reference_text(data: bytes, newline: str) -> str:
    """Python's "replace" decoding, every line break shown as "\\n"."""
    text = data.decode("utf-8", "replace")
    return text.replace("\r\n", "\n").replace("\r", "\n").replace("\u2029", "\n")


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=120), st.data())
def test_tracker_matches_a_replay_of_random_edits(data: bytes, draw: st.DataObject) -> None:
    """Runs outside every edit are still found and written as their bytes;
    compares the tracker against tagging each run with a private character."""
    tf = decode(data)
    tags = [chr(0xE000 + i) for i in range(len(tf.runs))]
    tagged = list(tf.text)
    for r, t in zip(tf.runs, tags):
        tagged[r.start] = t
    tagged_text = "".join(tagged)
    text = tf.text
    tracker = RunTracker(tf)
    rng = random.Random(draw.draw(st.integers(0, 2**32)))
    for _ in range(draw.draw(st.integers(0, 6))):
        pos = rng.randint(0, len(text))
        removed = rng.randint(0, min(3, len(text) - pos))
        insert = rng.choice(["", "a", "bc\n", REPLACEMENT])
        text = text[:pos] + insert + text[pos + removed:]
        tagged_text = tagged_text[:pos] + insert + tagged_text[pos + removed:]
        tracker.change(pos, removed, len(insert))
    expected = [tagged_text.index(t) if t in tagged_text else None for t in tags]
    assert tracker.positions() == expected
