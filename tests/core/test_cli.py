"""The command line: output formats and one-line errors."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest

from tokenprism.app.cli import is_model_arg, main
from tokenprism.core.export import load_json


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
    assert set(doc["tokens"][0]) >= {"id", "piece", "piece_raw", "score", "type", "attr", "start", "end",
                                     "byte_start", "byte_end", "group", "char"}
    assert [t["char"] for t in doc["tokens"]] == [None, "€", "€", "€"]


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
    code, out, _ = run(capsys, "decode", str(char_model_path), *map(str, ids))
    assert code == 0 and out == "hi\n"
    code, out, _ = run(capsys, "decode", str(char_model_path), ",".join(map(str, ids)))
    assert code == 0 and out == "hi\n"


def test_decode_flags_bad_ids_in_one_line(capsys: pytest.CaptureFixture[str], char_model_path: Path) -> None:
    code, out, err = run(capsys, "decode", str(char_model_path), "5", "99999", "-1", "abc")
    assert code == 1 and out == "" and err.count("\n") == 1 and "Traceback" not in err
    assert "3 of 4 ids" in err and "99999 is outside the vocabulary" in err and "-1 is outside" in err
    assert "'abc' is not a token id" in err
    code, _, err = run(capsys, "decode", str(char_model_path), "[1.5, 2]")
    assert code == 1 and "'1.5' is not a token id" in err


def test_version(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "--version")
    assert code == 0 and ("compiled" in out or "pure" in out or "mixed" in out)


def test_compare_table_and_json(capsys: pytest.CaptureFixture[str], char_model_path: Path) -> None:
    p = str(char_model_path)
    code, out, _ = run(capsys, "compare", p, p, "--text", "ab€")
    assert code == 0
    lines = out.strip().splitlines()
    assert len(lines) == 3 and "+0%" in lines[2]
    assert lines[0].split()[:7] == ["model", "kind", "tokens", "vs", "1st", "chars/tok", "bytes/tok"]
    # 3 chars, 5 UTF-8 bytes, 5 tokens (a, b and three byte tokens for €)
    assert lines[1].split()[-6:-2] == ["5", "+0%", "0.600", "1.000"]
    code, out, _ = run(capsys, "compare", p, p, "--text", "ab€", "--format", "json")
    doc = json.loads(out)
    assert doc["format"] == "tokenprism-compare" and doc["text"] == "ab€"
    assert [len(m["tokens"]) for m in doc["lists"]] == [5, 5]
    assert doc["lists"][0]["stats"]["byte_fallback"] == 3
    code, _, err = run(capsys, "compare", p, "--text", "x")
    assert code == 1 and "at least two" in err


def test_compare_text_after_the_models(capsys: pytest.CaptureFixture[str], char_model_path: Path,
                                       tmp_path: Path) -> None:
    p = str(char_model_path)
    code, out, _ = run(capsys, "compare", p, p, "ab€", "--format", "json")
    assert code == 0 and json.loads(out)["text"] == "ab€"
    # a GGUF file without the .gguf extension is still a model
    plain = tmp_path / "model-without-extension"
    plain.write_bytes(char_model_path.read_bytes())
    assert is_model_arg(str(plain)) and is_model_arg("missing.GGUF") and not is_model_arg("hello")
    code, out, _ = run(capsys, "compare", p, str(plain), "ab", "--format", "json")
    assert code == 0 and [len(m["tokens"]) for m in json.loads(out)["lists"]] == [2, 2]
    code, _, err = run(capsys, "compare", p, "ab", p)
    assert code == 1 and "text once, last" in err
    code, _, err = run(capsys, "compare", p, p, "ab", "--text", "cd")
    assert code == 1 and "not both" in err
    code, _, err = run(capsys, "compare", p, str(tmp_path / "nope.gguf"), "ab")
    assert code == 1 and "no such file" in err


def test_output_file_is_written_atomically(capsys: pytest.CaptureFixture[str], char_model_path: Path,
                                           tmp_path: Path) -> None:
    out_file = tmp_path / "tokens.json"
    code, out, _ = run(capsys, "tokenize", str(char_model_path), "a€", "-o", str(out_file))
    assert code == 0 and out == ""  # the format comes from the extension
    [tl] = load_json(out_file)
    assert tl.text == "a€" and len(tl) == 4
    assert [p.name for p in tmp_path.iterdir()] == ["tokens.json"]  # no temporary file left
    csv_file = tmp_path / "t.csv"
    code, _, _ = run(capsys, "compare", str(char_model_path), str(char_model_path), "ab", "-o", str(csv_file))
    rows = list(csv.DictReader(io.StringIO(csv_file.read_text("utf-8-sig"))))
    assert [r["model"] for r in rows] == ["tiny test vocab #1"] * 2 + ["tiny test vocab #2"] * 2
    code, _, err = run(capsys, "tokenize", str(char_model_path), "a", "-o", str(tmp_path / "no" / "x.json"))
    assert code == 1 and err.count("\n") == 1 and "Cannot write" in err
