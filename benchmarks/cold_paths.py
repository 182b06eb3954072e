"""The cold paths a user takes, against llama.cpp and tiktoken.

    python benchmarks/cold_paths.py [encode] [open] [cli] [tiktoken]
        [--vocabs NAME ...] [--rounds 3] [--llama-python PY]
        [--llama-tokenize BIN] [--json FILE]
    python benchmarks/cold_paths.py --readme-table RUN.json [RUN.json ...]

``benchmarks/run_suite.py`` measures prepared models on warm processes;
this measures what a user meets first:

``encode``   the first ``encode`` of a model just opened (open not counted
             on either side) of the same ~0.11 MB text, English prose plus
             mixed scripts (``benchtexts``): tables built on first use count.
``open``     the first ``open_model`` in a fresh process (the kernel
             already imported; plugins and their tables count) against
             llama.cpp's ``llama_model_load_from_file`` (vocab_only).
``cli``      process start to ids printed: ``tokenprism tokenize MODEL
             Hello --format ids`` against llama.cpp's own ``llama-tokenize
             -m MODEL -p Hello --ids --no-bos`` (built by
             ``benchmarks/build_llama_tokenize.sh``), with the floors beside
             them: a bare interpreter, ``tokenprism --version``/``--help``.
``tiktoken`` the first encode of a >= 5 MB text (this interpreter's
             standard-library source) on a freshly opened gpt-2 and
             llama-bpe, against tiktoken's ``Encoding`` built from the same
             GGUF's tokens (rank = id) and the model's pre-tokenizer regex.

Every measurement is one fresh process; rounds are interleaved (each round
visits every vocabulary and alternates which side goes first) and each cell
is the median of the rounds. A first, unrecorded round writes Python's
bytecode caches and warms the OS file cache (children run without
``PYTHONDONTWRITEBYTECODE``: an installed package has its .pyc files). The ratio is the other side's time over
TokenPrism's: above 1.0x TokenPrism is faster. Token ids are compared on
every run (a digest per side); a mismatch is printed as ``IDS DIFFER``.

llama.cpp's side runs in ``--llama-python`` (an interpreter with
llama-cpp-python 0.3.36, default ``/work/llama/venv/bin/python`` when it
exists) through its C API, as run_suite does. Timings are wall-clock
(``perf_counter``): a first use includes its page faults and file reads.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from array import array
from pathlib import Path
from typing import Any, Callable, Sequence

_HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(_HERE))
sys.path.insert(0, str(_HERE.parent / "tests"))  # llama_oracle: llama.cpp's set-up, stdlib only

from llama_oracle import load_vocab_only, quiet_llama  # noqa: E402

VOCABS = ["aquila", "baichuan", "bert-bge", "command-r", "deepseek-coder", "deepseek-llm", "falcon",
          "gemma-4", "gpt-2", "gpt-neox", "llama-bpe", "llama-spm", "mpt", "nomic-bert-moe", "phi-3",
          "qwen2", "qwen35", "refact", "starcoder"]
TIKTOKEN_VOCABS = ["gpt-2", "llama-bpe"]
PATHS = ("encode", "open", "cli", "tiktoken")
DEFAULT_LLAMA_PYTHON = "/work/llama/venv/bin/python"
DEFAULT_LLAMA_TOKENIZE = str(_HERE.parent / "build" / "llama-tokenize" / "bin" / "llama-tokenize")
ENCODE_TEXT_BYTES = (80_000, 30_000)  # English prose, mixed scripts: ~0.11 MB
BIG_TEXT_BYTES = 5_200_000
CLI_TEXT = "Hello"


def _digest(ids: Sequence[int]) -> str:
    return hashlib.sha1(array("i", ids).tobytes()).hexdigest()[:12]


# ---- workers (each runs alone in a fresh process, prints one JSON line) --------


def _llama_tokenize(lc: Any, vocab: Any, raw: bytes) -> tuple[float, list[int]]:
    # the buffer is made outside the clock: llama.cpp's side is its C call
    cap = len(raw) + 8
    buf = (lc.llama_token * cap)()
    t0 = time.perf_counter()
    n = lc.llama_tokenize(vocab, raw, len(raw), buf, cap, False, False)
    took = time.perf_counter() - t0
    if n < 0:
        raise RuntimeError(f"llama_tokenize failed ({n})")
    return took, list(buf[:n])


def worker_tp_encode(path: str, text_file: str) -> dict[str, Any]:
    from tokenprism.core import open_model

    text = Path(text_file).read_text(encoding="utf-8")
    m = open_model(path)
    t0 = time.perf_counter()
    ids = m.encode(text).token_ids
    took = time.perf_counter() - t0
    return {"secs": took, "ids": _digest(ids), "n": len(ids)}


def worker_llama_encode(path: str, text_file: str) -> dict[str, Any]:
    lc = quiet_llama()
    raw = Path(text_file).read_bytes()
    vocab = lc.llama_model_get_vocab(load_vocab_only(lc, path))
    took, ids = _llama_tokenize(lc, vocab, raw)
    return {"secs": took, "ids": _digest(ids), "n": len(ids)}


def worker_tp_open(path: str, text_file: str) -> dict[str, Any]:
    from tokenprism.core import open_model

    t0 = time.perf_counter()
    m = open_model(path)
    took = time.perf_counter() - t0
    ids = m.encode(CLI_TEXT).token_ids
    return {"secs": took, "ids": _digest(ids), "n": len(ids)}


def worker_llama_open(path: str, text_file: str) -> dict[str, Any]:
    lc = quiet_llama()
    t0 = time.perf_counter()
    model = load_vocab_only(lc, path)
    took = time.perf_counter() - t0
    _, ids = _llama_tokenize(lc, lc.llama_model_get_vocab(model), CLI_TEXT.encode())
    return {"secs": took, "ids": _digest(ids), "n": len(ids)}


def tiktoken_encoding(path: str) -> Any:
    """A tiktoken ``Encoding`` made from the GGUF itself: each byte-level
    token's bytes ranked by its id (gpt-2's and llama-3's ids are in merge
    order, so id order is merge order) and the model's pre-tokenizer regex
    as TokenPrism's BPE plugin reads it for that model."""
    import tiktoken
    from tokenprism.core import open_model
    from tokenprism.core.vocab import Attr
    from tokenprism.plugins.bpe import pretokenize

    m = open_model(path)
    pre = m.vocab.pre
    regex = {"gpt-2": pretokenize.GPT2_REGEX, "llama-bpe": pretokenize.LLAMA3_REGEX}[pre]
    if not regex.endswith("|\\s+"):
        # llama.cpp keeps text no alternative matched as a piece of its own;
        # tiktoken drops it, so the trailing-whitespace catch-all is spelled out
        regex += "|\\s+"
    ranks: dict[bytes, int] = {}
    special: dict[str, int] = {}
    for tid in range(len(m)):
        if m.vocab.attrs[tid] & Attr.NORMAL:
            ranks.setdefault(m.token_bytes(tid), tid)
        else:
            special[m.vocab.pieces[tid]] = tid
    return tiktoken.Encoding(f"gguf-{pre}", pat_str=regex, mergeable_ranks=ranks, special_tokens=special)


