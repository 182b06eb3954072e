"""Properties of the SPM plugin over arbitrary Unicode text.

The round trip is llama.cpp's own behaviour, checked against its
detokenizer during development: decoding drops the one space the prefix
added, and the only loss is that a literal ``▁`` in the input comes back
as a space (llama.cpp gives "a b" for the ids of "a▁b"). This holds for
all three SPM reference vocabs (llama-spm, phi-3, baichuan): each has the
256 ``<0xNN>`` byte tokens, so no character is lost to the unknown token.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

SPM_VOCABS = ["llama-spm", "phi-3", "baichuan"]

_PIECES = st.sampled_from([
    " ", "  ", "\n", "\t", "\r\n", "\u2581", "Hello", " world", "the", "é", "\u0301", "日本語",
    "🦙", "👍🏽", "\u200d", "\x00", "\x7f", "<s>", "</s>", "<unk>", "<|endoftext|>", "<0x41>", "<SEP>", "<|user|>", "<|end|>",
])
TEXTS = st.one_of(
    st.text(max_size=40),
    st.lists(st.one_of(_PIECES, st.text(max_size=4)), max_size=12).map("".join),
)

SETTINGS = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def check_spans(enc: Any, text: str) -> None:
    """Tokens are in order and their spans (a group's tokens counted once)
    tile the text: every character in exactly one span."""
    n_tok = len(enc)
    assert len(enc.starts) == len(enc.ends) == n_tok
    pos = 0
    i = 0
    while i < n_tok:
        s, e = enc.starts[i], enc.ends[i]
        if s == e:
            # only the space prefix inserted at the start of a fragment
            # covers nothing
            assert s == pos and enc.token(i).piece == "\u2581", (i, s, pos)
            i += 1
            continue
        first, last = enc.group_range(i)
        gs = [enc.starts[k] for k in range(first, last)]
        ge = [enc.ends[k] for k in range(first, last)]
        assert gs == sorted(gs)
        assert min(gs) == pos, (i, pos, gs)
        assert max(ge) > pos
        pos = max(ge)
        i = last
    assert pos == len(text)


# phi-3's RSTRIP specials swallow the whitespace after them; the special
# token's span takes that whitespace, so the tiling still holds
@pytest.mark.parametrize("name,parse_special", [
    ("llama-spm", False), ("llama-spm", True), ("phi-3", False), ("phi-3", True),
    ("baichuan", False), ("baichuan", True)])
@SETTINGS
@given(text=TEXTS)
def test_encoding_spans_tile_the_text(name: str, parse_special: bool, text: str, ref_model: Any) -> None:
    model = ref_model(name)
    enc = model.encode(text, parse_special=parse_special)
    check_spans(enc, text)
    vocab_size = len(model.vocab.pieces)
    assert all(0 <= t < vocab_size for t in enc.ids)
    # byte spans agree with the character spans
    data = text.encode("utf-8")
    for k in range(len(enc)):
        assert enc.byte_starts[k] <= enc.byte_ends[k] <= len(data)


def test_rstrip_whitespace_is_covered(ref_model: Any) -> None:
    enc = ref_model("phi-3").encode("a <|end|>  x", parse_special=True)
    assert enc.ids == [263, 29871, 32007, 921]  # llama.cpp 0.3.36
    check_spans(enc, enc.text)
    assert (enc.starts[2], enc.ends[2]) == (2, 11)


@pytest.mark.parametrize("name", SPM_VOCABS)
@settings(SETTINGS, max_examples=150)
@given(text=TEXTS)
def test_round_trip(name: str, text: str, ref_model: Any) -> None:
    model = ref_model(name)
    ids = model.encode(text).ids
    assert model.decode(ids) == text.replace("\u2581", " ")


@SETTINGS
@given(text=TEXTS)
def test_round_trip_with_bos(text: str, ref_model: Any) -> None:
    model = ref_model("llama-spm")
    ids = model.encode(text, add_special=True).ids
    assert ids[0] == 1
    # llama_detokenize with remove_special drops BOS and keeps the space
    # the prefix added (the space is only dropped for the first piece)
    assert model.decode(ids, remove_special=True) == (" " + text.replace("\u2581", " ") if text else "")


@SETTINGS
@given(text=TEXTS, after=st.booleans())
def test_word_shortcut_equals_literal_loop(text: str, after: bool, ref_model: Any) -> None:
    from tokenprism.plugins.spm.spm import SpmTokenizer

    model = ref_model("llama-spm")
    literal = _literal(model.vocab)
    a = model.tokenizer.encode_fragment(text, after)
    b = literal.encode_fragment(text, after)
    assert (a.ids, a.starts, a.ends) == (b.ids, b.starts, b.ends)
    assert isinstance(literal, SpmTokenizer)


@SETTINGS
@given(text=st.one_of(TEXTS, st.text(alphabet="▁abcdeHlo wrt", max_size=80)))
def test_scan_merge_equals_heap_merge(text: str, ref_model: Any) -> None:
    # white-box: the linear scan used for short words must pick the same
    # pairs as llama.cpp's queue, which the long-text path still uses
    tok = ref_model("llama-spm").tokenizer
    norm = "▁" + text.replace(" ", "▁")
    chars, _ = tok._chars(text, True)
    scan, heap = list(chars), list(chars)
    assert (tok._merge_scan(norm, scan), scan) == (tok._merge_heap(norm, heap), heap)


_LITERAL: dict[int, Any] = {}


def _literal(vocab: Any) -> Any:
    from tokenprism.plugins.spm.spm import SpmTokenizer

    key = id(vocab)
    if key not in _LITERAL:
        _LITERAL[key] = SpmTokenizer(vocab, by_word=False)
    return _LITERAL[key]


@settings(max_examples=300, deadline=None)
@given(pieces=st.lists(st.text(alphabet="\u2581a\x00é🙂", max_size=6), min_size=1, max_size=8))
def test_crosses_word_is_a_mark_after_the_leading_ones(pieces: list[str]) -> None:
    """The by-word path is allowed only where no piece holds ``▁`` after
    another character; checked against that definition written plainly
    (NUL and astral characters included)."""
    from tokenprism.core.piece_codes import codes_of
    from tokenprism.plugins.spm.spm import _crosses_word

    want = any("\u2581" in p.lstrip("\u2581") for p in pieces)
    assert _crosses_word(codes_of(pieces)) == want


@settings(max_examples=300, deadline=None)
@given(pieces=st.lists(st.text(alphabet="\u2581a\x00é🙂\udce2", max_size=6), min_size=1, max_size=8))
def test_crosses_word_from_the_bytes_is_the_same(pieces: list[str]) -> None:
    """The same answer read from the pieces' UTF-8 where a file holds them
    (an escaped byte E2 included: it starts no ``▁``)."""
    from tests.ggufmaker import string_array
    from tokenprism.core.bytes_index import raw_index
    from tokenprism.plugins.spm.spm import _crosses_word_bytes

    raw = raw_index(string_array([p.encode("utf-8", "surrogateescape") for p in pieces]), True)
    assert raw is not None
    want = any("\u2581" in p.lstrip("\u2581") for p in pieces)
    assert _crosses_word_bytes(raw, len(pieces)) == want


@pytest.mark.parametrize(("pieces", "want"), [
    (("▁a", "▁▁", "▁▁▁b", "c"), False),
    (("▁a▁",), True),
    (("a▁",), True),
    (("▁▁a▁▁",), True),
    (("\x00▁",), True),
    (("▁", ""), False),
])
def test_crosses_word_cases(pieces: tuple[str, ...], want: bool) -> None:
    from tokenprism.core.piece_codes import codes_of
    from tokenprism.plugins.spm.spm import _crosses_word

    assert _crosses_word(codes_of(pieces)) == want
