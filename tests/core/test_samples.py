"""``tokenprism samples`` (core/library/samples.py): download, verify and unpack the
reference vocabs. No network: a fake sdist is built in tmp_path and served
from a file:// URL or an injected opener."""

from __future__ import annotations

import hashlib
import io
import json
import tarfile
import sys
import urllib.error
from pathlib import Path
from typing import Any, Callable

import pytest

from tests.fakehome import add_member as _add, make_sdist
from tests.refdata import LLAMA_SDIST
from tokenprism.app.cli import main
from tokenprism.core.library import samples
from tokenprism.core.library.discovery import peek_gguf
from tokenprism.core.library.resources import demo_models
from tokenprism.core.library.samples import (MANIFEST, SamplesError, default_samples_dir, download, extract_vocabs,
                                     fetch_samples, installed_files)

REAL_SDIST = LLAMA_SDIST or Path("/nonexistent/llama_cpp_python-0.3.36.tar.gz")


def test_fetch_from_a_file_url(tmp_path: Path) -> None:
    sdist, sha = make_sdist(tmp_path / "sdist.tar.gz")
    dest = tmp_path / "data" / "llama-vocab"
    seen: list[tuple[int, int]] = []
    report = fetch_samples(dest, url=sdist.as_uri(), sha256=sha, progress=lambda d, t: seen.append((d, t)))
    assert report.downloaded
    assert report.files == ("ggml-vocab-tiny-bpe.gguf", "ggml-vocab-tiny-spm.gguf",
                            "ggml-vocab-tiny-spm.gguf.inp", "ggml-vocab-tiny-spm.gguf.out")
    assert sorted(p.name for p in dest.iterdir()) == sorted([*report.files, MANIFEST])
    assert (dest / "ggml-vocab-tiny-spm.gguf").read_bytes() == demo_models()["spm"].read_bytes()
    assert peek_gguf(dest / "ggml-vocab-tiny-bpe.gguf").tokenizer == "gpt2"  # type: ignore[union-attr]
    assert seen and seen[-1][0] == sdist.stat().st_size
    assert [d for d, _ in seen] == sorted(d for d, _ in seen)
    # nothing written outside dest, no temporary file left behind
    assert sorted(p.name for p in tmp_path.iterdir()) == ["data", "sdist.tar.gz"]
    assert sorted(p.name for p in (tmp_path / "data").iterdir()) == ["llama-vocab"]
    assert "2 reference vocabs (4 files) downloaded" in report.summary()


def test_second_run_downloads_nothing_unless_forced_or_changed(tmp_path: Path) -> None:
    sdist, sha = make_sdist(tmp_path / "sdist.tar.gz")
    dest = tmp_path / "vocab"
    fetch_samples(dest, url=sdist.as_uri(), sha256=sha)
    calls: list[str] = []

    def no_network(url: str, timeout: float = 0) -> Any:
        calls.append(url)
        raise urllib.error.URLError("offline")

    again = fetch_samples(dest, url="https://example.invalid/x.tar.gz", sha256=sha, opener=no_network)
    assert not again.downloaded and calls == [] and "already present" in again.summary()
    (dest / "ggml-vocab-tiny-spm.gguf.out").write_text("changed\n")
    assert installed_files(dest, sha) is None
    with pytest.raises(SamplesError):
        fetch_samples(dest, url="https://example.invalid/x.tar.gz", sha256=sha, opener=no_network)
    assert calls == ["https://example.invalid/x.tar.gz"]
    assert fetch_samples(dest, url=sdist.as_uri(), sha256=sha).downloaded
    assert (dest / "ggml-vocab-tiny-spm.gguf.out").read_text() == " 1 2\n"
    assert fetch_samples(dest, url=sdist.as_uri(), sha256=sha, force=True).downloaded


def test_a_wrong_hash_is_refused_and_nothing_is_unpacked(tmp_path: Path) -> None:
    sdist, sha = make_sdist(tmp_path / "sdist.tar.gz")
    dest = tmp_path / "vocab"
    with pytest.raises(SamplesError, match="SHA-256"):
        fetch_samples(dest, url=sdist.as_uri(), sha256="0" * 64)
    assert list(dest.iterdir()) == []


def test_offline_and_http_errors_are_one_line(tmp_path: Path) -> None:
    def offline(url: str, timeout: float = 0) -> Any:
        raise urllib.error.URLError(OSError(-3, "Temporary failure in name resolution"))

    with pytest.raises(SamplesError) as e:
        fetch_samples(tmp_path / "v", opener=offline)
    assert "offline" in str(e.value) and "\n" not in str(e.value)

    def not_found(url: str, timeout: float = 0) -> Any:
        raise urllib.error.HTTPError(url, 404, "Not Found", None, None)  # type: ignore[arg-type]

    with pytest.raises(SamplesError, match="HTTP 404"):
        fetch_samples(tmp_path / "v", opener=not_found)


