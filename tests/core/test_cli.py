"""The command line: output formats and one-line errors."""

from __future__ import annotations

import csv
import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tokenprism.app.cli import is_model_arg, main
from tests.ggufmaker import CHAR_TOKENS
from tokenprism.core.formats.export import load_json
from tokenprism.core.gguf_file import read_gguf


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


def test_decode_lists_pieces_then_text(capsys: pytest.CaptureFixture[str], char_model_path: Path) -> None:
    from tokenprism.core import open_model

    model = open_model(char_model_path)
    ids = model.encode("hi").ids
    for arg in (json.dumps(ids), ",".join(map(str, ids))):
        code, out, err = run(capsys, "decode", str(char_model_path), arg)
        assert code == 0 and err == ""
        lines = out.splitlines()
        # one line per id with its piece, then the decoded text
        assert [line.split() for line in lines[:2]] == [[str(ids[0]), "h"], [str(ids[1]), "i"]]
        assert lines[2:] == ["text (2 ids):", "hi"]
    code, out, _ = run(capsys, "decode", str(char_model_path), *map(str, ids), "--text-only")
    assert code == 0 and out == "hi\n"
    # a space piece is shown visibly, as in the app
    space = model.vocab.token_to_id[" "]
    code, out, _ = run(capsys, "decode", str(char_model_path), str(space))
    assert out.splitlines()[0].split() == [str(space), "\u2423"]


def test_decode_marks_bad_ids_and_decodes_the_rest(capsys: pytest.CaptureFixture[str],
                                                   char_model_path: Path) -> None:
    from tokenprism.core import open_model

    n = len(open_model(char_model_path))
    t2i = open_model(char_model_path).vocab.token_to_id
    a, b = t2i["a"], t2i["b"]
    code, out, err = run(capsys, "decode", str(char_model_path), str(a), "99999", "-1", "abc", str(b))
    assert code == 0
    lines = out.splitlines()
    assert len(lines) == 7 and lines[5:] == ["text (2 ids):", "ab"]
    assert lines[1].split() == ["99999", "!", "outside", "the", "vocabulary", f"(0..{n - 1})"]
    assert lines[2].split()[:2] == ["-1", "!"] and lines[3].split() == ["abc", "!", "not", "a", "token", "id"]
    assert lines[0].split() == [str(a), "a"] and lines[4].split() == [str(b), "b"]
    assert err.count("\n") == 1 and err.startswith("tokenprism: warning: 3 of 5 ids cannot be decoded")
    assert "'abc' is not a token id" in err


def test_decode_fails_when_nothing_decodes(capsys: pytest.CaptureFixture[str], char_model_path: Path) -> None:
    code, out, err = run(capsys, "decode", str(char_model_path), "99999", "-1", "abc")
    assert code == 1 and out == "" and err.count("\n") == 1 and "Traceback" not in err
    assert "none of the 3 ids" in err and "99999 is outside the vocabulary" in err and "-1 is outside" in err
    code, _, err = run(capsys, "decode", str(char_model_path), "[1.5]")
    assert code == 1 and "'1.5' is not a token id" in err
    code, out, err = run(capsys, "decode", str(char_model_path), "[]")
    assert code == 2 and out == "" and "no ids given" in err
    # a hostile word is echoed as one printable line
    code, out, _ = run(capsys, "decode", str(char_model_path), "40", "x\x1b[2J\ny")
    table = out[:out.index("text (")]
    assert code == 0 and "\x1b" not in table and "x\\x1b" in table
    assert all(line.isprintable() for line in table.splitlines())


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


def test_tokenize_from_stdin(capsys: pytest.CaptureFixture[str], char_model_path: Path,
                             monkeypatch: pytest.MonkeyPatch) -> None:
    from tokenprism.core import open_model

    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO("ab\n€".encode())))
    code, out, _ = run(capsys, "tokenize", str(char_model_path), "--stdin")
    assert code == 0 and json.loads(out) == open_model(char_model_path).encode("ab\n€").ids
    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(b"x")))
    code, _, err = run(capsys, "tokenize", str(char_model_path), "ab", "--stdin")
    assert code == 1 and "give the text once" in err


def test_parse_special(capsys: pytest.CaptureFixture[str], char_model_path: Path) -> None:
    from tokenprism.core import open_model

    t2i = open_model(char_model_path).vocab.token_to_id
    code, out, _ = run(capsys, "tokenize", str(char_model_path), "a<|special|>b", "--parse-special")
    assert code == 0 and json.loads(out) == [t2i["a"], t2i["<|special|>"], t2i["b"]]
    code, out, _ = run(capsys, "tokenize", str(char_model_path), "a<|special|>b")
    ids = json.loads(out)
    assert t2i["<|special|>"] not in ids and len(ids) == len("a<|special|>b")


