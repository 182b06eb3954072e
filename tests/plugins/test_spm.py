"""The SPM plugin: llama.cpp parity, spans, config, decoding, file flags.

Every expected id list and decoded string in this file was produced by
llama.cpp itself (llama-cpp-python 0.3.36), never by this code.
"""

from __future__ import annotations

from tokenprism.core.record import replace
from pathlib import Path
from typing import Any

import pytest

from tests.refdata import Case, parity_params, vocab_path
from tokenprism.core.frozen import as_tuple
from tokenprism.core.vocab import decoded_pieces

SPM_VOCABS = ["llama-spm", "phi-3", "baichuan"]


# ---- parity with llama.cpp's reference outputs -----------------------------

@pytest.mark.parametrize("case", parity_params(SPM_VOCABS))
def test_parity(case: Case, ref_model: Any) -> None:
    model = ref_model(case.vocab)
    enc = model.encode(case.text, add_special=case.add_special, parse_special=case.parse_special)
    assert enc.ids == list(case.ids)


def test_plugin_is_registered(ref_model: Any) -> None:
    model = ref_model("llama-spm")
    assert model.spec.name == "spm"
    assert model.kind == "SPM"


@pytest.mark.parametrize("name", SPM_VOCABS)
def test_piece_lookup_from_the_file_bytes_answers_as_the_index(name: str) -> None:
    """SPM looks pieces up in the file's undecoded bytes (``piece_finder``)
    in the compiled build; every piece, every character of one and a few
    texts that are no piece get the id the vocabulary's own index gives."""
    from tokenprism.core import open_model
    from tokenprism.core.frozen import NATIVE
    from tokenprism.core.vocab import piece_finder, piece_index

    # a model of its own: once its pieces are decoded (as other tests of
    # the shared model do) the bytes are let go, and the index answers
    vocab = open_model(vocab_path(name)).vocab
    finder = piece_finder(vocab)
    index = piece_index(vocab)
    assert (finder.raw is not None) == NATIVE
    pieces = decoded_pieces(vocab)
    chars = sorted({c for p in pieces for c in p})
    for p in list(pieces) + ["", "no such piece", "\udce2", "\u2581\u2581\u2581\u2581\u2581\u2581\u2581\u2581x"]:
        assert finder.find(p) == index.find(p), p
        text = "<" + p + ">"
        assert finder.get(text, 1, len(text) - 1) == index.get(text, 1, len(text) - 1), p
    for c in chars:
        assert finder.char(ord(c)) == index.char(ord(c)), c


# ---- config ---------------------------------------------------------------

def test_config_llama_spm(ref_model: Any) -> None:
    cfg = ref_model("llama-spm").config
    assert dict(cfg.special_ids) == {"bos": 1, "eos": 2, "unk": 0}
    assert cfg.special_prefix == (1,)
    assert cfg.special_suffix == ()
    assert (cfg.add_bos, cfg.add_eos, cfg.add_space_prefix) == (True, False, True)
    assert not cfg.clean_spaces and not cfg.byte_level


def test_config_phi3_eos_comes_from_the_file(ref_model: Any) -> None:
    cfg = ref_model("phi-3").config
    assert cfg.special_ids["eos"] == 32000
    assert cfg.special_ids["unk"] == 0
    assert cfg.special_prefix == (1,)


def test_config_baichuan_uses_llama_defaults(ref_model: Any) -> None:
    # the file sets no add_* flags and no unknown id: llama.cpp's SPM
    # defaults (add_bos, space prefix, unk = 0) apply
    cfg = ref_model("baichuan").config
    assert cfg.special_ids["unk"] == 0
    assert cfg.special_prefix == (1,)
    assert cfg.add_space_prefix


# ---- spans ----------------------------------------------------------------

def _spans(enc: Any) -> list[tuple[int, str, int, int]]:
    return [(t.id, t.piece, t.start, t.end) for t in enc]


def test_prefix_space_covers_no_text(ref_model: Any) -> None:
    enc = ref_model("llama-spm").encode("Hello world")
    assert _spans(enc) == [(15043, "▁Hello", 0, 5), (3186, "▁world", 5, 11)]
    assert list(enc.byte_starts) == [0, 5] and list(enc.byte_ends) == [5, 11]


