"""Reading llama.cpp's reference tokenizations (see shared/llama-vocab/README.md).

Parity tests build one test id per case with :func:`parity_params`, so a
failure names the vocab and the text.

Where the reference vocabularies come from, first found wins:
``$TOKENPRISM_VOCAB_DIR``, ``../shared/llama-vocab`` beside the repo, the
folder ``tokenprism samples`` fills, and last this suite's own cache (the
user cache folder + ``tokenprism/llama-vocab``). When none has them, a
pytest run fills that cache itself, the way ``tokenprism samples`` does (the
pinned llama-cpp-python sdist, its SHA-256 checked; from
``$TOKENPRISM_LLAMA_SDIST`` when that names a copy, else from PyPI), and
says so in one line; later runs find it there. Only when that fails do the
parity tests skip, with the reason. The lookup runs on first use
(``VOCAB_DIR``, :func:`vocab_path`, :func:`parity_params`...), so a run
that needs no vocabulary never downloads one.

The sdist has no expected ids for four of its vocabs and none for the
add_special/parse_special combinations; llama.cpp's answers for those
(made with the same release, see shared/llama-vocab/README.md) are kept in
``tests/data/reference`` and read when the vocab folder lacks them.

This is also the one place that finds the other llama.cpp material some
tests use, each from one environment variable (a test that needs a missing
one skips):

- ``TOKENPRISM_LLAMA_CPP_SRC``: llama.cpp's ``src/`` folder (the one in the
  sdist is ``vendor/llama.cpp/src``) — tables checked against its sources;
- ``TOKENPRISM_LLAMA_SDIST``: llama-cpp-python's sdist tarball, the file
  ``tokenprism samples`` downloads;
- ``TOKENPRISM_ORACLE_PY``: a Python with llama-cpp-python installed, which
  runs ``tests/llama_oracle.py`` (opt-in live checks and
  ``tests/make_oracle_data.py``).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Mapping, Protocol

import pytest

_HERE = Path(__file__).resolve().parent


SHARED_VOCAB_DIR = _HERE.parent.parent / "shared" / "llama-vocab"


def _existing(var: str, is_ok: Callable[[Path], bool]) -> Path | None:
    value = os.environ.get(var, "")
    return Path(value) if value and is_ok(Path(value)) else None


LLAMA_CPP_SRC = _existing("TOKENPRISM_LLAMA_CPP_SRC", lambda p: (p / "llama-vocab.cpp").is_file())
LLAMA_SDIST = _existing("TOKENPRISM_LLAMA_SDIST", Path.is_file)
ORACLE_PY = _existing("TOKENPRISM_ORACLE_PY", Path.is_file)
ORACLE_SCRIPT = _HERE / "llama_oracle.py"
DATA_DIR = _HERE / "data"
EXTRA_CASES_DIR = DATA_DIR / "reference"

needs_llama_src = pytest.mark.skipif(LLAMA_CPP_SRC is None,
                                     reason="llama.cpp sources not found (set TOKENPRISM_LLAMA_CPP_SRC)")
needs_sdist = pytest.mark.skipif(LLAMA_SDIST is None, reason="no local sdist (set TOKENPRISM_LLAMA_SDIST)")


# ---- finding (or fetching) the reference vocabularies -------------------------------------------

NOT_FOUND = ("reference vocabs not found: run `tokenprism samples`, set TOKENPRISM_VOCAB_DIR or put "
             "llama-vocab/ in ../shared beside the repo")


def default_cache_dir(cache_root: Path | None = None) -> Path:
    """Where a test run keeps the vocabularies it fetched: tokenprism's user
    cache folder as platformdirs names it (the same library names the data
    folder ``tokenprism samples`` fills) + llama-vocab. A cache, not that
    data folder, so running the tests does not change what the app lists.
    ``cache_root`` stands in for the user cache folder (tests with a fake home)."""
    import platformdirs

    root = platformdirs.user_cache_path("tokenprism", appauthor=False) if cache_root is None else cache_root
    return root / "llama-vocab"


class Announcer(Protocol):
    """Where the one line about a fetch goes (tests/conftest.py: the terminal)."""

    def begin(self, text: str) -> None: ...

    def end(self, text: str) -> None: ...


class _Held:
    """Keeps the line until a terminal is there to show it (a fetch can run
    while pytest is still loading conftest files)."""

    def __init__(self) -> None:
        self.lines: list[str] = []
        self._part = ""

    def begin(self, text: str) -> None:
        self._part = text

    def end(self, text: str) -> None:
        self.lines.append(self._part + text)
        self._part = ""


@dataclass(frozen=True)
class VocabSource:
    path: str | None  # the folder, or None: the parity tests skip
    skip_reason: str
    fetched: bool = False  # this run downloaded (or unpacked) them


def locate_vocabs(*, allow_fetch: bool, announce: Announcer, env: Mapping[str, str] | None = None,
                  home: Path | None = None, shared: Path = SHARED_VOCAB_DIR, cache: Path | None = None,
                  sdist: Path | None = None, **fetch_args: Any) -> VocabSource:
    """Find the reference vocabularies; when none are found and
    ``allow_fetch``, put them in ``cache`` with ``fetch_samples`` (from the
    local ``sdist`` when given; ``fetch_args``: its url, sha256, opener)."""
    from tokenprism.core.library.samples import (SDIST_SHA256, SDIST_VERSION, SamplesError, fetch_samples, find_vocab_dir,
                                         installed_files)

    # a fake home's data folder, so a test run never sees the real user's
    found = find_vocab_dir(shared, env=env, data_dir=None if home is None else home / ".local" / "share" / "tokenprism")
    if found is not None:
        return VocabSource(str(found), NOT_FOUND)
    if not allow_fetch:
        return VocabSource(None, NOT_FOUND)
    cache = default_cache_dir(None if home is None else home / ".cache" / "tokenprism") if cache is None else cache
    # an earlier run's cache is used as it is when every file is intact; only
    # a real download is announced, before it starts, so the pause has a reason
    present = installed_files(cache, fetch_args.get("sha256", SDIST_SHA256))
    if present is not None:
        return VocabSource(str(cache), NOT_FOUND)
    began = time.monotonic()
    announce.begin(f"reference vocabularies not found: fetching llama-cpp-python {SDIST_VERSION} "
                   f"(SHA-256 pinned) {'from PyPI' if sdist is None else f'from {sdist}'} into {cache} ...")
    try:
        report = fetch_samples(cache, sdist=sdist, **fetch_args)
    except (SamplesError, OSError) as e:  # OSError: the cache folder cannot be written
        announce.end(f" failed, the parity tests skip: {e}")
        return VocabSource(None, f"{NOT_FOUND}; fetching them failed: {e}")
    vocabs = sum(f.endswith(".gguf") for f in report.files)
    announce.end(f" {vocabs} vocabs ready ({time.monotonic() - began:.1f} s)")
    return VocabSource(str(cache), NOT_FOUND, fetched=True)


allow_fetch = False
"""tests/conftest.py turns this on: only a pytest run downloads, never a
tool that merely imports this module (tests/make_oracle_data.py, benchmarks)."""

_announcer: Announcer = _Held()
_source: VocabSource | None = None


def set_announcer(announcer: Announcer) -> None:
    """Send the fetch line to ``announcer`` from now on (and any line kept so far)."""
    global _announcer
    held = _announcer
    _announcer = announcer
    if isinstance(held, _Held):
        for line in held.lines:
            announcer.begin("")
            announcer.end(line)


def vocab_source() -> VocabSource:
    """The reference vocabularies of this process, looked up (or fetched) once."""
    global _source
    if _source is None:
        _source = locate_vocabs(allow_fetch=allow_fetch, announce=_announcer, sdist=LLAMA_SDIST)
    return _source


def vocab_dir() -> str | None:
    return vocab_source().path


def __getattr__(name: str) -> str | None:
    # VOCAB_DIR and SKIP_REASON are looked up on first use (PEP 562), so that
    # importing this module never downloads anything
    if name == "VOCAB_DIR":
        return vocab_source().path
    if name == "SKIP_REASON":
        return vocab_source().skip_reason
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


# ---- reading them -------------------------------------------------------------------------------

def run_oracle(vocab: str | os.PathLike[str], items: list[Any], *flags: str) -> list[Any]:
    """Ask llama.cpp (``tests/llama_oracle.py`` under ``TOKENPRISM_ORACLE_PY``)."""
    if ORACLE_PY is None:
        pytest.skip("no llama.cpp oracle (set TOKENPRISM_ORACLE_PY to a Python with llama-cpp-python)")
    p = subprocess.run([str(ORACLE_PY), str(ORACLE_SCRIPT), str(vocab), *flags], input=json.dumps(items),
                       capture_output=True, text=True, timeout=1800)
    if p.returncode != 0:
        raise RuntimeError(f"llama_oracle.py failed ({p.returncode}): {p.stderr[-2000:]}")
    out: list[Any] = json.loads(p.stdout)
    return out


def read_jsonl(name: str) -> list[dict[str, Any]]:
    """Rows of ``tests/data/<name>`` (made by tests/make_oracle_data.py)."""
    with open(DATA_DIR / name, encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def vocab_path(name: str) -> str:
    source = vocab_source()
    if source.path is None:
        pytest.skip(source.skip_reason)
    return os.path.join(source.path, f"ggml-vocab-{name}.gguf")


def _reference_file(vocab_dir: str, name: str) -> Path | None:
    """``name`` from the vocab folder, else from tests/data/reference."""
    for folder in (Path(vocab_dir), EXTRA_CASES_DIR):
        if (folder / name).is_file():
            return folder / name
    return None


@dataclass(frozen=True)
class Case:
    vocab: str
    text: str
    ids: tuple[int, ...]
    add_special: bool = False
    parse_special: bool = False


def inp_out_cases(name: str) -> list[Case]:
    """The ``.inp``/``.out`` cases of one vocab (add_special and parse_special off)."""
    vocab_dir = vocab_source().path
    if vocab_dir is None:
        return []
    inp_file = _reference_file(vocab_dir, f"ggml-vocab-{name}.gguf.inp")
    out_file = _reference_file(vocab_dir, f"ggml-vocab-{name}.gguf.out")
    if inp_file is None or out_file is None:
        raise FileNotFoundError(f"ggml-vocab-{name}.gguf: no .inp/.out in {vocab_dir} or {EXTRA_CASES_DIR}")
    with open(inp_file, encoding="utf-8", newline="") as f:
        inp = f.read()
    with open(out_file, encoding="utf-8") as f:
        out = f.read()
    sep = "\n__ggml_vocab_test__\n"
    texts = inp.split(sep)
    if texts and texts[-1] == "":
        texts.pop()
    lines = out.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    if len(texts) != len(lines):
        raise ValueError(f"{name}: {len(texts)} texts but {len(lines)} expected lines")
    return [Case(name, t, tuple(int(x) for x in line.split())) for t, line in zip(texts, lines)]


def special_cases(name: str) -> list[Case]:
    """Rows of ``special-cases.jsonl`` for one vocab."""
    vocab_dir = vocab_source().path
    if vocab_dir is None:
        return []
    path = _reference_file(vocab_dir, "special-cases.jsonl")
    if path is None:
        raise FileNotFoundError(f"special-cases.jsonl: not in {vocab_dir} or {EXTRA_CASES_DIR}")
    out: list[Case] = []
    with open(path, encoding="utf-8") as f:
        for line in f:
            row = json.loads(line)
            if row["vocab"] == f"ggml-vocab-{name}.gguf":
                out.append(Case(name, row["text"], tuple(row["ids"]), row["add_special"], row["parse_special"]))
    return out


def parity_params(names: list[str]) -> list[object]:
    """pytest params for every case of ``names``, each with a readable id."""
    params: list[object] = []
    for name in names:
        for i, c in enumerate(inp_out_cases(name)):
            params.append(pytest.param(c, id=f"{name}-inp{i}-{c.text[:24]!r}"))
        for i, c in enumerate(special_cases(name)):
            flags = f"{'A' if c.add_special else 'a'}{'P' if c.parse_special else 'p'}"
            params.append(pytest.param(c, id=f"{name}-special{i}-{flags}-{c.text[:24]!r}"))
    if not params:
        params.append(pytest.param(None, marks=pytest.mark.skip(reason=vocab_source().skip_reason),
                                   id="no-reference-data"))
    return params
