"""What a person reads about a damaged GGUF file: the plain meaning first
("the file looks truncated or damaged"), the technical detail after it, and
never more than a short escaped excerpt of the file's bytes.

The files are real ones with one length field changed: a key name's length
(the reader then takes the following bytes, up to megabytes of them, for
the key's name) or a string value's length. Each message is checked where a
person sees it: the exception, the command line and the window's banner.
"""

from __future__ import annotations

import contextlib
import io
import os
import struct
from pathlib import Path
from typing import Iterator

import pytest

from tests.refdata import VOCAB_DIR
from tokenprism.app.cli import main
from tokenprism.app.qt.workers import describe_load_error
from tokenprism.core import GGUFError, open_model, read_gguf
from tokenprism.core.errors import DamagedFileError, excerpt
from tokenprism.core.library.resources import demo_models

DAMAGED = "the file looks truncated or damaged"
MAX_LINE = 500
"""The longest line a message may have (a path, a sentence, an excerpt)."""

REFERENCE = ("llama-spm", "gpt-2", "bert-bge")
_T_STRING, _T_ARRAY = 8, 9


def sources() -> list[Path]:
    found = [Path(p) for p in demo_models().values()]
    if VOCAB_DIR:
        found += [p for name in REFERENCE if (p := Path(VOCAB_DIR) / f"ggml-vocab-{name}.gguf").is_file()]
    return found


def length_mutants(src: Path) -> Iterator[tuple[str, bytes]]:
    """``src`` with one length field changed: each key name's length, and
    each string value's length, set a little or a lot too long."""
    data = src.read_bytes()
    for key, mv in read_gguf(src).metadata.items():
        raw = key.encode("utf-8", "surrogateescape")
        # an array's offset is past its type field, a scalar's at it
        type_at = mv.offset - 4 if mv.type == _T_ARRAY else mv.offset
        fields = [("key", type_at - len(raw) - 8, len(raw))]
        if mv.type == _T_STRING:
            (n,) = struct.unpack_from("<Q", data, mv.offset + 4)
            fields.append(("value", mv.offset + 4, n))
        for what, at, n in fields:
            for wrong in (n + 1, n + 9, n + 5_000, n + 300_000, len(data) - at - 20, 2**40):
                buf = bytearray(data)
                buf[at:at + 8] = struct.pack("<Q", wrong)
                yield f"{src.name}: {what} length of {key} = {wrong}", bytes(buf)


def _cli_stderr(path: Path) -> tuple[int, str]:
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        code = main(["info", str(path)])
    return code, err.getvalue()


@pytest.mark.parametrize("src", sources(), ids=lambda p: p.name)
def test_damaged_files_say_so_plainly_and_briefly(src: Path, tmp_path: Path) -> None:
    path = tmp_path / "damaged.gguf"
    damaged = longest_field = 0
    for case, blob in length_mutants(src):
        path.write_bytes(blob)
        try:
            open_model(path)
        except GGUFError as e:
            error: GGUFError = e
        else:
            continue  # a length that still happens to parse
        if not isinstance(error, DamagedFileError):
            continue  # e.g. a value no longer naming a known tokenizer: not about the structure
        damaged += 1
        longest_field = max(longest_field, len(error.field))
        # the exception: the meaning, then the detail
        first, detail = error.lines()
        assert first == f"{path}: {DAMAGED}", case
        assert error.reason.startswith(DAMAGED + ": ") and error.reason.endswith(error.detail), case
        for line in (str(error), first, detail):
            assert len(line) < MAX_LINE and line.isprintable(), f"{case}: {line[:200]!r}…"
        # the command line: the same two lines, printable and short
        code, err = _cli_stderr(path)
        lines = err.splitlines()
        assert code == 1 and len(lines) == 2 and err.endswith("\n"), f"{case}: {err[:300]!r}"
        assert lines[0] == f"tokenprism: error: {path}: {DAMAGED}", case
        assert lines[1] == f"  {detail}", case
        assert all(len(line) < MAX_LINE and line.isprintable() for line in lines), case
        # the window's banner: one sentence that starts with the meaning
        banner = describe_load_error(str(path), error)
        assert banner.startswith(f"Cannot open “damaged.gguf”: {DAMAGED}"), banner
        assert len(banner) < MAX_LINE and banner.isprintable(), f"{case}: {banner[:200]!r}"
    assert damaged >= 10
    if src.stat().st_size > 500_000:
        # a misread key name of the kind that was quoted whole (25 000 to
        # 141 000 characters and more on one line): the excerpt alone is shown
        assert longest_field > 20_000


def test_excerpt_is_short_escaped_and_says_how_long() -> None:
    assert excerpt("tokenizer.ggml.tokens") == "tokenizer.ggml.tokens"
    assert excerpt("a\nb\x1b[2J") == "a\\nb\\x1b[2J"
    long = "\x00" * 10 + "k" * 100_000
    shown = excerpt(long)
    # escapes count towards the limit and are never cut in half
    assert shown.startswith("\\x00" * 10 + "k" * 40 + "…") and shown.endswith("(100,010 characters in all)")
    assert len(shown) < 120
    assert excerpt("\U0001f642" * 3, 12) == "\U0001f642" * 3
    assert excerpt("\U000e0001" * 3, 12) == "\\U000e0001… (3 characters in all)"


def test_a_reason_is_bounded_wherever_it_comes_from() -> None:
    """Errors raised outside the reader (a plugin's, ``invalid tokenizer
    data: ...``) may quote a value too: the reason is cut and escaped."""
    e = GGUFError("m.gguf", "invalid tokenizer data: " + "x\n" * 50_000, 12, "y" * 10_000)
    assert len(str(e)) < MAX_LINE and str(e).isprintable() and "\\n" in str(e)
    assert str(e).startswith("m.gguf: invalid tokenizer data: x\\nx") and e.lines() == [str(e)]
    assert e.field == "y" * 10_000  # kept whole for callers; shown as an excerpt
    # model.py re-raises a plugin's error with the file's path: the meaning is not repeated
    d = DamagedFileError("", "declared count 9 cannot fit", 4, "k")
    again = type(d)("m.gguf", d.reason, d.offset, d.field)
    assert again.reason == f"{DAMAGED}: declared count 9 cannot fit" and again.detail == d.detail


def test_the_window_names_a_misread_key_briefly(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The banner of a file whose first key's length was misread: short,
    and made without escaping the megabytes taken for the key's name (a
    second of work per message)."""
    import tokenprism.app.logic.pieces as pieces
    import tokenprism.app.qt.workers as workers

    escaped: list[int] = []
    real = pieces.readable

    def readable(text: str, visible_spaces: bool = True) -> str:
        escaped.append(len(text))
        return real(text, visible_spaces)

    monkeypatch.setattr(workers, "readable", readable)
    src = demo_models()["bpe"]
    data = bytearray(src.read_bytes())
    data[24:32] = struct.pack("<Q", len(data) - 60)  # the first key's name: nearly the whole file
    path = tmp_path / "m.gguf"
    path.write_bytes(bytes(data))
    with pytest.raises(DamagedFileError) as info:
        open_model(path)
    banner = describe_load_error(os.fspath(path), info.value)
    assert banner.startswith(f"Cannot open “m.gguf”: {DAMAGED}: ") and len(banner) < 300, banner
    assert len(info.value.field) > 20_000 and escaped and max(escaped) <= 200
