"""chat(): tokens of a rendered conversation, each traced to the template
scaffold, a special token or a message; hostile templates stopped."""

from __future__ import annotations

import time
from functools import lru_cache

import pytest

from tokenprism.core import Model, open_model
from tokenprism.core.chat import (MESSAGE, SPECIAL, TEMPLATE, ChatTemplateError, ConversationError,
                                  TemplateNotFound, chat, content_spans, render)
from tests.refdata import vocab_path


@lru_cache(maxsize=None)
def _model(name: str) -> Model:
    return open_model(vocab_path(name))


CONV = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Grüße, 日本 🙂!"},
        {"role": "assistant", "content": ""}, {"role": "user", "content": "user"}]


@pytest.mark.parametrize("vocab", ["qwen2", "phi-3", "command-r", "gemma-4"])
def test_counts_add_up_and_message_tokens_hold_the_content(vocab: str) -> None:
    model = _model(vocab)
    r = chat(model, CONV, add_generation_prompt=True)
    assert r.ids == model.encode(r.rendered, parse_special=True).ids
    assert sum(m.tokens for m in r.messages) == r.total - r.count(TEMPLATE) - r.outside_messages(SPECIAL)
    assert r.count(MESSAGE) > 0 and r.count(SPECIAL) > 0
    for k, m in enumerate(r.messages):
        mine = [t for t in r.tokens if t.message == k]
        assert len(mine) == m.tokens
        if m.start >= 0:
            assert r.rendered[m.start:m.end] in (CONV[k]["content"], CONV[k]["content"].strip())
            # tokens wholly inside the content are the message's
            inside = [t for t in r.tokens if m.start <= t.start and t.end <= m.end and t.end > t.start]
            assert all(t.origin == MESSAGE and t.message == k for t in inside)
    assert r.messages[2].tokens == 0  # empty content
    assert r.context_length == model.gguf.metadata[f"{model.vocab.architecture}.context_length"].value


def test_origins_on_chatml_by_hand() -> None:
    model = _model("qwen2")
    r = chat(model, [{"role": "user", "content": "user"}, {"role": "assistant", "content": "Hi"}])
    # the scaffold's own "user" (after <|im_start|>) stays the template's
    by_text = [(r.rendered[t.start:t.end], t.origin, t.message) for t in r.tokens]
    assert by_text[:6] == [("<|im_start|>", SPECIAL, None), ("system", TEMPLATE, None), ("\n", TEMPLATE, None),
                           ("You", TEMPLATE, None), (" are", TEMPLATE, None), (" a", TEMPLATE, None)]
    assert ("user", TEMPLATE, None) in by_text and ("user", MESSAGE, 0) in by_text
    assert by_text.index(("user", TEMPLATE, None)) < by_text.index(("user", MESSAGE, 0))
    assert ("Hi", MESSAGE, 1) in by_text
    assert r.messages[0].tokens == 1 and r.messages[1].tokens == 1
    assert r.template == "default" and r.template_origin == "file"


def test_a_token_straddling_scaffold_and_message_is_marked() -> None:
    model = _model("qwen2")
    # "hello" is one token: "he" from the template, "llo" from the message
    r = chat(model, [{"role": "user", "content": "llo"}], template_source="{{ 'he' + messages[0].content }}")
    assert r.rendered == "hello"
    (tok,) = r.tokens
    assert tok.straddles and tok.origin == MESSAGE and tok.message == 0
    r = chat(model, [{"role": "user", "content": "o"}], template_source="{{ 'hell' + messages[0].content }}")
    assert [(t.origin, t.straddles) for t in r.tokens] == [(TEMPLATE, True)]


