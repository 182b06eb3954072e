"""Chat templates: what the model sees of a conversation (a service on the
kernel's public API).

    from tokenprism.core import open_model
    from tokenprism.core.chat import chat

    result = chat(open_model("qwen2.gguf"), [{"role": "user", "content": "Hi"}],
                  add_generation_prompt=True)
    result.rendered, result.total, [m.tokens for m in result.messages]

``model.chat(messages, ...)`` is the same call: a thin accessor on
:class:`~tokenprism.core.Model` that imports this package on first use, so
the kernel never loads Jinja2 and the rendering bounds until asked (the one
allowed edge in tests/core/test_layers.py).
"""

from .chunk import Chunk, ChunkError, chunk_text
from .conversation import ROLES, Conversation, ConversationError, load_json, parse_conversation
from .render import ChatTemplateError, render
from .service import (MESSAGE, SPECIAL, TEMPLATE, ChatResult, ChatToken, MessageInfo, MissingInputs, chat,
                      content_spans, context_length, template_variables)
from .templates import DEFAULT, ChatTemplate, TemplateNotFound, builtin_templates, file_templates, find_template

__all__ = [
    "Chunk", "ChunkError", "chunk_text", "ROLES", "Conversation", "ConversationError", "load_json",
    "parse_conversation", "ChatTemplateError", "render", "MESSAGE", "SPECIAL", "TEMPLATE", "ChatResult",
    "ChatToken", "MessageInfo", "MissingInputs", "chat", "content_spans", "context_length", "template_variables", "DEFAULT",
    "ChatTemplate", "TemplateNotFound", "builtin_templates", "file_templates", "find_template",
]
