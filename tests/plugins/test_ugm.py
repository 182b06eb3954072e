"""UGM (Unigram with precompiled charsmap, ``tokenizer.ggml.model`` = ``t5``).

* parity with llama.cpp's own expected ids on nomic-bert-moe;
* small hand-made vocabularies and charsmaps whose expected ids were produced
  by the llama.cpp oracle (llama-cpp-python 0.3.36), covering the
  whitespace options, charsmap replacements (longer, shorter, deleting,
  containing spaces), the user-defined trie quirk and unknown tokens;
* spans through normalization, a malformed charsmap, and bounded property
  tests (any Unicode; the character and byte paths agree).
"""

from __future__ import annotations

import struct
from pathlib import Path
from typing import Any, Sequence

import gguf
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.refdata import parity_params
from tokenprism.core import GGUFError, open_model
from tokenprism.plugins.ugm.xcda import Charsmap
from tokenprism.plugins.ugm.ugm import UgmTokenizer, build_ugm, exact_limit

NORMAL = int(gguf.TokenType.NORMAL)
UNKNOWN = int(gguf.TokenType.UNKNOWN)
CONTROL = int(gguf.TokenType.CONTROL)
USER_DEFINED = int(gguf.TokenType.USER_DEFINED)
UNUSED = int(gguf.TokenType.UNUSED)


def make_charsmap(mapping: dict[bytes, bytes], *, value_offset_shift: int = 0, drop_nul: bool = False,
                  base_shift: int = 0) -> bytes:
    """A precompiled charsmap mapping each key to its replacement.

    Every trie node gets its own 256-unit block (block 0 holds the root
    unit), which is valid XCDA if not a compact one. The keyword arguments
    break the blob on purpose for the error tests.
    """
    nodes: dict[bytes, int] = {b"": 1}
    for key in sorted(mapping):
        for k in range(1, len(key) + 1):
            nodes.setdefault(key[:k], len(nodes) + 1)
    size = 256 * (len(nodes) + 1)
    units = [0] * size
    strings = bytearray()
    offsets: dict[bytes, int] = {}
    for key, rep in mapping.items():
        offsets[key] = len(strings)
        strings += rep + b"\0"
    if not strings:
        strings += b"\0"
    if drop_nul:
        strings = strings[:-1] + b"x"
    units[0] = (256 * nodes[b""] + base_shift) << 10
    for path, block in nodes.items():
        if not path:
            continue
        idx = (256 * nodes[path[:-1]]) ^ path[-1]
        base = (256 * block) ^ idx
        leaf = path in mapping
        units[idx] = (base << 10) | (256 if leaf else 0) | path[-1]
        if leaf:
            units[256 * block] = (1 << 31) | (offsets[path] + value_offset_shift)
    return struct.pack("<I", size * 4) + struct.pack(f"<{size}I", *units) + bytes(strings)


def write_t5_gguf(path: Path, pieces: Sequence[tuple[str, float, int]], *, charsmap: bytes | None = None,
                  add_space_prefix: bool | None = True, remove_extra_whitespaces: bool | None = True,
                  unk_id: int | None = None, add_bos: bool | None = None, add_eos: bool | None = None) -> Path:
    """A vocab-only ``t5`` GGUF from (piece, score, type) triples."""
    w = gguf.GGUFWriter(str(path), "t5")
    w.add_name("tiny ugm")
    w.add_tokenizer_model("t5")
    w.add_token_list([p for p, _, _ in pieces])
    w.add_token_scores([s for _, s, _ in pieces])
    w.add_token_types([t for _, _, t in pieces])
    if charsmap is not None:
        w.add_precompiled_charsmap(charsmap)
    if add_space_prefix is not None:
        w.add_add_space_prefix(add_space_prefix)
    if remove_extra_whitespaces is not None:
        w.add_remove_extra_whitespaces(remove_extra_whitespaces)
    if unk_id is not None:
        w.add_unk_token_id(unk_id)
    if add_bos is not None:
        w.add_add_bos_token(add_bos)
    if add_eos is not None:
        w.add_add_eos_token(add_eos)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    return path


