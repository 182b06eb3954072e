"""A conversation as the model sees it: rendered by a chat template,
tokenized, and every token traced back to the template scaffold, a special
token, or the message whose content it holds."""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass, field
from typing import Any, Sequence

from tokenprism.core import Attr, Encoding, Model
from tokenprism.core.errors import TokenPrismError

from .conversation import Conversation, check_documents, check_messages, check_tools
from .render import DEFAULT_TIMEOUT, ChatTemplateError, render
from .templates import ChatTemplate, find_template

TEMPLATE = "template"
SPECIAL = "special"
MESSAGE = "message"

# the token names transformers hands a template (its special_tokens_map),
# where the file has the token; cls has no GGUF key
_TOKEN_NAMES = ("bos", "eos", "unk", "sep", "pad", "mask")


@dataclass(frozen=True)
class ChatToken:
    """One token of the rendered text. ``origin`` is where most of its
    characters come from: ``"special"`` (a special token the template
    wrote, or BOS/EOS added, or one typed in a message's content),
    ``"message"`` (the content of message ``message``) or ``"template"``
    (the scaffold). ``message`` is the message whose content holds the
    token: set for every ``"message"`` token and for a special token typed
    inside a message's content (``'hi <|im_end|> there'``), which is part
    of what that message costs. ``straddles`` is true when its characters
    come from more than one origin."""

    id: int
    piece: str
    start: int
    end: int
    origin: str
    message: int | None
    straddles: bool = False
    #: the piece as a person reads it (``tokenize --format pieces``:
    #: byte-level glyphs decoded); ``piece`` is the vocabulary's raw string
    text: str = ""


@dataclass(frozen=True)
class MessageInfo:
    role: str
    #: tokens whose origin is this message
    tokens: int
    #: span of its content in the rendered text; -1, -1 when the template
    #: did not write the content verbatim (or it is empty)
    start: int
    end: int


@dataclass(frozen=True)
class ChatResult:
    rendered: str
    encoding: Encoding
    tokens: tuple[ChatToken, ...]
    messages: tuple[MessageInfo, ...]
    context_length: int | None
    template: str
    template_origin: str
    add_special: bool
    warnings: tuple[str, ...] = field(default=())

    @property
    def ids(self) -> list[int]:
        return self.encoding.ids

    @property
    def total(self) -> int:
        return len(self.tokens)

    def count(self, origin: str) -> int:
        """Tokens of ``origin``, inside messages or not."""
        return sum(1 for t in self.tokens if t.origin == origin)

    def outside_messages(self, origin: str) -> int:
        """Tokens of ``origin`` that no message holds: with the messages'
        counts these add up to the total (a special token typed in a
        message is counted in the message)."""
        return sum(1 for t in self.tokens if t.origin == origin and t.message is None)

    def to_json(self) -> dict[str, Any]:
        """The object ``tokenprism chat --format json`` prints."""
        return {
            "rendered": self.rendered,
            "ids": self.ids,
            "tokens": [{"id": t.id, "piece": t.piece, "text": t.text, "start": t.start, "end": t.end,
                        "origin": t.origin, "message": t.message, "straddles": t.straddles} for t in self.tokens],
            "messages": [{"role": m.role, "tokens": m.tokens, "start": m.start, "end": m.end}
                         for m in self.messages],
            "total": self.total,
            "template_tokens": self.count(TEMPLATE),
            "special_tokens": self.outside_messages(SPECIAL),
            "context_length": self.context_length,
            "template": self.template,
            "template_origin": self.template_origin,
            "add_special": self.add_special,
            "warnings": list(self.warnings),
        }


class MissingInputs(ChatTemplateError):
    """A template iterated tools or documents the conversation did not
    give (command-r's ``rag`` without documents). ``missing`` names them
    (``"tools"``, ``"documents"``), for the caller to say how to give them."""

    def __init__(self, template: str, missing: tuple[str, ...], cause: ChatTemplateError) -> None:
        super().__init__(f"the template '{template}' needs {' and '.join(missing)}, which the conversation "
                         f"does not give ({cause.detail})", cause.line)
        self.missing = missing


# what a template's error says when it iterates a list the conversation lacks
_MISSING_LIST = "'NoneType' object is not iterable"


def _missing_inputs(model: Model, template: ChatTemplate, conv: Conversation, add_generation_prompt: bool,
                    timeout: float, error: ChatTemplateError) -> tuple[str, ...]:
    """The lists (``tools``, ``documents``) the conversation leaves out
    that made the template fail with ``error``: each one the template
    names is given empty in turn, and it is one when that gets the
    rendering past ``error``'s line (command-r's ``rag`` names tools too
    but only iterates the documents)."""
    if _MISSING_LIST not in error.detail:
        return ()
    candidates = [name for name, value in (("tools", conv.tools), ("documents", conv.documents))
                  if value is None and re.search(rf"\b{name}\b", template.source)]
    needed = []
    for name in candidates:
        trial = Conversation(conv.messages, [] if name == "tools" else conv.tools,
                             [] if name == "documents" else conv.documents)
        try:
            render_conversation(model, template, trial, add_generation_prompt, timeout)
        except ChatTemplateError as e:
            if _MISSING_LIST in e.detail and e.line == error.line:
                continue
        needed.append(name)
    return tuple(needed or candidates)


