"""The ``tokenprism`` command line.

``tokenprism`` alone (or with model paths) starts the desktop app; the
subcommands print to the terminal with the same semantics as llama.cpp's
``llama-tokenize``. A user's mistake prints one line on stderr and exits
non-zero, never a traceback.
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Iterable, NoReturn, Sequence

# before numpy is imported: its OpenBLAS would start a thread per core that
# spins for ~50 ms of CPU at start-up, and nothing here calls BLAS
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

from tokenprism.core import Model, TokenPrismError, open_model
from tokenprism.core.build_info import build_kind, module_status
from tokenprism.core.errors import printable
from tokenprism.core.formats.export import (TokenList, describe_id_problems, format_for_path, iter_render,
                                    scan_ids, token_list, write_export)
from tokenprism.core.plugins import failed_plugins, tokenizer_specs

from .cli_convert import add_subcommand as add_convert_subcommand
from .cli_models import add_subcommands as add_models_subcommands
from .pieces import piece_label

VERSION = "0.1.0"
FORMATS = ("ids", "pieces", "json", "jsonl", "csv")
COMPARE_FORMATS = ("table", "json", "jsonl", "csv", "ids")
EXIT_USAGE = 2
EXIT_ERROR = 1


class CliError(Exception):
    """A problem to report in one line."""


class UsageError(CliError):
    """A malformed command line (exit status 2, like argparse's own)."""


class OneLineParser(argparse.ArgumentParser):
    """argparse, but a usage mistake is one line on stderr (``tokenprism:
    error: ...``) instead of the usage block, and exits with status 2."""

    def error(self, message: str) -> NoReturn:
        raise UsageError(f"{message} (see {self.prog} --help)")


# ---- commands ---------------------------------------------------------------

def _open(path: str) -> Model:
    if not os.path.exists(path):
        raise CliError(f"{path}: no such file")
    return open_model(path)


def cmd_info(args: argparse.Namespace) -> int:
    model = _open(args.model)
    v = model.vocab
    cfg = model.config
    g = model.gguf
    lines = [
        f"file:          {model.path}",
        f"size:          {g.file_size:,} bytes",
        f"gguf version:  {g.version}",
        f"architecture:  {v.architecture or '-'}",
        f"name:          {v.name or '-'}",
        f"tokenizer:     {v.model} ({cfg.kind}, plugin {model.spec.name})",
        f"pre-tokenizer: {v.pre or 'default'}",
        f"vocab size:    {len(v.pieces):,}",
        f"merges:        {len(v.merges):,}",
        f"tensors:       {len(g.tensors):,}",
    ]
    for name, tid in sorted(cfg.special_ids.items(), key=lambda kv: kv[1]):
        lines.append(f"special {name + ':':<7}{tid:>8}  {v.pieces[tid]!r}")
    flags = {"add_bos": cfg.add_bos, "add_eos": cfg.add_eos, "add_space_prefix": cfg.add_space_prefix,
             "clean_spaces": cfg.clean_spaces, **{f"file:{k}": val for k, val in sorted(v.flags.items())}}
    lines.append("flags:         " + ", ".join(f"{k}={val}" for k, val in flags.items()))
    lines.append(f"build:         {build_kind()}")
    print("\n".join(lines))
    return 0


def _read_text(args: argparse.Namespace) -> str:
    sources = sum(x is not None and x is not False for x in (args.text, args.file, args.stdin or None))
    if sources > 1:
        raise CliError("give the text once: as an argument, with --file, or with --stdin")
    if args.file is not None:
        try:
            with open(args.file, "rb") as f:
                data = f.read()
        except OSError as e:
            raise CliError(f"{args.file}: {e.strerror or e}") from None
        return data.decode("utf-8", "replace")
    if args.stdin:
        return sys.stdin.buffer.read().decode("utf-8", "replace")
    if args.text is None:
        raise CliError("no text: give it as an argument, with --file F, or with --stdin")
    return str(args.text)


def _output(args: argparse.Namespace, lists: Sequence[TokenList], default: str) -> None:
    """Print ``lists`` or, with ``-o FILE``, write them there atomically (the
    format defaults to what the file name's extension says)."""
    fmt = args.format or (format_for_path(args.output) if args.output else None) or default
    if args.output:
        write_export(args.output, lists, fmt)
        return
    _print_chunks(iter_render(lists, fmt))


def _print_chunks(chunks: Iterable[str]) -> None:
    out = sys.stdout
    for chunk in chunks:
        out.write(chunk)
    out.flush()


def cmd_tokenize(args: argparse.Namespace) -> int:
    model = _open(args.model)
    text = _read_text(args)
    tl = token_list(model, text=text, add_special=args.add_special, parse_special=args.parse_special)
    _output(args, [tl], "ids")
    return 0


def cmd_decode(args: argparse.Namespace) -> int:
    model = _open(args.model)
    items = scan_ids(" ".join(args.ids))
    if not items:
        raise UsageError("no ids given")
    n = len(model)
    problems = [it.problem(n) for it in items]
    valid = [it.value for it, why in zip(items, problems) if not why and it.value is not None]
    bad = [(it, why) for it, why in zip(items, problems) if why]
    if not valid:
        raise CliError(f"none of the {len(items)} ids can be decoded: {describe_id_problems(bad)}")
    out = sys.stdout
    if not args.text_only:
        # like View > Decode IDs: every pasted id with its piece or its problem
        width = max(len(printable(it.text[:40])) for it in items)
        for it, why in zip(items, problems):
            shown = printable(it.text[:40]).rjust(width)
            if why:
                out.write(f"{shown}  ! {why}\n")
            else:
                assert it.value is not None
                out.write(f"{shown}  {piece_label(model, it.value)}\n")
        out.write(f"text ({len(valid)} ids):\n")
    out.write(model.decode(valid) + "\n")
    out.flush()
    if bad:
        print(f"tokenprism: warning: {len(bad)} of {len(items)} ids cannot be decoded and are left out of the "
              f"text: {printable(describe_id_problems(bad))}", file=sys.stderr)
    return 0


def is_model_arg(arg: str) -> bool:
    """Whether a ``compare`` argument names a model rather than the text: it
    ends in ``.gguf``, or it is a file that starts like a GGUF file."""
    if arg.lower().endswith(".gguf"):
        return True
    try:
        with open(arg, "rb") as f:
            return f.read(4) == b"GGUF"
    except (OSError, ValueError):
        return False


def cmd_compare(args: argparse.Namespace) -> int:
    items: list[str] = args.items
    models = [a for a in items if is_model_arg(a)]
    texts = [a for a in items if not is_model_arg(a)]
    if len(texts) > 1 or (texts and items[-1] != texts[0]):
        shown = ", ".join(repr(t[:30]) for t in texts[:3])
        raise CliError(f"give the models first and the text once, last (not a .gguf file: {shown})")
    if texts:
        if args.text is not None:
            raise CliError("give the text once: after the models or with --text, not both")
        args.text = texts[0]
    if len(models) < 2:
        raise CliError("compare needs at least two models")
    text = _read_text(args)
    lists = [token_list(_open(p), text=text, add_special=args.add_special, parse_special=args.parse_special)
             for p in models]
    _output(args, lists, "table")
    return 0


def cmd_plugins(args: argparse.Namespace) -> int:
    specs = tokenizer_specs()
    for spec in specs:
        print(f"{spec.name:<8} {', '.join(spec.model_types):<28} {spec.description}")
    for name, why in failed_plugins().items():
        print(f"{name:<8} FAILED TO LOAD: {why}")
    if not specs:
        print("no tokenizer plugins installed")
    return 0


def cmd_version(args: argparse.Namespace) -> int:
    print(f"tokenprism {VERSION} ({build_kind()})")
    if args.verbose:
        for mod, status in module_status().items():
            print(f"  {mod}: {status}")
    return 0


def cmd_gui(paths: Sequence[str]) -> int:
    try:
        from tokenprism.app.main_window import run_gui
    except ImportError as e:
        raise CliError(f"the desktop app cannot start: {e}") from None
    return int(run_gui(list(paths)))


# ---- entry point ------------------------------------------------------------

SUBCOMMANDS = ("info", "tokenize", "decode", "compare", "plugins", "version", "gui", "convert", "models", "samples")


def build_parser() -> argparse.ArgumentParser:
    p = OneLineParser(prog="tokenprism", description="See how a GGUF model's tokenizer cuts text.")
    p.add_argument("--version", action="store_true", help="print the version and build kind")
    sub = p.add_subparsers(dest="command", metavar="COMMAND")

    s = sub.add_parser("info", help="describe a model's tokenizer")
    s.add_argument("model")
    s.set_defaults(func=cmd_info)

    s = sub.add_parser("tokenize", help="tokenize text like llama-tokenize")
    s.add_argument("model")
    s.add_argument("text", nargs="?")
    s.add_argument("--file", "-f", help="read the text from a file (UTF-8)")
    s.add_argument("--stdin", action="store_true", help="read the text from standard input")
    s.add_argument("--add-special", action="store_true", help="add BOS/EOS as the model asks")
    s.add_argument("--parse-special", action="store_true", help="turn special-token text into special tokens")
    s.add_argument("--format", choices=FORMATS, default=None,
                   help="output format (default: from the -o file's extension, else ids)")
    s.add_argument("--output", "-o", metavar="FILE", help="write to FILE (atomically) instead of printing")
    s.set_defaults(func=cmd_tokenize)

    s = sub.add_parser(
        "decode", help="turn token ids back into text",
        description="Decode token ids like the app's View > Decode IDs: print every id with its piece "
                    "(or '! why' for a word that is not a token id or is outside the vocabulary), then "
                    "the text decoded from the valid ids. Ids that cannot be decoded are left out of the "
                    "text with a warning on stderr; the exit status is non-zero only when none of the ids "
                    "can be decoded (1) or the command line is wrong (2).")
    s.add_argument("model")
    s.add_argument("ids", nargs="+", help="ids separated by spaces or commas, or a JSON list")
    s.add_argument("--text-only", action="store_true", help="print only the decoded text (for scripts)")
    s.set_defaults(func=cmd_decode)

    s = sub.add_parser("compare", help="tokenize one text with several models",
                       description="Tokenize one text with several models: tokenprism compare A.gguf B.gguf "
                                   "[TEXT | --file F | --stdin]. Arguments ending in .gguf (or files that "
                                   "are GGUF files) are models; one other argument, last, is the text.")
    s.add_argument("items", nargs="+", metavar="MODEL_OR_TEXT")
    s.add_argument("--text", "-t", dest="text", help="the text (or use --file / --stdin)")
    s.add_argument("--file", "-f", help="read the text from a file (UTF-8)")
    s.add_argument("--stdin", action="store_true", help="read the text from standard input")
    s.add_argument("--add-special", action="store_true")
    s.add_argument("--parse-special", action="store_true")
    s.add_argument("--format", choices=COMPARE_FORMATS, default=None,
                   help="table (default), or the full token lists of every model")
    s.add_argument("--output", "-o", metavar="FILE", help="write to FILE (atomically) instead of printing")
    s.set_defaults(func=cmd_compare)

    add_convert_subcommand(sub)
    add_models_subcommands(sub)

    s = sub.add_parser("plugins", help="list the tokenizer plugins found")
    s.set_defaults(func=cmd_plugins)

    s = sub.add_parser("version", help="print version and whether the build is compiled")
    s.add_argument("--verbose", "-v", action="store_true")
    s.set_defaults(func=cmd_version)

    s = sub.add_parser("gui", help="start the desktop app (the default)")
    s.add_argument("models", nargs="*")
    s.set_defaults(func=lambda a: cmd_gui(a.models))
    return p


def main(argv: Sequence[str] | None = None) -> int:
    args_list = list(sys.argv[1:] if argv is None else argv)
    try:
        # no subcommand: start the app on any model paths given
        if not args_list or (args_list[0] not in SUBCOMMANDS and not args_list[0].startswith("-")):
            return cmd_gui(args_list)
        parser = build_parser()
        args = parser.parse_args(args_list)
        if args.version:
            args.verbose = False
            return cmd_version(args)
        if args.command is None:
            return cmd_gui([])
        return int(args.func(args))
    except UsageError as e:
        print(f"tokenprism: error: {printable(str(e))}", file=sys.stderr)
        return EXIT_USAGE
    except (CliError, TokenPrismError) as e:
        # file names and key names come from outside: one printable line
        print(f"tokenprism: error: {printable(str(e))}", file=sys.stderr)
        return EXIT_ERROR
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return 0


if __name__ == "__main__":
    sys.exit(main())