def test_lone_prefix_token_has_empty_span(ref_model: Any) -> None:
    enc = ref_model("llama-spm").encode("\n")
    assert enc.ids == [29871, 13]
    assert _spans(enc) == [(29871, "▁", 0, 0), (13, "<0x0A>", 0, 1)]


def test_replaced_spaces_map_back_to_spaces(ref_model: Any) -> None:
    enc = ref_model("llama-spm").encode(" Hello  x")
    # " Hello  x" -> "▁▁Hello▁▁x": every ▁ but the inserted one is a space
    text = enc.text
    pieces = [t.piece for t in enc]
    covered = "".join(text[t.start:t.end] for t in enc)
    assert covered == text
    assert "".join(pieces).replace("▁", " ") == " " + text


def test_byte_fallback_tokens_form_one_group(ref_model: Any) -> None:
    enc = ref_model("llama-spm").encode("🦙 x")
    assert enc.ids == [29871, 243, 162, 169, 156, 921]
    toks = enc.tokens
    assert (toks[0].start, toks[0].end) == (0, 0)
    # the four bytes keep their own byte offsets, share the character's span
    assert [(t.byte_start, t.byte_end) for t in toks[1:5]] == [(0, 1), (1, 2), (2, 3), (3, 4)]
    assert {(t.start, t.end) for t in toks[1:5]} == {(0, 1)}
    assert {t.group for t in toks[1:5]} == {1}
    assert (toks[5].start, toks[5].end, toks[5].group) == (1, 3, -1)


def test_literal_space_mark_is_three_bytes(ref_model: Any) -> None:
    enc = ref_model("llama-spm").encode("a\u2581b")
    assert enc.ids == [263, 289]
    assert list(enc.byte_starts) == [0, 1] and list(enc.byte_ends) == [1, 5]
    assert list(enc.starts) == [0, 1] and list(enc.ends) == [1, 3]


def test_after_special_fragment_gets_prefix(ref_model: Any) -> None:
    model = ref_model("llama-spm")
    enc = model.encode("<s>Hi</s>", parse_special=True)
    assert enc.ids == [1, 6324, 2]  # llama.cpp: "▁Hi" after <s>
    assert _spans(enc)[1] == (6324, "▁Hi", 3, 5)


# ---- fragment-level behaviour ----------------------------------------------

def test_encode_fragment_without_prefix(ref_model: Any) -> None:
    tok = ref_model("llama-spm").tokenizer
    res = tok.encode_fragment("Hello", False)
    assert res.ids == [10994]  # "Hello" without ▁
    assert (res.starts, res.ends) == ([0], [5])
    assert tok.encode_fragment("", True).ids == []


def test_normalized_and_piece_bytes(ref_model: Any) -> None:
    tok = ref_model("llama-spm").tokenizer
    assert tok.normalized("Hello  world") == "▁Hello▁▁world"
    assert tok.normalized("") == ""
    assert tok.piece_bytes(15043) == b" Hello"
    assert tok.piece_bytes(1678) == b"   "


def test_word_shortcut_matches_whole_fragment_loop(ref_model: Any) -> None:
    from tokenprism.plugins.spm.spm import SpmTokenizer

    vocab = ref_model("llama-spm").vocab
    fast = SpmTokenizer(vocab)
    literal = SpmTokenizer(vocab, by_word=False)
    assert fast.by_word and not literal.by_word
    for text in ("Hello world", "  a  b \n\t c", "▁▁x▁ y", "日本語 のテキスト 🦙🦙", " ", "x" * 100 + " y"):
        for after in (True, False):
            a = fast.encode_fragment(text, after)
            b = literal.encode_fragment(text, after)
            assert (a.ids, a.starts, a.ends) == (b.ids, b.starts, b.ends), text


