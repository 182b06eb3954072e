"""Finding models on this computer (core/library/discovery.py), in a fake home."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from tests.fakehome import build_linux_home, raw_gguf
from tokenprism.core.library import discovery
from tokenprism.core.library.discovery import (FoundModel, Location, default_locations, discover, peek_gguf, scan)
from tokenprism.core.errors import GGUFError
from tokenprism.core.gguf_file import read_gguf
from tokenprism.core.library.resources import demo_models


@pytest.fixture(autouse=True)
def _user_data_in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """tokenprism's own data folder comes from platformdirs, which follows
    the real $HOME, not a scan's ``home``: point it at an empty folder so
    the real user's reference vocabularies never show in these scans."""
    monkeypatch.setenv("HOME", str(tmp_path / "real-user"))
    monkeypatch.delenv("XDG_DATA_HOME", raising=False)


def _by_name(models: list[FoundModel]) -> dict[str, FoundModel]:
    names = [m.name for m in models]
    assert len(names) == len(set(names)), names
    return {m.name: m for m in models}


def test_linux_home_every_layout(tmp_path: Path) -> None:
    home = tmp_path / "home"
    expected = build_linux_home(home)
    progress: list[str] = []
    found = list(discover(home, {}, "linux", extra_folders=[home / "my-models"], include_system=False,
                          progress=progress.append))
    got = _by_name(found)
    assert {n: (m.source, m.tokenizer, m.vocab_size) for n, m in got.items()} == expected.models
    for m in found:  # opening paths are the real files, with their real sizes
        assert Path(m.path).is_file() and not Path(m.path).is_symlink()
        assert m.size == os.path.getsize(m.path)
    junk = {str(p.resolve()) for p in expected.junk if p.exists()}
    assert not junk & {m.path for m in found}
    hf = got["TheOrg/Tiny-GGUF/quant/tiny-spm-Q4_K_M.gguf"]
    assert Path(hf.path).parent.name == "blobs"  # the symlinks were followed to the blob
    assert got["demo-wpm.gguf"].model_name.startswith("TokenPrism demo WPM")
    assert any("Hugging Face" in p for p in progress) and any("ollama" in p for p in progress)


def test_streams_results_before_the_scan_ends(tmp_path: Path) -> None:
    home = tmp_path / "home"
    build_linux_home(home)
    it = discover(home, {}, "linux", include_system=False)
    first = next(it)
    assert first.source == "Hugging Face"  # scanned first, handed out before the rest is read
    assert len(list(it)) >= 5


def test_each_file_is_listed_once(tmp_path: Path) -> None:
    src = demo_models()["spm"]
    a = tmp_path / "a"
    a.mkdir()
    real = a / "x.gguf"
    real.write_bytes(src.read_bytes())
    os.link(real, a / "hardlink.gguf")
    os.symlink(real, a / "symlink.gguf")
    b = tmp_path / "b"
    os.symlink(a, b)
    found = list(scan([Location("Folder", a), Location("Folder", b), Location("Folder", a)]))
    assert len(found) == 1 and os.path.samefile(found[0].path, real)


def test_folder_loops_and_missing_folders_do_not_hang(tmp_path: Path) -> None:
    d = tmp_path / "d"
    (d / "sub").mkdir(parents=True)
    os.symlink(d, d / "sub" / "loop")
    (d / "sub" / "m.gguf").write_bytes(demo_models()["bpe"].read_bytes())
    found = list(scan([Location("Folder", d), Location("Folder", tmp_path / "missing")]))
    assert [m.name for m in found] == ["sub/m.gguf"]


@pytest.mark.parametrize("platform, llama, gpt4all", [
    ("win32", "AppData/Local/llama.cpp", "AppData/Local/nomic.ai/GPT4All"),
    ("darwin", "Library/Caches/llama.cpp", "Library/Application Support/nomic.ai/GPT4All"),
    ("linux", ".cache/llama.cpp", ".local/share/nomic.ai/GPT4All"),
])
def test_platform_default_folders(tmp_path: Path, platform: str, llama: str, gpt4all: str) -> None:
    home = tmp_path / "home"
    env = {"LOCALAPPDATA": str(home / "AppData" / "Local")} if platform == "win32" else {}
    locs = {(loc.source, loc.path) for loc in default_locations(home, env, platform, include_system=False)}
    assert ("llama.cpp", home / llama) in locs
    assert ("GPT4All", home / gpt4all) in locs
    assert ("Hugging Face", home / ".cache/huggingface/hub") in locs  # the same rule everywhere
    assert ("LM Studio", home / ".lmstudio/models") in locs
    assert ("ollama", home / ".ollama/models") in locs
    # and files put there are found with that platform's rules only
    spm = demo_models()["spm"]
    for rel in (llama, gpt4all):
        (home / rel).mkdir(parents=True, exist_ok=True)
        (home / rel / f"{rel.split('/')[-1]}.gguf").write_bytes(spm.read_bytes())
    found = {m.source for m in discover(home, env, platform, include_system=False)}
    assert found == {"llama.cpp", "GPT4All"}


