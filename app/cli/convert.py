"""The ``tokenprism convert`` subcommand: tokenizer file → vocab-only GGUF.

    tokenprism convert tokenizer.model -o demo.gguf
    tokenprism convert path/to/hf-model/ -o model-vocab.gguf

Registered on the main parser by :func:`add_subcommand`. Errors are
:class:`~tokenprism.core.errors.TokenPrismError`, which the CLI's ``main``
prints as one line.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any



def add_subcommand(subparsers: Any) -> None:
    """Add ``convert INPUT -o OUT.gguf`` to an ``add_subparsers()`` object."""
    s = subparsers.add_parser(
        "convert", help="write a vocab-only GGUF from a SentencePiece .model or a tokenizer.json",
        description="Convert a SentencePiece .model (BPE or unigram) or a Hugging Face "
                    "tokenizer.json (byte-level BPE, WordPiece, Unigram; or a folder holding "
                    "one) into a vocab-only GGUF file that llama.cpp and TokenPrism can open.")
    s.add_argument("input", metavar="INPUT", help="tokenizer.model / *.model, tokenizer.json, or a folder")
    s.add_argument("-o", "--output", metavar="OUT.gguf", required=True, help="GGUF file to write")
    s.add_argument("--name", help="general.name to store (default: from the input's name)")
    s.add_argument("-q", "--quiet", action="store_true", help="do not print warnings")
    s.set_defaults(func=cmd_convert)


def cmd_convert(args: argparse.Namespace) -> int:
    """Run the conversion and print a one-line summary (warnings on stderr)."""
    # imported here: the converter brings the gguf package and numpy, which
    # every other command (and --help, which lists this one) does without
    from tokenprism.core.formats.convert import convert

    report = convert(args.input, args.output, name=args.name)
    print(report.summary())
    if not args.quiet:
        for w in report.warnings:
            print(f"tokenprism: warning: {w}", file=sys.stderr)
    return 0
