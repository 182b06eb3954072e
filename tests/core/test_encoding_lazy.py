"""``Model.encode``'s character spans and groups, made on first read
(``Encoding.with_char_spans_on_demand``), against the same text's columns
made at once by the pipeline (``encode_segments``, as incremental and
chunked encoding make them): equal values, whichever is read first, from
any thread, and nothing made until read."""

from __future__ import annotations

import threading
from typing import Callable

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tokenprism.core import Model
from tokenprism.core.encoding import Encoding
from tokenprism.core.pipeline import encode_segments, segments

# mixed ASCII and non-ASCII (byte-level tokens cut characters: groups),
# special-token texts at the ends, empty texts
_TEXT = st.lists(st.sampled_from(["a", "b", " ", "\n", "é", "€", "😀", "漢", "<s>", "</s>", "<|endoftext|>"]),
                 max_size=25).map("".join)
_VOCABS = ["gpt-2", "llama-spm", "bert-bge"]


def _eager(model: Model, text: str, parse_special: bool) -> tuple[object, ...]:
    cols = encode_segments(model.tokenizer, text, segments(model.fragments(text, parse_special)))
    return tuple(tuple(c) for c in cols)


def _columns(enc: Encoding) -> tuple[object, ...]:
    return tuple(tuple(c) for c in (enc.token_ids, enc.starts, enc.ends, enc.byte_starts, enc.byte_ends,
                                     enc.groups))


@pytest.mark.parametrize("name", _VOCABS)
def test_on_demand_columns_equal_the_pipeline_s(name: str, ref_model: Callable[[str], Model]) -> None:
    model = ref_model(name)

    @settings(max_examples=60, deadline=None)
    @given(_TEXT, st.booleans())
    def check(text: str, parse_special: bool) -> None:
        enc = model.encode(text, parse_special=parse_special)
        assert _columns(enc) == _eager(model, text, parse_special)
        # equality and the tokens read them too, on a fresh encoding
        again = model.encode(text, parse_special=parse_special)
        assert again == enc
        tokens = list(model.encode(text, parse_special=parse_special))
        assert [(t.start, t.end, t.group) for t in tokens] == list(zip(enc.starts, enc.ends, enc.groups))

    check()


def test_nothing_made_until_read(ref_model: Callable[[str], Model]) -> None:
    model = ref_model("gpt-2")
    text = "naïve café 😀 " * 50
    enc = model.encode(text)
    assert "starts" not in enc.__dict__ and "groups" not in enc.__dict__
    assert enc.ids and len(enc.byte_ends) == len(enc)  # ids and byte spans need no char spans
    assert "starts" not in enc.__dict__
    groups = enc.groups  # any one of the three makes all three
    assert {"starts", "ends", "groups"} <= enc.__dict__.keys() and enc.__dict__["_make_char_columns"] is None
    assert groups is enc.groups and any(g >= 0 for g in groups)  # the emoji's byte tokens
    with pytest.raises(AttributeError):
        enc.no_such_column  # type: ignore[attr-defined]  # noqa: B018
    with pytest.raises(AttributeError):  # still frozen
        enc.starts = ()  # type: ignore[misc]


def test_add_special_makes_them_at_once(ref_model: Callable[[str], Model]) -> None:
    model = ref_model("bert-bge")  # CLS and SEP around every text
    enc = model.encode("héllo wörld", add_special=True)
    assert "starts" in enc.__dict__
    assert enc.starts[0] == 0 and enc.starts[-1] == len("héllo wörld")


def test_threads_reading_at_once_see_one_answer(ref_model: Callable[[str], Model]) -> None:
    model = ref_model("llama-spm")
    text = "ünïcödé tëxt 漢字 " * 200
    want = _eager(model, text, False)
    for _ in range(5):
        enc = model.encode(text)
        seen: list[tuple[object, ...]] = []
        barrier = threading.Barrier(4)

        def read(e: Encoding = enc) -> None:
            barrier.wait()
            seen.append(_columns(e))

        threads = [threading.Thread(target=read) for _ in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert seen == [want] * 4
