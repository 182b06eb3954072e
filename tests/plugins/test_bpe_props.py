"""Properties of the BPE plugin over arbitrary Unicode text (hypothesis).

Which vocabularies round-trip (``decode(encode(s)) == s``):

* a byte-level vocab is lossless at the byte level when each byte that can
  occur in UTF-8 has its glyph as a token; a byte without one is dropped, as
  llama.cpp drops it. gpt-2, llama-bpe, qwen2, qwen35, deepseek-*, command-r
  and aquila have all 256; mpt and gpt-neox lack only bytes that never occur
  in UTF-8 (0xC0, 0xC1, 0xF5-0xFF); starcoder and refact also lack 0xF1
  (so U+40000-U+7FFFF are lost), and falcon lacks 0xF2 (U+80000-U+BFFFF)
  and the control bytes 0x03-0x05, 0x0B, 0x11, 0x13-0x17, 0x19, 0x1C-0x1E
  (checked against llama.cpp: it gives the same ids, without those bytes). ``decode`` equals the text only when ``clean_spaces`` is off
  (qwen2, qwen35, deepseek-*, command-r); with it on (gpt-2, llama-bpe,
  falcon, mpt, starcoder, refact, aquila, gpt-neox) llama.cpp's
  detokenizer removes the space in " ,", " 's", ... by design.
* gemma-4 is not lossless: a literal ``\\u2581`` in the text comes back as a
  space (the escaped space and the character share a token), and it also
  cleans spaces.
"""

from __future__ import annotations

import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from librt.vecs import vec
from mypy_extensions import i64

from tests.refdata import VOCAB_DIR
from tokenprism.core.vocab import token_table

pytestmark = pytest.mark.skipif(VOCAB_DIR is None, reason="reference vocabs not found")

_INTERESTING = list(" \t\n\r\x0b\x0c\x1c\x85\xa0\u1680\u2000\u2028\u3000\u200d'sStTreRE\u2581<>|/_-.,!?"
                    "0123456789\u0663\u00bd\u00b2\u2460aZ\u00e9\u0301\u0308\u20ac\U0001f600\U0001f999"
                    "\u4f60\u597d\ud55c\u0e01\u0e34\U0001d400\ue000\x00\x7f")
_CHARS = st.one_of(st.characters(), st.sampled_from(_INTERESTING), st.sampled_from(_INTERESTING))
TEXT = st.text(alphabet=_CHARS, max_size=48)
SETTINGS = settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _check_spans(enc, text: str, missing: frozenset[int] = frozenset()) -> None:  # type: ignore[no-untyped-def]
    """Spans in order, every character in exactly one token or group; only
    a character all of whose bytes the vocab lacks (``missing``) has none."""

    def dropped(chars: str) -> bool:
        return all(b in missing for b in chars.encode("utf-8", "replace"))

    n = len(enc)
    prev = 0
    units: list[tuple[int, int]] = []
    for i in range(n):
        s, e = enc.starts[i], enc.ends[i]
        assert 0 <= s <= e <= len(text)
        assert s >= prev or enc.groups[i] >= 0, "spans out of order"
        prev = s
        if s == e:
            continue
        if enc.groups[i] >= 0 and i > 0 and enc.groups[i - 1] == enc.groups[i]:
            us, ue = units[-1]
            units[-1] = (min(us, s), max(ue, e))
        else:
            units.append((s, e))
    # every character is covered by exactly one token or group
    pos = 0
    for s, e in units:
        assert s == pos or (s > pos and dropped(text[pos:s])), f"gap or overlap at {pos}: {units}"
        pos = e
    assert pos == len(text) or dropped(text[pos:])


def _token_bytes(model, ids: list[int]) -> bytes:  # type: ignore[no-untyped-def]
    return b"".join(model.token_bytes(t) for t in ids)


BYTE_LEVEL_VOCABS = ["gpt-2", "llama-bpe", "qwen2", "qwen35", "deepseek-coder", "deepseek-llm", "falcon", "mpt",
                     "starcoder", "refact", "command-r", "aquila", "gpt-neox"]
# 13 vocabs (+ gemma-4 below): fewer examples each keeps the file at a few seconds
FEW = settings(SETTINGS, max_examples=40)

_NOT_UTF8 = frozenset([0xC0, 0xC1, *range(0xF5, 0x100)])
LOST_BYTES = {"starcoder": _NOT_UTF8 | {0xF1}, "refact": _NOT_UTF8 | {0xF1},
              "falcon": _NOT_UTF8 | {0xF2, 0x03, 0x04, 0x05, 0x0B, 0x11, 0x13, 0x14, 0x15, 0x16, 0x17, 0x19,
                                     0x1C, 0x1D, 0x1E}}

# what llama.cpp's clean_spaces pass can touch: a space before ? ! . , or '
_CLEANABLE = re.compile(rb" [?!.,']")