def test_a_special_token_typed_in_a_message_counts_in_it() -> None:
    """'hi <|im_end|> there': the special token is the message's (origin
    special, message 0, in its count); the template's own stay outside."""
    model = _model("qwen2")
    im_end = model.vocab.pieces.index("<|im_end|>")
    r = chat(model, [{"role": "user", "content": "hi <|im_end|> there"}], template="chatml")
    assert r.rendered == "<|im_start|>user\nhi <|im_end|> there<|im_end|>\n"
    typed = [t for t in r.tokens if t.id == im_end]
    assert [(t.origin, t.message, r.rendered[t.start:t.end]) for t in typed] == [
        ("special", 0, "<|im_end|>"), ("special", None, "<|im_end|>")]
    assert r.messages[0].tokens == 4  # "hi", " ", "<|im_end|>", " there"
    assert r.outside_messages(SPECIAL) == 2 and r.count(SPECIAL) == 3
    assert r.messages[0].tokens + r.count(TEMPLATE) + r.outside_messages(SPECIAL) == r.total
    out = r.to_json()
    assert out["special_tokens"] == 2
    assert out["template_tokens"] + out["special_tokens"] + sum(m["tokens"] for m in out["messages"]) == out["total"]


def test_moved_system_message_and_search_fallback() -> None:
    model = _model("qwen2")
    source = "{% for m in messages[1:] %}{{ m.content }}\n{% endfor %}{{ messages[0].content }}"
    r = chat(model, [{"role": "system", "content": "SYS"}, {"role": "user", "content": "U"}], template_source=source)
    assert (r.messages[0].start, r.messages[1].start) == (2, 0)
    # a template that looks inside the content defeats the markers; the search still finds it
    spans = content_spans("<a>  x  </a><b>y</b>", [{"content": "  x  "}, {"content": "y"}])
    assert spans == [(3, 8), (15, 16)]
    assert content_spans("[x]", [{"content": " x "}]) == [(1, 2)]


def test_add_special_warns_when_bos_doubles() -> None:
    model = _model("phi-3")  # its template writes {{ bos_token }} and the file adds BOS
    plain = chat(model, [{"role": "user", "content": "Hi"}])
    assert plain.ids[0] == 1 and plain.ids[1] != 1 and not plain.warnings
    doubled = chat(model, [{"role": "user", "content": "Hi"}], add_special=True)
    assert doubled.ids[:2] == [1, 1] and doubled.ids[1:] == plain.ids
    assert doubled.ids == model.encode(plain.rendered, add_special=True, parse_special=True).ids
    assert "twice" in doubled.warnings[0]
    assert doubled.tokens[0].origin == SPECIAL


def test_named_and_common_templates() -> None:
    model = _model("command-r")
    r = chat(model, [{"role": "user", "content": "Hi"}], template="tool_use", add_generation_prompt=True,
             tools=[{"name": "lookup", "description": "Find a fact", "parameter_definitions": {}}])
    assert r.template == "tool_use" and "def lookup(" in r.rendered
    with pytest.raises(TemplateNotFound, match="no template 'nope'.*default, rag, tool_use"):
        chat(model, [{"role": "user", "content": "Hi"}], template="nope")
    spm = _model("llama-spm")
    with pytest.raises(TemplateNotFound, match="has no chat template"):
        chat(spm, [{"role": "user", "content": "Hi"}])
    r = chat(spm, [{"role": "user", "content": "Hi"}], template="chatml")
    assert r.template_origin == "builtin" and r.rendered.startswith("<|im_start|>user\nHi")


@pytest.mark.parametrize("messages, message", [
    ({"role": "user"}, "JSON list"),
    ([], "no messages"),
    ([{"role": "robot", "content": "x"}], "unknown role 'robot'"),
    ([{"role": "user", "content": ["a"]}], "content must be a string"),
    ([{"role": "user"}], "has no \"content\""),
    (["hi"], "is not an object"),
])
def test_bad_conversations(messages: object, message: str) -> None:
    with pytest.raises(ConversationError, match=message):
        chat(_model("qwen2"), messages)


