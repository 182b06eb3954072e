"""A fake home folder with models where each tool keeps them, for the
discovery tests (core and app). Real small GGUF files: copies of the
bundled demo models; plus junk that a scan must ignore."""

from __future__ import annotations

import hashlib
import io
import json
import os
import shutil
import struct
import tarfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tokenprism.core.library.resources import demo_models

OLLAMA_DIGEST = "sha256:" + "ab" * 32
TEMPLATE_DIGEST = "sha256:" + "cd" * 32
UNNAMED_DIGEST = "sha256:" + "ef" * 32
HF_BLOB = "0f" * 32
SDIST_MODELS = "llama_cpp_python-0.3.36/vendor/llama.cpp/models/"


@dataclass(frozen=True)
class Expected:
    """Name → (source, tokenizer, vocab size) of every model the fake home holds."""

    models: dict[str, tuple[str, str, int]]
    junk: tuple[Path, ...]


def _s(text: str) -> bytes:
    b = text.encode("utf-8")
    return struct.pack("<Q", len(b)) + b


def raw_gguf(kv: list[tuple[str, object]], tail: bytes = b"") -> bytes:
    """GGUF v3 bytes with string, uint32 and ("tokens", n) values; ``tail``
    follows the last value (so a token array can be left unwritten)."""
    out = b"GGUF" + struct.pack("<IQQ", 3, 0, len(kv))
    for key, value in kv:
        out += _s(key)
        if isinstance(value, str):
            out += struct.pack("<I", 8) + _s(value)
        elif isinstance(value, int):
            out += struct.pack("<II", 4, value)
        elif isinstance(value, tuple) and value[0] == "tokens":
            out += struct.pack("<IIQ", 9, 8, value[1])
            out += b"".join(_s(f"t{i}") for i in range(value[2] if len(value) > 2 else value[1]))
    return out + tail


def _copy(src: Path, dst: Path) -> Path:
    dst.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(src, dst)
    return dst


def build_linux_home(home: Path) -> Expected:
    """Every tool's default Linux layout under ``home``."""
    demo = demo_models()
    spm, bpe, ugm, wpm = demo["spm"], demo["bpe"], demo["ugm"], demo["wpm"]
    models: dict[str, tuple[str, str, int]] = {}
    junk: list[Path] = []

    # Hugging Face hub cache: two revisions link the same blob; README is not GGUF
    repo = home / ".cache" / "huggingface" / "hub" / "models--TheOrg--Tiny-GGUF"
    blob = _copy(spm, repo / "blobs" / HF_BLOB)
    (repo / "blobs" / ("11" * 32)).write_text("# Tiny GGUF\n")
    (repo / "blobs" / ("22" * 32 + ".incomplete")).write_bytes(spm.read_bytes()[:100])
    for rev in ("a" * 40, "b" * 40):
        snap = repo / "snapshots" / rev
        (snap / "quant").mkdir(parents=True)
        os.symlink(os.path.relpath(blob, snap / "quant"), snap / "quant" / "tiny-spm-Q4_K_M.gguf")
        os.symlink(os.path.relpath(repo / "blobs" / ("11" * 32), snap), snap / "README.md")
    os.symlink("../../blobs/" + "99" * 32, repo / "snapshots" / ("a" * 40) / "gone.gguf")  # dangling
    junk.append(repo / "snapshots" / ("a" * 40) / "gone.gguf")
    models["TheOrg/Tiny-GGUF/quant/tiny-spm-Q4_K_M.gguf"] = ("Hugging Face", "llama", 1500)

    # llama.cpp's cache: flat org_repo_file names with etag json beside them
    cache = home / ".cache" / "llama.cpp"
    _copy(bpe, cache / "someorg_tiny-bpe_demo-bpe.gguf")
    (cache / "someorg_tiny-bpe_demo-bpe.gguf.json").write_text('{"etag": "x"}')
    models["someorg_tiny-bpe_demo-bpe.gguf"] = ("llama.cpp", "gpt2", 1000)

    # LM Studio: publisher/model/file, plus junk
    lms = home / ".lmstudio" / "models"
    _copy(ugm, lms / "lmstudio-community" / "demo-ugm" / "demo-ugm.gguf")
    models["lmstudio-community/demo-ugm/demo-ugm.gguf"] = ("LM Studio", "t5", 800)
    bad = lms / "junk" / "not-a-model.gguf"
    bad.parent.mkdir(parents=True)
    bad.write_text("this is not a GGUF file, only its name says so\n")
    trunc = lms / "junk" / "truncated.gguf"
    trunc.write_bytes(wpm.read_bytes()[:200])
    os.symlink(lms / "nowhere.gguf", lms / "junk" / "dangling.gguf")
    (lms / "junk" / "notes.txt").write_text("GGUF")  # right magic, wrong name: not a model file
    junk += [bad, trunc, lms / "junk" / "dangling.gguf", lms / "junk" / "notes.txt"]
    # the old LM Studio folder holds a projector (a GGUF without tokenizer) and a later shard
    old = home / ".cache" / "lm-studio" / "models" / "pub" / "vision"
    old.mkdir(parents=True)
    (old / "mmproj.gguf").write_bytes(raw_gguf([("general.architecture", "clip"), ("general.name", "proj")]))
    models["pub/vision/mmproj.gguf"] = ("LM Studio", "", 0)
    (old / "big-00002-of-00002.gguf").write_bytes(raw_gguf([("general.architecture", "llama"), ("split.no", 1)]))
    junk.append(old / "big-00002-of-00002.gguf")

    # GPT4All's download folder
    g4a = _copy(wpm, home / ".local" / "share" / "nomic.ai" / "GPT4All" / "demo-wpm.gguf")
    models["demo-wpm.gguf"] = ("GPT4All", "bert", 1000)

    # ollama: a model blob named by its manifest, a template blob, an unnamed GGUF blob
    store = home / ".ollama" / "models"
    _copy(bpe, store / "blobs" / OLLAMA_DIGEST.replace(":", "-"))
    (store / "blobs" / TEMPLATE_DIGEST.replace(":", "-")).write_text("{{ .Prompt }}")
    _copy(spm, store / "blobs" / UNNAMED_DIGEST.replace(":", "-"))
    manifest = store / "manifests" / "registry.ollama.ai" / "library" / "tinybpe" / "latest"
    manifest.parent.mkdir(parents=True)
    manifest.write_text(json.dumps({"schemaVersion": 2, "layers": [
        {"mediaType": "application/vnd.ollama.image.model", "digest": OLLAMA_DIGEST, "size": bpe.stat().st_size},
        {"mediaType": "application/vnd.ollama.image.template", "digest": TEMPLATE_DIGEST, "size": 13},
        {"mediaType": "application/vnd.ollama.image.model", "digest": "sha256:../../../etc/passwd"},
    ]}))
    junk.append(store / "blobs" / TEMPLATE_DIGEST.replace(":", "-"))
    models["tinybpe:latest"] = ("ollama", "gpt2", 1000)
    models[UNNAMED_DIGEST.replace(":", "-")[:19] + "… (unnamed blob)"] = ("ollama", "llama", 1500)

    # the same GPT4All file reached again through a symlinked folder: listed once
    extra = home / "my-models"
    extra.mkdir()
    os.symlink(g4a.parent, extra / "gpt4all-link")
    _copy(spm, extra / "mine" / "my-spm.gguf")
    models["mine/my-spm.gguf"] = ("Folder", "llama", 1500)
    return Expected(models, tuple(junk))


