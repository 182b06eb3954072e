"""The bundled demo models: present, small, usable, faithful to the trainer
libraries, and reproducible from ``resources/build_demo_models.py``."""

from __future__ import annotations

import json
import subprocess
import sys
from importlib.metadata import version
from pathlib import Path

import pytest

from tokenprism.core import Attr, Model, open_model
from tokenprism.core.errors import UnsupportedTokenizerError
from tokenprism.core.library.resources import DEMO_MODELS, demo_models, resource_path, welcome_text

RESOURCES = Path(__file__).resolve().parents[1] / "resources"
TRAINED = RESOURCES / "trained"
BUILD_SCRIPT = RESOURCES / "build_demo_models.py"
KINDS = {"spm": "SPM", "bpe": "BPE", "ugm": "UGM", "wpm": "WPM"}
MAX_BYTES = 1 << 20


def open_or_skip(path: Path) -> Model:
    try:
        return open_model(path)
    except UnsupportedTokenizerError as e:
        pytest.skip(f"tokenizer plugin not available yet: {e}")


def sample_texts() -> list[str]:
    corpus = (RESOURCES / "demo_corpus.txt").read_text(encoding="utf-8")
    return [welcome_text(), *welcome_text().splitlines(), *corpus.splitlines()[:60],
            "Plain words, 1234 numbers, café, naïve, 🙂 and 日本語 together."]


def test_resource_lookup() -> None:
    models = demo_models()
    assert list(models) == list(DEMO_MODELS) == list(KINDS)
    for kind, path in models.items():
        assert path.name == f"demo-{kind}.gguf" and path.is_file()
    welcome = resource_path("welcome.txt")
    assert welcome is not None and welcome.read_text(encoding="utf-8") == welcome_text()
    assert resource_path("no-such-file.txt") is None
    for bad in ("../README.md", "/etc/passwd", ""):
        with pytest.raises(ValueError):
            resource_path(bad)


@pytest.mark.parametrize("kind", list(KINDS))
def test_demo_model_opens_and_tokenizes_welcome(kind: str) -> None:
    path = demo_models()[kind]
    assert path.stat().st_size <= MAX_BYTES
    model = open_or_skip(path)
    assert model.kind == KINDS[kind] and "demo" in model.name.lower()
    text = welcome_text()
    enc = model.encode(text, add_special=True)
    assert len(enc.ids) > 100 and all(0 <= i < len(model) for i in enc.ids)
    if kind in ("spm", "bpe"):  # byte fallback / byte-level: nothing is lost
        assert model.decode(model.encode(text).ids) == text


def test_spm_demo_shows_byte_fallback() -> None:
    model = open_or_skip(demo_models()["spm"])
    enc = model.encode(welcome_text())
    byte_ids = [i for i in enc.ids if model.vocab.attrs[i] & Attr.BYTE]
    assert len(byte_ids) > 50
    # 🙂 is four byte tokens that share one group and one character span
    line = "x 🙂 y"
    e = model.encode(line)
    tokens = [e.token(i) for i in range(len(e.ids)) if model.vocab.attrs[e.ids[i]] & Attr.BYTE]
    assert len(tokens) == 4 and len({t.group for t in tokens}) == 1
    assert {(t.start, t.end) for t in tokens} == {(2, 3)}


def test_welcome_text_needs_byte_fallback() -> None:
    # what welcome.txt promises holds only while these characters stay out
    # of the training text
    corpus = set((RESOURCES / "demo_corpus.txt").read_text(encoding="utf-8"))
    for ch in "🙂日本語żłï":
        assert ch in welcome_text() and ch not in corpus


@pytest.mark.parametrize("kind", ["spm", "ugm"])
def test_ids_equal_sentencepiece(kind: str) -> None:
    spm = pytest.importorskip("sentencepiece")
    model = open_or_skip(demo_models()[kind])
    sp = spm.SentencePieceProcessor(model_file=str(TRAINED / f"demo-{kind}.model"))
    for text in sample_texts():
        assert list(model.encode(text).ids) == sp.encode(text), text


@pytest.mark.parametrize("kind", ["bpe", "wpm"])
def test_ids_equal_tokenizers(kind: str) -> None:
    tokenizers = pytest.importorskip("tokenizers")
    model = open_or_skip(demo_models()[kind])
    tok = tokenizers.Tokenizer.from_file(str(TRAINED / f"demo-{kind}" / "tokenizer.json"))
    for text in sample_texts():
        # tokenizers always splits out special-token text; llama.cpp with parse_special
        for add in (False, True):
            ours = list(model.encode(text, add_special=add, parse_special=True).ids)
            assert ours == tok.encode(text, add_special_tokens=add).ids, (text, add)


def _build(out: Path) -> None:
    proc = subprocess.run([sys.executable, str(BUILD_SCRIPT), "--out", str(out)],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr


def _files(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def test_build_script_is_deterministic(tmp_path: Path) -> None:
    pytest.importorskip("sentencepiece")
    pytest.importorskip("tokenizers")
    # two separate processes: tokenizers' hash maps are seeded per process
    _build(tmp_path / "a")
    _build(tmp_path / "b")
    a, b = _files(tmp_path / "a"), _files(tmp_path / "b")
    assert a.keys() == b.keys() and len(a) == 11
    assert [k for k in a if a[k] != b[k]] == []

    info = json.loads((TRAINED / "BUILD_INFO.json").read_text(encoding="utf-8"))
    have = {pkg: version(pkg) for pkg in info["versions"]}
    if have != info["versions"]:
        pytest.skip(f"committed demo models were built with {info['versions']}, installed: {have}")
    committed = {name: (RESOURCES / name).read_bytes() for name in info["sha256"]}
    committed["trained/BUILD_INFO.json"] = (TRAINED / "BUILD_INFO.json").read_bytes()
    stale = [name for name, data in committed.items() if a[name] != data]
    assert stale == [], "committed files differ from a fresh build: run resources/build_demo_models.py"
