"""Broken and hostile GGUF files on the command line: one printable line on
stderr naming the file (for a damaged file, what that means, and the detail
on a second line), a non-zero exit, never a traceback."""

from __future__ import annotations

import random
import struct
from pathlib import Path

import pytest

from tests.reliability.fuzzing import KV, build, mutate, parse_kvs, structured_mutation
from tokenprism.app.cli import main
from tokenprism.core import GGUFError, open_model


def hostile_files(folder: Path, count: int, seed: int) -> list[Path]:
    """Mutated demo models that open_model rejects (byte-level and
    structured faults), plus keys and values full of control characters."""
    from tokenprism.core.library.resources import demo_models

    rng = random.Random(seed)
    sources = [p.read_bytes() for p in demo_models().values()]
    out: list[Path] = []
    attempts = 0
    while len(out) < count and attempts < count * 20:
        attempts += 1
        data = rng.choice(sources)
        mutated, _ = mutate(data, rng) if rng.random() < 0.5 else structured_mutation(data, rng)
        p = folder / f"hostile-{len(out)}.gguf"
        p.write_bytes(mutated)
        try:
            open_model(p)
        except GGUFError:
            out.append(p)
    # a key name and a string value made to mess up a terminal
    head, kvs = parse_kvs(sources[0])
    evil = b"tokenizer.ggml.\x1b[31mred\nsecond line\r\x07"
    kvs = [KV(evil if kv.key.endswith(b".tokens") else kv.key, kv.vtype, kv.payload) for kv in kvs]
    p = folder / "evil-key.gguf"
    p.write_bytes(build(head, kvs))
    out.append(p)
    head, kvs = parse_kvs(sources[0])
    for kv in kvs:
        if kv.key == b"tokenizer.ggml.model":
            kv.payload = struct.pack("<Q", 12) + b"x\n\x1b[2Jbad\ty\x00"
    p = folder / "evil-model.gguf"
    p.write_bytes(build(head, kvs))
    out.append(p)
    # a hostile key name that the reader's error names: duplicated, and
    # holding a value of an unknown type
    hostile_key = b"evil\nsecond\x1b[31m"
    head, kvs = parse_kvs(sources[0])
    kvs += [KV(hostile_key, 4, struct.pack("<I", 1)), KV(hostile_key, 4, struct.pack("<I", 2))]
    p = folder / "evil-duplicate-key.gguf"
    p.write_bytes(build(head, kvs))
    out.append(p)
    head, kvs = parse_kvs(sources[0])
    kvs.insert(0, KV(hostile_key, 99, b""))
    p = folder / "evil-key-type.gguf"
    p.write_bytes(build(head, kvs))
    out.append(p)
    return out


@pytest.fixture(scope="module")
def hostile(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    return hostile_files(tmp_path_factory.mktemp("hostile"), 40, seed=5)


@pytest.mark.parametrize("command", [["tokenize", "{}", "some text"], ["info", "{}"], ["decode", "{}", "1 2"]])
def test_cli_reports_one_line_and_fails(command: list[str], hostile: list[Path],
                                        capsys: pytest.CaptureFixture[str]) -> None:
    assert len(hostile) >= 40
    for path in hostile:
        code = main([a.replace("{}", str(path)) for a in command])
        out = capsys.readouterr()
        assert code != 0, path.name
        err = out.err
        lines = err.splitlines()
        assert err.endswith("\n") and len(lines) in (1, 2), f"{path.name}: {err!r}"
        assert lines[0].startswith("tokenprism: error: ") and path.name in lines[0], lines[0]
        if len(lines) == 2:  # the meaning first, the detail below it
            assert lines[0].endswith(f"{path.name}: the file looks truncated or damaged"), lines
            assert lines[1].startswith("  ") and not lines[1].startswith("   "), lines
        for line in lines:
            assert line.isprintable() and len(line) < 500, f"{path.name}: {line!r}"
        assert "Traceback" not in err and out.out == ""
    evil = [p for p in hostile if p.name.startswith("evil-") and "key" in p.name]
    assert len(evil) == 3


def test_hostile_key_name_is_escaped(hostile: list[Path], capsys: pytest.CaptureFixture[str]) -> None:
    for name in ("evil-duplicate-key.gguf", "evil-key-type.gguf"):
        [path] = [p for p in hostile if p.name == name]
        assert main(["info", str(path)]) == 1
        err = capsys.readouterr().err
        # the key is named, escaped, on the detail line below the meaning
        first, detail = err.splitlines()
        assert first.endswith(": the file looks truncated or damaged"), err
        assert "evil\\nsecond\\x1b[31m" in detail and err.count("\n") == 2 and "\x1b" not in err, err