# ---- a fake llama-cpp-python sdist ----------------------------------------------------------------

def add_member(tar: tarfile.TarFile, name: str, data: bytes = b"", **attrs: Any) -> None:
    info = tarfile.TarInfo(name)
    info.size = len(data)
    for k, v in attrs.items():
        setattr(info, k, v)
    tar.addfile(info, io.BytesIO(data) if data else None)


def make_sdist(path: Path, *, hostile: bool = True, vocab: bytes | None = None) -> tuple[Path, str]:
    """A small sdist like the real one: two vocabs with cases, other files,
    and (``hostile``) members that must never be written."""
    spm = vocab if vocab is not None else demo_models()["spm"].read_bytes()
    with tarfile.open(path, "w:gz") as tar:
        add_member(tar, "llama_cpp_python-0.3.36/PKG-INFO", b"Name: llama_cpp_python\n")
        add_member(tar, SDIST_MODELS + "ggml-vocab-tiny-spm.gguf", spm)
        add_member(tar, SDIST_MODELS + "ggml-vocab-tiny-spm.gguf.inp", b"Hello\n__ggml_vocab_test__\n")
        add_member(tar, SDIST_MODELS + "ggml-vocab-tiny-spm.gguf.out", b" 1 2\n")
        add_member(tar, SDIST_MODELS + "ggml-vocab-tiny-bpe.gguf", demo_models()["bpe"].read_bytes())
        add_member(tar, SDIST_MODELS + "templates/chat.jinja", b"{{ x }}")
        add_member(tar, "llama_cpp_python-0.3.36/vendor/llama.cpp/other/ggml-vocab-elsewhere.gguf", spm)
        if hostile:
            add_member(tar, SDIST_MODELS + "../../../../escape/ggml-vocab-evil.gguf", spm)
            add_member(tar, "/abs/vendor/llama.cpp/models/ggml-vocab-abs.gguf", spm)
            add_member(tar, SDIST_MODELS + "ggml-vocab-link.gguf", type=tarfile.SYMTYPE, linkname="/etc/passwd")
            add_member(tar, SDIST_MODELS + "ggml-vocab-hard.gguf", type=tarfile.LNKTYPE,
                 linkname=SDIST_MODELS + "ggml-vocab-tiny-spm.gguf")
            add_member(tar, SDIST_MODELS + "ggml-vocab-dir.gguf", type=tarfile.DIRTYPE)
    return path, hashlib.sha256(path.read_bytes()).hexdigest()
