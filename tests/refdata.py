"""Reading llama.cpp's reference tokenizations (see shared/llama-vocab/README.md).

Parity tests build one test id per case with :func:`parity_params`, so a
failure names the vocab and the text.

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
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

import pytest

_HERE = Path(__file__).resolve().parent


SHARED_VOCAB_DIR = _HERE.parent.parent / "shared" / "llama-vocab"


def _find_vocab_dir() -> str | None:
    from tokenprism.core.library.samples import find_vocab_dir

    found = find_vocab_dir(SHARED_VOCAB_DIR)
    return None if found is None else str(found)


VOCAB_DIR = _find_vocab_dir()


def _existing(var: str, is_ok: Callable[[Path], bool]) -> Path | None:
    value = os.environ.get(var, "")
    return Path(value) if value and is_ok(Path(value)) else None


LLAMA_CPP_SRC = _existing("TOKENPRISM_LLAMA_CPP_SRC", lambda p: (p / "llama-vocab.cpp").is_file())
LLAMA_SDIST = _existing("TOKENPRISM_LLAMA_SDIST", Path.is_file)
ORACLE_PY = _existing("TOKENPRISM_ORACLE_PY", Path.is_file)
ORACLE_SCRIPT = _HERE / "llama_oracle.py"
DATA_DIR = _HERE / "data"

needs_llama_src = pytest.mark.skipif(LLAMA_CPP_SRC is None,
                                     reason="llama.cpp sources not found (set TOKENPRISM_LLAMA_CPP_SRC)")
needs_sdist = pytest.mark.skipif(LLAMA_SDIST is None, reason="no local sdist (set TOKENPRISM_LLAMA_SDIST)")


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
SKIP_REASON = ("reference vocabs not found: run `tokenprism samples`, set TOKENPRISM_VOCAB_DIR or put "
               "llama-vocab/ in ../shared beside the repo")


def vocab_path(name: str) -> str:
    if VOCAB_DIR is None:
        pytest.skip(SKIP_REASON)
    return os.path.join(VOCAB_DIR, f"ggml-vocab-{name}.gguf")


@dataclass(frozen=True)
class Case:
    vocab: str
    text: str
    ids: tuple[int, ...]
    add_special: bool = False
    parse_special: bool = False


def inp_out_cases(name: str) -> list[Case]:
    """The ``.inp``/``.out`` cases of one vocab (add_special and parse_special off)."""
    if VOCAB_DIR is None:
        return []
    base = os.path.join(VOCAB_DIR, f"ggml-vocab-{name}.gguf")
    with open(base + ".inp", encoding="utf-8", newline="") as f:
        inp = f.read()
    with open(base + ".out", encoding="utf-8") as f:
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
    if VOCAB_DIR is None:
        return []
    out: list[Case] = []
    with open(os.path.join(VOCAB_DIR, "special-cases.jsonl"), encoding="utf-8") as f:
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
        params.append(pytest.param(None, marks=pytest.mark.skip(reason=SKIP_REASON), id="no-reference-data"))
    return params
