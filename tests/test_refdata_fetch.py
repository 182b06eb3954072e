"""How the parity tests get llama.cpp's reference vocabularies
(tests/refdata.py): found where a person put them, else fetched once by the
test run into the user cache, the way ``tokenprism samples`` does, else
skipped with the reason. No network: a fake sdist is served by an opener."""

from __future__ import annotations

import filecmp
import io
import sys
import urllib.error
from pathlib import Path
from typing import Any

import pytest

from tests import refdata
from tests.fakehome import make_sdist
from tests.refdata import EXTRA_CASES_DIR, SHARED_VOCAB_DIR, VocabSource, default_cache_dir, locate_vocabs


class Lines:
    """An announcer that keeps what would be printed."""

    def __init__(self) -> None:
        self.lines: list[str] = []
        self.open = False

    def begin(self, text: str) -> None:
        assert not self.open
        self.lines.append(text)
        self.open = True

    def end(self, text: str) -> None:
        assert self.open
        self.lines[-1] += text
        self.open = False


class Server:
    """An opener serving one file, counting requests (or failing like an offline machine)."""

    def __init__(self, data: bytes | None) -> None:
        self.data = data
        self.calls = 0

    def __call__(self, url: str, timeout: float = 0) -> Any:
        self.calls += 1
        if self.data is None:
            raise urllib.error.URLError("[Errno -3] Temporary failure in name resolution")
        return io.BytesIO(self.data)


@pytest.fixture
def fake(tmp_path: Path) -> dict[str, Any]:
    sdist, sha = make_sdist(tmp_path / "sdist.tar.gz", hostile=False)
    home = tmp_path / "home"
    home.mkdir()
    return {"home": home, "env": {}, "shared": tmp_path / "no-shared" / "llama-vocab", "sha256": sha,
            "url": "https://files.example/llama_cpp_python-0.3.36.tar.gz", "data": sdist.read_bytes()}


def _locate(fake: dict[str, Any], server: Server, lines: Lines, allow_fetch: bool = True) -> VocabSource:
    return locate_vocabs(allow_fetch=allow_fetch, announce=lines, env=fake["env"], home=fake["home"],
                         shared=fake["shared"], url=fake["url"], sha256=fake["sha256"], opener=server)


def test_a_run_without_vocabs_fetches_them_once_into_the_user_cache(fake: dict[str, Any]) -> None:
    server, lines = Server(fake["data"]), Lines()
    first = _locate(fake, server, lines)
    cache = fake["home"] / ".cache" / "tokenprism" / "llama-vocab"
    assert first == VocabSource(str(cache), refdata.NOT_FOUND, fetched=True)
    assert server.calls == 1
    assert (cache / "ggml-vocab-tiny-spm.gguf").is_file() and (cache / "ggml-vocab-tiny-bpe.gguf").is_file()
    # one line, saying what is fetched, from where, to where, and that it worked
    assert len(lines.lines) == 1 and "\n" not in lines.lines[0]
    assert lines.lines[0].startswith("reference vocabularies not found: fetching llama-cpp-python 0.3.36 "
                                     "(SHA-256 pinned) from PyPI into " + str(cache))
    assert "2 vocabs ready" in lines.lines[0]

    # the next run finds the cache: no request, nothing printed
    again_lines = Lines()
    again = _locate(fake, server, again_lines)
    assert again == VocabSource(str(cache), refdata.NOT_FOUND, fetched=False)
    assert server.calls == 1 and again_lines.lines == []

    # a damaged cache is fetched again rather than trusted
    (cache / "ggml-vocab-tiny-spm.gguf.out").write_text("0\n")
    assert _locate(fake, server, Lines()).fetched and server.calls == 2


def test_offline_the_parity_tests_skip_with_the_reason(fake: dict[str, Any]) -> None:
    server, lines = Server(None), Lines()
    source = _locate(fake, server, lines)
    assert source.path is None and server.calls == 1
    assert source.skip_reason.startswith(refdata.NOT_FOUND)
    assert "fetching them failed" in source.skip_reason and "name resolution" in source.skip_reason
    assert len(lines.lines) == 1 and "failed, the parity tests skip" in lines.lines[0]


def test_vocabs_already_there_are_used_and_nothing_is_fetched(fake: dict[str, Any]) -> None:
    fake["shared"].mkdir(parents=True)
    (fake["shared"] / "ggml-vocab-x.gguf").write_bytes(b"GGUF")
    server, lines = Server(None), Lines()
    assert _locate(fake, server, lines) == VocabSource(str(fake["shared"]), refdata.NOT_FOUND)
    assert server.calls == 0 and lines.lines == []


def test_only_a_pytest_run_fetches(fake: dict[str, Any]) -> None:
    # tests/make_oracle_data.py and the benchmarks import refdata too; they never download
    server, lines = Server(fake["data"]), Lines()
    source = _locate(fake, server, lines, allow_fetch=False)
    assert source.path is None and server.calls == 0 and lines.lines == []
    assert refdata.allow_fetch  # tests/conftest.py turned it on for this run


def test_cache_folder_is_platformdirs_user_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import platformdirs

    assert default_cache_dir() == platformdirs.user_cache_path("tokenprism", appauthor=False) / "llama-vocab"
    assert default_cache_dir(tmp_path) == tmp_path / "llama-vocab"
    if sys.platform.startswith("linux"):  # XDG is honoured, as the README says (~/.cache/tokenprism/llama-vocab)
        monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "XC"))
        assert default_cache_dir() == tmp_path / "XC" / "tokenprism" / "llama-vocab"
        monkeypatch.delenv("XDG_CACHE_HOME")
        assert default_cache_dir() == Path.home() / ".cache" / "tokenprism" / "llama-vocab"


def test_cases_the_sdist_lacks_come_from_tests_data(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # the sdist has aquila's vocab but no .inp/.out for it, and no special-cases.jsonl
    monkeypatch.setattr(refdata, "_source", VocabSource(str(tmp_path), refdata.NOT_FOUND))
    inp = refdata.inp_out_cases("aquila")
    out_lines = (EXTRA_CASES_DIR / "ggml-vocab-aquila.gguf.out").read_text(encoding="utf-8").splitlines()
    assert len(inp) == len(out_lines) > 30
    assert inp[1].ids == tuple(int(x) for x in out_lines[1].split())
    special = refdata.special_cases("aquila")
    assert special and {(c.add_special, c.parse_special) for c in special} == {(True, False), (False, True),
                                                                               (True, True)}
    # a file in the vocab folder wins over the kept copy
    (tmp_path / "ggml-vocab-aquila.gguf.inp").write_text("only\n__ggml_vocab_test__\n", encoding="utf-8")
    (tmp_path / "ggml-vocab-aquila.gguf.out").write_text(" 5 6\n", encoding="utf-8")
    assert refdata.inp_out_cases("aquila") == [refdata.Case("aquila", "only", (5, 6))]


@pytest.mark.skipif(not SHARED_VOCAB_DIR.is_dir(), reason="no ../shared/llama-vocab to compare with")
def test_the_kept_cases_match_the_shared_ones() -> None:
    kept = sorted(p.name for p in EXTRA_CASES_DIR.iterdir())
    assert len(kept) == 9
    _, mismatch, errors = filecmp.cmpfiles(EXTRA_CASES_DIR, SHARED_VOCAB_DIR, kept, shallow=False)
    assert mismatch == [] and errors == []
