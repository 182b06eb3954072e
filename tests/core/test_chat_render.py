"""Chat templates render exactly as Hugging Face transformers renders them.

tests/data/chat/fixtures.json holds transformers' renderings (made by
tests/data/chat/make_fixtures.py) of every template in the reference
vocabularies, named ones included, and of the common templates shipped in
core/chat/common_templates, for the conversations of conversations.json (system
message, non-ASCII text, empty content, tool calls, documents), with and
without the generation prompt."""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path
from typing import Any

import pytest

from tokenprism.core import Model, open_model
from tokenprism.core.chat import (ChatTemplate, ChatTemplateError, builtin_templates, chat, file_templates, render,
                                  template_variables)
from tokenprism.core.chat.conversation import parse_conversation
from tokenprism.core.chat.service import render_conversation
from tests.refdata import vocab_path

DATA = Path(__file__).resolve().parent.parent / "data" / "chat"
FIXTURES: list[dict[str, Any]] = json.loads((DATA / "fixtures.json").read_text(encoding="utf-8"))["cases"]
CONVERSATIONS: dict[str, Any] = json.loads((DATA / "conversations.json").read_text(encoding="utf-8"))


@lru_cache(maxsize=None)
def _model(vocab: str) -> Model:
    return open_model(vocab_path(vocab))


def _id(case: dict[str, Any]) -> str:
    return f"{case['template']}-{case['conversation']}-{'gen' if case['add_generation_prompt'] else 'nogen'}"


def test_fixtures_cover_every_reference_template_and_the_common_ones() -> None:
    labels = {c["template"] for c in FIXTURES}
    assert {"command-r:default", "command-r:tool_use", "command-r:rag", "gemma-4:default", "phi-3:default",
            "qwen2:default", "qwen35:default"} <= labels
    assert {f"builtin:{n}" for n in builtin_templates()} <= labels
    assert "test:environment" in labels
    assert {"chatml", "llama3", "gemma", "mistral", "phi3", "hermes-tools"} <= set(builtin_templates())
    # most cases render (a template may refuse a conversation, as Gemma's refuses a tool role)
    assert sum("rendered" in c for c in FIXTURES) > 100


@pytest.mark.parametrize("case", FIXTURES, ids=_id)
def test_rendering_equals_transformers(case: dict[str, Any]) -> None:
    conv = parse_conversation(CONVERSATIONS[case["conversation"]])
    where, name = case["template"].split(":", 1)
    gen = case["add_generation_prompt"]
    if where in ("builtin", "test"):
        variables = {**case["variables"], "messages": conv.messages, "tools": conv.tools,
                     "documents": conv.documents, "add_generation_prompt": gen}
        source = (builtin_templates()[name] if where == "builtin"
                  else (DATA / f"{name}.jinja").read_text(encoding="utf-8"))

        def go() -> str:
            return render(source, variables)
    else:
        model = _model(where)
        # the special tokens' texts agree with what the gguf package reads
        assert template_variables(model) == case["variables"]
        template = ChatTemplate(name, file_templates(model)[name], "file")

        def go() -> str:
            return render_conversation(model, template, conv, gen)
    if "error" in case:
        with pytest.raises(ChatTemplateError) as info:
            go()
        assert case["error"] in str(info.value)
    else:
        assert go() == case["rendered"]


LLAMA_IDS: dict[str, list[dict[str, Any]]] = json.loads((DATA / "llama_ids.json").read_text(encoding="utf-8"))
FILE_CASES = [c for c in FIXTURES if c["template"].split(":")[0] not in ("builtin", "test") and "rendered" in c]


@pytest.mark.parametrize("case", FILE_CASES, ids=_id)
@pytest.mark.parametrize("add_special", [False, True], ids=["plain", "add_special"])
def test_chat_ids_equal_llama_cpp(case: dict[str, Any], add_special: bool) -> None:
    """chat() end to end: the ids of the rendering equal llama.cpp's
    (tests/data/chat/make_llama_ids.py), special tokens parsed, BOS/EOS
    added or not."""
    vocab, name = case["template"].split(":", 1)
    conv = parse_conversation(CONVERSATIONS[case["conversation"]])
    result = chat(_model(vocab), conv.messages, tools=conv.tools, documents=conv.documents, template=name,
                  add_generation_prompt=case["add_generation_prompt"], add_special=add_special)
    (row,) = [r for r in LLAMA_IDS[vocab] if r["text"] == result.rendered]
    assert result.ids == row["add_special" if add_special else "plain"]
