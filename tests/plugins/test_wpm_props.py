"""Property tests of the WPM plugin: it never fails, spans are ordered and
point at the right text, and the fast paths (pieces cut by a class table,
remembered words, the filtered greedy cut) equal a plain transliteration of
llama.cpp's ``preprocess`` + greedy loop."""

from __future__ import annotations

from tokenprism.core.record import replace
from bisect import bisect_right
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tokenprism.core.model import Model
from tests.plugins import wpm_tables as ut
from tokenprism.plugins.wpm.wpm import CHINESE_RANGES, WORD_MARK, WpmTokenizer

SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])

# text that exercises the interesting classes: ASCII, accents (composed and
# combining), controls, llama.cpp's whitespace, CJK, Hangul, Devanagari,
# astral, private use, unassigned
ALPHABET = st.one_of(
    st.characters(min_codepoint=0x20, max_codepoint=0x7E),
    st.sampled_from(list("\t\n\r\x0b\x0c\x85\xa0\u3000\u2028\u200b\u00ad\x00\ufffd\x1c\u0301\u0308"
                         "éÉçÇñÑİıßẞΣσςﬁ½²™中文日本語한국어안녕हिन्दीஔ\u1fef\u037e\u0387")),
    st.characters(blacklist_categories=("Cs",)),
)
TEXT = st.text(alphabet=ALPHABET, max_size=40)


@pytest.fixture(scope="module")
def bge(ref_model: Any) -> Model:
    m: Model = ref_model("bert-bge")
    return m


# ---- a plain transliteration of llama.cpp -------------------------------------------

def _in(ranges: tuple[tuple[int, int], ...], starts: list[int], cp: int) -> bool:
    i = bisect_right(starts, cp) - 1
    return i >= 0 and cp <= ranges[i][1]


_C_STARTS = [a for a, _ in ut.CONTROL]
_M_STARTS = [a for a, _ in ut.MARK]
_P_STARTS = [a for a, _ in ut.PUNCT]
_NFD_STARTS = [a for a, _, _ in ut.NFD]
_LOWER = dict(ut.LOWER)
_WS = set(ut.WHITESPACE)


def _nfd(cp: int) -> int:
    i = bisect_right(_NFD_STARTS, cp) - 1
    if i >= 0 and ut.NFD[i][0] <= cp <= ut.NFD[i][1]:
        return ut.NFD[i][2]
    return cp


def reference_words(text: str, lowercase: bool, strip_accents: bool) -> list[str]:
    """``llm_tokenizer_wpm_session::preprocess``, line by line."""
    words = [""]
    for ch in text:
        cpt = ord(ch)
        if strip_accents:
            cpt = _nfd(cpt)
        if cpt in _WS:
            if words[-1]:
                words.append("")
            continue
        if cpt == 0 or cpt == 0xFFFD or _in(ut.CONTROL, _C_STARTS, cpt):
            continue
        if strip_accents and _in(ut.MARK, _M_STARTS, cpt):
            continue
        s = chr(_LOWER.get(cpt, cpt) if lowercase else cpt)
        if _in(ut.PUNCT, _P_STARTS, cpt) or (cpt < 0x7F and chr(cpt) in ut.ASCII_SYMBOL) \
                or any(a <= cpt <= b for a, b in CHINESE_RANGES):
            if words[-1]:
                words.append("")
            words[-1] = s
            words.append("")
        else:
            words[-1] += s
    if not words[-1]:
        words.pop()
    return words


_BYTES_VOCAB: dict[int, tuple[dict[bytes, int], int]] = {}


def reference_ids(model: Model, text: str) -> list[int]:
    """``llm_tokenizer_wpm_session::tokenize`` (on bytes, as llama.cpp does)."""
    tok = model.tokenizer
    assert isinstance(tok, WpmTokenizer)
    if id(model) not in _BYTES_VOCAB:
        _BYTES_VOCAB[id(model)] = (
            {p.encode("utf-8", "surrogateescape"): i for p, i in model.vocab.token_to_id.items()},
            max(len(p.encode("utf-8", "surrogateescape")) for p in model.vocab.pieces))
    t2i, max_len = _BYTES_VOCAB[id(model)]
    unk = model.config.special_ids.get("unk", -1)
    out: list[int] = []
    for word in reference_words(text, tok.lowercase, tok.strip_accents):
        w1 = (WORD_MARK + word).encode()
        n = len(w1)
        current = len(out)
        i = 0
        while i < n:
            match = False
            for j in range(min(n, i + max_len + 1), i, -1):
                tid = t2i.get(w1[i:j])
                if tid is not None:
                    out.append(tid)
                    match = True
                    i = j - 1
                    break
            if not match:
                del out[current:]
                break
            i += 1
        if len(out) == current and unk >= 0:
            out.append(unk)
    return out


# ---- properties -------------------------------------------------------------------------

