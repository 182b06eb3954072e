"""model.chat(messages, ...): the chat service's result through the Model
accessor, with the same options."""

from __future__ import annotations

import pytest

from tokenprism.core import open_model
from tokenprism.core.chat import ChatTemplateError, TemplateNotFound, chat
from tests.refdata import vocab_path

CONV = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Grüße 🙂"}]


def test_model_chat_equals_the_service() -> None:
    model = open_model(vocab_path("command-r"))
    for options in ({}, {"add_generation_prompt": True, "add_special": True}, {"template": "rag", "documents": [{"title": "T", "text": "Doc"}]},
                    {"template": "chatml", "context": 1000}):
        mine = model.chat(CONV, **options)  # type: ignore[arg-type]
        theirs = chat(model, CONV, **options)  # type: ignore[arg-type]
        assert mine.to_json() == theirs.to_json()
    r = model.chat(CONV, template="chatml", context=1000)
    # ChatML written by hand: the shipped template, not the file's
    assert r.rendered == "<|im_start|>system\nBe brief.<|im_end|>\n<|im_start|>user\nGrüße 🙂<|im_end|>\n"
    assert (r.template, r.template_origin, r.context_length) == ("chatml", "builtin", 1000)


def test_model_chat_reports_bad_templates() -> None:
    model = open_model(vocab_path("qwen2"))
    with pytest.raises(TemplateNotFound):
        model.chat(CONV, template="no-such-template")
    with pytest.raises(ChatTemplateError, match="line 2"):
        model.chat(CONV, template_source="ok\n{{ raise_exception('nope') }}")
    with pytest.raises(ChatTemplateError):
        model.chat(CONV, template_source="{% for i in range(10**9) %}{{ i }}{% endfor %}", timeout=0.2)