def test_download_stops_at_the_size_limit(tmp_path: Path) -> None:
    class Endless(io.RawIOBase):
        headers: dict[str, str] = {}

        def read(self, n: int = -1) -> bytes:
            return b"x" * (n if n > 0 else 1024)

        def __enter__(self) -> "Endless":
            return self

    with open(tmp_path / "out", "wb") as out, pytest.raises(SamplesError, match="larger than"):
        download("https://x", out, "0" * 64, opener=lambda url, timeout=0: Endless(), max_bytes=5 << 20)
    assert (tmp_path / "out").stat().st_size <= 5 << 20


def test_hostile_members_are_never_written(tmp_path: Path) -> None:
    sdist, _ = make_sdist(tmp_path / "s.tar.gz")
    dest = tmp_path / "a" / "b" / "dest"
    files = extract_vocabs(sdist, dest)
    assert sorted(files) == ["ggml-vocab-tiny-bpe.gguf", "ggml-vocab-tiny-spm.gguf",
                             "ggml-vocab-tiny-spm.gguf.inp", "ggml-vocab-tiny-spm.gguf.out"]
    written = {str(p.relative_to(tmp_path)) for p in tmp_path.rglob("*") if p.is_file()}
    assert written == {"s.tar.gz", *(f"a/b/dest/{n}" for n in files)}
    assert not any(p.is_symlink() for p in dest.iterdir())
    assert files["ggml-vocab-tiny-bpe.gguf"] == hashlib.sha256(demo_models()["bpe"].read_bytes()).hexdigest()