def _check_decode(model, ids: list[int], raw: bytes) -> None:  # type: ignore[no-untyped-def]
    """decode gives the text back, except where clean_spaces is on and the
    text has something it cleans (that behaviour is pinned to llama.cpp's
    own output in test_oracle_data.py, not re-derived here)."""
    if not model.config.clean_spaces or _CLEANABLE.search(raw) is None:
        assert model.decode_bytes(ids) == raw


def _missing_bytes(model) -> frozenset[int]:  # type: ignore[no-untyped-def]
    """Bytes whose GPT-2 glyph is not a token of the vocab (read from the
    vocab's pieces with the standard glyph table, not from the tokenizer)."""
    glyphs = [*range(0x21, 0x7F), *range(0xA1, 0xAD), *range(0xAE, 0x100)]
    table = {b: chr(b) for b in glyphs}
    extra = 0
    for b in range(256):
        if b not in table:
            table[b] = chr(256 + extra)
            extra += 1
    return frozenset(b for b, g in table.items() if g not in model.vocab.token_to_id)


@pytest.mark.parametrize("vocab", BYTE_LEVEL_VOCABS)
def test_byte_level_properties(vocab: str, ref_model) -> None:  # type: ignore[no-untyped-def]
    from tokenprism.core.model import sanitize_text

    model = ref_model(vocab)
    missing = _missing_bytes(model)
    assert missing <= LOST_BYTES.get(vocab, _NOT_UTF8), sorted(missing)

    @FEW
    @given(text=TEXT, parse_special=st.booleans())
    def check(text: str, parse_special: bool) -> None:
        enc = model.encode(text, parse_special=parse_special)
        _check_spans(enc, text, missing)
        raw = sanitize_text(text).encode("utf-8")  # lone surrogates become U+FFFD
        raw = bytes(b for b in raw if b not in missing) if missing else raw
        assert _token_bytes(model, enc.ids) == raw
        _check_decode(model, enc.ids, raw)

    check()


def test_gemma4_properties(ref_model) -> None:  # type: ignore[no-untyped-def]
    from tokenprism.core.model import sanitize_text

    model = ref_model("gemma-4")

    @SETTINGS
    @given(text=TEXT, parse_special=st.booleans())
    def check(text: str, parse_special: bool) -> None:
        enc = model.encode(text, parse_special=parse_special)
        _check_spans(enc, text)
        if "\u2581" not in text:
            raw = sanitize_text(text).encode("utf-8")
            assert _token_bytes(model, enc.ids) == raw
            _check_decode(model, enc.ids, raw)

    check()


# --- internal equivalences ------------------------------------------------

_MERGY = st.lists(st.sampled_from(list("abehnorst \u2581\n.,'0\u00e9") + [
    "\U0001f600", "the ", "and", "ing", "tion", "  ", "\u2581\u2581", "hello", "world", "...", "000"]),
    max_size=80).map("".join)


def test_merge_heap_equals_scan(ref_model) -> None:  # type: ignore[no-untyped-def]
    """The O(n^2) scan used for short words and the priority queue used for
    long ones pick the same merges."""
    from tokenprism.plugins.bpe.bpe import _GLYPH_TRANS

    toks = [ref_model("gpt-2").tokenizer, ref_model("gemma-4").tokenizer]

    @SETTINGS
    @given(word=_MERGY)
    def check(word: str) -> None:
        for tok in toks:
            w = word.encode("utf-8").decode("latin-1").translate(_GLYPH_TRANS) if tok.byte_encode \
                else word.replace(" ", "\u2581")
            if len(w) < 2:
                continue
            # _merge() merges short words by token ids and long ones with
            # the heap; compare the heap alone and the dispatch
            scan = _scan_merge(tok, list(w))
            assert tok.merge_heap(w) == scan
            assert _final_symbols(tok, w) == scan

    check()


def _final_symbols(tok, w: str) -> list[str]:  # type: ignore[no-untyped-def]
    """The texts of the final symbols ``tok._merge`` leaves of ``w``."""
    nxt = tok._merge(w, vec[i64]([token_table(tok.vocab).get(c, -1) for c in w]))
    out = []
    i = 0
    while i >= 0:
        j = nxt[i]
        out.append(w[i:] if j < 0 else w[i:j])
        i = j
    return out


_FULL_RANKS: dict[int, dict[str, int]] = {}


def _full_ranks(tok) -> dict[str, int]:  # type: ignore[no-untyped-def]
    """Every merge's rank, made here from the decoded merges (the first of
    duplicates wins), independent of the plugin's lazily filled table."""
    got = _FULL_RANKS.get(id(tok))
    if got is None:
        got = {}
        for i, m in enumerate(tok.vocab.merges):
            got.setdefault(m, i)
        _FULL_RANKS[id(tok)] = got
    return got


