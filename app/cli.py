"""The ``tokenprism`` command line.

``tokenprism`` alone (or with model paths) starts the desktop app; the
subcommands print to the terminal with the same semantics as llama.cpp's
``llama-tokenize``. A user's mistake prints one line on stderr and exits
non-zero, never a traceback.
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import os
import sys
from typing import Sequence

from tokenprism.core import Encoding, Model, TokenPrismError, open_model
from tokenprism.core.build_info import build_kind, module_status
from tokenprism.core.plugins import failed_plugins, tokenizer_specs

from .cli_convert import add_subcommand as add_convert_subcommand

VERSION = "0.1.0"
FORMATS = ("ids", "pieces", "json", "jsonl", "csv")
EXIT_USAGE = 2
EXIT_ERROR = 1


class CliError(Exception):
    """A problem to report in one line."""


# ---- token rows (shared by json/jsonl/csv) ---------------------------------

TOKEN_FIELDS = ("index", "id", "piece", "text", "score", "type", "attr", "start", "end",
                "byte_start", "byte_end", "group")


def token_rows(enc: Encoding) -> list[dict[str, object]]:
    """Every field of every token, as plain data."""
    model = enc.model
    rows: list[dict[str, object]] = []
    for tok in enc:
        rows.append({
            "index": tok.index, "id": tok.id, "piece": tok.piece,
            "text": model.display_piece(tok.id), "score": tok.score,
            "type": tok.type, "attr": tok.attr, "start": tok.start, "end": tok.end,
            "byte_start": tok.byte_start, "byte_end": tok.byte_end, "group": tok.group,
        })
    return rows


def spreadsheet_safe(value: object) -> object:
    """Keep a spreadsheet from reading a cell as a formula."""
    if isinstance(value, str) and value[:1] in ("=", "+", "-", "@", "\t", "\r"):
        return "'" + value
    return value


def format_encoding(enc: Encoding, fmt: str) -> str:
    if fmt == "ids":
        return "[" + ", ".join(str(i) for i in enc.token_ids) + "]"
    if fmt == "pieces":
        return "\n".join(f"{tok.id:>8} -> {enc.model.display_piece(tok.id)!r}" for tok in enc)
    rows = token_rows(enc)
    if fmt == "json":
        doc = {
            "model": {"path": enc.model.path, "name": enc.model.name, "kind": enc.model.kind,
                      "tokenizer": enc.model.vocab.model, "pre": enc.model.vocab.pre,
                      "vocab_size": len(enc.model)},
            "add_special": enc.add_special, "parse_special": enc.parse_special,
            "text": enc.text, "ids": enc.ids, "tokens": rows,
        }
        return json.dumps(doc, ensure_ascii=False, indent=1)
    if fmt == "jsonl":
        return "\n".join(json.dumps(r, ensure_ascii=False) for r in rows)
    if fmt == "csv":
        buf = io.StringIO()
        w = csv.DictWriter(buf, fieldnames=TOKEN_FIELDS, lineterminator="\n")
        w.writeheader()
        for r in rows:
            w.writerow({k: spreadsheet_safe(v) for k, v in r.items()})
        return buf.getvalue().rstrip("\n")
    raise CliError(f"unknown format {fmt!r}")


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


def cmd_tokenize(args: argparse.Namespace) -> int:
    model = _open(args.model)
    text = _read_text(args)
    enc = model.encode(text, add_special=args.add_special, parse_special=args.parse_special)
    sys.stdout.write(format_encoding(enc, args.format) + "\n")
    return 0


def cmd_decode(args: argparse.Namespace) -> int:
    model = _open(args.model)
    ids = parse_ids(" ".join(args.ids))
    bad = [i for i in ids if not 0 <= i < len(model)]
    if bad:
        raise CliError(f"ids outside the vocabulary (0..{len(model) - 1}): {', '.join(map(str, bad[:10]))}")
    sys.stdout.write(model.decode(ids) + "\n")
    return 0


def parse_ids(text: str) -> list[int]:
    """Ids written as ``1 2 3``, ``1,2,3`` or a JSON list."""
    s = text.strip()
    if s.startswith("["):
        try:
            data = json.loads(s)
        except json.JSONDecodeError as e:
            raise CliError(f"not a JSON list of ids: {e.msg}") from None
        if not isinstance(data, list) or not all(isinstance(x, int) and not isinstance(x, bool) for x in data):
            raise CliError("the JSON list must hold integers only")
        return list(data)
    out: list[int] = []
    for part in s.replace(",", " ").split():
        try:
            out.append(int(part))
        except ValueError:
            raise CliError(f"not a token id: {part!r}") from None
    return out


def encoding_stats(enc: Encoding) -> dict[str, object]:
    """Counts a person compares models by."""
    from tokenprism.core import Attr

    attrs = enc.model.vocab.attrs
    n = len(enc)
    n_bytes = len(enc.text.encode("utf-8"))
    return {
        "model": enc.model.name, "path": enc.model.path, "kind": enc.model.kind,
        "tokens": n, "chars": len(enc.text), "bytes": n_bytes,
        "chars_per_token": round(len(enc.text) / n, 3) if n else 0.0,
        "bytes_per_token": round(n_bytes / n, 3) if n else 0.0,
        "byte_fallback": sum(1 for t in enc.token_ids if attrs[t] & Attr.BYTE),
        "unknown": sum(1 for t in enc.token_ids if attrs[t] & Attr.UNKNOWN),
    }


def cmd_compare(args: argparse.Namespace) -> int:
    if len(args.models) < 2:
        raise CliError("compare needs at least two models")
    text = _read_text(args)
    encs = [_open(p).encode(text, add_special=args.add_special, parse_special=args.parse_special)
            for p in args.models]
    stats = [encoding_stats(e) for e in encs]
    if args.format == "json":
        doc = {"text": text, "add_special": args.add_special, "parse_special": args.parse_special,
               "models": [{**st, "ids": e.ids, "token_list": token_rows(e)} for st, e in zip(stats, encs)]}
        print(json.dumps(doc, ensure_ascii=False, indent=1))
        return 0
    base = int(stats[0]["tokens"])  # type: ignore[call-overload]
    print(f"{'model':<32} {'kind':<5} {'tokens':>8} {'vs 1st':>8} {'chars/tok':>10} {'bytes/tok':>10} {'bytefb':>7} {'unk':>5}")
    for st in stats:
        n = int(st["tokens"])  # type: ignore[call-overload]
        diff = f"{(n - base) / base:+.0%}" if base else "-"
        print(f"{str(st['model'])[:32]:<32} {st['kind']!s:<5} {n:>8} {diff:>8} {st['chars_per_token']!s:>10} "
              f"{st['bytes_per_token']!s:>10} {st['byte_fallback']!s:>7} {st['unknown']!s:>5}")
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

SUBCOMMANDS = ("info", "tokenize", "decode", "compare", "plugins", "version", "gui", "convert")


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="tokenprism", description="See how a GGUF model's tokenizer cuts text.")
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
    s.add_argument("--format", choices=FORMATS, default="ids")
    s.set_defaults(func=cmd_tokenize)

    s = sub.add_parser("decode", help="turn token ids back into text")
    s.add_argument("model")
    s.add_argument("ids", nargs="+", help="ids separated by spaces or commas, or a JSON list")
    s.set_defaults(func=cmd_decode)

    s = sub.add_parser("compare", help="tokenize one text with several models")
    s.add_argument("models", nargs="+", metavar="MODEL")
    s.add_argument("--text", "-t", dest="text", help="the text (or use --file / --stdin)")
    s.add_argument("--file", "-f", help="read the text from a file (UTF-8)")
    s.add_argument("--stdin", action="store_true", help="read the text from standard input")
    s.add_argument("--add-special", action="store_true")
    s.add_argument("--parse-special", action="store_true")
    s.add_argument("--format", choices=("table", "json"), default="table")
    s.set_defaults(func=cmd_compare)

    add_convert_subcommand(sub)

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
    except (CliError, TokenPrismError) as e:
        print(f"tokenprism: error: {e}", file=sys.stderr)
        return EXIT_ERROR
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return 0


if __name__ == "__main__":
    sys.exit(main())