# pieces of the small test vocabulary: <unk> is id 2, as llama.cpp's UGM default
SMALL_PIECES: list[tuple[str, float, int]] = [
    ("<pad>", 0.0, CONTROL),
    ("</s>", 0.0, CONTROL),
    ("<unk>", 0.0, UNKNOWN),
    ("▁", -2.0, NORMAL),
    ("a", -3.0, NORMAL),
    ("b", -3.0, NORMAL),
    ("c", -3.0, NORMAL),
    ("f", -3.5, NORMAL),
    ("i", -3.5, NORMAL),
    ("x", -3.0, NORMAL),
    ("▁a", -2.5, NORMAL),
    ("▁b", -2.5, NORMAL),
    ("fi", -3.0, NORMAL),
    ("▁fi", -3.0, NORMAL),
    ("ab", -4.0, NORMAL),
    ("qq", -20.25, NORMAL),
    ("xé", 0.0, USER_DEFINED),
    ("é", -4.0, NORMAL),
    ("è", -4.0, NORMAL),
    ("▁x", -3.3, NORMAL),
    ("[unused]", -1.0, UNUSED),
]

SMALL_CHARSMAP: dict[bytes, bytes] = {
    "ﬁ".encode(): b"fi",
    b"\t": b" ",
    b"\x01": b"",
    "Ａ".encode(): b"a",
    "a\u0301".encode(): "á".encode(),
    "①".encode(): b"1 ",
}


# ---- parity with llama.cpp on the reference vocabulary ---------------------


@pytest.mark.parametrize("case", parity_params(["nomic-bert-moe"]))
def test_parity(case: Any, ref_model: Any) -> None:
    model = ref_model(case.vocab)
    enc = model.encode(case.text, add_special=case.add_special, parse_special=case.parse_special)
    assert enc.ids == list(case.ids)


def test_nomic_config(ref_model: Any) -> None:
    model = ref_model("nomic-bert-moe")
    cfg = model.config
    assert cfg.kind == "UGM" and cfg.normalizes
    # the file sets bos=0, eos=2, unk=3, add_bos and add_eos
    assert cfg.special_prefix == (0,) and cfg.special_suffix == (2,)
    assert cfg.add_space_prefix
    assert model.tokenizer.unk_id == 3
    # min normal score -20.3647518157959, minus 10 in float32
    assert model.tokenizer.unk_score == float(np.float32(np.float32(-20.3647518157959) - np.float32(10.0)))


def test_nomic_spans_and_decode(ref_model: Any) -> None:
    model = ref_model("nomic-bert-moe")
    enc = model.encode("  ﬁne   Ｆｕｌｌ𐀀𐀁 x")
    assert model.normalized("  ﬁne   Ｆｕｌｌ𐀀𐀁 x") == "▁fine▁Full𐀀𐀁▁x"
    pieces = [model.vocab.pieces[i] for i in enc.ids]
    assert pieces == ["▁fine", "▁Full", "<unk>", "▁x"]
    # the collapsed leading run belongs to the first token, the ligature is
    # one character, the two unknown characters are one token
    assert list(zip(enc.starts, enc.ends)) == [(0, 5), (5, 12), (12, 14), (14, 16)]
    assert model.decode(model.encode("Hello world").ids) == "Hello world"


def test_nomic_lone_surrogates_do_not_fail(ref_model: Any) -> None:
    model = ref_model("nomic-bert-moe")
    tok = model.tokenizer
    res = tok.encode_fragment("a\ud800b", False)  # the byte path, as llama.cpp gets it (surrogatepass)
    assert res.ids and res.starts == sorted(res.starts)
    assert model.encode("a\ud800b").ids == model.encode("a\ufffdb").ids


# ---- hand-made vocabularies, expected ids from the llama.cpp oracle --------

SYNTH_TEXTS = [
    '\ufb01',
    'a\x01b',
    'a\tb',
    'a   b',
    'c',
    '  a',
    ' a',
    'a',
    'x\xe8',
    'x\xe9',
    'x\xe9y',
    'xe',
    'x',
    'qq',
    'ab',
    '\uff21b',
    'a\u0301',
    '\u2460\u2461',
    '[unused]',
    'q',
    'qqq',
    '  ',
    '',
    '\t\t',
    'a ',
    'x\xe9x\xe8',
    '\xe9',
    '\xe8',
    'a\ufb01',
    '\x01',
    'a\x01\x01 b',
    'xx',
    '\U0001f600x',
    'a\u2460b',
]

