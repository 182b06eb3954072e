"""The ``tokenprism stats`` subcommand: compare models over a whole corpus.

    tokenprism stats texts/ data.jsonl --model a.gguf --model b.gguf --format html --out report.html

Counts run on Dask (``tokenprism.core.corpus``): all local cores by
default, or the cluster of ``--scheduler tcp://HOST:PORT``. Dask, tqdm,
matplotlib and pyarrow come with the ``corpus`` extra; this module imports
none of them (nor the service) until the command runs.
"""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import os
import sys
from typing import Any

FORMATS = ("text", "json", "csv", "html")
INSTALL = "pip install tokenprism[corpus]"


def add_parser(subparsers: Any) -> None:
    s = subparsers.add_parser(
        "stats", help="compare tokenizers over a corpus of texts (on all cores or a Dask cluster)",
        description="Count how each model tokenizes a corpus: tokens, bytes/token, characters/token, "
                    "tokens/word, byte-fallback and unknown tokens, vocabulary used, by Unicode script and by "
                    "file, and the costliest words. A document is a whole text file, a JSON Lines record or a "
                    "Parquet cell; token counts are the sums of encoding each document (no BOS/EOS unless "
                    "--add-special).")
    s.add_argument("paths", nargs="+", metavar="PATH",
                   help="files or folders (recursive), .jsonl, .parquet, or - for standard input")
    s.add_argument("--model", "-m", action="append", required=True, metavar="MODEL",
                   help="a GGUF file (repeat for more; the first is the one the others are compared with)")
    s.add_argument("--field", default="text", metavar="NAME",
                   help="the text field of .jsonl records / the text column of .parquet files (default: text)")
    s.add_argument("--format", choices=FORMATS, default=None,
                   help="text (default), json, csv (one row per model and script) or html (with charts); "
                        "default: from the --out file's extension")
    s.add_argument("--out", "-o", metavar="FILE", help="write the report to FILE (atomically) instead of printing")
    s.add_argument("--workers", type=_workers, metavar="N", help="local worker processes (default: one per core)")
    s.add_argument("--scheduler", metavar="ADDRESS",
                   help="run on the Dask cluster at tcp://HOST:PORT (workers read the models and the corpus by "
                        "the same paths), or 'synchronous' to count in this process")
    s.add_argument("--limit-bytes", type=_byte_count, metavar="N",
                   help="read only the first N bytes of the corpus, in path order (e.g. 200MB)")
    s.add_argument("--add-special", action="store_true", help="count BOS/EOS as llama.cpp adds them per document")
    s.set_defaults(func=run)


def _format(args: argparse.Namespace) -> str:
    if args.format:
        return str(args.format)
    ext = os.path.splitext(args.out or "")[1].lower().lstrip(".")
    return {"htm": "html"}.get(ext, ext) if ext in (*FORMATS, "htm") else "text"


def _need(module: str, what: str) -> None:
    if importlib.util.find_spec(module) is None:
        from tokenprism.core.corpus import CorpusError

        raise CorpusError(f"{what} needs {module}, which is not installed: {INSTALL}")


def _workers(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be a whole number, at least 1, not {text!r}")
    return value


def _byte_count(text: str) -> int:
    """A number of bytes, with a unit or not ("200MB", "1GiB": Dask's parse_bytes)."""
    try:
        value = int(text)
    except ValueError:
        try:
            from dask.utils import parse_bytes
            value = int(parse_bytes(text))
        except (ImportError, ValueError, KeyError):
            value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"not a number of bytes (at least 1): {text!r}")
    return value


def run(args: argparse.Namespace) -> int:
    from tokenprism.core.corpus import CorpusError

    fmt = _format(args)
    for m in args.model:
        if not os.path.isfile(m):
            raise CorpusError(f"{m}: no such model file")
    local = args.scheduler == "synchronous"
    if not local:
        _need("distributed", "running on Dask")
    if fmt == "html":
        _need("matplotlib", "the HTML report")
    if any(p.lower().endswith(".parquet") for p in args.paths):
        _need("pyarrow", "reading .parquet")
    from tokenprism.core.corpus import profile
    from tokenprism.core.corpus.report import render

    bar = _progress_bar()
    try:
        report = profile(args.paths, args.model, field=args.field, workers=args.workers, scheduler=args.scheduler,
                         limit_bytes=args.limit_bytes, add_special=args.add_special,
                         progress=bar.update if bar is not None else None)
    finally:
        if bar is not None:
            bar.close()
    text = render(report, fmt)
    if args.out:
        from tokenprism.core.formats.export import write_atomic

        write_atomic(args.out, text)
    else:
        sys.stdout.write(text)
        sys.stdout.flush()
    for m in report.missing[:5]:
        print(f"tokenprism: warning: partition {m.index} ({m.files}) not counted: {m.reason}", file=sys.stderr)
    if len(report.missing) > 5:
        print(f"tokenprism: warning: ... and {len(report.missing) - 5} more partitions not counted "
              "(listed under \"missing\" in --format json)", file=sys.stderr)
    return 1 if report.missing else 0


class _Bar:
    """A tqdm bar in bytes, with rate and time left, fed by Progress."""

    def __init__(self) -> None:
        # (through importlib: tqdm ships no type information)
        tqdm: Any = importlib.import_module("tqdm").tqdm
        self._bar: Any = tqdm(total=0, unit="B", unit_scale=True, unit_divisor=1024, desc="corpus",
                              file=sys.stderr, dynamic_ncols=True)

    def update(self, p: Any) -> None:
        bar = self._bar
        if bar.total != p.bytes_total:
            bar.total = p.bytes_total
        bar.set_postfix_str(f"{p.parts_done}/{p.parts_total} partitions", refresh=False)
        bar.update(p.bytes_done - bar.n)

    def close(self) -> None:
        self._bar.close()


def _progress_bar() -> _Bar | None:
    """A progress bar on a terminal only (and only with tqdm installed)."""
    if not sys.stderr.isatty() or importlib.util.find_spec("tqdm") is None:
        return None
    return _Bar()
