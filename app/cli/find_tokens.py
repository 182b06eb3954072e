"""The ``tokenprism find-tokens`` subcommand: every token that can produce a
string, for stop strings and logit bias.

    tokenprism find-tokens MODEL "</answer>" --format json

``json`` prints ``{"prefix": [ids], "suffix": [ids], "substring": [ids],
"tokenization": [ids], "word_start": [ids]}``: the first three literal by
bytes, ``word_start`` the pieces whose word-start ``▁`` stands for no byte
of STRING (see :mod:`tokenprism.core.library.find_tokens`
for what counts); ``text`` lists them by relation and kind, longest first.
"""

from __future__ import annotations

import argparse
import json
import os
from typing import TYPE_CHECKING, Any

from tokenprism.core.errors import TokenPrismError

if TYPE_CHECKING:  # imported when the command runs (the parser is built for every command)
    from tokenprism.core.library.find_tokens import FoundTokens, TokenBytes

FORMATS = ("text", "json")
SHOWN_PER_KIND = 40  # text format: the rest of a long kind is counted, not listed


def add_parser(subparsers: Any) -> None:
    s = subparsers.add_parser(
        "find-tokens", help="list the tokens that can produce a string (stop strings, logit bias)",
        description="List every token whose bytes are a prefix, a suffix or a substring of STRING's UTF-8 "
                    "(byte tokens included), grouped by kind, and the ids STRING itself tokenizes to. Word-start "
                    "pieces (SentencePiece/WordPiece '▁hello' for 'hello') write a space STRING lacks: they "
                    "are listed apart, as word_start.")
    s.add_argument("model")
    s.add_argument("string")
    s.add_argument("--parse-special", action="store_true",
                   help="match special-token text in STRING's own tokenization")
    s.add_argument("--format", choices=FORMATS, default="text", help="text (default) or json")
    s.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from tokenprism.core import open_model
    from tokenprism.core.library.find_tokens import TokenBytes, find_tokens

    if not os.path.exists(args.model):
        raise TokenPrismError(f"{args.model}: no such file")
    model = open_model(args.model)
    table = TokenBytes(model)
    found = find_tokens(table, args.string, args.parse_special)
    if args.format == "json":
        print(json.dumps(found.to_json()))
    else:
        print("\n".join(text_lines(table, found)))
    return 0


def text_lines(table: TokenBytes, found: FoundTokens) -> list[str]:
    """The text format: the tokenization, then each relation by kind."""
    from tokenprism.core.library.find_tokens import RELATIONS, by_kind, string_bytes

    from ..logic.pieces import piece_label

    model = table.model

    def label(i: int) -> str:
        return f"{i} {piece_label(model, i)}"

    size = len(string_bytes(found.string))
    lines = [f"{found.string!r}: {size} byte{'s' if size != 1 else ''}, {model.name}",
             f"tokenization ({len(found.tokenization)}): " + "  ".join(label(i) for i in found.tokenization)]
    groups = [(rel, found.relation(rel)) for rel in RELATIONS]
    if found.word_start:  # only models that write a word-start ▁ have any
        groups.append(("word_start, its ▁ standing for the word start", found.word_start))
    for rel, ids in groups:
        lines.append(f"{rel} ({len(ids)}):")
        for kind, part in by_kind(table, ids).items():
            shown = "  ".join(label(i) for i in part[:SHOWN_PER_KIND])
            more = f"  … and {len(part) - SHOWN_PER_KIND} more" if len(part) > SHOWN_PER_KIND else ""
            lines.append(f"  {kind} ({len(part)}): {shown}{more}")
    return lines