# (add_space_prefix, remove_extra_whitespaces, with charsmap) -> ids per text
SYNTH_EXPECTED: dict[tuple[bool | None, bool, bool], list[list[int]]] = {
    (True, True, True): [
        [13], [10, 5], [10, 11], [10, 11], [3, 6], [10], [10], [10], [19, 2], [16], [16, 3, 2], [19, 2], [19],
        [3, 15], [10, 5], [10, 5], [3, 2], [3, 2, 3, 2], [3, 20], [3, 2], [3, 2, 15], [], [], [], [10],
        [16, 19, 2], [3, 17], [3, 18], [10, 12], [], [10, 11], [19, 9], [3, 2, 9], [10, 2, 11]],
    (False, False, True): [
        [12], [14], [4, 11], [4, 3, 3, 11], [6], [3, 10], [10], [4], [9, 2], [16], [16, 2], [9, 2], [9], [15],
        [14], [14], [2], [2, 3, 2], [20], [2], [2, 15], [3, 3], [], [3, 3], [4, 3], [16, 9, 2], [17], [18],
        [4, 12], [], [4, 11], [9, 9], [2, 9], [4, 2, 11]],
    # no charsmap and no add_space_prefix key: merging alone puts a ▁ in front
    (None, True, False): [
        [3, 2], [10, 2, 5], [10, 2, 5], [10, 11], [3, 6], [10], [10], [10], [19, 2], [16], [16, 3, 2], [19, 2],
        [19], [3, 15], [10, 5], [3, 2, 5], [10, 2], [3, 2], [3, 20], [3, 2], [3, 2, 15], [], [], [3, 2], [10],
        [16, 19, 2], [3, 17], [3, 18], [10, 2], [3, 2], [10, 2, 11], [19, 9], [3, 2, 9], [10, 2, 5]],
    (True, False, True): [
        [13], [10, 5], [10, 11], [10, 3, 3, 11], [3, 6], [3, 3, 10], [3, 10], [10], [19, 2], [16], [16, 3, 2],
        [19, 2], [19], [3, 15], [10, 5], [10, 5], [3, 2], [3, 2, 3, 2], [3, 20], [3, 2], [3, 2, 15], [3, 3], [],
        [3, 3], [10, 3], [16, 19, 2], [3, 17], [3, 18], [10, 12], [], [10, 11], [19, 9], [3, 2, 9], [10, 2, 11]],
}


@pytest.fixture(scope="module")
def synth_models(tmp_path_factory: pytest.TempPathFactory) -> dict[tuple[bool | None, bool, bool], Any]:
    d = tmp_path_factory.mktemp("ugm-synth")
    out = {}
    for k, (prefix, merge, with_cm) in enumerate(SYNTH_EXPECTED):
        path = write_t5_gguf(d / f"v{k}.gguf", SMALL_PIECES,
                             charsmap=make_charsmap(SMALL_CHARSMAP) if with_cm else None,
                             add_space_prefix=prefix, remove_extra_whitespaces=merge)
        out[(prefix, merge, with_cm)] = open_model(path)
    return out


@pytest.mark.parametrize("key", list(SYNTH_EXPECTED), ids=lambda k: f"prefix={k[0]}-merge={k[1]}-charsmap={k[2]}")
def test_synthetic_vocab_matches_llama_cpp(synth_models: Any, key: Any) -> None:
    model = synth_models[key]
    got = [model.encode(t).ids for t in SYNTH_TEXTS]
    assert got == SYNTH_EXPECTED[key]


