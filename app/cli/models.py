"""The ``tokenprism models`` and ``tokenprism samples`` subcommands.

    tokenprism models                      # GGUF files found on this computer
    tokenprism models --format json --add-folder ~/models
    tokenprism samples                     # download llama.cpp's reference vocabs

Registered on the main parser by :func:`add_subcommands`. Errors are
:class:`~tokenprism.core.errors.TokenPrismError`, which the CLI's ``main``
prints as one line. Nothing here imports Qt unless the folders saved by
the desktop app are asked for (and then only when PySide6 is installed).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any, Sequence

from tokenprism.core.library.discovery import FoundModel, discover
from tokenprism.core.library.samples import SDIST_NAME, default_samples_dir, fetch_samples
from ..logic.pieces import human_size

MODEL_FORMATS = ("table", "json")


def add_subcommands(subparsers: Any) -> None:
    """Add ``models`` and ``samples`` to an ``add_subparsers()`` object."""
    s = subparsers.add_parser(
        "models", help="list the GGUF models found on this computer",
        description="List GGUF files in the Hugging Face hub cache, llama.cpp's cache, LM Studio's and "
                    "GPT4All's model folders, ollama's blob store, the reference vocabs of `tokenprism "
                    "samples`, the folders added in the app, and any --add-folder.")
    s.add_argument("--format", choices=MODEL_FORMATS, default="table", help="table (default) or json")
    s.add_argument("--add-folder", dest="folders", action="append", default=[], metavar="DIR",
                   help="also scan DIR (repeatable)")
    s.add_argument("--no-saved-folders", action="store_true",
                   help="do not scan the folders added in the desktop app")
    s.set_defaults(func=cmd_models)

    s = subparsers.add_parser(
        "samples", help="download llama.cpp's reference vocab files",
        description=f"Download {SDIST_NAME} from PyPI (pinned by version and SHA-256), and unpack its "
                    "llama.cpp ggml-vocab-*.gguf test vocabularies with their .inp/.out cases into the "
                    f"user data folder ({default_samples_dir()}). The app lists them and the test suite "
                    "finds them there. Nothing is downloaded when they are already present.")
    s.add_argument("--dest", metavar="DIR", help="put the files in DIR instead")
    s.add_argument("--sdist", metavar="FILE", help=f"use a local copy of {SDIST_NAME} instead of downloading")
    s.add_argument("--force", action="store_true", help="download and unpack again even when present")
    s.add_argument("-q", "--quiet", action="store_true", help="no progress output")
    s.set_defaults(func=cmd_samples)


# ---- models ------------------------------------------------------------------------------------

def saved_folders() -> list[str]:
    """The folders the desktop app's Models panel scans (none when Qt is
    not installed)."""
    try:
        from ..qt.settings import AppSettings
    except ImportError:
        return []
    return AppSettings().model_folders()


def model_table(models: Sequence[FoundModel]) -> str:
    head = ("NAME", "TOKENIZER", "VOCAB", "SIZE", "SOURCE", "PATH")
    rows = [(m.name, m.tokenizer or "-", f"{m.vocab_size:,}" if m.vocab_size else "-", human_size(m.size),
             m.source, m.path) for m in models]
    widths = [max(len(r[i]) for r in [head, *rows]) for i in range(len(head) - 1)]
    right = {2, 3}
    lines = []
    for r in [head, *rows]:
        cells = [r[i].rjust(widths[i]) if i in right else r[i].ljust(widths[i]) for i in range(len(widths))]
        lines.append("  ".join([*cells, r[-1]]))
    return "\n".join(lines)


def _show_scan_progress(text: str) -> None:
    sys.stderr.write("\r\033[K" + text[:100])
    sys.stderr.flush()


def cmd_models(args: argparse.Namespace) -> int:
    folders = list(args.folders)
    for f in folders:
        if not os.path.isdir(os.path.expanduser(f)):
            print(f"tokenprism: warning: {f}: not a folder", file=sys.stderr)
    if not args.no_saved_folders:
        folders += [f for f in saved_folders() if f not in folders]
    live = sys.stderr.isatty() and args.format == "table"
    models = list(discover(Path.home(), os.environ, extra_folders=folders,
                           progress=_show_scan_progress if live else None))
    if live:
        sys.stderr.write("\r\033[K")
    if args.format == "json":
        print(json.dumps([m.as_dict() for m in models], indent=1, ensure_ascii=False))
    elif models:
        print(model_table(models))
    else:
        print("no GGUF models found (add folders with --add-folder DIR; `tokenprism samples` "
              "downloads llama.cpp's reference vocabs)")
    return 0


# ---- samples ----------------------------------------------------------------------------------

def _show_download_progress(done: int, total: int) -> None:
    of = f" / {total / 1e6:.1f}" if total else ""
    sys.stderr.write(f"\rdownloading {SDIST_NAME}: {done / 1e6:.1f}{of} MB")
    sys.stderr.flush()


def cmd_samples(args: argparse.Namespace) -> int:
    live = not args.quiet and sys.stderr.isatty()
    progress = _show_download_progress if live else None
    dest = Path(os.path.expanduser(args.dest)) if args.dest else None
    try:
        report = fetch_samples(dest, sdist=Path(args.sdist) if args.sdist else None, force=args.force,
                               progress=progress)
    finally:
        if live:
            sys.stderr.write("\r\033[K")
    print(report.summary())
    return 0