def worker_tp_big(path: str, text_file: str) -> dict[str, Any]:
    return worker_tp_encode(path, text_file)


def worker_tiktoken_big(path: str, text_file: str) -> dict[str, Any]:
    enc = tiktoken_encoding(path)
    text = Path(text_file).read_text(encoding="utf-8")
    t0 = time.perf_counter()
    ids = enc.encode_ordinary(text)
    took = time.perf_counter() - t0
    return {"secs": took, "ids": _digest(ids), "n": len(ids)}


WORKERS: dict[str, Callable[[str, str], dict[str, Any]]] = {
    "tp_encode": worker_tp_encode, "llama_encode": worker_llama_encode,
    "tp_open": worker_tp_open, "llama_open": worker_llama_open,
    "tp_big": worker_tp_big, "tiktoken_big": worker_tiktoken_big,
}


# ---- driver -------------------------------------------------------------------


def _env() -> dict[str, str]:
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1")
    # an installed package has its bytecode cached (pip compiles it); without
    # the cache every pure-Python module is compiled again in every process
    # (core/unicode_data.py alone: ~80 ms), which no user pays twice
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def _run_worker(python: str, name: str, path: Path, text_file: Path) -> dict[str, Any]:
    env = _env()
    res = subprocess.run([python, str(Path(__file__).resolve()), "--worker", name, str(path), str(text_file)],
                         capture_output=True, text=True, timeout=600, env=env)
    if res.returncode != 0:
        return {"error": (res.stderr.strip().splitlines() or ["exit %d" % res.returncode])[-1]}
    return json.loads(res.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


def _run_command(cmd: list[str]) -> dict[str, Any]:
    env = _env()
    t0 = time.perf_counter()
    res = subprocess.run(cmd, capture_output=True, text=True, timeout=600, env=env, stdin=subprocess.DEVNULL)
    took = time.perf_counter() - t0
    if res.returncode != 0:
        return {"error": (res.stderr.strip().splitlines() or ["exit %d" % res.returncode])[-1]}
    out = res.stdout.strip()
    try:
        ids = json.loads(out.splitlines()[-1]) if out.startswith("[") else None
    except (ValueError, IndexError):
        ids = None
    return {"secs": took, "ids": _digest(ids) if ids is not None else out[:40], "n": len(ids or ())}


def _tokenprism_cli(python: str) -> list[str]:
    # the installed console script beside the interpreter, as a user runs it
    script = Path(python).parent / "tokenprism"
    return [str(script)] if script.exists() else [python, "-m", "tokenprism.app.cli"]


def encode_text() -> str:
    from benchtexts import english_text, mixed_text

    en, mixed = ENCODE_TEXT_BYTES
    return english_text(en) + "\n\n" + mixed_text(mixed)


def big_text(n_chars: int = BIG_TEXT_BYTES) -> str:
    """This interpreter's standard-library source, files in name order, cut at
    ``n_chars``: real code and prose (docstrings, comments) in one text."""
    import sysconfig

    parts: list[str] = []
    size = 0
    for f in sorted(Path(sysconfig.get_paths()["stdlib"]).rglob("*.py")):
        if "site-packages" in f.parts or "test" in f.parts:
            continue
        try:
            s = f.read_text(encoding="utf-8")
        except (UnicodeDecodeError, OSError):
            continue
        parts.append(s)
        size += len(s)
        if size >= n_chars:
            break
    return "".join(parts)[:n_chars]


class Table:
    """Per vocabulary and side: the times and id digests of every round."""

    def __init__(self, title: str, sides: Sequence[str]) -> None:
        self.title = title
        self.sides = list(sides)
        self.rows: dict[str, dict[str, list[dict[str, Any]]]] = {}

    def add(self, row: str, side: str, result: dict[str, Any]) -> None:
        self.rows.setdefault(row, {}).setdefault(side, []).append(result)

    def median(self, row: str, side: str) -> float | None:
        secs = [r["secs"] for r in self.rows.get(row, {}).get(side, []) if "secs" in r]
        return statistics.median(secs) if secs else None

    def ids_note(self, row: str) -> str:
        digests = {r.get("ids") for side in self.sides for r in self.rows.get(row, {}).get(side, [])
                   if "ids" in r}
        errors = [r["error"] for side in self.sides for r in self.rows.get(row, {}).get(side, []) if "error" in r]
        if errors:
            return "ERROR: " + errors[0][:80]
        return "ids equal" if len(digests) == 1 else "IDS DIFFER"

    def render(self, unit: float = 1e3, unit_name: str = "ms") -> str:
        head = f"| {self.title} | " + " | ".join(f"{s} ({unit_name})" for s in self.sides)
        head += " | ratio | ids |\n|---|" + "---|" * (len(self.sides) + 2)
        lines = [head]
        for row, by_side in self.rows.items():
            meds = [self.median(row, s) for s in self.sides]
            digits = 1 if unit >= 1e3 else 2
            cells = [f"{m * unit:.{digits}f}" if m is not None else "-" for m in meds]
            ratio = f"{meds[1] / meds[0]:.2f}x" if len(meds) > 1 and meds[0] and meds[1] else "-"
            lines.append(f"| {row} | " + " | ".join(cells) + f" | {ratio} | {self.ids_note(row)} |")
        return "\n".join(lines)

    def as_json(self) -> dict[str, Any]:
        return {"title": self.title, "sides": self.sides, "rows": self.rows,
                "medians": {row: {s: self.median(row, s) for s in self.sides} for row in self.rows}}


def _interleaved(rounds: int, vocabs: Sequence[str], sides: Sequence[str],
                 run: Callable[[str, str], dict[str, Any]], table: Table) -> None:
    # round 0 is thrown away: it writes the bytecode caches and brings the
    # files into the OS cache, as any earlier use on a user's machine has
    for r in range(-1, rounds):
        order = list(sides) if r % 2 == 0 else list(reversed(sides))
        for name in vocabs:
            for side in order:
                result = run(name, side)
                if r >= 0:
                    table.add(name, side, result)
        print(f"  {table.title}: round {r + 1}/{rounds} done", file=sys.stderr)


# the tables' titles start so, whatever their sizes say
_TITLES = {"encode": "first encode after open", "open": "first open", "cli": "whole process",
           "tiktoken": "first encode of"}


def readme_table(runs: Sequence[dict[str, Any]]) -> str:
    """One table of every cold path per vocabulary (the README's) from the
    ``--json`` files of one or more runs: each cell ours / theirs (ratio)
    in ms (s for tiktoken), the first run holding that path counting."""
    found: dict[str, dict[str, Any]] = {}
    commits: list[str] = []
    for run in runs:
        commits.append(run["commit"] + (" (uncommitted changes)" if run.get("dirty") else ""))
        for t in run["tables"]:
            for path, prefix in _TITLES.items():
                if t["title"].startswith(prefix):
                    found.setdefault(path, t)
    heads = {"encode": "first encode, 0.11 MB: ms (vs llama.cpp)", "open": "first open: ms (vs llama.cpp)",
             "cli": "`tokenize MODEL Hello`, whole process: ms (vs llama-tokenize)",
             "tiktoken": "5.2 MB first encode: s (vs tiktoken)"}
    paths = [p for p in _TITLES if p in found]
    vocabs = [v for v in VOCABS if any(v in found[p]["medians"] for p in paths)]
    lines = ["| vocab | " + " | ".join(heads[p] for p in paths) + " |", "|---|" + "---|" * len(paths)]
    for v in vocabs:
        cells = []
        for p in paths:
            med = found[p]["medians"].get(v)
            ours, theirs = (list(med.values()) + [None, None])[:2] if med else (None, None)
            if ours is None or theirs is None:
                cells.append("–")
                continue
            scale, digits = (1.0, 2) if p == "tiktoken" else (1e3, 0 if ours >= 0.1 else 1)
            cells.append(f"{ours * scale:.{digits}f} / {theirs * scale:.{digits}f} ({theirs / ours:.2f}×)")
        lines.append(f"| {v} | " + " | ".join(cells) + " |")
    lines.append("")
    lines.append("Measured on " + ", ".join(dict.fromkeys(commits)) + ".")
    floors = next((t for run in runs for t in run["tables"] if t["title"].startswith("floors")), None)
    if floors is not None:
        # goal 3's floor: what any `tokenprism tokenize` pays before it reads a file
        cells = [f"{row} {med['tokenprism'] * 1e3:.0f} ms" for row, med in floors["medians"].items()
                 if med.get("tokenprism") is not None]
        lines.append("Floors in the same run (whole process, medians): " + "; ".join(cells) + ".")
    return "\n".join(lines)


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "--worker":
        print(json.dumps(WORKERS[sys.argv[2]](sys.argv[3], sys.argv[4])))
        return
    if len(sys.argv) > 1 and sys.argv[1] == "--readme-table":
        print(readme_table([json.loads(Path(f).read_text()) for f in sys.argv[2:]]))
        return
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("paths", nargs="*", metavar="PATH", help=f"any of {', '.join(PATHS)} (default: all)")
    ap.add_argument("--vocabs", nargs="+", default=VOCABS)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--python", default=sys.executable, help="TokenPrism's interpreter (default: this one)")
    ap.add_argument("--llama-python", default=DEFAULT_LLAMA_PYTHON)
    ap.add_argument("--llama-tokenize", default=DEFAULT_LLAMA_TOKENIZE)
    ap.add_argument("--json", help="write every round's numbers here")
    args = ap.parse_args()
    paths = args.paths or list(PATHS)
    for p in paths:
        if p not in PATHS:
            ap.error(f"unknown path {p!r} (choose from {', '.join(PATHS)})")

    from benchpaths import vocab_file

    files = {name: vocab_file(name) for name in args.vocabs}
    tables: list[Table] = []
    commit = subprocess.run(["git", "-C", str(_HERE), "rev-parse", "--short", "HEAD"],
                            capture_output=True, text=True).stdout.strip()
    dirty = subprocess.run(["git", "-C", str(_HERE), "status", "--porcelain", "--untracked-files=no"],
                           capture_output=True, text=True).stdout.strip()
    print(f"commit {commit}{' (with uncommitted changes)' if dirty else ''}; "
          f"{args.rounds} rounds, medians; ratio = other / tokenprism (above 1.0x: tokenprism faster)")
    with tempfile.TemporaryDirectory() as tmp:
        small = Path(tmp, "encode.txt")
        small.write_text(encode_text(), encoding="utf-8")
        if "encode" in paths:
            t = Table(f"first encode after open, {small.stat().st_size / 1e6:.2f} MB", ["tokenprism", "llama.cpp"])
            _interleaved(args.rounds, args.vocabs, t.sides, lambda name, side: _run_worker(
                args.python if side == "tokenprism" else args.llama_python,
                "tp_encode" if side == "tokenprism" else "llama_encode", files[name], small), t)
            tables.append(t)
        if "open" in paths:
            t = Table("first open in a fresh process", ["tokenprism", "llama.cpp"])
            _interleaved(args.rounds, args.vocabs, t.sides, lambda name, side: _run_worker(
                args.python if side == "tokenprism" else args.llama_python,
                "tp_open" if side == "tokenprism" else "llama_open", files[name], small), t)
            tables.append(t)
        if "cli" in paths:
            tp = _tokenprism_cli(args.python)
            t = Table(f"whole process, tokenize {CLI_TEXT!r}", ["tokenprism", "llama-tokenize"])

            def cli(name: str, side: str) -> dict[str, Any]:
                if side == "tokenprism":
                    return _run_command([*tp, "tokenize", str(files[name]), CLI_TEXT, "--format", "ids"])
                return _run_command([args.llama_tokenize, "-m", str(files[name]), "-p", CLI_TEXT,
                                     "--ids", "--no-bos", "--log-disable"])
            _interleaved(args.rounds, args.vocabs, t.sides, cli, t)
            floors = Table("floors (whole process)", ["tokenprism"])
            for r in range(max(args.rounds, 5)):
                floors.add("bare interpreter (python -c pass)", "tokenprism",
                           _run_command([args.python, "-c", "pass"]))
                floors.add("python -c 'import numpy'", "tokenprism",
                           _run_command([args.python, "-c", "import numpy"]))
                floors.add("python -c 'import tokenprism.core'", "tokenprism",
                           _run_command([args.python, "-c", "import tokenprism.core"]))
                # what `tokenize` cannot do without: the interpreter, the
                # command line's module and the kernel open_model needs
                # (numpy with it), before any file is read
                floors.add("python -c 'import tokenprism.app.cli, tokenprism.core.model'", "tokenprism",
                           _run_command([args.python, "-c", "import tokenprism.app.cli, tokenprism.core.model"]))
                floors.add("tokenprism --version", "tokenprism", _run_command([*tp, "--version"]))
                floors.add("tokenprism --help", "tokenprism", _run_command([*tp, "--help"]))
            tables += [t, floors]
        if "tiktoken" in paths:
            big = Path(tmp, "big.txt")
            big.write_text(big_text(), encoding="utf-8")
            t = Table(f"first encode of {big.stat().st_size / 1e6:.1f} MB (stdlib source), fresh model",
                      ["tokenprism", "tiktoken"])
            names = [n for n in TIKTOKEN_VOCABS if n in files] or TIKTOKEN_VOCABS
            big_files = {n: vocab_file(n) for n in names}
            _interleaved(args.rounds, names, t.sides, lambda name, side: _run_worker(
                args.python, "tp_big" if side == "tokenprism" else "tiktoken_big", big_files[name], big), t)
            tables.append(t)
    for t in tables:
        print()
        print(t.render(1.0, "s") if t.title.startswith("first encode of") else t.render())
    if args.json:
        Path(args.json).write_text(json.dumps({"commit": commit, "dirty": bool(dirty),
                                               "tables": [t.as_json() for t in tables]}, indent=1))


if __name__ == "__main__":
    main()