def test_synthetic_normalized_and_spans(synth_models: Any) -> None:
    model = synth_models[(True, True, True)]

    def spans(text: str) -> list[tuple[str, int, int]]:
        enc = model.encode(text)
        return [(model.vocab.pieces[i], s, e) for i, s, e in zip(enc.ids, enc.starts, enc.ends)]

    # a replacement longer than its input: both tokens of "fi" keep the ligature
    assert model.normalized("ﬁ") == "▁fi"
    assert spans("ﬁ") == [("▁fi", 0, 1)]
    assert spans("aﬁ") == [("▁a", 0, 1), ("fi", 1, 2)]
    # a deleted character belongs to no token
    assert model.normalized("a\x01b") == "▁ab"
    assert spans("a\x01b") == [("▁a", 0, 1), ("b", 2, 3)]
    # a collapsed run of spaces (a tab is mapped to a space first)
    assert model.normalized("a \t  b") == "▁a▁b"
    assert spans("a \t  b") == [("▁a", 0, 1), ("▁b", 1, 6)]
    # the inserted prefix ▁ covers no text
    assert spans("c") == [("▁", 0, 0), ("c", 0, 1)]
    # a replacement that holds a space: "①" -> "1 " -> "▁1▁"
    assert model.normalized("a①b") == "▁a1▁b"
    assert spans("a①b") == [("▁a", 0, 1), ("<unk>", 1, 2), ("▁b", 1, 3)]
    # the user-defined trie matches "x" + the first byte of "è": that byte
    # is copied alone and the rest becomes U+FFFD (llama.cpp)
    assert model.normalized("xè") == "▁x\ufffd\ufffd"
    assert spans("xè") == [("▁x", 0, 1), ("<unk>", 1, 2)]

    plain = synth_models[(False, False, True)]
    assert plain.normalized("  a") == "▁▁a"
    enc = plain.encode("  a")
    assert list(zip(enc.ids, enc.starts, enc.ends)) == [(3, 0, 1), (10, 1, 3)]
    prefix_only = synth_models[(True, False, True)]
    assert prefix_only.normalized("  a ") == "▁▁▁a▁"


def test_synthetic_unknown_score_and_defaults(synth_models: Any) -> None:
    model = synth_models[(True, True, True)]
    tok = model.tokenizer
    assert isinstance(tok, UgmTokenizer)
    # min score of NORMAL pieces is -20.25 ("qq"); the unused piece does not count
    assert tok.unk_score == float(np.float32(-20.25) - np.float32(10.0)) == -30.25
    cfg = model.config
    # llama.cpp's UGM defaults: eos=1, unk=2, pad=0; add_bos off, add_eos on
    assert cfg.special_ids["eos"] == 1 and cfg.special_ids["unk"] == 2 and cfg.special_ids["pad"] == 0
    assert "bos" not in cfg.special_ids
    assert cfg.special_prefix == () and cfg.special_suffix == (1,)
    assert model.encode("a", add_special=True).ids == [10, 1]
    assert model.decode([10, 12]) == "afi"


def test_unk_id_and_flags_from_file(tmp_path: Path) -> None:
    path = write_t5_gguf(tmp_path / "u.gguf", SMALL_PIECES, charsmap=make_charsmap(SMALL_CHARSMAP),
                         unk_id=20, add_bos=True, add_eos=False)
    model = open_model(path)
    assert model.config.special_prefix == () and model.config.special_suffix == ()  # no bos id to add
    assert model.encode("q").ids == [3, 20]


def test_nomic_fast_paths(ref_model: Any) -> None:
    model = ref_model("nomic-bert-moe")
    tok = model.tokenizer
    # nomic merges spaces and no piece has ▁ inside: text goes chunk by chunk
    assert tok.by_chunks and tok.cut_on_space and tok.exact_chars > 10 ** 7
    assert tok.space_like == ["\t", "\n", "\x0c", "\r"]
    enc = model.encode("a \n\t b\r\n")
    assert [model.vocab.pieces[i] for i in enc.ids] == ["▁a", "▁b"]
    # the ▁ of "▁b" stands for the whole run of spaces, tabs and newlines
    assert list(zip(enc.starts, enc.ends)) == [(0, 1), (1, 6)]


def test_fallback_paths_give_the_same_tokens(ref_model: Any) -> None:
    vocab = ref_model("nomic-bert-moe").vocab
    fast = ref_model("nomic-bert-moe").tokenizer
    slow = build_ugm(vocab)
    slow.exact_chars = 0  # as for a fragment too long for exact sums: one pass in llama.cpp's order
    texts = ["Hello world, ﬁne Ｆｕｌｌ①  x\n\ny", "𐀀𐀁 x 𐀀", "日本語のテキスト。 한국어 문장", "  a  ", "",
             # ASCII with and without characters the normalizer must see
             "if (a->b) { return x[0]; }\n\tprint(f'{y!r}')", "a\x01b c\x7f \x1b[0m done", "\x00\x08 x"]
    for text in texts:
        a, b = fast.encode_fragment(text, True), slow.encode_fragment(text, True)
        assert (a.ids, a.starts, a.ends) == (b.ids, b.starts, b.ends)
    fast.clear_caches()
    again = fast.encode_fragment(texts[0], True)
    assert again.ids == slow.encode_fragment(texts[0], True).ids