def test_windows_without_localappdata_uses_the_home_default(tmp_path: Path) -> None:
    locs = default_locations(tmp_path, {}, "win32", include_system=False)
    assert Location("llama.cpp", tmp_path / "AppData" / "Local" / "llama.cpp") in locs


def test_environment_variables_move_the_stores(tmp_path: Path) -> None:
    env = {"HF_HUB_CACHE": str(tmp_path / "hf"), "LLAMA_CACHE": str(tmp_path / "lc"),
           "OLLAMA_MODELS": str(tmp_path / "ol")}
    locs = default_locations(tmp_path / "home", env, "linux")
    by_source = {loc.source: loc.path for loc in locs}
    assert by_source["Hugging Face"] == tmp_path / "hf"
    assert by_source["llama.cpp"] == tmp_path / "lc"
    assert [loc.path for loc in locs if loc.source == "ollama"] == [tmp_path / "ol"]
    assert discovery.hf_hub_cache(tmp_path, {"HF_HOME": "/x/hf"}) == Path("/x/hf/hub")
    assert discovery.hf_hub_cache(tmp_path, {"XDG_CACHE_HOME": "/x/c"}) == Path("/x/c/huggingface/hub")
    assert discovery.llama_cpp_cache(tmp_path, {"XDG_CACHE_HOME": "/x/c"}, "linux") == Path("/x/c/llama.cpp")
    assert Path("/usr/share/ollama/.ollama/models") in [
        loc.path for loc in default_locations(tmp_path, {}, "linux") if loc.source == "ollama"]
    assert Path("/usr/share/ollama/.ollama/models") not in [
        loc.path for loc in default_locations(tmp_path, {}, "darwin") if loc.source == "ollama"]


def test_lm_studio_moved_download_folder(tmp_path: Path) -> None:
    (tmp_path / ".lmstudio").mkdir()
    (tmp_path / ".lmstudio" / "settings.json").write_text('{"downloadsFolder": "/big/disk/models"}')
    assert discovery.lm_studio_folders(tmp_path)[0] == Path("/big/disk/models")
    (tmp_path / ".lmstudio" / "settings.json").write_text("[not, json")
    assert discovery.lm_studio_folders(tmp_path)[0] == tmp_path / ".lmstudio" / "models"


def test_reference_vocabs_are_listed(tmp_path: Path) -> None:
    dest = tmp_path / "data" / "tokenprism" / "llama-vocab"
    dest.mkdir(parents=True)
    (dest / "ggml-vocab-demo.gguf").write_bytes(demo_models()["ugm"].read_bytes())
    (dest / "ggml-vocab-demo.gguf.inp").write_text("hello\n__ggml_vocab_test__\n")
    found = list(discover(tmp_path, {}, "linux", include_system=False, data_dir=tmp_path / "data" / "tokenprism"))
    assert [(m.name, m.source, m.tokenizer) for m in found] == [("ggml-vocab-demo.gguf", "Reference vocab", "t5")]


@pytest.mark.parametrize("platform", ["linux", "darwin", "win32"])
def test_reference_folder_is_platformdirs_user_data(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                    platform: str) -> None:
    """The app's own folder is platformdirs' answer for the running user,
    whatever rules the other tools' folders follow; ``data_dir`` replaces it."""
    import platformdirs

    monkeypatch.setattr(platformdirs, "user_data_path",
                        lambda appname, appauthor=None, **kw: tmp_path / "pd" / str(appname) / str(appauthor))
    ref = [loc.path for loc in default_locations(tmp_path / "home", {}, platform) if loc.source == "Reference vocab"]
    assert ref == [tmp_path / "pd" / "tokenprism" / "False" / "llama-vocab"]
    ref = [loc.path for loc in default_locations(tmp_path / "home", {}, platform, data_dir=tmp_path / "d")
           if loc.source == "Reference vocab"]
    assert ref == [tmp_path / "d" / "llama-vocab"]


