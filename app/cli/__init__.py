"""The ``tokenprism`` command line.

``tokenprism`` alone (or with model paths) starts the desktop app; the
subcommands print to the terminal with the same semantics as llama.cpp's
``llama-tokenize``, and like it take their options anywhere among the
other arguments. A user's mistake prints one line on stderr (a damaged
file: what it means, then the detail below it) and exits non-zero, never
a traceback.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys

# before numpy is imported: its OpenBLAS would start a thread per core that
# spins for ~50 ms of CPU at start-up, and nothing here calls BLAS
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

# Only what every command needs is imported here; a command imports the
# rest when it runs (numpy, the plugins, the export formats), so that
# `tokenprism --version` costs little more than the interpreter
from tokenprism.core.build_info import build_kind, module_status
from tokenprism.core.errors import GGUFError, TokenPrismError, printable

# not typing's: importing typing was ~4 ms of `tokenprism --version` (type
# checkers read a module's own TYPE_CHECKING the same way)
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Iterable, Iterator, Mapping, NoReturn, Sequence

    from tokenprism.core import Model
    from tokenprism.core.formats.export import TokenList


VERSION = "0.1.0"
FORMATS = ("ids", "pieces", "json", "jsonl", "csv")
COMPARE_FORMATS = ("table", "json", "jsonl", "csv", "ids")
EXIT_USAGE = 2
EXIT_ERROR = 1


class CliError(Exception):
    """A problem to report in one line; ``more`` are lines to print below
    it (the message itself may quote a file name, so a line break in it is
    shown escaped, never as a second line)."""

    def __init__(self, message: str, *more: str) -> None:
        super().__init__(message)
        self.more = more


class UsageError(CliError):
    """A malformed command line (exit status 2, like argparse's own)."""

    status = EXIT_USAGE


def terminal_columns() -> int:
    """The terminal's width as ``shutil.get_terminal_size`` gives it
    (``COLUMNS``, else standard output's terminal, else 80)."""
    try:
        columns = int(os.environ.get("COLUMNS", "0"))
    except ValueError:
        columns = 0
    if columns <= 0:
        out = sys.__stdout__
        try:
            columns = os.get_terminal_size(out.fileno()).columns if out is not None else 0
        except (AttributeError, ValueError, OSError):
            columns = 0
    return columns if columns > 0 else 80


class HelpFormatter(argparse.HelpFormatter):
    """argparse's formatter, told the width: argparse makes one for every
    option it adds, and without a width it imports ``shutil`` (with bz2,
    lzma and zlib, ~2 ms of every command's start-up) to ask it."""

    def __init__(self, prog: str, indent_increment: int = 2, max_help_position: int = 24,
                 width: int | None = None) -> None:
        super().__init__(prog, indent_increment, max_help_position,
                         terminal_columns() - 2 if width is None else width)


class OneLineParser(argparse.ArgumentParser):
    """argparse, but a usage mistake is one line on stderr (``tokenprism:
    error: ...``) instead of the usage block, and exits with status 2.
    ``commands`` holds the subcommands' parsers by name."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("formatter_class", HelpFormatter)
        super().__init__(*args, **kwargs)
        self.commands: dict[str, argparse.ArgumentParser] = {}
        # a command whose issue fixes its exit statuses (check: 1 on any
        # error) sets its own for a malformed command line
        self.usage_status = EXIT_USAGE

    def error(self, message: str) -> NoReturn:
        e = UsageError(f"{message} (see {self.prog} --help)")
        e.status = self.usage_status
        raise e


# ---- commands ---------------------------------------------------------------

def _open(path: str) -> Model:
    if not os.path.exists(path):
        raise CliError(f"{path}: no such file")
    from tokenprism.core import open_model

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


def _format(args: argparse.Namespace, default: str) -> str:
    """The output format: ``--format``, else what the ``-o`` file name's
    extension says, else ``default``."""
    if args.format or not args.output:
        return str(args.format or default)
    from tokenprism.core.formats.export import format_for_path

    return str(format_for_path(args.output) or default)


def _output(args: argparse.Namespace, lists: Sequence[TokenList], default: str) -> None:
    """Print ``lists`` or, with ``-o FILE``, write them there atomically."""
    from tokenprism.core.formats.export import iter_render, write_export

    fmt = _format(args, default)
    if args.output:
        write_export(args.output, lists, fmt)
        return
    _print_chunks(iter_render(lists, fmt))


def _print_chunks(chunks: Iterable[str]) -> None:
    out = sys.stdout
    for chunk in chunks:
        out.write(chunk)
    out.flush()


def ids_lines(ids: Sequence[int]) -> Iterator[str]:
    """The ``ids`` format of one token list (as ``core.formats.export`` renders it)."""
    yield "[" + ", ".join(map(str, ids)) + "]\n"


def pieces_lines(model: Model, ids: Sequence[int]) -> Iterator[str]:
    """The ``pieces`` format of one token list (as ``core.formats.export`` renders
    it): each id with the piece a person reads."""
    shown: dict[int, str] = {}
    for tid in ids:
        piece = shown.get(tid)
        if piece is None:
            piece = shown[tid] = model.display_piece(tid)
        # repr escapes lone surrogates, so the line is valid UTF-8 as is
        yield f"{tid:>8} -> {piece!r}\n"


def cmd_tokenize(args: argparse.Namespace) -> int:
    model = _open(args.model)
    text = _read_text(args)
    fmt = _format(args, "ids")
    if fmt in ("ids", "pieces"):
        # only the ids (and pieces) are printed: a full token list would also
        # fingerprint the tokenizer and look up every token's merge rank
        # (gemma-4: building its merge-rank table was ~260 ms of ~500)
        ids = model.encode(text, add_special=args.add_special, parse_special=args.parse_special).token_ids
        lines = ids_lines(ids) if fmt == "ids" else pieces_lines(model, ids)
        if args.output:
            from tokenprism.core.formats.export import write_atomic

            write_atomic(args.output, lines)
        else:
            _print_chunks(lines)
        return 0
    from tokenprism.core.formats.export import token_list

    tl = token_list(model, text=text, add_special=args.add_special, parse_special=args.parse_special)
    _output(args, [tl], fmt)
    return 0


def cmd_decode(args: argparse.Namespace) -> int:
    from tokenprism.core.formats.export import describe_id_problems, scan_ids

    from ..logic.pieces import piece_label

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
    from tokenprism.core.formats.export import token_list

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
    from tokenprism.core.plugins import failed_plugins, tokenizer_specs

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


# Qt platforms that need no display server (QT_QPA_PLATFORM)
HEADLESS_PLATFORMS = frozenset({"offscreen", "minimal", "minimalegl", "vnc", "eglfs", "linuxfb",
                                "vkkhrdisplay", "directfb"})


def missing_display(env: Mapping[str, str], platform: str) -> str | None:
    """Why the window cannot open on this machine, or ``None`` when it can
    (as far as can be told before Qt starts: without a display server Qt
    aborts the process rather than raise, so this is asked first).

    On Linux and the BSDs a window needs an X11 or Wayland display, named by
    ``DISPLAY`` or ``WAYLAND_DISPLAY``, unless ``QT_QPA_PLATFORM`` asks for a
    platform that draws without one (``offscreen``, ``eglfs``, ...)."""
    if platform.startswith(("win32", "cygwin", "msys", "darwin")):
        return None
    # QT_QPA_PLATFORM is a ';'-separated list of fallbacks, each "name:options"
    wanted = [part.split(":", 1)[0].strip() for part in env.get("QT_QPA_PLATFORM", "").split(";")]
    if any(name in HEADLESS_PLATFORMS for name in wanted):
        return None
    if env.get("DISPLAY") or env.get("WAYLAND_DISPLAY"):
        return None
    return ("no display found (DISPLAY and WAYLAND_DISPLAY are not set), so the window cannot open; "
            "the command-line subcommands need none: tokenprism tokenize MODEL TEXT, info, decode, "
            "compare, ... (see tokenprism --help)")


def cmd_gui(paths: Sequence[str]) -> int:
    for path in paths:
        if not os.path.exists(path):
            raise CliError(f"{path}: no such file")
    why = missing_display(os.environ, sys.platform)
    if why is not None:
        raise CliError(why)
    try:
        from tokenprism.app.qt.main_window import run_gui
    except ImportError as e:
        raise CliError(f"the desktop app cannot start: {e}") from None
    return int(run_gui(list(paths)))


def unknown_command(word: str) -> CliError:
    """``tokenprism WORD`` where WORD is neither a command nor a file: say
    so, with the commands (and the closest one, for a typo)."""
    import difflib

    close = difflib.get_close_matches(word, SUBCOMMANDS, n=1)
    hint = f" (did you mean {close[0]}?)" if close else ""
    return CliError(f"unknown command or file: {word}{hint}",
                    f"commands: {', '.join(SUBCOMMANDS)} (see tokenprism --help)")


# ---- entry point ------------------------------------------------------------

SUBCOMMANDS = ("info", "tokenize", "decode", "compare", "plugins", "version", "gui", "convert", "models", "samples",
               "check", "chat", "chunk", "find-tokens", "explain", "stats")

# The subcommands in modules of their own (app/cli/NAME.py): name -> (module,
# its function that adds the command's parser to the subparsers, the line
# `tokenprism --help` shows). A module is imported only when its command runs
# (or shows its own --help): `tokenprism --help` lists these lines without
# importing any of them, as chat, chunk and models import jinja2, numpy and
# the services (0.38 s), and `tokenprism tokenize` builds no other command's
# parser. A new command: app/cli/NAME.py with add_parser(subparsers), which
# defines options only, and run(args); one line here; its name in SUBCOMMANDS.
MODULE_COMMANDS: dict[str, tuple[str, str, str]] = {
    "convert": ("convert", "add_subcommand", "write a vocab-only GGUF from a SentencePiece .model or a tokenizer.json"),
    "check": ("check", "add_parser", "check that a GGUF tokenizes like its source tokenizer.json / .model"),
    "chat": ("chat", "add_parser", "render a conversation with the model's chat template and count its tokens"),
    "chunk": ("chunk", "add_parser", "split a text into pieces of at most N tokens"),
    "explain": ("explain", "add_parser", "show why a text is cut into its tokens, stage by stage"),
    "find-tokens": ("find_tokens", "add_parser", "list the tokens that can produce a string (stop strings, logit bias)"),
    "stats": ("stats", "add_parser", "compare tokenizers over a corpus of texts (on all cores or a Dask cluster)"),
    "models": ("models", "add_subcommands", "list the GGUF models found on this computer"),
    "samples": ("models", "add_subcommands", "download llama.cpp's reference vocab files"),
}


def _add_info(sub: Any) -> None:
    s = sub.add_parser("info", help="describe a model's tokenizer")
    s.add_argument("model")
    s.set_defaults(func=cmd_info)


def _add_tokenize(sub: Any) -> None:
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


def _add_decode(sub: Any) -> None:
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


def _add_compare(sub: Any) -> None:
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


def _add_plugins(sub: Any) -> None:
    s = sub.add_parser("plugins", help="list the tokenizer plugins found")
    s.set_defaults(func=cmd_plugins)


def _add_version(sub: Any) -> None:
    s = sub.add_parser("version", help="print version and whether the build is compiled")
    s.add_argument("--verbose", "-v", action="store_true")
    s.set_defaults(func=cmd_version)


def _add_gui(sub: Any) -> None:
    s = sub.add_parser("gui", help="start the desktop app (the default)")
    s.add_argument("models", nargs="*")
    s.set_defaults(func=lambda a: cmd_gui(a.models))


# The subcommands defined in this module, in --help's order around the
# module commands (which stand between compare and plugins)
_BEFORE_MODULES = {"info": _add_info, "tokenize": _add_tokenize, "decode": _add_decode, "compare": _add_compare}
_AFTER_MODULES = {"plugins": _add_plugins, "version": _add_version, "gui": _add_gui}


def build_parser(command: str | None = None) -> OneLineParser:
    """The parser of ``command``: for one defined in this module, that
    command's alone (each other subparser cost ~0.6 ms of every start-up,
    argparse looking up its help texts' translations); for one in a
    module of its own, it with the commands defined here; for None, every
    command, those in modules of their own as one-line entries only
    (enough for ``tokenprism --help``)."""
    p = OneLineParser(prog="tokenprism", description="See how a GGUF model's tokenizer cuts text. "
                      "Options may stand anywhere among a command's other arguments.")
    p.add_argument("--version", action="store_true", help="print the version and build kind")
    sub = p.add_subparsers(dest="command", metavar="COMMAND")
    own = {**_BEFORE_MODULES, **_AFTER_MODULES}
    if command in own:
        own[command](sub)
        p.commands = dict(sub.choices)
        return p

    for add in _BEFORE_MODULES.values():
        add(sub)
    if command in MODULE_COMMANDS:
        module, adder, _ = MODULE_COMMANDS[command]
        getattr(importlib.import_module(f"{__name__}.{module}"), adder)(sub)
    elif command is None:
        for name, (_, _, line) in MODULE_COMMANDS.items():
            sub.add_parser(name, help=line)
    for add in _AFTER_MODULES.values():
        add(sub)
    p.commands = dict(sub.choices)
    return p


def _error_lines(e: Exception) -> list[str]:
    """What to print for ``e``: a damaged file's error leads with what it
    means, its technical detail on the next line."""
    if isinstance(e, GGUFError):
        return e.lines()
    if isinstance(e, CliError):
        return [str(e), *e.more]
    return [str(e)]


def _report(e: Exception) -> None:
    # file names and key names come from outside: each line printable
    first, *rest = _error_lines(e)
    lines = [f"tokenprism: error: {printable(first)}", *(f"  {printable(line)}" for line in rest)]
    print("\n".join(lines), file=sys.stderr)


def parse_command(argv: Sequence[str]) -> argparse.Namespace:
    """``argv`` (without the program name) parsed: a command's options may
    stand anywhere among its other arguments, as with llama-tokenize
    (``tokenize MODEL --format pieces TEXT``), where argparse alone would
    stop taking positionals at the first option."""
    first = argv[0] if argv else ""
    parser = build_parser(first if first in SUBCOMMANDS else None)
    if first not in parser.commands:
        return parser.parse_args(argv)  # --version, --help, or a usage error
    args: argparse.Namespace = parser.commands[first].parse_intermixed_args(argv[1:])
    args.command, args.version = first, False
    return args


def main(argv: Sequence[str] | None = None) -> int:
    args_list = list(sys.argv[1:] if argv is None else argv)
    try:
        first = args_list[0] if args_list else ""
        # no subcommand: start the app on the model paths given
        if not args_list or (first not in SUBCOMMANDS and not first.startswith("-")):
            if args_list and not os.path.exists(first):
                raise unknown_command(first)
            return cmd_gui(args_list)
        if args_list == ["--version"]:
            # answered before the parser is built: building it imports
            # every subcommand's module
            return cmd_version(argparse.Namespace(verbose=False))
        args = parse_command(args_list)
        if args.version:
            args.verbose = False
            return cmd_version(args)
        if args.command is None:
            return cmd_gui([])
        return int(args.func(args))
    except UsageError as e:
        _report(e)
        return e.status
    except (CliError, TokenPrismError) as e:
        _report(e)
        return EXIT_ERROR
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return 0


if __name__ == "__main__":
    sys.exit(main())