def test_exact_limit() -> None:
    # multiples of 2**-2; a path loses at most 12.25 per character
    assert exact_limit([-3.25, -1.5], [1, 2], -12.25) == int((2.0 ** 50 - 12.25) / 12.25)
    # a positive score per character bounds from above
    assert exact_limit([8.0], [2], -1.0) == int((2.0 ** 52 - 8.0) / 4.0)
    assert exact_limit([0.0], [1], 0.0) > 10 ** 15
    assert exact_limit([float("nan")], [1], -10.0) == 0
    assert exact_limit([-1e-30], [1], -10.0) == 0


# ---- the charsmap reader ------------------------------------------------------


def test_charsmap_longest_match_and_lookups() -> None:
    blob = make_charsmap({b"a": b"1", b"ab": b"2", b"abcd": b"3", "é".encode(): b"e"})
    cm = Charsmap(blob)
    assert cm.utf8_ok
    assert cm.walk(b"abc", 0)[:1] == (2,)
    length, value, _ = cm.walk(b"abcd", 0)
    assert (length, cm.replacement(value)) == (4, b"3")
    assert cm.walk(b"xa", 0)[0] == 0 and cm.walk(b"xa", 1)[0] == 1
    assert cm.walk(b"a\0b", 0)[0] == 1
    assert cm.single == {"a", "é"} and cm.multi_first == {"a"} and cm.second == {"b"}


def test_nomic_charsmap_is_read(ref_model: Any) -> None:
    cm = ref_model("nomic-bert-moe").tokenizer.charsmap
    assert cm.utf8_ok and cm.size == 44288
    length, value, _ = cm.walk("ﬁ".encode(), 0)
    assert (length, cm.replacement(value)) == (3, b"fi")


@pytest.mark.parametrize("blob, message", [
    (b"\x01\x02", "too small"),
    (struct.pack("<I", 8) + b"\0" * 8, "at least one byte"),
    (struct.pack("<I", 1 << 30) + b"\0" * 16, "claims"),
    (make_charsmap({b"a": b"x"}, value_offset_shift=100), "replacement offset"),
    (make_charsmap({b"a": b"x"}, drop_nul=True), "NUL"),
    (make_charsmap({b"a": b"x"}, base_shift=1 << 18), "outside"),
])
def test_malformed_charsmap(blob: bytes, message: str) -> None:
    with pytest.raises(GGUFError) as info:
        Charsmap(blob)
    assert message in str(info.value)
    assert info.value.field == "tokenizer.ggml.precompiled_charsmap"


def test_malformed_charsmap_fails_at_open_with_path(tmp_path: Path) -> None:
    path = write_t5_gguf(tmp_path / "bad.gguf", SMALL_PIECES, charsmap=make_charsmap({b"a": b"x"}, drop_nul=True))
    with pytest.raises(GGUFError) as info:
        open_model(path)
    assert "NUL" in str(info.value)
    assert info.value.field == "tokenizer.ggml.precompiled_charsmap"


def test_malformed_charsmap_error_names_the_file(tmp_path: Path) -> None:
    path = write_t5_gguf(tmp_path / "bad.gguf", SMALL_PIECES, charsmap=make_charsmap({b"a": b"x"}, drop_nul=True))
    with pytest.raises(GGUFError) as info:
        open_model(path)
    assert info.value.path == str(path)


_SMALL_BLOB = make_charsmap({b"a": b"1", b"ab": b"", "é".encode(): b"e ", b"\t": b" "})


@settings(max_examples=300, deadline=None)
@given(st.data())
def test_mutated_charsmap_never_reads_out_of_range(data: st.DataObject) -> None:
    blob = bytearray(_SMALL_BLOB)
    for _ in range(data.draw(st.integers(1, 6))):
        pos = data.draw(st.integers(0, len(blob) - 1))
        blob[pos] = data.draw(st.integers(0, 255))
    if data.draw(st.booleans()):
        blob = blob[:data.draw(st.integers(0, len(blob)))]
    try:
        cm = Charsmap(bytes(blob))
    except GGUFError:
        return
    # a blob that was accepted never fails later
    probe = data.draw(st.binary(max_size=12))
    for start in range(len(probe)):
        cm.walk(probe, start)


