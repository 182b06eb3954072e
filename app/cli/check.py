"""The ``tokenprism check`` subcommand: does a GGUF tokenize like its source?

    tokenprism check model.gguf --against path/to/tokenizer.json
    tokenprism check model.gguf --against hf-folder/ --cases 500 --seed 7 --format json
    tokenprism check model.gguf                  # metadata warnings only

Exit status: 0 when nothing diverges, 4 when something does, 1 on error.
"""

from __future__ import annotations

import argparse
import json
import os
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from tokenprism.core import Model
    from tokenprism.core.check import CheckResult

EXIT_DIVERGES = 4
EXIT_ERROR = 1
CHECK_FORMATS = ("text", "json")
# core.check.texts.TEXTS_MODES, written here: importing the check service
# (the kernel and numpy, ~0.2 s) to build this parser would slow
# `tokenprism check --help` and its usage errors (tests/core/test_check.py compares)
TEXTS_MODES = ("lines", "file", "escaped")


def add_parser(subparsers: Any) -> None:
    """Add ``check MODEL [--against SOURCE] ...`` to an ``add_subparsers()`` object."""
    s = subparsers.add_parser(
        "check", help="check that a GGUF tokenizes like its source tokenizer.json / .model",
        description="Tokenize varied texts with the GGUF and with the tokenizer it was converted from "
                    "(a tokenizer.json run by Hugging Face tokenizers, a SentencePiece .model run by "
                    "sentencepiece, or a folder holding one), shrink every text whose ids differ to a "
                    "minimal string and name the stage at fault. Without --against, only the file's "
                    "metadata is checked. Exit status: 0 nothing diverges, 4 something does, 1 error "
                    "(a mistyped option too).")
    # the statuses: 0, 4, and 1 for every error, a mistyped option too
    s.usage_status = EXIT_ERROR
    s.add_argument("model", metavar="MODEL.gguf")
    s.add_argument("--against", metavar="SOURCE", help="tokenizer.json, .model, or a folder holding one")
    s.add_argument("--texts", metavar="FILE", help="also check the texts of FILE (UTF-8; see --texts-mode)")
    s.add_argument("--texts-mode", choices=TEXTS_MODES, default="lines",
                   help="lines (default): each non-empty line as written; file: the whole file as one "
                        "text; escaped: lines in which \\n \\t \\r \\\\ stand for newline, tab, "
                        "carriage return, backslash")
    s.add_argument("--cases", type=int, default=200, metavar="N",
                   help="random texts to generate (default 200)")
    s.add_argument("--seed", type=int, default=0, metavar="S", help="seed of the random texts (default 0)")
    s.add_argument("--add-special", action="store_true", help="compare with BOS/EOS added on both sides")
    s.add_argument("--timeout", type=float, default=5.0, metavar="SECONDS",
                   help="give up on one reference call after this long (default 5)")
    s.add_argument("--format", choices=CHECK_FORMATS, default="text", help="text (default) or json")
    s.set_defaults(func=run)


def _texts(args: argparse.Namespace) -> list[str]:
    from tokenprism.core.check import BUILTIN_TEXTS, CheckError, random_texts, read_texts

    if args.cases < 0:
        raise CheckError(f"--cases must be 0 or more, not {args.cases}")
    texts = list(BUILTIN_TEXTS) + random_texts(args.cases, args.seed)
    if args.texts is not None:
        texts += read_texts(args.texts, args.texts_mode)  # its errors are one-line CheckErrors
    return texts


def run(args: argparse.Namespace) -> int:
    # imported here: the command line's parser is built for every command,
    # and only this one needs the check service (and numpy, the plugins)
    from tokenprism.core import open_model
    from tokenprism.core.check import CheckError, CheckResult, check_texts, load_reference
    from tokenprism.core.check.metadata import metadata_warnings

    if not os.path.isfile(args.model):
        raise CheckError(f"{args.model}: no such file")
    if args.timeout <= 0:
        raise CheckError(f"--timeout must be more than 0, not {args.timeout}")
    model = open_model(args.model)
    if args.against is None:
        result = CheckResult(model.path, None, None)
    else:
        texts = _texts(args)
        ref = load_reference(args.against)
        result = check_texts(model, ref, texts, add_special=args.add_special, timeout=args.timeout)
    result.metadata_warnings = metadata_warnings(model)
    if args.format == "json":
        print(json.dumps(result.to_json(), ensure_ascii=False, indent=2))
    else:
        print(render_text(model, result))
    return EXIT_DIVERGES if result.divergences else 0


def _tokens(model: Model, ids: list[int], pieces: list[str] | None = None) -> str:
    shown = []
    for i in ids:
        if pieces is not None:
            shown.append(f"{i}:{pieces[i]!r}" if 0 <= i < len(pieces) else f"{i}:?")
        else:
            shown.append(f"{i}:{model.display_piece(i)!r}" if 0 <= i < len(model) else f"{i}:?")
    return " ".join(shown) or "(none)"


def render_text(model: Model, result: CheckResult) -> str:
    """The human report: counts, each minimal string with both
    tokenizations, the stage and what to do; then the metadata warnings."""
    from tokenprism.core.check.run import ADVICE
    from tokenprism.core.errors import printable

    out: list[str] = [f"model:  {result.model_path}"]
    if result.source_path is not None:
        out.append(f"source: {result.source_path} ({result.library}; "
                   f"{(result.shared or 0) * 100:.1f} % of pieces shared)")
        if result.source_note:
            out.append(f"        {printable(result.source_note)}")
        out.append(f"texts checked: {result.texts_checked}, diverging minimal strings: {len(result.divergences)}")
        for d in result.divergences:
            out.append("")
            more = f" (and {d.occurrences - 1} more texts)" if d.occurrences > 1 else ""
            out.append(f"  {printable(repr(d.text))}  stage: {d.stage}{more}")
            out.append(f"    from:   {printable(repr(d.original_text))}")
            out.append(f"    gguf:   {printable(_tokens(model, d.gguf_ids))}")
            shown = " ".join(f"{i}:{p!r}" for i, p in zip(d.reference_ids, d.reference_pieces))
            out.append(f"    source: {printable(shown) or '(none)'}")
            out.append(f"    why:    {printable(d.why)}")
            out.append(f"    to do:  {ADVICE[d.stage]}")
        for f in result.reference_failures:
            out.append(f"  reference failed on {printable(repr(f.text[:60]))}: {printable(f.error)}")
    if result.metadata_warnings:
        out.append("")
        out.append(f"metadata warnings: {len(result.metadata_warnings)}")
        for w in result.metadata_warnings:
            out.append(f"  [{w.code}] {printable(w.message)}")
    elif result.source_path is None:
        out.append("metadata: nothing looks stale or wrong")
    if result.source_path is not None and not result.divergences:
        out.append("no divergence: the GGUF tokenizes these texts exactly like its source")
    return "\n".join(out)


