"""What the window's chat view shows, without Qt: the templates a model
offers, one rendering of the conversation (run in a worker thread), the
colour of every token by its origin, the counts table and the conversation
kept in the settings.

The view sends a :class:`ChatRequest`; :func:`build_view` renders and
tokenizes it with :func:`tokenprism.core.chat.chat` (bounded in time and
size) and hands back a :class:`ChatView`, or the one-line error a hostile
or broken template gives.
"""

from __future__ import annotations

import bisect
import colorsys
import json
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Sequence

from tokenprism.core import Model
from tokenprism.core.chat import (DEFAULT, MESSAGE, ROLES, SPECIAL, TEMPLATE, ChatResult, ChatToken,
                                  MissingInputs, builtin_templates, chat, file_templates)
from tokenprism.core.errors import TokenPrismError

from .pieces import readable

#: the common template preselected for a file without one
FALLBACK_TEMPLATE = "chatml"
#: the conversation a new view starts with
STARTER: tuple[tuple[str, str], ...] = (
    ("system", "You are a helpful assistant."),
    ("user", "What is the capital of France?"),
    ("assistant", "Paris."),
    ("user", "And of Japan? 日本の首都は？"),
)
#: tokens coloured one by one; past it, the rest of the text is plain (a
#: pasted book as a message stays quick to show)
MAX_COLOURED_TOKENS = 20_000
#: characters of a conversation kept in the settings
MAX_SAVED_CHARS = 64 * 1024

# hues (0..1) of the origins; messages cycle through MESSAGE_HUES
SPECIAL_HUE = 0.08
MESSAGE_HUES = (0.58, 0.33, 0.78, 0.14, 0.48, 0.95, 0.25, 0.68)


@dataclass(frozen=True)
class TemplateOption:
    name: str
    label: str
    #: "file" (in the GGUF), "builtin" (shipped with TokenPrism) or "path" (a .jinja the user loaded)
    origin: str
    source: str = field(default="", repr=False)


def template_options(model: Model) -> list[TemplateOption]:
    """The file's templates (default first, then named ones such as
    command-r's ``tool_use`` and ``rag``), then the common ones shipped."""
    own = [TemplateOption(name, "File: default" if name == DEFAULT else f"File: {name}", "file", source)
           for name, source in file_templates(model).items()]
    shipped = [TemplateOption(name, f"Common: {name}", "builtin", source)
               for name, source in builtin_templates().items()]
    return own + shipped


def preferred_template(options: Sequence[TemplateOption], wanted: str | None = None) -> TemplateOption:
    """``wanted`` when the model offers it, else the file's default (or
    first) template, else the common :data:`FALLBACK_TEMPLATE`."""
    by_key = {(o.origin, o.name): o for o in options}
    for o in options:
        if o.label == wanted:
            return o
    files = [o for o in options if o.origin == "file"]
    if files:
        return by_key.get(("file", DEFAULT), files[0])
    return by_key.get(("builtin", FALLBACK_TEMPLATE), options[0])


def origin_notice(option: TemplateOption, model_name: str) -> str:
    """The line that says where the template comes from; it says so
    plainly when it is not the file's."""
    if option.origin == "file":
        return f"Template {option.name!r} from {model_name}."
    if option.origin == "builtin":
        return (f"Template {option.name!r} did not come from the file: it is a common one shipped with "
                f"TokenPrism. The model may have been trained on another format.")
    return f"Template {option.name!r} did not come from the file: loaded from a .jinja file."


@dataclass(frozen=True)
class ChatRequest:
    """Everything one rendering needs; made on the GUI thread, used in the
    worker."""

    messages: tuple[tuple[str, str], ...]
    template: TemplateOption
    add_generation_prompt: bool = True
    add_special: bool = False
    #: the context length to measure against; None: the file's
    context: int | None = None
    tools: str = ""
    documents: str = ""
    #: colours for a dark palette
    dark: bool = False