@settings(max_examples=100, deadline=None)
@given(st.binary(max_size=64))
def test_random_charsmap_bytes(blob: bytes) -> None:
    try:
        Charsmap(blob)
    except GGUFError:
        pass


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_mutated_real_charsmap(ref_model: Any, data: st.DataObject) -> None:
    blob = bytearray(ref_model("nomic-bert-moe").vocab.precompiled_charsmap)
    for _ in range(data.draw(st.integers(1, 20))):
        pos = data.draw(st.integers(0, len(blob) - 1))
        blob[pos] = data.draw(st.integers(0, 255))
    try:
        cm = Charsmap(bytes(blob))
    except GGUFError:
        return
    probe = data.draw(st.text(max_size=10)).encode("utf-8")
    for start in range(len(probe)):
        cm.walk(probe, start)


# ---- properties on the real vocabulary ---------------------------------------

_INTERESTING = "aZ09 .,'\t\n\r\x00\x01\x7f é\u0301A\u030a ﬁＡ①㎏ｶﾞ\u3000\xa0\u200b\ufeff▁我日本한नअ🦙\U0001d400\U000e0100\ufffd"
_TEXT = st.text(alphabet=st.one_of(st.sampled_from(_INTERESTING), st.characters()), max_size=40)


@settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=_TEXT)
def test_any_text_tokenizes_with_ordered_spans(ref_model: Any, text: str) -> None:
    model = ref_model("nomic-bert-moe")
    enc = model.encode(text)
    assert isinstance(model.normalized(text), str)
    n = len(enc.ids)
    assert all(0 <= i < len(model.vocab.pieces) for i in enc.ids)
    for k in range(n):
        assert 0 <= enc.starts[k] <= enc.ends[k] <= len(text)
        if k:
            assert enc.starts[k - 1] <= enc.starts[k] and enc.ends[k - 1] <= enc.ends[k]


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=st.text(alphabet=st.one_of(st.sampled_from(_INTERESTING), st.characters(exclude_categories=())),
                    max_size=30))
def test_fragments_with_lone_surrogates(ref_model: Any, synth_models: Any, text: str) -> None:
    # the core replaces lone surrogates, but the plugin copes on its own
    # (as llama.cpp gets them: surrogatepass UTF-8, then U+FFFD per byte)
    n = len(text.encode("utf-8", "surrogatepass"))
    for model in [ref_model("nomic-bert-moe"), *synth_models.values()]:
        res = model.tokenizer.encode_fragment(text, True)
        assert len(res.ids) == len(res.starts) == len(res.ends)
        assert all(0 <= a <= b <= n for a, b in zip(res.starts, res.ends))
        assert res.starts == sorted(res.starts) and res.ends == sorted(res.ends)
        assert isinstance(model.tokenizer.normalized(text), str)


@settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=st.text(alphabet=st.one_of(st.sampled_from(_INTERESTING), st.characters(exclude_categories=("Cs",))),
                    max_size=40))
def test_character_and_byte_paths_agree(ref_model: Any, text: str) -> None:
    tok = ref_model("nomic-bert-moe").tokenizer
    sn = tok.normalizer.normalize_str(text)
    assert sn is not None
    bn = tok.normalizer.normalize_bytes(text.encode("utf-8"))
    assert sn.text.encode("utf-8") == bn.data
    fast = tok.encode_fragment(text, True)  # chunk by chunk
    slow = tok._encode_bytes(bn)  # byte by byte, one pass over the fragment
    assert (fast.ids, fast.starts, fast.ends) == (slow.ids, slow.starts, slow.ends)
    whole = tok._encode_str(text, sn)  # the normalized text word by word
    assert (fast.ids, fast.starts, fast.ends) == (whole.ids, whole.starts, whole.ends)
    # word by word is the same as one pass in llama.cpp's order
    assert tok.viterbi_str(sn.text) == tok._whole(sn.text)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=st.text(alphabet=st.sampled_from("ab xqéèﬁ①\t\x01Ａ\u0301😀"), max_size=16))
def test_synthetic_paths_agree(synth_models: Any, text: str) -> None:
    for model in synth_models.values():
        tok = model.tokenizer
        bn = tok.normalizer.normalize_bytes(text.encode("utf-8"))
        slow = tok._encode_bytes(bn)
        fast = tok.encode_fragment(text, True)
        assert (fast.ids, fast.starts, fast.ends) == (slow.ids, slow.starts, slow.ends)
        sn = tok.normalizer.normalize_str(text)
        if sn is not None:
            assert sn.text.encode("utf-8") == bn.data