def test_oversized_and_fake_vocab_files_are_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    sdist, _ = make_sdist(tmp_path / "s.tar.gz", hostile=False)
    monkeypatch.setattr(samples, "MAX_FILE_SIZE", 10_000)
    with pytest.raises(SamplesError, match="too large"):
        extract_vocabs(sdist, tmp_path / "d1")
    monkeypatch.undo()
    fake, _ = make_sdist(tmp_path / "f.tar.gz", hostile=False, vocab=b"<html>not found</html>")
    with pytest.raises(SamplesError, match="not a GGUF file"):
        extract_vocabs(fake, tmp_path / "d2")
    (tmp_path / "garbage.tar.gz").write_bytes(b"\x1f\x8b garbage")
    with pytest.raises(SamplesError, match="cannot unpack"):
        extract_vocabs(tmp_path / "garbage.tar.gz", tmp_path / "d3")
    empty = tmp_path / "empty.tar.gz"
    with tarfile.open(empty, "w:gz") as tar:
        _add(tar, "x/README", b"hi")
    with pytest.raises(SamplesError, match="no ggml-vocab"):
        extract_vocabs(empty, tmp_path / "d4")


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the Linux folders")
def test_linux_folder_is_the_one_used_before(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.delenv("XDG_DATA_HOME", raising=False)
    assert default_samples_dir() == tmp_path / "home/.local/share/tokenprism/llama-vocab"
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    assert default_samples_dir() == tmp_path / "xdg/tokenprism/llama-vocab"
    # the one change: a relative $XDG_DATA_HOME is ignored, as the XDG spec says (it used to be taken as it was)
    monkeypatch.setenv("XDG_DATA_HOME", "relative/data")
    assert default_samples_dir() == tmp_path / "home/.local/share/tokenprism/llama-vocab"
    assert default_samples_dir(tmp_path / "elsewhere") == tmp_path / "elsewhere/llama-vocab"


def _windows_local_app_data(folder: Path) -> Callable[[str], str]:
    def known_folder(csidl: str) -> str:
        return {"CSIDL_LOCAL_APPDATA": str(folder), "CSIDL_APPDATA": str(folder.parent / "Roaming")}[csidl]
    return known_folder


@pytest.mark.parametrize("os_name, rel", [
    ("macos", "home/Library/Application Support/tokenprism/llama-vocab"),
    ("unix", "home/.local/share/tokenprism/llama-vocab"),
    # Local, not Roaming, and no vendor folder: the folder earlier versions used
    ("windows", "home/AppData/Local/tokenprism/llama-vocab"),
])
def test_each_os_folder_is_platformdirs_answer(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                               os_name: str, rel: str) -> None:
    """platformdirs picks its per-OS class when imported; putting another
    one in its place gives that OS's answer here."""
    import platformdirs
    import platformdirs.macos
    import platformdirs.unix
    import platformdirs.windows

    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.delenv("XDG_DATA_HOME", raising=False)
    monkeypatch.setattr(platformdirs.windows, "get_win_folder",
                        _windows_local_app_data(tmp_path / "home" / "AppData" / "Local"))
    cls = {"macos": platformdirs.macos.MacOS, "unix": platformdirs.unix.Unix,
           "windows": platformdirs.windows.Windows}[os_name]
    monkeypatch.setattr(platformdirs, "PlatformDirs", cls)
    assert default_samples_dir() == tmp_path / rel
    assert samples.user_data_dir() == (tmp_path / rel).parent


def test_the_pinned_hash_matches_the_real_sdist() -> None:
    if not REAL_SDIST.is_file():
        pytest.skip("no local copy of the sdist (set TOKENPRISM_LLAMA_SDIST)")
    h = hashlib.sha256()
    with open(REAL_SDIST, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    assert h.hexdigest() == samples.SDIST_SHA256
    assert REAL_SDIST.stat().st_size == samples.SDIST_SIZE
    assert samples.SDIST_URL.endswith("/" + REAL_SDIST.name)


# ---- the CLI -----------------------------------------------------------------------------------

def test_cli_samples_from_the_real_sdist(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                         vocab_dir: str) -> None:
    if not REAL_SDIST.is_file():
        pytest.skip("no local copy of the sdist (set TOKENPRISM_LLAMA_SDIST)")
    dest = tmp_path / "vocab"
    assert main(["samples", "--dest", str(dest), "--sdist", str(REAL_SDIST), "-q"]) == 0
    out = capsys.readouterr().out
    assert "downloaded" in out and str(dest) in out
    # the same files the parity tests use
    for name in ("ggml-vocab-llama-spm.gguf", "ggml-vocab-gpt-2.gguf.inp", "ggml-vocab-bert-bge.gguf.out"):
        assert (dest / name).read_bytes() == (Path(vocab_dir) / name).read_bytes()
    assert main(["samples", "--dest", str(dest), "-q"]) == 0
    assert "already present" in capsys.readouterr().out


def test_cli_samples_offline_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                        monkeypatch: pytest.MonkeyPatch) -> None:
    def offline(url: str, timeout: float = 0) -> Any:
        raise urllib.error.URLError("[Errno -3] Temporary failure in name resolution")

    monkeypatch.setattr("urllib.request.urlopen", offline)
    assert main(["samples", "--dest", str(tmp_path / "v"), "-q"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("tokenprism: error: cannot download https://files.pythonhosted.org/")
    assert err.count("\n") == 1 and "offline" in err
    assert main(["samples", "--dest", str(tmp_path / "v"), "--sdist", str(tmp_path / "nope.tar.gz")]) == 1
    assert "nope.tar.gz: no such file" in capsys.readouterr().err


def test_cli_models_lists_a_fake_home(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                      monkeypatch: pytest.MonkeyPatch) -> None:
    from tests.fakehome import build_linux_home

    home = tmp_path / "home"
    expected = build_linux_home(home)
    monkeypatch.setenv("HOME", str(home))
    for key in ("HF_HOME", "HF_HUB_CACHE", "HUGGINGFACE_HUB_CACHE", "XDG_CACHE_HOME", "XDG_DATA_HOME",
                "LLAMA_CACHE", "OLLAMA_MODELS"):
        monkeypatch.delenv(key, raising=False)
    args = ["models", "--no-saved-folders", "--add-folder", str(home / "my-models")]
    assert main([*args, "--format", "json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    ours = {r["name"]: (r["source"], r["tokenizer"], r["vocab_size"]) for r in rows
            if r["path"].startswith(str(home))}
    assert ours == expected.models
    assert main(args) == 0
    table = capsys.readouterr().out.splitlines()
    assert table[0].split()[:5] == ["NAME", "TOKENIZER", "VOCAB", "SIZE", "SOURCE"]
    line = next(t for t in table if t.startswith("tinybpe:latest"))
    assert "gpt2" in line and "1,000" in line and "ollama" in line
    assert not any("not-a-model" in t for t in table)
    assert main(["models", "--no-saved-folders", "--add-folder", str(tmp_path / "nope")]) == 0
    assert "not a folder" in capsys.readouterr().err


# ---- where the parity tests and benchmarks look ---------------------------------------------------

def test_find_vocab_dir_order(tmp_path: Path) -> None:
    from tokenprism.core.library.samples import find_vocab_dir

    def folder(name: str, with_vocab: bool) -> Path:
        p = tmp_path / name
        p.mkdir(parents=True)
        if with_vocab:
            (p / "ggml-vocab-x.gguf").write_bytes(b"GGUF")
        return p

    env: dict[str, str] = {}
    data_dir = tmp_path / "data" / "tokenprism"
    samples = default_samples_dir(data_dir)
    samples.mkdir(parents=True)
    (samples / "ggml-vocab-llama-spm.gguf").write_bytes(b"GGUF")
    empty = folder("empty", False)
    shared = folder("shared", True)
    chosen = folder("chosen", True)
    # the samples folder when nothing else has vocabularies (a fresh machine after `tokenprism samples`)
    assert find_vocab_dir(empty, env=env, data_dir=data_dir) == samples
    # a folder given by the caller (../shared beside the repo) comes before it
    assert find_vocab_dir(empty, shared, env=env, data_dir=data_dir) == shared
    # $TOKENPRISM_VOCAB_DIR comes first of all
    assert find_vocab_dir(shared, env={**env, "TOKENPRISM_VOCAB_DIR": str(chosen)}, data_dir=data_dir) == chosen
    # none anywhere
    (samples / "ggml-vocab-llama-spm.gguf").unlink()
    assert find_vocab_dir(empty, env=env, data_dir=data_dir) is None
