"""``tokenprism stats`` (the command-line face of the corpus profiler).

Beside the other command-line tests (tests/core/test_cli*.py), not in
tests/app: it needs no Qt."""

from __future__ import annotations

import importlib.util
import io
import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.refdata import vocab_path
from tokenprism.app.cli import main
from tokenprism.core import open_model

pytest.importorskip("matplotlib")

TEXT_A = "Hello corpus world.\nПривет, мир!\n"
TEXT_B = "東京は大きい。 second file\n"


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


@pytest.fixture()
def corpus(tmp_path: Path) -> Path:
    root = tmp_path / "texts"
    root.mkdir()
    (root / "a.txt").write_text(TEXT_A, encoding="utf-8")
    (root / "b.md").write_text(TEXT_B, encoding="utf-8")
    return root


def test_json_report(capsys: pytest.CaptureFixture[str], corpus: Path) -> None:
    gpt2, spm = vocab_path("gpt-2"), vocab_path("llama-spm")
    code, out, err = run(capsys, "stats", str(corpus), "--model", gpt2, "-m", spm, "--format", "json",
                         "--scheduler", "synchronous")
    assert code == 0 and err == ""
    data = json.loads(out)
    assert data["files"] == 2 and data["bytes"] == len((TEXT_A + TEXT_B).encode("utf-8"))
    assert data["skipped"] == [] and data["complete"] is True
    for entry, path in zip(data["models"], (gpt2, spm)):
        model = open_model(path)
        assert entry["tokens"] == len(model.encode(TEXT_A)) + len(model.encode(TEXT_B))
        assert entry["path"] == path
    assert data["models"][0]["tokens_vs_first"] == 1.0


def test_out_file_only(capsys: pytest.CaptureFixture[str], corpus: Path, tmp_path: Path) -> None:
    """--out writes that one file (format from its extension), atomically,
    and nothing beside the user's texts."""
    before = sorted(os.listdir(corpus))
    out_dir = tmp_path / "reports"
    out_dir.mkdir()
    target = out_dir / "r.html"
    code, out, err = run(capsys, "stats", str(corpus), "--model", vocab_path("gpt-2"), "--out", str(target),
                         "--scheduler", "synchronous")
    assert code == 0 and out == "" and err == ""
    page = target.read_text("utf-8")
    assert page.startswith("<!DOCTYPE html>") and page.count("<svg") == 3
    assert sorted(os.listdir(out_dir)) == ["r.html"] and sorted(os.listdir(corpus)) == before
    code, _out, _err = run(capsys, "stats", str(corpus), "-m", vocab_path("gpt-2"), "-o", str(out_dir / "r.csv"),
                           "--scheduler", "synchronous")
    assert code == 0 and (out_dir / "r.csv").read_text().startswith("model,path,script,tokens")


def test_stdin(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(TEXT_A.encode("utf-8"))))
    code, out, _err = run(capsys, "stats", "-", "-m", vocab_path("bert-bge"), "--format", "json",
                          "--scheduler", "synchronous")
    assert code == 0
    assert json.loads(out)["models"][0]["tokens"] == len(open_model(vocab_path("bert-bge")).encode(TEXT_A))


def test_missing_extra_is_one_line(capsys: pytest.CaptureFixture[str], corpus: Path,
                                   monkeypatch: pytest.MonkeyPatch) -> None:
    real = importlib.util.find_spec

    def find_spec(name: str, *a: Any, **kw: Any) -> Any:
        return None if name == "distributed" else real(name, *a, **kw)

    monkeypatch.setattr(importlib.util, "find_spec", find_spec)
    code, out, err = run(capsys, "stats", str(corpus), "-m", vocab_path("gpt-2"))
    assert code == 1 and out == ""
    assert err.count("\n") == 1 and "pip install tokenprism[corpus]" in err


@pytest.mark.parametrize(("args", "message"), [
    (["--workers", "0"], "must be a whole number, at least 1"),
    (["--limit-bytes", "lots"], "not a number of bytes"),
])
def test_bad_options(capsys: pytest.CaptureFixture[str], corpus: Path, args: list[str], message: str) -> None:
    code, _out, err = run(capsys, "stats", str(corpus), "-m", vocab_path("gpt-2"), *args)
    assert code == 2 and message in err


def test_limit_bytes_with_unit(capsys: pytest.CaptureFixture[str], corpus: Path) -> None:
    code, out, _err = run(capsys, "stats", str(corpus / "a.txt"), "-m", vocab_path("gpt-2"), "--limit-bytes", "1kB",
                          "--format", "json", "--scheduler", "synchronous")
    assert code == 0 and json.loads(out)["limit_bytes"] == 1000


def test_missing_model(capsys: pytest.CaptureFixture[str], corpus: Path) -> None:
    code, _out, err = run(capsys, "stats", str(corpus), "-m", str(corpus / "nope.gguf"))
    assert code == 1 and "nope.gguf: no such model file" in err


def test_failed_partition_is_reported(capsys: pytest.CaptureFixture[str], corpus: Path,
                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """A partition that cannot be counted is listed, warned about, and the
    exit status says the report is incomplete."""
    from tokenprism.core.corpus import worker

    real = worker.count_document

    def fail_on_b(stats: Any, models: Any, chunks: Any, doc: str, **kw: Any) -> None:
        if doc.endswith("b.md"):
            raise MemoryError("out of memory in this test")
        real(stats, models, chunks, doc, **kw)

    monkeypatch.setattr(worker, "count_document", fail_on_b)
    gpt2 = vocab_path("gpt-2")
    code, out, err = run(capsys, "stats", str(corpus), "-m", gpt2, "--format", "json", "--scheduler", "synchronous")
    assert code == 1
    data = json.loads(out)
    assert data["complete"] is False and len(data["missing"]) == 1
    # both small files share a partition: it is missing as a whole, and said so
    assert data["missing"][0]["files"] == f"{corpus / 'a.txt'}, {corpus / 'b.md'}"
    assert "MemoryError" in data["missing"][0]["reason"]
    assert data["models"][0]["tokens"] == 0
    assert "not counted: MemoryError: out of memory in this test" in err


def test_nothing_to_count(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """Only skipped files: the report says why, and no cluster is started."""
    (tmp_path / "blob.bin").write_bytes(b"\0\1\2" * 100)
    code, out, _err = run(capsys, "stats", str(tmp_path), "-m", vocab_path("gpt-2"), "--format", "json")
    data = json.loads(out)
    assert code == 0 and data["files"] == 0 and data["engine"] == "synchronous"
    assert data["skipped"] == [{"path": str(tmp_path / "blob.bin"), "reason": "binary"}]