def test_piece_crossing_a_word_start_disables_the_shortcut(ref_model: Any) -> None:
    from tokenprism.plugins.spm.spm import build_spm

    vocab = ref_model("llama-spm").vocab
    new_id = len(vocab.pieces)
    pieces = decoded_pieces(vocab) + ("o▁w",)
    t2i = dict(vocab.token_to_id)
    t2i["o▁w"] = new_id
    v2 = replace(vocab, pieces=pieces, scores=as_tuple(vocab.scores) + (100.0,),
                             types=as_tuple(vocab.types) + (1,), attrs=as_tuple(vocab.attrs) + (vocab.attrs[15043],),
                             token_to_id=t2i)
    tok = build_spm(v2)
    assert not tok.by_word
    # "o▁w" is reachable through "▁w" and wins on score
    res = tok.encode_fragment("o w", False)
    assert res.ids == [new_id]
    assert (res.starts, res.ends) == ([0], [3])


def test_missing_space_mark_falls_back_to_bytes(ref_model: Any) -> None:
    from tokenprism.plugins.spm.spm import build_spm

    vocab = ref_model("llama-spm").vocab
    t2i = {k: v for k, v in vocab.token_to_id.items() if "▁" not in k}
    tok = build_spm(replace(vocab, token_to_id=t2i))
    res = tok.encode_fragment("a b\u2581c", True)
    e2, x96, x81 = (vocab.token_to_id[f"<0x{b:02X}>"] for b in "▁".encode())
    a, b, c = (vocab.token_to_id[ch] for ch in "abc")
    assert res.ids == [e2, x96, x81, a, e2, x96, x81, b, e2, x96, x81, c]
    spans = list(zip(res.starts, res.ends))
    # inserted prefix: nothing; a space: its one byte; a literal ▁: each byte
    assert spans == [(0, 0)] * 3 + [(0, 1)] + [(1, 2)] * 3 + [(2, 3)] + [(3, 4), (4, 5), (5, 6)] + [(6, 7)]


def test_missing_byte_token_uses_unknown(ref_model: Any) -> None:
    from tokenprism.plugins.spm.spm import build_spm

    vocab = ref_model("llama-spm").vocab
    t2i = {k: v for k, v in vocab.token_to_id.items() if k != "<0xF0>"}
    tok = build_spm(replace(vocab, token_to_id=t2i))
    assert tok.encode_fragment("🦙", False).ids == [0, 162, 169, 156]


# ---- decoding ---------------------------------------------------------------

DECODE_IDS = [[1, 15043, 3186], [15043, 3186], [29871, 15043], [1, 29871, 15043, 2],
              [243, 162, 169, 156], [259, 1, 15043], [243, 162], [29871, 13], [0, 15043],
              [3186, 15043], [263, 289], [1678]]

# llama_detokenize of DECODE_IDS by llama.cpp 0.3.36 (ggml-vocab-llama-spm),
# keyed by (special / unparse_special, remove_special)
DECODE_EXPECTED: dict[tuple[bool, bool], list[bytes]] = {
    (True, False): [b"<s> Hello world", b"Hello world", b" Hello", b"<s>  Hello</s>",
                    "🦙".encode(), b" <s> Hello", b"\xf0\x9f", b"\n", b"<unk> Hello",
                    b"world Hello", b"a b", b"  "],
    (True, True): [b" Hello world", b"Hello world", b" Hello", b"  Hello</s>",
                   "🦙".encode(), b" <s> Hello", b"\xf0\x9f", b"\n", b"<unk> Hello",
                   b"world Hello", b"a b", b"  "],
    (False, False): [b" Hello world", b"Hello world", b" Hello", b"  Hello",
                     "🦙".encode(), b"  Hello", b"\xf0\x9f", b"\n", b" Hello",
                     b"world Hello", b"a b", b"  "],
    (False, True): [b" Hello world", b"Hello world", b" Hello", b"  Hello",
                    "🦙".encode(), b"  Hello", b"\xf0\x9f", b"\n", b" Hello",
                    b"world Hello", b"a b", b"  "],
}


@pytest.mark.parametrize("special,remove_special", list(DECODE_EXPECTED))
def test_decode_matches_llama_cpp(special: bool, remove_special: bool, ref_model: Any) -> None:
    model = ref_model("llama-spm")
    got = [model.decode_bytes(ids, special=special, remove_special=remove_special) for ids in DECODE_IDS]
    assert got == DECODE_EXPECTED[(special, remove_special)]