def template_variables(model: Model) -> dict[str, str]:
    """``bos_token``, ``eos_token``... as the template sees them: the
    file's special tokens' texts."""
    ids = model.config.special_ids
    pieces = model.vocab.pieces
    return {f"{name}_token": pieces[ids[name]] for name in _TOKEN_NAMES
            if name in ids and 0 <= ids[name] < len(pieces)}


def context_length(model: Model) -> int | None:
    """``{arch}.context_length`` from the file, when it has it."""
    arch = model.vocab.architecture
    value = model.gguf.get(f"{arch}.context_length") if arch else None
    return int(value.value) if value is not None and isinstance(value.value, int) else None


def render_conversation(model: Model, template: ChatTemplate, conv: Conversation,
                        add_generation_prompt: bool = False, timeout: float = DEFAULT_TIMEOUT) -> str:
    variables: dict[str, Any] = {**template_variables(model), "messages": conv.messages, "tools": conv.tools,
                                 "documents": conv.documents, "add_generation_prompt": add_generation_prompt}
    return render(template.source, variables, timeout=timeout)


def content_spans(rendered: str, messages: Sequence[dict[str, Any]]) -> list[tuple[int, int]]:
    """Per message, the span of its content in ``rendered`` ((-1, -1) when
    not found). Each is looked for after the previous one's end first
    (templates write messages in order), then anywhere not yet claimed
    (templates that move the system message); the content with its outer
    white space stripped is tried when the whole is not found (templates
    that ``trim`` it)."""
    claimed: list[tuple[int, int]] = []
    out: list[tuple[int, int]] = []
    pos = 0

    def free(start: int, end: int) -> bool:
        i = bisect.bisect_right(claimed, (start, len(rendered) + 1))
        before_ok = i == 0 or claimed[i - 1][1] <= start
        after_ok = i == len(claimed) or claimed[i][0] >= end
        return before_ok and after_ok

    def find(needle: str, start: int) -> int:
        at = rendered.find(needle, start)
        while at >= 0 and not free(at, at + len(needle)):
            at = rendered.find(needle, at + 1)
        return at

    for m in messages:
        content = m.get("content")
        span = (-1, -1)
        if isinstance(content, str) and content.strip():
            for needle in dict.fromkeys((content, content.strip())):
                at = find(needle, pos)
                if at < 0:
                    at = find(needle, 0)
                if at >= 0:
                    span = (at, at + len(needle))
                    break
        if span[0] >= 0:
            bisect.insort(claimed, span)
            pos = max(pos, span[1])
        out.append(span)
    return out


def _sentinel(k: int) -> str:
    # private-use characters no template writes, around the message index
    return f"\ue000{k}\ue001"


_SENTINEL = re.compile("\ue000(\\d+)\ue001")


def sentinel_spans(model: Model, template: ChatTemplate, conv: Conversation, rendered: str,
                   add_generation_prompt: bool, timeout: float) -> list[tuple[int, int]] | None:
    """Per message, the span of its content in ``rendered``, found exactly:
    the conversation is rendered again with each non-empty content replaced
    by a marker, and ``rendered`` must be that text with each marker
    replaced by its content (or the content stripped, for templates that
    ``trim`` it). None when it is not (a template that looks inside the
    content, or writes it twice), and the caller falls back to searching."""
    marked = [{**m, "content": _sentinel(k)} if isinstance(m.get("content"), str) and m["content"] else m
              for k, m in enumerate(conv.messages)]
    try:
        skeleton = render_conversation(model, template, Conversation(marked, conv.tools, conv.documents),
                                       add_generation_prompt, timeout)
    except TokenPrismError:
        return None
    spans = [(-1, -1)] * len(conv.messages)
    pos = 0  # in rendered
    last = 0  # in skeleton
    for match in _SENTINEL.finditer(skeleton):
        scaffold = skeleton[last:match.start()]
        if not rendered.startswith(scaffold, pos):
            return None
        pos += len(scaffold)
        k = int(match.group(1))
        if k >= len(spans) or spans[k][0] >= 0:
            return None
        content = str(conv.messages[k]["content"])
        for text in dict.fromkeys((content, content.strip())):
            if rendered.startswith(text, pos):
                spans[k] = (pos, pos + len(text))
                pos += len(text)
                break
        else:
            return None
        last = match.end()
    if rendered[pos:] != skeleton[last:]:
        return None
    return [(s, e) if e > s else (-1, -1) for s, e in spans]


