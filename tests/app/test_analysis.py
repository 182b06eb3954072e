"""The Qt-free parts of the app: spans, UTF-16 positions, stats, piece text."""

from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tokenprism.app.logic.analysis import Analysis, ModelInfo, Style, Utf16Map, tokenize
from tokenprism.app.logic.pieces import format_ids, piece_cell, readable, tooltip_html, type_name
from tokenprism.core import Attr, Model, open_model
from tokenprism.core.library.resources import demo_models


@pytest.fixture(scope="module")
def info(test_vocab: str, models) -> ModelInfo:  # type: ignore[no-untyped-def]
    return ModelInfo(models(test_vocab))


def utf16_len(s: str) -> int:
    return len(s.encode("utf-16-le", "surrogatepass")) // 2


def test_utf16_map_identity_for_bmp_text() -> None:
    m = Utf16Map("héllo 日本")
    assert m.identity
    assert m.to16(np.array([0, 3, 8])).tolist() == [0, 3, 8]


def test_utf16_map_counts_astral_characters_twice() -> None:
    text = "a🙂b🙂🙂c"
    m = Utf16Map(text)
    assert not m.identity
    idx = np.arange(len(text) + 1)
    assert m.to16(idx).tolist() == [utf16_len(text[:i]) for i in idx]
    for i in range(len(text) + 1):
        assert m.from16(utf16_len(text[:i])) == i


def test_spans_tokens_and_groups(info: ModelInfo) -> None:
    text = "hello 🙂 world é"
    a = tokenize(info, text, 7, add_special=True, parse_special=False)
    enc = a.encoding
    assert a.generation == 7 and a.info is info
    assert enc.ids[0] == 1 and enc.ids[-1] == 2  # BOS and EOS cover no text
    assert a.empty_tokens.tolist() == [0, len(enc) - 1]
    assert a.empty_pos16.tolist() == [0, utf16_len(text)]
    # every span is a token or a whole group, in UTF-16 units
    spans = list(zip(a.span_start16.tolist(), a.span_end16.tolist()))
    emoji = text.index("🙂")
    assert (emoji, emoji + 2) in spans
    k = spans.index((emoji, emoji + 2))
    first, last = int(a.span_first[k]), int(a.span_last[k])
    assert last - first == 4 and a.span_style[k] == Style.BYTES
    assert all(enc.groups[i] == first for i in range(first, last))
    assert a.token_range(first + 2) == (first, last)
    assert a.span_at(emoji + 1) == k
    assert a.range16(first, last) == (emoji, emoji + 2)
    assert a.stats.byte_fallback == 4 + 2  # 🙂 and é
    assert a.stats.unknown == 0
    assert a.stats.chars == len(text) and a.stats.utf8_bytes == len(text.encode())


def test_span_styles_follow_token_attributes(info: ModelInfo) -> None:
    a = tokenize(info, "a <|user|> <s>", 0, add_special=False, parse_special=True)
    vocab = a.model.vocab
    styles = {vocab.pieces[a.encoding.token_ids[int(a.span_first[k])]]: int(a.span_style[k])
              for k in range(len(a.span_first))}
    assert styles["<|user|>"] == Style.USER
    assert styles["<s>"] == Style.CONTROL
    assert styles["a"] == Style.NORMAL


def test_empty_text(info: ModelInfo) -> None:
    a = tokenize(info, "", 0, add_special=False, parse_special=False)
    assert len(a) == 0 and len(a.span_start16) == 0
    assert a.spans_in(0, 10) == (0, 0)
    assert a.span_at(0) == -1
    assert a.stats.chars_per_token == 0.0


@settings(max_examples=60, deadline=None)
@given(st.text(alphabet=st.sampled_from(list("ab the fox\n\t,é日🙂👍🏽") + ["\u200b"]), max_size=40))
def test_spans_cover_exactly_the_token_spans(info: ModelInfo, text: str) -> None:
    a: Analysis = tokenize(info, text, 0, add_special=True, parse_special=False)
    enc = a.encoding
    covered16 = set()
    for i in range(len(enc)):
        s, e = enc.starts[i], enc.ends[i]
        covered16.update(range(utf16_len(text[:s]), utf16_len(text[:e])))
    from_spans = set()
    for s, e in zip(a.span_start16.tolist(), a.span_end16.tolist()):
        assert s < e
        assert not from_spans & set(range(s, e)), "spans overlap"
        from_spans.update(range(s, e))
    assert from_spans == covered16
    lo, hi = a.spans_in(0, utf16_len(text) + 1)
    assert (lo, hi) == (0, len(a.span_start16))