def test_decode_phi3_matches_llama_cpp(ref_model: Any) -> None:
    model = ref_model("phi-3")
    # llama_detokenize by llama.cpp 0.3.36, special on
    assert model.decode_bytes([1, 15043, 3186, 32000]) == b"<s> Hello world<|endoftext|>"
    assert model.decode_bytes([15043, 32007, 32000]) == b"Hello<|end|><|endoftext|>"
    assert model.decode_bytes([32010, 15043]) == b"<|user|> Hello"
    # ... and with remove_special: phi-3's EOS is <|endoftext|>, so </s> stays
    assert model.decode_bytes([1, 15043, 3186, 2], remove_special=True) == b" Hello world</s>"


# ---- flags read from the file -----------------------------------------------

FLAG_TEXTS = ["Hello world", " Hello", "\n", "<s>x</s>y", "a  b"]

# llama.cpp 0.3.36 on ggml-vocab-llama-spm.gguf copies with the flags changed
FLAG_EXPECTED: dict[str, dict[bool, list[list[int]]]] = {
    "nopfx": {
        False: [[10994, 3186], [15043], [13], [29966, 29879, 29958, 29916, 829, 29879, 29958, 29891],
                [29874, 29871, 289]],
        True: [[1, 10994, 3186], [1, 15043], [1, 13], [1, 1, 29916, 2, 29891], [1, 29874, 29871, 289]],
    },
    "eos": {
        False: [[15043, 3186], [29871, 15043], [29871, 13], [529, 29879, 29958, 29916, 829, 29879, 29958, 29891],
                [263, 29871, 289]],
        True: [[15043, 3186, 2], [29871, 15043, 2], [29871, 13, 2], [1, 921, 2, 343, 2], [263, 29871, 289, 2]],
    },
}
FLAG_KEYS = {
    "nopfx": {"tokenizer.ggml.add_space_prefix": False},
    "eos": {"tokenizer.ggml.add_bos_token": False, "tokenizer.ggml.add_eos_token": True},
}


@pytest.fixture(scope="module")
def flag_models(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    gguf = pytest.importorskip("gguf")
    meta = pytest.importorskip("gguf.scripts.gguf_new_metadata")
    from tokenprism.core import open_model

    src = vocab_path("llama-spm")
    out: dict[str, Any] = {}
    for name, keys in FLAG_KEYS.items():
        dst = Path(tmp_path_factory.mktemp("spm")) / f"{name}.gguf"
        reader = gguf.GGUFReader(src, "r")
        arch = meta.get_field_data(reader, gguf.Keys.General.ARCHITECTURE)
        writer = gguf.GGUFWriter(str(dst), arch=arch, endianess=reader.endianess)
        new = {k: meta.MetadataDetails(gguf.GGUFValueType.BOOL, v) for k, v in keys.items()}
        meta.copy_with_new_metadata(reader, writer, new, [])
        out[name] = open_model(dst)
    return out


@pytest.mark.parametrize("variant", list(FLAG_EXPECTED))
@pytest.mark.parametrize("special", [False, True])
def test_file_flags(variant: str, special: bool, flag_models: dict[str, Any]) -> None:
    model = flag_models[variant]
    got = [model.encode(t, add_special=special, parse_special=special).ids for t in FLAG_TEXTS]
    assert got == FLAG_EXPECTED[variant][special]


def test_file_flags_config_and_decode(flag_models: dict[str, Any]) -> None:
    nopfx = flag_models["nopfx"]
    assert not nopfx.config.add_space_prefix
    assert nopfx.tokenizer.normalized("a b") == "a▁b"
    # llama_detokenize by llama.cpp 0.3.36 on the same files
    assert nopfx.decode_bytes([15043, 3186]) == b" Hello world"
    assert nopfx.decode_bytes([29871, 13]) == b" \n"
    eos = flag_models["eos"]
    assert (eos.config.special_prefix, eos.config.special_suffix) == ((), (2,))
    assert eos.decode_bytes([1, 15043, 3186, 2], remove_special=True) == b"<s> Hello world"
    assert eos.decode_bytes([15043, 2, 2], remove_special=True) == b"Hello</s>"