def _scan_merge(tok, syms: list[str]) -> list[str]:  # type: ignore[no-untyped-def]
    ranks = _full_ranks(tok)
    while len(syms) > 1:
        best, at = None, -1
        for i in range(len(syms) - 1):
            r = ranks.get(syms[i] + " " + syms[i + 1])
            if r is not None and (best is None or r < best):
                best, at = r, i
        if best is None:
            break
        syms[at:at + 2] = [syms[at] + syms[at + 1]]
    return syms


def test_gemma4_safe_split_changes_nothing(ref_model) -> None:  # type: ignore[no-untyped-def]
    """Cutting a line before its space runs (for the word cache) gives the
    tokens of the whole line."""
    tok = ref_model("gemma-4").tokenizer
    pieces = list("ab>< \u2581\u2581.c\u00e9\n") + ["</", "\U0001f600", "  ", "the"]
    # repeated up to a length where encode_text makes the cuts at all
    text_st = st.lists(st.sampled_from(pieces), min_size=1, max_size=40).map(
        lambda ps: "".join(ps) * (1 + 300 // len("".join(ps))))

    @SETTINGS
    @given(text=text_st)
    def check(text: str) -> None:
        assert len(text) >= 256
        from tokenprism.core.columns import TokenColumns

        out = TokenColumns()
        tok.encode_text(text, out, 0)
        ids = list(out.ids)
        whole: list[int] = []
        for line in re.findall(r"[^\n]+|\n+", text):
            whole.extend(tok.word(line).ids)
        assert ids == whole

    check()


def test_collapsed_text_equals_exact_classes() -> None:
    """Running category regexes on the collapsed text (one char per class)
    splits exactly like the same regexes with full Unicode classes."""
    from tokenprism.plugins.bpe.pretokenize import Splitter
    from tokenprism.plugins.bpe.pretokenizers import PRE_TYPES

    pairs = [(Splitter(t.regexes), Splitter(t.regexes, exact=True)) for t in PRE_TYPES.values()]

    @settings(max_examples=60, deadline=None)
    @given(text=TEXT)
    def check(text: str) -> None:
        for fast, exact in pairs:
            words = fast.split(text)
            assert words == exact.split(text)
            assert "".join(words) == text

    check()


def _string_word(tok, word: str) -> tuple[list[int], list[int], list[int]]:  # type: ignore[no-untyped-def]
    """A byte-level word's tokens the long way: merges of symbol strings by
    every rank (``_scan_merge``), each final symbol looked up by its text,
    a symbol no token spells as one token per byte of its glyphs."""
    from tokenprism.plugins.bpe.bpe import _GLYPH_TRANS, _RAW_BYTE_TEXT

    g = word.encode("utf-8", "surrogatepass").decode("latin-1").translate(_GLYPH_TRANS)
    t2i = token_table(tok.vocab)
    if tok.ignore_merges and g in t2i:
        return [t2i[g]], [0], [len(g)]
    ids: list[int] = []
    starts: list[int] = []
    ends: list[int] = []
    pos = 0
    for s in _scan_merge(tok, list(g)):
        if s in t2i:
            ids.append(t2i[s])
            starts.append(pos)
            ends.append(pos + len(s))
        else:
            for k, ch in enumerate(s):
                for b in ch.encode("utf-8", "surrogateescape"):
                    if _RAW_BYTE_TEXT[b] in t2i:
                        ids.append(t2i[_RAW_BYTE_TEXT[b]])
                        starts.append(pos + k)
                        ends.append(pos + k + 1)
        pos += len(s)
    return ids, starts, ends


def test_byte_level_words_equal_the_string_merge(ref_model) -> None:  # type: ignore[no-untyped-def]
    """Short byte-level words merge by token ids, with ranks and joined
    tokens from caches keyed by two ids; the long way gives the same."""
    toks = [ref_model("gpt-2").tokenizer, ref_model("llama-bpe").tokenizer]

    @SETTINGS
    @given(word=st.one_of(_MERGY, TEXT))
    def check(word: str) -> None:
        for tok in toks:
            tok.cache.clear()
            r = tok.word_bytelevel(word)
            assert (r.ids, r.starts, r.ends) == _string_word(tok, word), word

    check()


def test_merges_whose_join_is_no_token(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """A merge may join two symbols into a text that is no token ("a b"
    without "ab" here): later merges still see that symbol, and a final one
    falls back to its bytes. Thousands of distinct pairs also evict one
    another from the pair caches."""
    from tests.ggufmaker import write_vocab_gguf
    from tokenprism.core import open_model
    from tokenprism.plugins.bpe.bpe import BYTE_GLYPHS

    glyphs = list(BYTE_GLYPHS)
    letters = [chr(c) for c in range(ord("a"), ord("z") + 1)]
    merges = ["a b", "ab c", "x y"]
    joined = [a + b for a in letters for b in letters if a + b not in ("ab", "xy")]
    merges += [m[0] + " " + m[1] for m in joined]
    tokens = glyphs + ["abc"] + joined
    path = write_vocab_gguf(tmp_path / "nojoin.gguf", tokens, "gpt2", merges=merges,
                            extra={"tokenizer.ggml.pre": "gpt-2"})
    tok = open_model(path).tokenizer
    t2i = token_table(tok.vocab)
    assert "ab" not in t2i and "xy" not in t2i
    r = tok.word_bytelevel("abcxy")
    # "abc" made through the non-token "ab"; "xy" falls back to its bytes
    assert r.ids == [t2i["abc"], t2i["x"], t2i["y"]]
    assert (r.starts, r.ends) == ([0, 3, 4], [3, 4, 5])
    words = ["".join(letters[(i * 7 + k * 3) % 26] for k in range(2 + i % 9)) for i in range(3000)]
    for w in words + words[::-1]:
        r = tok.word_bytelevel(w)
        assert (r.ids, r.starts, r.ends) == _string_word(tok, w), w


def test_utf8_words_equal_the_string_merge(ref_model) -> None:  # type: ignore[no-untyped-def]
    """The same for a vocabulary of UTF-8 pieces with escaped spaces
    (gemma-4): short words merge by token ids. The final symbols come from
    the independent ``_scan_merge``; the plugin only turns them into tokens."""
    tok = ref_model("gemma-4").tokenizer

    @SETTINGS
    @given(word=st.one_of(_MERGY, TEXT))
    def check(word: str) -> None:
        if "\n" in word or not word:
            return  # (newline-only words take a shortcut of their own)
        esc = word.replace(" ", "\u2581")
        offs = [] if word.isascii() else [len(word[:i].encode("utf-8", "surrogatepass"))
                                          for i in range(len(word) + 1)]
        ids: list[int] = []
        starts: list[int] = []
        ends: list[int] = []
        pos = 0
        for s in _scan_merge(tok, list(esc)):
            tok._symbol_utf8(word, s, token_table(tok.vocab).get(s, -1), pos, offs, ids, starts, ends)
            pos += len(s)
        tok.cache.clear()
        r = tok.word_utf8(word)
        assert (r.ids, r.starts, r.ends) == (ids, starts, ends), word

    check()


@SETTINGS
@given(text=TEXT)
def test_collapse_text_equals_translate(text: str) -> None:
    """The numpy lookup of the collapsed text gives what ``str.translate``
    with the same table gives (astral characters and lone surrogates
    included)."""
    from tokenprism.plugins.bpe.pretokenize import collapse_text, tables

    table = tables().collapse_bytes()
    assert collapse_text(table, text) == text.translate(table.tobytes().decode("latin-1"))


@pytest.mark.parametrize(("regex", "want"), [
    ("[一-龥ࠀ-一가-\ud7ff]+", True),  # deepseek-coder's
    ("[一-龥]", True),
    ("[é]+", True),
    ("[一-龥a]+", False),  # an ASCII member
    ("[-一]+", False), ("[一-]+", False), ("[一-龥-가]+", False),  # a literal '-'
    ("[^一-龥]+", False), ("[\\u4e00-\\u9fa5]+", False), ("[一-\x7f]+", False),
    ("[]", False), ("[一-龥]*", False), ("一+", False), ("[一-龥]+|a", False),
])
def test_non_ascii_class(regex: str, want: bool) -> None:
    from tokenprism.plugins.bpe.pretokenize import non_ascii_class

    assert non_ascii_class(regex) is want
    if want:  # and what it says holds: no ASCII character matches
        assert not any(re.fullmatch(regex, chr(c) * 2) for c in range(128))


def test_a_non_ascii_stage_compiles_on_the_first_text_that_needs_it() -> None:
    """deepseek-coder's CJK stage is left uncompiled until a text is not
    ASCII; the words are those of the stage compiled at once, before and
    after."""
    from tokenprism.plugins.bpe.pretokenize import Splitter
    from tokenprism.plugins.bpe.pretokenizers import PRE_TYPES

    regexes = PRE_TYPES["DEEPSEEK_CODER"].regexes
    lazy = Splitter(regexes)
    eager = Splitter(regexes)
    for st in eager.stages:
        if st.pattern is None:
            st.pattern = re.compile(st.py)
    assert [st.pattern is None for st in lazy.stages].count(True) == 1
    texts = ["Hello, world 123\n", "x = [a-b] + {c}", "日本語のテキスト and 한국어 text 中文", "ascii again"]
    for k, text in enumerate(texts):
        assert lazy.split(text) == eager.split(text)
        assert all(st.pattern is not None for st in lazy.stages) == (k >= 2)