def token_origins(model: Model, enc: Encoding, spans: Sequence[tuple[int, int]]) -> list[ChatToken]:
    text = enc.text
    specials = {(f.start, f.end) for f in model.fragments(text, True) if f.token >= 0}
    ordered = sorted((s, e, k) for k, (s, e) in enumerate(spans) if s >= 0)
    starts = [s for s, _, _ in ordered]
    pieces = model.vocab.pieces
    attrs = model.vocab.attrs
    out: list[ChatToken] = []
    readable: dict[int, str] = {}

    def shown(tid: int) -> str:
        text = readable.get(tid)
        if text is None:
            text = readable[tid] = model.display_piece(tid)
        return text

    def holder(s: int, e: int) -> int | None:
        # the message whose content span holds [s, e) wholly
        j = bisect.bisect_right(starts, s) - 1
        if j >= 0 and s < e <= ordered[j][1]:
            return ordered[j][2]
        return None

    for i in range(len(enc)):
        tid, s, e = enc.token_ids[i], enc.starts[i], enc.ends[i]
        if (s, e) in specials or (s == e and attrs[tid] & (Attr.CONTROL | Attr.USER_DEFINED)):
            out.append(ChatToken(tid, pieces[tid], s, e, SPECIAL, holder(s, e), text=shown(tid)))
            continue
        shares: dict[int, int] = {}
        j = max(0, bisect.bisect_right(starts, s) - 1)
        while j < len(ordered) and ordered[j][0] < e:
            ms, me, k = ordered[j]
            overlap = min(e, me) - max(s, ms)
            if overlap > 0:
                shares[k] = shares.get(k, 0) + overlap
            j += 1
        scaffold = (e - s) - sum(shares.values())
        if not shares:
            out.append(ChatToken(tid, pieces[tid], s, e, TEMPLATE, None, text=shown(tid)))
            continue
        best = max(shares, key=lambda k: (shares[k], -k))
        straddles = len(shares) + (scaffold > 0) > 1
        if scaffold > shares[best]:
            out.append(ChatToken(tid, pieces[tid], s, e, TEMPLATE, None, straddles, shown(tid)))
        else:
            out.append(ChatToken(tid, pieces[tid], s, e, MESSAGE, best, straddles, shown(tid)))
    return out


def chat(model: Model, messages: Any, tools: Any = None, documents: Any = None, template: str | None = None,
         template_source: str | None = None, add_generation_prompt: bool = False, add_special: bool = False,
         timeout: float = DEFAULT_TIMEOUT, context: int | None = None) -> ChatResult:
    """Render ``messages`` (a list of ``{"role", "content"}`` dicts) with the
    file's chat template (``template`` names one of its named templates or
    a shipped common one; ``template_source`` gives the Jinja text itself),
    tokenize the result with special tokens parsed and, unless
    ``add_special``, no BOS/EOS added (as ``apply_chat_template`` does), and
    trace every token to its origin. ``context`` is the context length to
    measure against (what llama.cpp's ``-c`` sets); by default the file's
    ``{arch}.context_length``.

    >>> model = open_model("ggml-vocab-qwen2.gguf")
    >>> result = chat(model, [{"role": "user", "content": "Hello"}], add_generation_prompt=True)
    >>> result.total, result.messages[0].tokens, result.tokens[0].origin
    (19, 1, 'special')
    """
    conv = Conversation(check_messages(messages), check_tools(tools), check_documents(documents))
    chosen = (ChatTemplate("custom", template_source, "path") if template_source is not None
              else find_template(model, template))
    try:
        rendered = render_conversation(model, chosen, conv, add_generation_prompt, timeout)
    except ChatTemplateError as e:
        missing = _missing_inputs(model, chosen, conv, add_generation_prompt, timeout, e)
        if missing:
            raise MissingInputs(chosen.name, missing, e) from None
        raise
    enc = model.encode(rendered, add_special=add_special, parse_special=True)
    warnings: list[str] = []
    bos = model.config.special_ids.get("bos", -1)
    ids = enc.token_ids
    if add_special and model.config.add_bos and len(ids) >= 2 and ids[0] == bos and ids[1] == bos:
        warnings.append("the template already writes BOS; adding special tokens makes it twice "
                        "(llama.cpp warns the same)")
    spans = (sentinel_spans(model, chosen, conv, rendered, add_generation_prompt, timeout)
             or content_spans(rendered, conv.messages))
    tokens = token_origins(model, enc, spans)
    counts = [0] * len(conv.messages)
    for t in tokens:
        if t.message is not None:
            counts[t.message] += 1
    infos = tuple(MessageInfo(str(m["role"]), counts[k], *spans[k]) for k, m in enumerate(conv.messages))
    return ChatResult(rendered, enc, tuple(tokens), infos,
                      context if context is not None else context_length(model), chosen.name, chosen.origin,
                      add_special, tuple(warnings))
