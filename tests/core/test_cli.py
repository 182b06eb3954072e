"""The command line: output formats and one-line errors."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest

from tokenprism.app.cli import main, parse_ids


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


def test_tokenize_ids_and_json(capsys: pytest.CaptureFixture[str], char_model_path: Path) -> None:
    code, out, _ = run(capsys, "tokenize", str(char_model_path), "ab", "--add-special")
    assert code == 0
    ids = json.loads(out)
    assert ids[0] == 1 and len(ids) == 3
    code, out, _ = run(capsys, "tokenize", str(char_model_path), "a€", "--format", "json")
    doc = json.loads(out)
    assert doc["text"] == "a€" and doc["add_special"] is False
    assert [t["group"] for t in doc["tokens"]] == [-1, 1, 1, 1]
    assert set(doc["tokens"][0]) >= {"id", "piece", "score", "type", "start", "end", "byte_start", "byte_end"}


def test_tokenize_csv_is_spreadsheet_safe(capsys: pytest.CaptureFixture[str], char_model_path: Path) -> None:
    code, out, _ = run(capsys, "tokenize", str(char_model_path), "a,b", "--format", "csv")
    assert code == 0
    rows = list(csv.DictReader(io.StringIO(out)))
    assert [r["piece"] for r in rows] == ["a", ",", "b"]


def test_tokenize_from_file(capsys: pytest.CaptureFixture[str], char_model_path: Path, tmp_path: Path) -> None:
    f = tmp_path / "t.txt"
    f.write_bytes(b"ab\xff")  # invalid UTF-8 is replaced, not fatal
    code, out, _ = run(capsys, "tokenize", str(char_model_path), "--file", str(f), "--format", "jsonl")
    assert code == 0 and len(out.strip().splitlines()) == 2 + 3


def test_errors_are_one_line(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code, out, err = run(capsys, "info", str(tmp_path / "missing.gguf"))
    assert code == 1 and err.count("\n") == 1 and "no such file" in err and "Traceback" not in err
    bad = tmp_path / "bad.gguf"
    bad.write_bytes(b"GGUF" + bytes(30))
    code, out, err = run(capsys, "tokenize", str(bad), "x")
    assert code == 1 and err.startswith("tokenprism: error: ") and err.count("\n") == 1


def test_info_and_plugins(capsys: pytest.CaptureFixture[str], char_model_path: Path) -> None:
    code, out, _ = run(capsys, "info", str(char_model_path))
    assert code == 0 and "test-chars" in out and "vocab size" in out and "build:" in out
    code, out, _ = run(capsys, "plugins")
    assert code == 0 and "test-chars" in out


def test_decode(capsys: pytest.CaptureFixture[str], char_model_path: Path) -> None:
    from tokenprism.core import open_model

    ids = open_model(char_model_path).encode("hi").ids
    code, out, _ = run(capsys, "decode", str(char_model_path), json.dumps(ids))
    assert code == 0 and out == "hi\n"
    code, _, err = run(capsys, "decode", str(char_model_path), "99999")
    assert code == 1 and "outside the vocabulary" in err


def test_parse_ids_forms() -> None:
    assert parse_ids("1 2,3") == [1, 2, 3]
    assert parse_ids("[4, 5]") == [4, 5]


def test_version(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "--version")
    assert code == 0 and ("compiled" in out or "pure" in out or "mixed" in out)


def test_compare_table_and_json(capsys: pytest.CaptureFixture[str], char_model_path: Path) -> None:
    p = str(char_model_path)
    code, out, _ = run(capsys, "compare", p, p, "--text", "ab€")
    assert code == 0
    lines = out.strip().splitlines()
    assert len(lines) == 3 and "+0%" in lines[2]
    code, out, _ = run(capsys, "compare", p, p, "--text", "ab€", "--format", "json")
    doc = json.loads(out)
    assert [m["tokens"] for m in doc["models"]] == [5, 5]
    assert doc["models"][0]["byte_fallback"] == 3
    code, _, err = run(capsys, "compare", p, "--text", "x")
    assert code == 1 and "at least two" in err