def test_reference_folder_on_linux_is_the_one_used_before(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    if not sys.platform.startswith("linux"):
        pytest.skip("the Linux folders")
    monkeypatch.setenv("HOME", str(tmp_path / "me"))
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    dest = tmp_path / "xdg" / "tokenprism" / "llama-vocab"
    dest.mkdir(parents=True)
    (dest / "ggml-vocab-demo.gguf").write_bytes(demo_models()["wpm"].read_bytes())
    found = list(discover(tmp_path / "me", os.environ, "linux", include_system=False))
    assert [(m.name, m.source) for m in found] == [("ggml-vocab-demo.gguf", "Reference vocab")]
    monkeypatch.delenv("XDG_DATA_HOME")
    assert [loc.path for loc in default_locations(tmp_path / "me", os.environ, "linux")
            if loc.source == "Reference vocab"] == [tmp_path / "me/.local/share/tokenprism/llama-vocab"]


def test_peek_reads_the_token_count_without_the_tokens(tmp_path: Path) -> None:
    # a 262 144-token header whose strings were never written: only the count
    # can be known, and it is what a 40 GB model's scan must cost
    data = raw_gguf([("general.architecture", "gemma"), ("general.name", "big"),
                     ("tokenizer.ggml.model", "llama"), ("tokenizer.ggml.tokens", ("tokens", 262144, 0))])
    p = tmp_path / "big.gguf"
    p.write_bytes(data + b"\0" * 64)
    with pytest.raises(GGUFError):
        read_gguf(p)  # the full reader needs the strings
    info = peek_gguf(p)
    assert info is not None
    assert (info.tokenizer, info.vocab_size, info.name, info.architecture) == ("llama", 262144, "big", "gemma")


def test_peek_walks_past_tokens_when_keys_come_later(tmp_path: Path) -> None:
    data = raw_gguf([("tokenizer.ggml.tokens", ("tokens", 3)), ("general.architecture", "x"),
                     ("tokenizer.ggml.model", "gpt2"), ("split.no", 0)])
    p = tmp_path / "late.gguf"
    p.write_bytes(data)
    info = peek_gguf(p)
    assert info is not None and (info.tokenizer, info.vocab_size, info.architecture) == ("gpt2", 3, "x")


def test_peek_agrees_with_the_full_reader_on_the_demo_models() -> None:
    for path in demo_models().values():
        info = peek_gguf(path)
        full = read_gguf(path)
        assert info is not None
        assert info.tokenizer == full.metadata["tokenizer.ggml.model"].value
        assert info.vocab_size == len(full.metadata["tokenizer.ggml.tokens"].value)


@pytest.mark.parametrize("data", [
    b"", b"GGUF", b"GGML" + b"\0" * 40, b"GGUF" + b"\x03\0\0\0" + b"\xff" * 16,
    b"GGUF\x03\0\0\0" + b"\0" * 8 + b"\x01" + b"\0" * 7 + b"\xff" * 8,  # key length beyond the file
    b"GGUF\x09\0\0\0" + b"\0" * 40,  # unknown version
])
def test_peek_returns_none_for_bad_files(tmp_path: Path, data: bytes) -> None:
    p = tmp_path / "bad.gguf"
    p.write_bytes(data)
    assert peek_gguf(p) is None


def test_peek_on_unopenable_paths(tmp_path: Path) -> None:
    assert peek_gguf(tmp_path) is None  # a folder
    assert peek_gguf(tmp_path / "missing.gguf") is None


def test_truncated_copies_of_real_models_are_never_listed(tmp_path: Path) -> None:
    src = demo_models()["bpe"].read_bytes()
    header_end = read_gguf(demo_models()["bpe"]).data_offset
    for i, cut in enumerate(range(24, header_end, max(1, header_end // 40))):
        (tmp_path / f"cut{i}.gguf").write_bytes(src[:cut])
    # whatever a cut leaves readable, the scan never crashes and never lists a file twice
    found = list(scan([Location("Folder", tmp_path)]))
    assert len({m.path for m in found}) == len(found)
    assert all(m.vocab_size in (0, 1000) for m in found)


def test_a_40_gb_model_is_listed_and_opened_from_its_header(tmp_path: Path) -> None:
    # a sparse file: the demo model's header followed by 40 GB of (unstored) zeros
    big = tmp_path / "models" / "huge-Q8_0.gguf"
    big.parent.mkdir()
    big.write_bytes(demo_models()["spm"].read_bytes())
    try:
        os.truncate(big, 40 * 10**9)
    except OSError:
        pytest.skip("no sparse files here")
    (m,) = scan([Location("Folder", big.parent)])
    assert (m.size, m.tokenizer, m.vocab_size) == (40 * 10**9, "llama", 1500)
    from tokenprism.core import open_model

    model = open_model(m.path)
    assert model.kind == "SPM" and model.gguf.file_size == 40 * 10**9
    assert model.encode("Hello").ids


def test_hf_copies_in_several_revisions_are_listed_once_from_main(tmp_path: Path) -> None:
    # Windows without symlink rights: each snapshot holds a copy, not a link
    repo = tmp_path / "hub" / "models--org--m"
    spm, bpe = demo_models()["spm"].read_bytes(), demo_models()["bpe"].read_bytes()
    for rev, data in (("old0", spm), ("main1", bpe)):
        (repo / "snapshots" / rev).mkdir(parents=True)
        (repo / "snapshots" / rev / "m.gguf").write_bytes(data)
    (repo / "refs").mkdir()
    (repo / "refs" / "main").write_text("main1")
    (m,) = scan([Location("Hugging Face", tmp_path / "hub", "hf")])
    assert (m.name, m.tokenizer) == ("org/m/m.gguf", "gpt2")
    assert Path(m.path).parent.name == "main1"


def test_llama_cpp_cache_in_hub_layout_uses_repo_names(tmp_path: Path) -> None:
    cache = tmp_path / ".cache" / "llama.cpp"
    snap = cache / "models--ggml-org--tiny" / "snapshots" / "r1"
    snap.mkdir(parents=True)
    (snap / "tiny.gguf").write_bytes(demo_models()["wpm"].read_bytes())
    (cache / "flat_file.gguf").write_bytes(demo_models()["bpe"].read_bytes())
    found = [(m.source, m.name) for m in discover(tmp_path, {}, "linux", include_system=False)]
    assert found == [("llama.cpp", "ggml-org/tiny/tiny.gguf"), ("llama.cpp", "flat_file.gguf")]


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() == 0, reason="root reads every file")
def test_unreadable_files_and_folders_are_skipped(tmp_path: Path) -> None:
    d = tmp_path / "d"
    (d / "locked").mkdir(parents=True)
    (d / "locked" / "a.gguf").write_bytes(demo_models()["spm"].read_bytes())
    (d / "secret.gguf").write_bytes(demo_models()["spm"].read_bytes())
    (d / "ok.gguf").write_bytes(demo_models()["bpe"].read_bytes())
    os.chmod(d / "secret.gguf", 0)
    os.chmod(d / "locked", 0)
    try:
        assert [m.name for m in scan([Location("Folder", d)])] == ["ok.gguf"]
    finally:
        os.chmod(d / "locked", 0o755)


def test_unreadable_file_is_skipped_even_for_root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "a.gguf").write_bytes(demo_models()["spm"].read_bytes())
    (tmp_path / "b.gguf").write_bytes(demo_models()["bpe"].read_bytes())
    real_open = open

    def deny(path, *args, **kwargs):  # type: ignore[no-untyped-def]
        if str(path).endswith("a.gguf"):
            raise PermissionError(13, "Permission denied", str(path))
        return real_open(path, *args, **kwargs)

    monkeypatch.setattr("builtins.open", deny)
    assert [m.name for m in scan([Location("Folder", tmp_path)])] == ["b.gguf"]


def test_folders_of_opened_models_are_listed(tmp_path: Path) -> None:
    home = tmp_path / "home"
    expected = build_linux_home(home)
    work = tmp_path / "work" / "models"
    (work / "deeper").mkdir(parents=True)
    ugm = demo_models()["ugm"].read_bytes()
    for name in ("opened.gguf", "beside.gguf"):
        (work / name).write_bytes(ugm)
    (work / "deeper" / "below.gguf").write_bytes(ugm)  # only the folder's own files: no crawl of a big tree
    (work / "notes.txt").write_text("not a model")
    hf = next(m for m in discover(home, {}, "linux", include_system=False) if m.source == "Hugging Face")
    opened = [work / "opened.gguf", work / "opened.gguf", hf.path, tmp_path / "gone" / "x.gguf"]
    found = _by_name(list(discover(home, {}, "linux", include_system=False, opened=opened)))
    assert {n for n, m in found.items() if m.source == discovery.OPENED} == {"opened.gguf", "beside.gguf"}
    assert found[hf.name].source == "Hugging Face"  # a place's own name wins over "opened before"
    assert set(found) == set(expected.models) - {n for n, v in expected.models.items() if v[0] == "Folder"} \
        | {"opened.gguf", "beside.gguf"}
    locs = [loc for loc in default_locations(home, {}, "linux", include_system=False, opened=opened)
            if loc.source == discovery.OPENED]
    assert [loc.path for loc in locs] == [work, Path(hf.path).parent, tmp_path / "gone"] and \
        all(loc.depth == 0 for loc in locs)


def test_without_opened_models_nothing_changes(tmp_path: Path) -> None:
    assert not [loc for loc in default_locations(tmp_path, {}, "linux", include_system=False)
                if loc.source == discovery.OPENED]