def test_readable_escapes_invisible_characters() -> None:
    assert readable("▁Hello world") == "▁Hello␣world"
    assert readable("a\nb\tc\r") == "a↵b⇥c␍"
    assert readable("\x00\x1b\x7f") == "\\x00\\x1B\\x7F"
    assert readable("zero\u200bwidth\u00a0nbsp") == "zero\\u200Bwidth\\xA0nbsp"
    assert readable("bad\udcff") == "bad\\xFF"
    assert readable("日本🙂") == "日本🙂"
    assert readable("a b", visible_spaces=False) == "a b"


def test_type_names() -> None:
    assert type_name(Attr.NORMAL) == "normal"
    assert type_name(Attr.BYTE) == "byte"
    assert type_name(Attr.CONTROL) == "control"
    assert type_name(Attr.UNKNOWN) == "unknown"
    assert type_name(Attr.USER_DEFINED) == "user-defined"


def test_id_formats() -> None:
    assert format_ids([1, 15043, 3186], "space") == "1 15043 3186"
    assert json.loads(format_ids([1, 15043, 3186], "json")) == [1, 15043, 3186]
    assert format_ids([], "space") == ""


def test_piece_cell_and_tooltip_show_the_group(info: ModelInfo) -> None:
    a = tokenize(info, "x🙂", 0, add_special=False, parse_special=False)
    first = a.encoding.groups[1]
    assert piece_cell(a, first) == "<0xF0>   🙂  1/4"
    assert piece_cell(a, first + 3, with_group=False) == "<0x82>"
    html = tooltip_html(a, first, first + 4)
    assert "byte-fallback group" in html and "F0 9F 99 82" in html and "<b>243</b>" in html


def test_the_app_never_imports_a_plugin_module() -> None:
    import ast
    from pathlib import Path

    import tokenprism.app

    for path in Path(tokenprism.app.__file__).parent.glob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            names = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module]
            for name in names:
                assert not name.startswith("tokenprism.plugins"), f"{path.name} imports {name}"


# ---- BPE merge ranks are built in the loader thread ----------------------------------------------

class CountingTokenizer:
    """A tokenizer that counts ``merge_ranks`` calls (compiled tokenizers'
    methods cannot be patched, so the whole object is wrapped)."""

    def __init__(self, inner: object) -> None:
        self.inner = inner
        self.rank_calls = 0

    def merge_ranks(self) -> object:
        self.rank_calls += 1
        return self.inner.merge_ranks()  # type: ignore[attr-defined]

    def __getattr__(self, name: str) -> object:
        return getattr(self.inner, name)


class RanklessTokenizer:
    """A third-party plugin's tokenizer: no ``merge_ranks`` at all."""

    def __init__(self, inner: object) -> None:
        self.inner = inner

    def __getattr__(self, name: str) -> object:
        if name == "merge_ranks":
            raise AttributeError(name)
        return getattr(self.inner, name)


def _rewrapped(kind: str, wrap: type) -> tuple[Model, object]:  # type: ignore[type-arg]
    m = open_model(demo_models()[kind])
    tok = wrap(m.tokenizer)
    return Model(m.path, m.gguf, m.vocab, m.spec, tok), tok  # type: ignore[arg-type]


def test_model_info_builds_the_merge_ranks_so_the_gui_never_does() -> None:
    model, tok = _rewrapped("bpe", CountingTokenizer)
    assert tok.rank_calls == 0  # type: ignore[attr-defined]
    info = ModelInfo(model)
    assert tok.rank_calls == 1  # type: ignore[attr-defined]
    a = tokenize(info, "hello worlds, unaffable", 0, add_special=False, parse_special=False)
    assert a is not None
    ranks = a.encoding.ranks
    assert ranks is not None and any(r >= 0 for r in ranks)
    assert [t.rank for t in a.encoding] == list(ranks)
    b = tokenize(info, "another text", 1, add_special=True, parse_special=False)
    assert b is not None and b.encoding.ranks is not None
    assert tok.rank_calls == 1  # type: ignore[attr-defined]


def test_model_info_of_a_tokenizer_without_ranks() -> None:
    model, _ = _rewrapped("bpe", RanklessTokenizer)
    info = ModelInfo(model)
    a = tokenize(info, "hello worlds", 0, add_special=False, parse_special=False)
    assert a is not None and a.encoding.ranks is None and a.encoding.token(0).rank == -1