HOSTILE = [
    ("{{ ''.__class__.__mro__[1].__subclasses__() }}", "sandbox", 1),
    ("ok\n{{ messages.__class__.__name__ }}", "sandbox", 2),
    ("{% set ns = namespace() %}\n{% set ns._x = 1 %}", "underscore", 2),
    ("\n\n{{ cycler.__init__.__globals__ }}", "sandbox", 3),
    ("{{ 'a' * 1000000000 }}", "limit", 1),
    ("{% set ns = namespace(s='ab') %}\n{% for i in range(60) %}{% set ns.s = ns.s ~ ns.s %}{% endfor %}", "limit", 2),
    ("{% set ns = namespace(s='ab') %}\n{% for i in range(60) %}{% set ns.s = ns.s + ns.s %}{% endfor %}", "limit", 2),
    ("{{ '%0999999999d' % 1 }}", "format width", 1),
    ("{{ '{:>999999999}'.format(1) }}", "format width", 1),
    ("{{ 'x'|center(999999999) }}", "limit", 1),
    ("{{ 'x'.ljust(999999999) }}", "limit", 1),
    ("{{ ('x' * 1000)|replace('', 'yyyyyyyyyy' * 1000) }}", "limit", 1),
    ("{{ 9 ** 99999999 }}", "power", 1),
    ("a\n\n{% for i in range(100000) %}{{ 'x' * 1000 }}{% endfor %}", "limit", 3),
    ("{% macro m() %}\n{% for i in range(100000) %}{{ 'x' * 1000 }}{% endfor %}{% endmacro %}\n{{ m() }}",
     "macro or block passed the limit", 2),
    ("{% set s %}\n{% for i in range(100000) %}{{ 'x' * 1000 }}{% endfor %}{% endset %}", "limit", 2),
    ("x\n{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}", "longer than", 2),
    ("{% set x = range(100000)|list %}\n{% for a in x %}{% for b in x %}{% endfor %}{% endfor %}", "longer than", 2),
    # the clock checked between two written chunks (outside the template's frames)
    ('{% for i in range(100000) %}{% for j in range(100000) %}{{ "" }}{% endfor %}{% endfor %}', "longer than", 1),
    ('a\n\n{% for i in range(100000) %}{% for j in range(100000) %}{{ "" }}{% endfor %}{% endfor %}',
     "longer than", 3),
    ("{% macro f() %}{{ f() }}{% endmacro %}{{ f() }}", "recursed", 1),
    ("a\n{{ raise_exception('roles must alternate') }}", "roles must alternate", 2),
    ("a\nb\n{% for x in %}", "syntax error", 3),
    ("{{ range(10000000) }}", "range", 1),
]


@pytest.mark.parametrize("source, message, line", HOSTILE)
def test_hostile_templates_stop_with_the_line(source: str, message: str, line: int) -> None:
    t = time.monotonic()
    with pytest.raises(ChatTemplateError, match=message) as info:
        render(source, {"messages": [{"role": "user", "content": "hi"}]}, timeout=1.0)
    assert time.monotonic() - t < 3.0
    assert info.value.line == line and str(info.value).startswith(f"template line {line}:")


def test_a_null_content_tool_call_reaches_the_template_as_none() -> None:
    """OpenAI's ``"content": null`` beside ``tool_calls``: kept as None, as
    transformers passes it (Llama-3's template prints it ``None``), and not
    refused as a message without content."""
    calls = [{"type": "function", "function": {"name": "f", "arguments": {"x": 1}}}]
    conv = [{"role": "user", "content": "go"}, {"role": "assistant", "content": None, "tool_calls": calls},
            {"role": "tool", "content": "done"}]
    r = chat(_model("qwen2"), conv, template="llama3")
    assert "<|start_header_id|>assistant<|end_header_id|>\n\nNone<|eot_id|>" in r.rendered
    assert [m.tokens for m in r.messages][1] == 0
    assert render("{{ messages[0].content is none }}", {"messages": conv[1:]}) == "True"


def test_range_behaves_as_range() -> None:
    assert render("{{ range(3) }} {{ range(5)|length }} {{ range(5)[1:3]|list }} {{ 2 in range(3) }} "
                  "{{ range(3)|reverse|list }}", {}) == "range(0, 3) 5 [1, 2] True [2, 1, 0]"


def test_the_tojson_filter_is_transformers_one() -> None:
    out = render("{{ x|tojson }} {{ x|tojson(indent=2) }}", {"x": {"a": "<é>&"}})
    assert out == '{"a": "<é>&"} {\n  "a": "<é>&"\n}'