@dataclass(frozen=True)
class ChatView:
    """One rendering as the view shows it."""

    result: ChatResult
    #: per token, its UTF-16 start in the rendered text (Qt's positions)
    utf16_starts: tuple[int, ...]
    #: the coloured tokens, made in the worker too (30,000 tokens: 0.3 s)
    runs: tuple[Run, ...] = ()


class ChatViewError(TokenPrismError):
    """The conversation cannot be shown; the message is one line for the view."""


def _json_list(text: str, what: str) -> list[Any] | None:
    if not text.strip():
        return None
    try:
        value = json.loads(text)
    except ValueError as e:
        raise ChatViewError(f"{what}: not JSON ({e})") from None
    if not isinstance(value, list):
        raise ChatViewError(f"{what}: must be a JSON list")
    return value


def build_view(model: Model, request: ChatRequest) -> ChatView:
    """Render and tokenize ``request`` (in a worker thread: the template's
    time bound holds, the GUI waits for nothing)."""
    messages = [{"role": role, "content": content} for role, content in request.messages]
    tools = _json_list(request.tools, "Tools")
    documents = _json_list(request.documents, "Documents")
    template = request.template
    try:
        result = chat(model, messages, tools=tools, documents=documents,
                      template=None if template.origin == "path" else template.name,
                      template_source=template.source if template.origin == "path" else None,
                      add_generation_prompt=request.add_generation_prompt, add_special=request.add_special,
                      context=request.context)
    except TokenPrismError as e:
        message = str(e).splitlines()[0] if str(e) else type(e).__name__
        if isinstance(e, MissingInputs):
            message += ": give them as a JSON list in the " + " and ".join(m.capitalize() for m in e.missing) \
                + " tab" + ("s" if len(e.missing) > 1 else "")
        raise ChatViewError(message) from None
    view = ChatView(result, tuple(utf16_offsets(result.rendered, [t.start for t in result.tokens])))
    return ChatView(view.result, view.utf16_starts, tuple(coloured_runs(view, request.dark)))


def utf16_offsets(text: str, positions: Sequence[int]) -> list[int]:
    """Each of the sorted ``positions`` (code-point offsets in ``text``) as
    a UTF-16 offset, as Qt counts them (a character beyond U+FFFF is two)."""
    out: list[int] = []
    extra = 0
    last = 0
    for p in positions:
        extra += sum(1 for c in text[last:p] if ord(c) > 0xFFFF)
        last = max(last, p)
        out.append(p + extra)
    return out


def token_at(view: ChatView, utf16_pos: int) -> int:
    """The index of the token at a UTF-16 position of the rendered text (-1: none)."""
    i = bisect.bisect_right(view.utf16_starts, utf16_pos) - 1
    return i if 0 <= i < len(view.result.tokens) else -1


# ---- colours --------------------------------------------------------------

def origin_hue(token: ChatToken) -> float | None:
    """The hue of a token's origin; None for the template scaffold (grey)."""
    if token.origin == SPECIAL:
        return SPECIAL_HUE
    if token.origin == MESSAGE and token.message is not None:
        return MESSAGE_HUES[token.message % len(MESSAGE_HUES)]
    return None


def message_colour(k: int, dark: bool = False) -> str:
    """The colour of message ``k``'s tokens (its card's marker too)."""
    return _colour(MESSAGE_HUES[k % len(MESSAGE_HUES)], 0, dark)


@lru_cache(maxsize=256)
def _colour(hue: float | None, parity: int, dark: bool) -> str:
    # two shades per origin, alternating token by token, so neighbouring
    # tokens of the same message stay apart
    if dark:
        light = (0.30, 0.38)[parity]
    else:
        light = (0.86, 0.78)[parity]
    sat = 0.0 if hue is None else (0.55 if not dark else 0.45)
    r, g, b = colorsys.hls_to_rgb(hue or 0.0, light, sat)
    return f"#{round(r * 255):02x}{round(g * 255):02x}{round(b * 255):02x}"


def token_colour(token: ChatToken, index: int, dark: bool = False) -> str:
    """Background of token ``index``: its origin's hue (grey for the
    scaffold), in one of two shades by position."""
    return _colour(origin_hue(token), index % 2, dark)


