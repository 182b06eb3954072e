"""Chat templates: what the model sees of a conversation (a service on the
kernel's public API).

    from tokenprism.core import open_model
    from tokenprism.core.chat import chat

    result = chat(open_model("qwen2.gguf"), [{"role": "user", "content": "Hi"}],
                  add_generation_prompt=True)
    result.rendered, result.total, [m.tokens for m in result.messages]

A function here rather than a ``Model.chat`` method: the kernel does not
import its services (tests/core/test_layers.py), and rendering needs
Jinja2 and this package's bounds.
"""

from .chunk import Chunk, ChunkError, chunk_text
from .conversation import ROLES, Conversation, ConversationError, load_json, parse_conversation
from .render import ChatTemplateError, render
from .service import (MESSAGE, SPECIAL, TEMPLATE, ChatResult, ChatToken, MessageInfo, chat, content_spans,
                      context_length, template_variables)
from .templates import DEFAULT, ChatTemplate, TemplateNotFound, builtin_templates, file_templates, find_template

__all__ = [
    "Chunk", "ChunkError", "chunk_text", "ROLES", "Conversation", "ConversationError", "load_json",
    "parse_conversation", "ChatTemplateError", "render", "MESSAGE", "SPECIAL", "TEMPLATE", "ChatResult",
    "ChatToken", "MessageInfo", "chat", "content_spans", "context_length", "template_variables", "DEFAULT",
    "ChatTemplate", "TemplateNotFound", "builtin_templates", "file_templates", "find_template",
]
