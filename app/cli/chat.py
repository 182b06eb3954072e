"""The ``tokenprism chat`` subcommand: a conversation as the model sees it.

    tokenprism chat MODEL --messages chat.json --add-generation-prompt --format json
    tokenprism chat MODEL --list-templates

The messages file is a JSON list of ``{"role", "content"}`` objects, or an
object with ``"messages"`` and optional ``"tools"`` / ``"documents"``
(``--tools`` / ``--documents`` FILE give them too); ``-`` reads standard
input. Errors (a file that is not JSON, an unknown role, a template that
fails or runs away, or needs documents or tools not given) are
:class:`~tokenprism.core.errors.TokenPrismError`, printed by ``main`` as
one line.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Any

from tokenprism.core import open_model
from tokenprism.core.chat import (SPECIAL, TEMPLATE, ChatResult, ConversationError, MissingInputs,
                                  builtin_templates, chat, file_templates, load_json, parse_conversation)
from tokenprism.core.chat.render import DEFAULT_TIMEOUT
from tokenprism.core.errors import TokenPrismError

FORMATS = ("text", "ids", "json")


def add_parser(subparsers: Any) -> None:
    s = subparsers.add_parser(
        "chat", help="render a conversation with the model's chat template and count its tokens",
        description="Render a conversation with the GGUF file's chat template (as Hugging Face transformers "
                    "renders it), tokenize it with special tokens parsed, and count the tokens of the template, "
                    "the special tokens and each message.")
    s.add_argument("model")
    s.add_argument("--messages", metavar="FILE",
                   help="JSON list of {\"role\", \"content\"} objects, or {\"messages\", \"tools\"} (- = stdin)")
    which = s.add_mutually_exclusive_group()
    which.add_argument("--template", metavar="NAME",
                       help="the file's template NAME (tokenizer.chat_template.NAME), or a common one: "
                            + ", ".join(builtin_templates()))
    which.add_argument("--template-file", metavar="FILE", help="use the Jinja template in FILE")
    s.add_argument("--tools", metavar="FILE", help="JSON list of tool (function) definitions")
    s.add_argument("--documents", metavar="FILE",
                   help="JSON list of {\"title\", \"text\"} documents, for retrieval templates (command-r's rag)")
    s.add_argument("--add-generation-prompt", action="store_true",
                   help="end with the header of the assistant's reply")
    s.add_argument("--add-special", action="store_true",
                   help="also add BOS/EOS as llama.cpp's server does (default: none, as apply_chat_template)")
    s.add_argument("--format", choices=FORMATS, default="text", help="text (default), ids or json")
    s.add_argument("--list-templates", action="store_true", help="list the file's chat templates")
    s.add_argument("--context-length", type=int, metavar="N",
                   help="context length to measure the total against (default: the file's)")
    s.add_argument("--timeout", type=float, default=DEFAULT_TIMEOUT, metavar="SECONDS",
                   help=f"longest a template may render (default {DEFAULT_TIMEOUT:g})")
    s.set_defaults(func=run)


def _read(path: str, what: str) -> str:
    if path == "-":
        return sys.stdin.buffer.read().decode("utf-8", "replace")
    try:
        with open(path, "rb") as f:
            return f.read().decode("utf-8", "replace")
    except OSError as e:
        raise ConversationError(f"{path}: {e.strerror or e}") from None


def list_templates(model_path: str) -> int:
    model = open_model(model_path)
    own = file_templates(model)
    if not own:
        print(f"{model.name}: no chat template in the file")
    for name, source in own.items():
        print(f"{name}\t{len(source):,} characters")
    print("common templates (--template NAME): " + ", ".join(builtin_templates()))
    return 0


def text_report(result: ChatResult) -> str:
    lines = [result.rendered, "", f"template: {result.template} ({result.template_origin})",
             "  #  role        tokens"]
    for k, m in enumerate(result.messages):
        lines.append(f"{k:>3}  {m.role:<10}{m.tokens:>7}")
    total = result.total
    share = ""
    if result.context_length:
        share = f" of {result.context_length:,} context ({100 * total / result.context_length:.1f}%)"
    lines.append(f"template scaffold: {result.count(TEMPLATE)}, "
                 f"special tokens: {result.outside_messages(SPECIAL)}, "
                 f"messages: {sum(m.tokens for m in result.messages)}, total: {total:,}{share}")
    return "\n".join(lines)


def run(args: argparse.Namespace) -> int:
    if not os.path.exists(args.model):
        raise TokenPrismError(f"{args.model}: no such file")
    if args.list_templates:
        return list_templates(args.model)
    if args.context_length is not None and args.context_length < 1:
        raise ConversationError("--context-length must be at least 1")
    if args.messages is None:
        raise ConversationError("no conversation: give --messages FILE (or --list-templates)")
    conv = parse_conversation(load_json(_read(args.messages, args.messages), args.messages))
    tools: Any = conv.tools
    if args.tools is not None:
        tools = load_json(_read(args.tools, args.tools), args.tools)
    documents: Any = conv.documents
    if args.documents is not None:
        documents = load_json(_read(args.documents, args.documents), args.documents)
    source = _read(args.template_file, args.template_file) if args.template_file else None
    model = open_model(args.model)
    try:
        result = chat(model, conv.messages, tools=tools, documents=documents, template=args.template,
                      template_source=source, add_generation_prompt=args.add_generation_prompt,
                      add_special=args.add_special, timeout=args.timeout,
                      context=args.context_length)
    except MissingInputs as e:
        give = " and ".join(f"--{name} FILE" for name in e.missing)
        raise TokenPrismError(f"{e}: give {give} (or put them in the messages file)") from None
    if args.template_file:
        result = _named(result, os.path.basename(args.template_file))
    for w in result.warnings:
        print(f"tokenprism: warning: {w}", file=sys.stderr)
    if args.format == "json":
        print(json.dumps(result.to_json(), ensure_ascii=False))
    elif args.format == "ids":
        print("[" + ", ".join(map(str, result.ids)) + "]")
    else:
        print(text_report(result))
    return 0


def _named(result: ChatResult, name: str) -> ChatResult:
    from dataclasses import replace
    return replace(result, template=name)