@SETTINGS
@given(TEXT)
def test_matches_plain_transliteration(bge: Model, text: str) -> None:
    tok = bge.tokenizer
    assert isinstance(tok, WpmTokenizer)
    assert tok.words(text) == reference_words(text, True, True)
    assert bge.encode(text).ids == reference_ids(bge, text)


@SETTINGS
@given(TEXT)
def test_spans_ordered_and_exact(bge: Model, text: str) -> None:
    enc = bge.encode(text)
    raw = text.encode("utf-8", "surrogatepass")
    n = len(enc.token_ids)
    assert len(enc.starts) == len(enc.ends) == len(enc.byte_starts) == len(enc.byte_ends) == n
    last_char = last_byte = 0
    for i in range(n):
        s, e, bs, be = enc.starts[i], enc.ends[i], enc.byte_starts[i], enc.byte_ends[i]
        assert last_char <= s <= e <= len(text)
        assert last_byte <= bs <= be <= len(raw)
        assert len(text[:s].encode("utf-8", "surrogatepass")) == bs
        assert len(text[:e].encode("utf-8", "surrogatepass")) == be
        last_char, last_byte = e, be
    # every token but a bare "▁" covers text, and none covers whitespace at its ends
    for i in range(n):
        piece = text[enc.starts[i]:enc.ends[i]]
        if bge.vocab.pieces[enc.token_ids[i]] != WORD_MARK:
            assert piece
        assert piece == piece.strip("".join(map(chr, ut.WHITESPACE)))


@SETTINGS
@given(TEXT)
def test_never_fails_and_stays_in_vocab(bge: Model, text: str) -> None:
    for add_special in (False, True):
        for parse_special in (False, True):
            ids = bge.encode(text, add_special, parse_special).ids
            assert all(0 <= i < len(bge.vocab.pieces) for i in ids)
    bge.decode(bge.encode(text).ids)
    bge.normalized(text)


@SETTINGS
@given(st.lists(TEXT, min_size=1, max_size=4))
def test_whitespace_separates_independently(bge: Model, parts: list[str]) -> None:
    joined = " ".join(parts)
    assert bge.encode(joined).ids == [i for p in parts for i in bge.encode(p).ids]


@SETTINGS
@given(TEXT)
def test_remembered_words_change_nothing(bge: Model, text: str) -> None:
    tok = bge.tokenizer
    assert isinstance(tok, WpmTokenizer)
    first = tok.encode_fragment(text, True)
    tok.clear_cache()
    fresh = tok.encode_fragment(text, True)
    again = tok.encode_fragment(text, True)
    assert first == fresh == again
    words = tok.word_indices(text)
    assert len(words) == len(first.ids)
    assert words == sorted(words)
    assert tok.normalized(text) == " ".join(tok.words(text))


# ---- the fast paths against the transliteration -----------------------------------------

_SETTINGS_TOKENIZERS: dict[tuple[bool, bool], WpmTokenizer] = {}


def _tokenizer(bge: Model, lowercase: bool, strip_accents: bool) -> WpmTokenizer:
    key = (lowercase, strip_accents)
    if key not in _SETTINGS_TOKENIZERS:
        flags = dict(bge.vocab.flags, normalizer_lowercase=lowercase, normalizer_strip_accents=strip_accents)
        _SETTINGS_TOKENIZERS[key] = WpmTokenizer(replace(bge.vocab, flags=flags))
    tok = _SETTINGS_TOKENIZERS[key]
    assert (tok.lowercase, tok.strip_accents) == key
    return tok


@pytest.mark.parametrize("lowercase,strip_accents", [(True, True), (True, False), (False, True), (False, False)])
@SETTINGS
@given(text=TEXT)
def test_words_in_every_normalizer_setting(bge: Model, lowercase: bool, strip_accents: bool, text: str) -> None:
    """The cut into words (a class table per setting, dropped characters
    found by the same table, ASCII shortcuts) in all four settings."""
    tok = _tokenizer(bge, lowercase, strip_accents)
    assert tok.words(text) == reference_words(text, lowercase, strip_accents)
    # chunk by chunk (encode_fragment's way) gives the same words as the whole text
    assert [w for c in text.split(" ") for w in tok.words(c)] == tok.words(text)


_PARTS: list[str] = []


@SETTINGS
@given(st.data())
def test_words_made_of_vocabulary_pieces(bge: Model, data: st.DataObject) -> None:
    """Long words made of vocabulary pieces, sometimes with one other
    character put in: the greedy cut with its length and last-character
    filters takes the same pieces as trying every length."""
    if not _PARTS:
        _PARTS.extend(p.replace(WORD_MARK, "") for p in bge.vocab.pieces if p.replace(WORD_MARK, "").isalnum())
    word = "".join(data.draw(st.lists(st.sampled_from(_PARTS), min_size=1, max_size=5)))
    if data.draw(st.booleans()):
        k = data.draw(st.integers(0, len(word)))
        word = word[:k] + data.draw(ALPHABET) + word[k:]
    text = f"{word} {word.upper()} {word}. ({word}"
    assert bge.encode(text).ids == reference_ids(bge, text)
