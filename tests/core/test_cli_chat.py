"""``tokenprism chat`` and ``tokenprism chunk``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tokenprism.app.cli import main
from tokenprism.core import open_model
from tests.refdata import vocab_path


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


def _write(tmp_path: Path, name: str, data: object) -> str:
    path = tmp_path / name
    path.write_text(data if isinstance(data, str) else json.dumps(data), encoding="utf-8")
    return str(path)


MESSAGES = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Grüße 🙂"}]


def test_chat_json(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    qwen2 = vocab_path("qwen2")
    msgs = _write(tmp_path, "m.json", MESSAGES)
    # options anywhere
    code, out, err = run(capsys, "chat", "--format", "json", qwen2, "--add-generation-prompt", "--messages", msgs)
    assert code == 0 and err == ""
    data = json.loads(out)
    assert {"rendered", "ids", "tokens", "messages", "total", "context_length", "template"} <= set(data)
    assert data["rendered"] == ("<|im_start|>system\nBe brief.<|im_end|>\n<|im_start|>user\nGrüße 🙂<|im_end|>\n"
                                "<|im_start|>assistant\n")
    assert data["ids"] == open_model(qwen2).encode(data["rendered"], parse_special=True).ids
    assert data["total"] == len(data["ids"]) == len(data["tokens"])
    assert data["template"] == "default" and data["context_length"] == 32768
    assert [m["role"] for m in data["messages"]] == ["system", "user"]
    for t in data["tokens"]:
        assert set(t) >= {"id", "piece", "text", "start", "end", "origin", "message"}
        assert t["origin"] in ("template", "special", "message")
        assert (t["message"] is None) == (t["origin"] != "message")
    assert sum(m["tokens"] for m in data["messages"]) == sum(t["origin"] == "message" for t in data["tokens"])
    # "text" reads as the tokenize command's pieces do; "piece" is the raw byte-level string
    user = [(t["piece"], t["text"]) for t in data["tokens"] if t["message"] == 1]
    assert user == [("Gr", "Gr"), ("Ã¼", "ü"), ("ÃŁe", "ße"), ("ĠðŁĻĤ", " 🙂")]
    code, out, _ = run(capsys, "tokenize", qwen2, "--format", "pieces", "Grüße 🙂")
    assert [line.split(" -> ")[1] for line in out.splitlines()] == [repr(text) for _, text in user]
    code, out, _ = run(capsys, "chat", qwen2, "--messages", msgs, "--context-length", "100")
    assert code == 0 and f"of 100 context ({data['total'] - 3}.0%)" in out  # without the generation prompt
    user = [t for t in data["tokens"] if t["message"] == 1]
    assert data["rendered"][user[0]["start"]:user[-1]["end"]] == "Grüße 🙂"


def test_chat_object_file_named_template_ids_and_text(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    command_r = vocab_path("command-r")
    conv = _write(tmp_path, "c.json", {"messages": MESSAGES[1:],
                                       "documents": [{"title": "T", "text": "Penguins are tall."}]})
    code, out, _ = run(capsys, "chat", command_r, "--messages", conv, "--template", "rag", "--format", "ids")
    assert code == 0 and out.startswith("[5, ")
    code, out, _ = run(capsys, "chat", command_r, "--messages", conv, "--template", "rag")
    assert code == 0 and "Penguins are tall." in out and "template: rag (file)" in out
    assert " context (" in out  # the share of the file's context length
    code, out, _ = run(capsys, "chat", command_r, "--list-templates")
    assert code == 0 and [line.split("\t")[0] for line in out.splitlines()[:3]] == ["default", "rag", "tool_use"]
    # BOS doubled: a warning on stderr
    code, out, err = run(capsys, "chat", command_r, "--messages", conv, "--template", "rag", "--add-special",
                         "--format", "ids")
    assert code == 0 and out.startswith("[5, 5, ") and "warning" in err and "twice" in err


def test_chat_template_file_and_tools(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    spm = vocab_path("llama-spm")
    msgs = _write(tmp_path, "m.json", MESSAGES)
    tools = _write(tmp_path, "t.json", [{"type": "function", "function": {"name": "f"}}])
    tpl = _write(tmp_path, "x.jinja", "{% for t in tools %}{{ t.function.name }};{% endfor %}"
                                      "{% for m in messages %}{{ m.content }}|{% endfor %}")
    code, out, _ = run(capsys, "chat", spm, "--messages", msgs, "--template-file", tpl, "--tools", tools,
                       "--format", "json")
    data = json.loads(out)
    assert code == 0 and data["rendered"] == "f;Be brief.|Grüße 🙂|" and data["template"] == "x.jinja"


@pytest.mark.parametrize("content, message", [
    ("not json", "is not JSON"),
    (json.dumps([{"role": "wizard", "content": "x"}]), "unknown role 'wizard'"),
    (json.dumps([{"role": "user", "content": 3}]), "content must be a string"),
    (json.dumps({"msgs": []}), "no \"messages\""),
])
def test_chat_bad_messages(capsys: pytest.CaptureFixture[str], tmp_path: Path, content: str, message: str) -> None:
    code, out, err = run(capsys, "chat", vocab_path("qwen2"), "--messages", _write(tmp_path, "m.json", content))
    assert code == 1 and out == ""
    assert len(err.splitlines()) == 1 and message in err


def test_chat_errors(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    msgs = _write(tmp_path, "m.json", MESSAGES)
    for argv, message in [
        (["chat", vocab_path("llama-spm"), "--messages", msgs], "has no chat template"),
        (["chat", vocab_path("qwen2"), "--messages", msgs, "--template", "nope"], "no template 'nope'"),
        (["chat", vocab_path("qwen2"), "--messages", str(tmp_path / "missing.json")], "missing.json"),
        (["chat", vocab_path("qwen2"), "--messages", msgs, "--template-file",
          _write(tmp_path, "h.jinja", "a\n{{ ''.__class__.__mro__ }}")], "template line 2: sandbox"),
        (["chat", vocab_path("qwen2")], "--messages"),
    ]:
        code, _, err = run(capsys, *argv)
        assert code == 1 and len(err.splitlines()) == 1 and message in err, (argv, err)


def test_chunk(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    text = "Grüße aus Köln! 🙂 " * 30
    path = _write(tmp_path, "t.txt", text)
    code, out, _ = run(capsys, "chunk", vocab_path("llama-spm"), "--file", path, "--max-tokens", "16")
    assert code == 0
    rows = [json.loads(line) for line in out.splitlines()]
    assert "".join(r["text"] for r in rows) == text
    assert all(r["tokens"] <= 16 for r in rows) and rows[0]["start"] == 0 and rows[-1]["end"] == len(text)
    code, out, _ = run(capsys, "chunk", "--format", "text", vocab_path("llama-spm"), "-f", path, "-n", "16",
                       "--overlap", "4")
    assert code == 0 and out.startswith("----- piece 0: characters 0..")
    code, _, err = run(capsys, "chunk", vocab_path("llama-spm"), "--file", path, "--max-tokens", "0")
    assert code == 1 and "at least 1" in err


def test_chat_documents_file_and_what_a_named_template_needs(capsys: pytest.CaptureFixture[str],
                                                            tmp_path: Path) -> None:
    command_r = vocab_path("command-r")
    msgs = _write(tmp_path, "m.json", MESSAGES[1:])
    for name, needs in [("rag", "documents"), ("tool_use", "tools")]:
        code, out, err = run(capsys, "chat", command_r, "--messages", msgs, "--template", name)
        assert code == 1 and out == "" and len(err.splitlines()) == 1
        assert f"the template '{name}' needs {needs}, which" in err and f"give --{needs} FILE" in err, err
    docs = _write(tmp_path, "d.json", [{"title": "Atlas", "text": "Oslo is in Norway."}])
    code, out, err = run(capsys, "chat", command_r, "--messages", msgs, "--template", "rag", "--documents", docs,
                         "--format", "json")
    assert code == 0 and err == "" and "Oslo is in Norway." in json.loads(out)["rendered"]
    code, _, err = run(capsys, "chat", command_r, "--messages", msgs, "--template", "rag", "--documents",
                       _write(tmp_path, "bad.json", {"title": "x"}))
    assert code == 1 and "documents must be a JSON list" in err
