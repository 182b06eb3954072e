"""The ``tokenprism chunk`` subcommand: a long text cut into pieces that fit
a token budget.

    tokenprism chunk MODEL --file book.txt --max-tokens 512 --overlap 64

Each line of the ``jsonl`` output is one piece: its text, its span in the
file's text (``str`` offsets) and its token count (tokenized alone, no
BOS/EOS). Without ``--overlap`` the pieces' texts concatenate back to the
file's text exactly.
"""

from __future__ import annotations

import argparse
import json
import os
from typing import Any

from tokenprism.core import open_model
from tokenprism.core.chat import ChunkError, chunk_text
from tokenprism.core.errors import TokenPrismError

FORMATS = ("jsonl", "text")


def add_parser(subparsers: Any) -> None:
    s = subparsers.add_parser(
        "chunk", help="split a text into pieces of at most N tokens",
        description="Split a text into consecutive pieces of at most N tokens each, cut only between tokens "
                    "at character boundaries, so the pieces concatenate back to the text.")
    s.add_argument("model")
    s.add_argument("--file", "-f", required=True, help="the text (UTF-8)")
    s.add_argument("--max-tokens", "-n", type=int, required=True, metavar="N", help="tokens per piece at most")
    s.add_argument("--overlap", type=int, default=0, metavar="K",
                   help="start each piece about K tokens before the previous one ended")
    s.add_argument("--parse-special", action="store_true", help="match special tokens in the text")
    s.add_argument("--format", choices=FORMATS, default="jsonl",
                   help="jsonl (default: one object per piece) or text (pieces between separator lines)")
    s.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    if not os.path.exists(args.model):
        raise TokenPrismError(f"{args.model}: no such file")
    try:
        with open(args.file, "rb") as f:
            text = f.read().decode("utf-8", "replace")
    except OSError as e:
        raise ChunkError(f"{args.file}: {e.strerror or e}") from None
    pieces = chunk_text(open_model(args.model), text, args.max_tokens, args.overlap, args.parse_special)
    for i, c in enumerate(pieces):
        if args.format == "jsonl":
            print(json.dumps(c.record(i), ensure_ascii=False))
        else:
            print(f"----- piece {i}: characters {c.start}..{c.end}, {c.tokens} tokens")
            print(c.text)
    return 0
