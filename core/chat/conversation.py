"""Checking a conversation before it reaches a template.

A conversation is what OpenAI's API and ``transformers`` take: a list of
``{"role", "content"}`` objects, or an object with ``"messages"`` and
optional ``"tools"``. Messages pass to the template as plain JSON data,
normalized as ``transformers``' ``apply_chat_template`` normalizes them
(rebuilt from JSON types, null values kept as ``None`` -- an OpenAI-style
tool call's ``"content": null`` is what a template tests with ``is none``
or prints as ``None``; a reasoning text given as ``reasoning_content``,
``thinking`` or ``reasoning`` offered under the first two names), so that
the rendering equals its.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from tokenprism.core.errors import TokenPrismError

ROLES = ("system", "user", "assistant", "tool")
_REASONING = ("reasoning_content", "thinking", "reasoning")


class ConversationError(TokenPrismError):
    """A conversation that is not a list of valid messages."""


@dataclass(frozen=True)
class Conversation:
    messages: list[dict[str, Any]]
    tools: list[dict[str, Any]] | None = field(default=None)
    #: for retrieval templates (command-r's ``rag``): ``{"title", "text"}`` objects
    documents: list[dict[str, Any]] | None = field(default=None)


def _plain(value: Any, where: str) -> Any:
    """``value`` rebuilt from JSON types only (nothing else reaches a
    template: other objects have methods the sandbox does not know)."""
    if value is None or type(value) in (str, int, float, bool):
        return value
    if isinstance(value, dict):
        return {str(k): _plain(v, where) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v, where) for v in value]
    raise ConversationError(f"{where}: {type(value).__name__} is not a JSON value")


def check_messages(messages: Any) -> list[dict[str, Any]]:
    """The messages, checked (a list of objects with a known ``role`` and
    string or null ``content``; content may be absent only on an assistant
    message with ``tool_calls``) and normalized."""
    if not isinstance(messages, list):
        raise ConversationError("messages must be a JSON list of {\"role\", \"content\"} objects")
    if not messages:
        raise ConversationError("the conversation has no messages")
    out: list[dict[str, Any]] = []
    for i, m in enumerate(messages):
        where = f"message {i}"
        if not isinstance(m, dict):
            raise ConversationError(f"{where} is not an object with \"role\" and \"content\"")
        role = m.get("role")
        if role not in ROLES:
            raise ConversationError(f"{where}: unknown role {role!r} (roles: {', '.join(ROLES)})")
        content = m.get("content")
        if "content" not in m and not (role == "assistant" and m.get("tool_calls")):
            raise ConversationError(f"{where} ({role}) has no \"content\"")
        if content is not None and not isinstance(content, str):
            raise ConversationError(f"{where} ({role}): content must be a string, not "
                                    f"{type(content).__name__}")
        msg = {str(k): _plain(v, where) for k, v in m.items()}
        reasoning = next((msg[k] for k in _REASONING if msg.get(k) is not None), None)
        if reasoning is not None:
            msg = {"thinking": reasoning, **msg, "reasoning_content": reasoning}
        out.append(msg)
    return out


def check_tools(tools: Any) -> list[dict[str, Any]] | None:
    if tools is None:
        return None
    if not isinstance(tools, list) or not all(isinstance(t, dict) for t in tools):
        raise ConversationError("tools must be a JSON list of objects (function definitions)")
    return [_plain(t, "tools") for t in tools]


def check_documents(documents: Any) -> list[dict[str, Any]] | None:
    if documents is None:
        return None
    if not isinstance(documents, list) or not all(isinstance(d, dict) for d in documents):
        raise ConversationError("documents must be a JSON list of objects (\"title\", \"text\")")
    return [_plain(d, "documents") for d in documents]


def parse_conversation(data: Any) -> Conversation:
    """A conversation from decoded JSON: a list of messages, or an object
    with ``"messages"`` and optional ``"tools"`` and ``"documents"``."""
    if isinstance(data, dict):
        if "messages" not in data:
            raise ConversationError("the object has no \"messages\" list")
        return Conversation(check_messages(data["messages"]), check_tools(data.get("tools")),
                            check_documents(data.get("documents")))
    return Conversation(check_messages(data))


def load_json(text: str, what: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError as e:
        raise ConversationError(f"{what} is not JSON: {e.msg} at line {e.lineno} column {e.colno}") from None
