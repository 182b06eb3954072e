"""Reading llama.cpp's reference tokenizations (see shared/llama-vocab/README.md).

Parity tests build one test id per case with :func:`parity_params`, so a
failure names the vocab and the text.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

import pytest

_HERE = Path(__file__).resolve().parent


def _find_vocab_dir() -> str | None:
    env = os.environ.get("TOKENPRISM_VOCAB_DIR")
    candidates = [Path(env)] if env else []
    candidates.append(_HERE.parent.parent / "shared" / "llama-vocab")
    try:  # where `tokenprism samples` downloads them
        from tokenprism.core.samples import default_samples_dir
        candidates.append(default_samples_dir())
    except ImportError:
        pass
    for c in candidates:
        if c.is_dir() and any(c.glob("ggml-vocab-*.gguf")):
            return str(c)
    return None


VOCAB_DIR = _find_vocab_dir()
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