@dataclass(frozen=True)
class Run:
    """A span of the rendered text (UTF-16 offsets, as Qt counts) drawn one way."""

    start: int
    end: int
    colour: str
    #: the token's characters come from more than one origin
    straddles: bool


def coloured_runs(view: ChatView, dark: bool = False, limit: int = MAX_COLOURED_TOKENS) -> list[Run]:
    """The rendered text's tokens as coloured runs (the first ``limit``)."""
    tokens = view.result.tokens
    ends = utf16_offsets(view.result.rendered, [t.end for t in tokens[:limit]])
    return [Run(view.utf16_starts[i], ends[i], token_colour(t, i, dark), t.straddles)
            for i, t in enumerate(tokens[:limit]) if ends[i] > view.utf16_starts[i]]


def origin_label(token: ChatToken, roles: Sequence[str]) -> str:
    if token.origin == MESSAGE and token.message is not None:
        role = roles[token.message] if token.message < len(roles) else "?"
        where = f"message {token.message + 1} ({role})"
    elif token.origin == SPECIAL and token.message is not None:
        role = roles[token.message] if token.message < len(roles) else "?"
        where = f"special token in message {token.message + 1} ({role})"
    elif token.origin == SPECIAL:
        where = "special token"
    else:
        where = "template scaffold"
    return where + (", straddles two origins" if token.straddles else "")


def token_tooltip(view: ChatView, index: int) -> str:
    """One line about token ``index``: id, piece, origin."""
    t = view.result.tokens[index]
    roles = [m.role for m in view.result.messages]
    return f"#{index}  id {t.id}  {readable(t.piece)!s}  — {origin_label(t, roles)}"


# ---- counts ----------------------------------------------------------------

@dataclass(frozen=True)
class CountRow:
    label: str
    tokens: int
    #: colour of the row's marker ("" for the total)
    colour: str
    #: this row's share of the total, percent
    share: float


def count_rows(result: ChatResult, dark: bool = False) -> list[CountRow]:
    """Per message, then template scaffold, special tokens and the total;
    the rows above the total add up to it."""
    total = result.total or 1
    rows = [CountRow(f"{k + 1}. {m.role}", m.tokens, message_colour(k, dark), 100 * m.tokens / total)
            for k, m in enumerate(result.messages)]
    for label, origin, hue in (("template scaffold", TEMPLATE, None), ("special tokens", SPECIAL, SPECIAL_HUE)):
        n = result.outside_messages(origin)  # a special token typed in a message counts in its row
        rows.append(CountRow(label, n, _colour(hue, 0, dark), 100 * n / total))
    rows.append(CountRow("total", result.total, "", 100.0 if result.total else 0.0))
    return rows


def context_share(total: int, context: int | None) -> str:
    """"1,234 tokens — 3.8% of a 32,768-token context" (or no share)."""
    head = f"{total:,} token" + ("" if total == 1 else "s")
    if not context:
        return head + " (no context length in the file: set one)"
    pct = 100 * total / context
    shown = f"{pct:.1f}" if pct >= 1 or pct == 0 else f"{pct:.2g}"
    over = "  — over the context length!" if total > context else ""
    return f"{head} — {shown}% of a {context:,}-token context{over}"


# ---- the conversation kept in the settings ---------------------------------------

def conversation_to_json(messages: Sequence[tuple[str, str]]) -> str:
    """The conversation as settings keep it ("" when too long to be worth it)."""
    text = json.dumps([{"role": r, "content": c} for r, c in messages], ensure_ascii=False)
    return text if len(text) <= MAX_SAVED_CHARS else ""


def conversation_from_json(text: str) -> tuple[tuple[str, str], ...] | None:
    """A kept conversation back; None when it is missing or not one."""
    try:
        value = json.loads(text) if text else None
    except ValueError:
        return None
    if not isinstance(value, list) or not value:
        return None
    out: list[tuple[str, str]] = []
    for m in value:
        if not isinstance(m, dict) or m.get("role") not in ROLES or not isinstance(m.get("content"), str):
            return None
        out.append((str(m["role"]), str(m["content"])))
    return tuple(out)