# ---- whitespace options --------------------------------------------------------------
#
# llama.cpp 0.3.36 reads add_space_prefix and remove_extra_whitespaces from a
# UGM file, and nothing else: escape_whitespaces is always true and
# treat_whitespace_as_suffix always false for UGM (no GGUF key sets them,
# which ugm_options.jsonl shows with llama.cpp itself). The plugin keeps both
# as constructor options, like llama.cpp's normalizer; their expected output
# below is worked out by hand from llama.cpp's llm_tokenizer_ugm_session::
# normalize, since no file can make llama.cpp take those paths.

def _ugm_option_rows() -> list[dict[str, Any]]:
    from tests.refdata import read_jsonl

    return read_jsonl("ugm_options.jsonl")


_UGM_VARIANTS: list[dict[str, Any]] = []
for _r in _ugm_option_rows():
    if _r["changes"] not in _UGM_VARIANTS:
        _UGM_VARIANTS.append(_r["changes"])


@pytest.mark.parametrize("changes", _UGM_VARIANTS, ids=lambda c: ",".join(f"{k.split('.')[-1]}={v}"
                                                                          for k, v in c.items()))
def test_nomic_whitespace_keys_match_llama_cpp(changes: dict[str, Any], tmp_path: Path) -> None:
    from tests.gguf_patch import patched_gguf
    from tests.refdata import vocab_path

    model = open_model(patched_gguf(vocab_path("nomic-bert-moe"), tmp_path / "v.gguf", changes))
    rows = [r for r in _ugm_option_rows() if r["changes"] == changes]
    assert len(rows) >= 20
    for r in rows:
        assert model.encode(r["text"], add_special=r["add_special"]).ids == r["ids"], (r["text"], r["add_special"])


def test_ignored_whitespace_keys_change_nothing() -> None:
    """What llama.cpp does with escape/suffix keys in a file: nothing."""
    rows = _ugm_option_rows()
    from tests.refdata import vocab_path

    ignored = [r for r in rows if "tokenizer.ggml.escape_whitespaces" in r["changes"]]
    assert ignored
    plain = open_model(vocab_path("nomic-bert-moe"))
    for r in ignored:
        assert plain.encode(r["text"], add_special=r["add_special"]).ids == r["ids"]


def _synth_tokenizer(tmp_path: Path, escape: bool, suffix: bool, prefix: bool, merge: bool) -> UgmTokenizer:
    path = write_t5_gguf(tmp_path / f"s{escape}{suffix}{prefix}{merge}.gguf", SMALL_PIECES,
                         charsmap=make_charsmap(SMALL_CHARSMAP), add_space_prefix=prefix,
                         remove_extra_whitespaces=merge)
    return UgmTokenizer(open_model(path).vocab, escape_whitespaces=escape, treat_whitespace_as_suffix=suffix)


# (escape, suffix, add_space_prefix, remove_extra_whitespaces, text, normalized, ids)
WS_CASES: list[tuple[bool, bool, bool, bool, str, str, list[int]]] = [
    # suffix: no ▁ in front from the prefix option, one ▁ appended at the end
    (True, True, True, False, "a b", "a▁b▁", [4, 11, 3]),
    (True, True, True, False, "  a", "▁▁a▁", [3, 10, 3]),
    (True, True, True, False, "", "▁", [3]),
    # merging still puts one ▁ before every run of non-space (the first too)
    (True, True, True, True, "a b", "▁a▁b▁", [10, 11, 3]),
    (True, True, True, True, "ab  ", "▁ab▁", [10, 5, 3]),
    # the suffix ▁ comes only with add_space_prefix
    (True, True, False, False, "a b", "a▁b", [4, 11]),
    # no escaping: spaces stay spaces, and no piece of this vocab has one
    (False, False, True, True, "a b", " a b", [2, 4, 2, 5]),
    (False, False, False, False, "a  b", "a  b", [4, 2, 5]),
    (False, True, True, False, "a", "a ", [4, 2]),
]


@pytest.mark.parametrize("escape,suffix,prefix,merge,text,normalized,ids", WS_CASES)
def test_escape_and_suffix_options(tmp_path: Path, escape: bool, suffix: bool, prefix: bool, merge: bool,
                                   text: str, normalized: str, ids: list[int]) -> None:
    tok = _synth_tokenizer(tmp_path, escape, suffix, prefix, merge)
    assert tok.normalized(text) == normalized
    assert tok.encode_fragment(text, False).ids == ids