def test_info_fields(capsys: pytest.CaptureFixture[str], char_model_path: Path) -> None:
    from tokenprism.core.library.resources import demo_models

    code, out, _ = run(capsys, "info", str(char_model_path))
    fields = {line.split(":", 1)[0]: line.split(":", 1)[1].strip() for line in out.splitlines()}
    assert code == 0 and fields["gguf version"] == "3" and fields["pre-tokenizer"] == "default"
    assert fields["merges"] == "0" and fields["vocab size"] == f"{len(CHAR_TOKENS):,}"
    assert fields["special bos"].split() == ["1", "'<s>'"] and fields["special unk"].split() == ["0", "'<unk>'"]
    assert "add_bos=True" in fields["flags"] and "file:add_bos=True" in fields["flags"]
    bpe = demo_models()["bpe"]
    code, out, _ = run(capsys, "info", str(bpe))
    fields = {line.split(":", 1)[0]: line.split(":", 1)[1].strip() for line in out.splitlines()}
    gf = read_gguf(bpe)
    assert fields["pre-tokenizer"] == gf.metadata["tokenizer.ggml.pre"].value
    assert fields["merges"] == f"{len(gf.metadata['tokenizer.ggml.merges'].value):,}"
    assert fields["gguf version"] == str(gf.version) and fields["tokenizer"].startswith("gpt2 (BPE")


def test_no_arguments_start_the_app(monkeypatch: pytest.MonkeyPatch, char_model_path: Path) -> None:
    import tokenprism.app.qt.main_window as mw

    calls: list[list[str]] = []
    monkeypatch.setattr(mw, "run_gui", lambda paths: calls.append(paths) or 0)
    monkeypatch.setenv("QT_QPA_PLATFORM", "offscreen")  # a display, as far as the check goes
    p = str(char_model_path)
    assert main([]) == 0 and calls == [[]]
    assert main([p]) == 0 and calls[-1] == [p]
    assert main(["gui", p, p]) == 0 and calls[-1] == [p, p]


@pytest.mark.parametrize("argv", [["tokenize", "m.gguf", "x", "--format", "xml"], ["tokenize"],
                                  ["compare", "a.gguf", "--bogus"], ["--nope"], ["decode", "m.gguf"]])
def test_usage_errors_are_one_line(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, *argv)
    assert code == 2 and out == ""
    assert err.startswith("tokenprism: error: ") and err.count("\n") == 1 and "usage:" not in err


def test_compare_two_models_from_a_file(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    from tokenprism.core import open_model
    from tokenprism.core.library.resources import demo_models

    paths = [demo_models()["bpe"], demo_models()["spm"]]
    text = "Hello wörld, 日本 tokens\nsecond line"
    f = tmp_path / "text.txt"
    f.write_text(text, "utf-8")
    code, out, _ = run(capsys, "compare", *map(str, paths), "--file", str(f))
    assert code == 0
    rows = out.strip().splitlines()[1:]
    assert len(rows) == 2
    counts = []
    for path, row in zip(paths, rows):
        model = open_model(path)
        n = len(model.encode(text).ids)
        counts.append(n)
        cells = row.split()
        assert cells[-6:-2][0] == str(n), row
        assert cells[-6:-2][2:] == [f"{len(text) / n:.3f}", f"{len(text.encode()) / n:.3f}"], row
        assert model.config.kind in cells
    assert counts[0] != counts[1]  # two models that really cut differently
    second = rows[1].split()[-5]
    assert second == f"{(counts[1] - counts[0]) / counts[0]:+.0%}"


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="counts the threads in /proc")
def test_the_command_line_starts_no_blas_threads() -> None:
    """numpy's OpenBLAS starts a thread per core that spins for ~50 ms of
    CPU at start-up; nothing in TokenPrism calls BLAS, so the entry point
    asks for one thread (unless the user set a number)."""
    code = (
        "import os, numpy.linalg\n"  # (numpy.linalg: where OpenBLAS is loaded)
        "print(len(os.listdir('/proc/self/task')), os.environ.get('OPENBLAS_NUM_THREADS'))\n"
    )
    env = {k: v for k, v in os.environ.items() if k not in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS")}
    bare = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env)
    ours = subprocess.run([sys.executable, "-c", "import tokenprism.app.cli\n" + code], capture_output=True,
                          text=True, check=True, env=env)
    mine = subprocess.run([sys.executable, "-c", "import tokenprism.app.cli\n" + code], capture_output=True,
                          text=True, check=True, env=dict(env, OPENBLAS_NUM_THREADS="2"))
    assert ours.stdout.split() == ["1", "1"]
    if (os.cpu_count() or 1) > 1:
        assert int(bare.stdout.split()[0]) > 1  # what it spares: without it, OpenBLAS's threads
    assert mine.stdout.split()[1] == "2"  # the user's own setting stands
