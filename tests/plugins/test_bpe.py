"""Parity of the BPE plugin with llama.cpp 0.3.36: its own test vocabs,
detokenization, the resolved configuration, and small synthetic vocabs for
the ``whitespace`` and ``hybriddna`` models.

Every expected value here was produced by llama.cpp 0.3.36 (the
llama-cpp-python 0.3.36 build), through ``llama_tokenize`` /
``llama_detokenize`` with ``special=True``.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.refdata import parity_params

BPE_VOCABS = [
    "gpt-2", "llama-bpe", "qwen2", "qwen35", "deepseek-coder", "deepseek-llm", "falcon", "mpt",
    "starcoder", "refact", "command-r", "aquila", "gpt-neox", "gemma-4",
]


@pytest.mark.parametrize("case", parity_params(BPE_VOCABS))
def test_parity(case, ref_model) -> None:  # type: ignore[no-untyped-def]
    model = ref_model(case.vocab)
    enc = model.encode(case.text, add_special=case.add_special, parse_special=case.parse_special)
    assert enc.ids == list(case.ids)


# (vocab, ids, llama_detokenize(ids, special=True)) as produced by llama.cpp 0.3.36
DETOK_CASES = [
    # clean_spaces: " ," " !" " ." " 's" lose the space, a lone "'" between spaces loses both
    ("gpt-2", [15496, 837, 995, 5145, 632, 705, 82, 257, 1332, 764, 2094, 705, 83, 2245, 705, 994, 705, 12876],
     "Hello, world! It's a test. Don 't stop'here'ok"),
    ("gpt-2", [368, 31370, 12520, 99, 247, 290, 6184, 120, 77, 26884, 66, 9101, 67, 2634, 198, 197, 8658, 82],
     "emoji 🦙 and ünïcödé\n\ttabs"),
    # a byte-level token sequence cut inside a character
    ("gpt-2", [8582, 99], "\ufffd"),
    # pieces that are no GPT-2 glyphs: llama_decode_text's [UNK_BYTE_0x..] form
    ("command-r", [264, 265, 266, 267],
     "[UNK_BYTE_0xe2808d\u200d][UNK_BYTE_0xe280bc‼][UNK_BYTE_0xe28189⁉][UNK_BYTE_0xe283a3⃣]"),
    ("command-r", [5, 264, 33, 265], "<BOS_TOKEN>[UNK_BYTE_0xe2808d\u200d]:[UNK_BYTE_0xe280bc‼]"),
    # no clean_spaces for qwen2
    ("qwen2", [9707, 1154, 1879, 753, 1084, 364, 82, 6915, 659, 220, 108386], "Hello , world ! It 's fine . 你好"),
    # gemma-4: ▁ is a space, <0xNN> byte tokens, BOS shown with special=True
    ("gemma-4", [2, 138, 9259, 108, 12392, 139, 236820, 236771, 236781, 236812, 236770, 236813, 163543, 236743,
                 248979, 1123], "<bos>  Hello\n\nworld   <0x41> 😀 🧿 x"),
    ("gemma-4", [2, 236743, 478, 397], "<bos> \ufffd"),
    ("gemma-4", [2, 138, 236743, 496], "<bos>    a"),
    ("llama-bpe", [128000, 128000, 9906, 1917, 364, 274, 128009],
     "<|begin_of_text|><|begin_of_text|>Hello world's<|eot_id|>"),
    ("deepseek-coder", [32013, 1551, 267, 7, 87, 1772, 185, 3404, 1371, 9220, 207, 17, 2039, 651, 88, 6],
     "<｜begin▁of▁sentence｜>def f(x):\n\treturn x ** 2 , 'y'"),
    ("gpt-neox", [50276, 527, 8006, 50275, 1156, 209, 13, 342, 209, 8, 250, 8470, 209, 15],
     "  indented   text, with're spaces."),
]


@pytest.mark.parametrize("vocab,ids,expected", DETOK_CASES)
def test_detokenize(vocab: str, ids: list[int], expected: str, ref_model) -> None:  # type: ignore[no-untyped-def]
    assert ref_model(vocab).decode(ids) == expected


def test_config_llama_bpe(ref_model) -> None:  # type: ignore[no-untyped-def]
    cfg = ref_model("llama-bpe").config
    assert cfg.kind == "BPE" and cfg.byte_level and cfg.clean_spaces
    assert cfg.add_bos and cfg.special_prefix == (128000,) and cfg.special_suffix == ()


def test_config_gemma4(ref_model) -> None:  # type: ignore[no-untyped-def]
    model = ref_model("gemma-4")
    cfg = model.config
    assert not cfg.byte_level and cfg.normalizes and cfg.clean_spaces
    assert cfg.add_bos and cfg.special_prefix == (2,)
    assert model.normalized("a b") == "a\u2581b"


def test_config_defaults(ref_model) -> None:  # type: ignore[no-untyped-def]
    # falcon's file has bos/eos 11, the BPE defaults; qwen2 sets clean_spaces off
    assert ref_model("falcon").config.special_ids["bos"] == 11
    assert not ref_model("qwen2").config.clean_spaces
    assert ref_model("gpt-2").config.special_prefix == ()


def test_spans_byte_level(ref_model) -> None:  # type: ignore[no-untyped-def]
    model = ref_model("gpt-2")
    enc = model.encode("a 🦙b")
    res = model.tokenizer.encode_fragment("a 🦙b", True)
    # the llama is split over byte tokens; each reports its own bytes
    assert res.starts[0] == 0 and res.ends[-1] == len("a 🦙b".encode())
    assert all(s < e for s, e in zip(res.starts, res.ends))
    llama = [i for i in range(len(enc)) if enc.starts[i] <= 2 < enc.ends[i]]
    assert len(llama) > 1 and len({enc.groups[i] for i in llama}) == 1 and enc.groups[llama[0]] >= 0


def test_spans_escaped_space(ref_model) -> None:  # type: ignore[no-untyped-def]
    tok = ref_model("gemma-4").tokenizer
    res = tok.encode_fragment("ab  cd", True)
    assert res.starts[0] == 0 and res.ends[-1] == 6
    assert list(zip(res.starts, res.ends)) == sorted(zip(res.starts, res.ends))
    # the escaped spaces map back to one byte each
    assert sum(e - s for s, e in zip(res.starts, res.ends)) == 6


# --- synthetic vocabs for the "whitespace" and "hybriddna" models ----------

_WS_TOKENS = ["<unk>", "<s>", "</s>", "a", "b", "c", "h", "e", "l", "o", "ab", "abc", "he", "ll", "hell", "hello",
              "é", "ü", "x", "İ", "i", "k", "K"]
_WS_MERGES = ["a b", "ab c", "h e", "l l", "he ll", "hell o"]
_WS_TEXTS = ["abc hello", "  ABC\tHELLO\u3000x ", "héllo wörld abcabc", "İK k", "\u2003ab\u00a0c"]
# llama.cpp 0.3.36 on these texts, without and with normalizer.lowercase
_WS_EXPECTED = {
    False: [[11, 15], [18], [6, 16, 13, 9, 8, 11, 11], [19, 22, 21], [10, 5]],
    True: [[11, 15], [11, 15, 18], [6, 16, 13, 9, 8, 11, 11], [20, 21, 21], [10, 5]],
}

_M = "\ue000"
_DNA_TOKENS = ["<unk>", "<dna>", "</dna>", "<oov>", "AAAAAA" + _M, "ACGTAC" + _M, "CCCCCC" + _M, "GTAAAA" + _M,
               "CCCCCC", "A", "C", "G", "T", "Ġ", "a", "c", "g", "t", "<", ">", "/", "d", "n", "ĠA", "AC", "CC", "CCC"]
_DNA_MERGES = ["Ġ A", "A C", "C C", "CC C"]
_DNA_TEXTS = ["ACGTAC <dna>acgtacCCCCCCgt</dna> CCCCCC", "<dna>AAAAAAxx", "no tags CCC", "<dna></dna><dna>gtaaaaG"]
# llama.cpp 0.3.36, with the tags as NORMAL tokens (the session splits them)
# and as USER_DEFINED tokens (special splitting takes them out first)
_DNA_EXPECTED = {
    1: ([[24, 11, 12, 24, 13, 1, 5, 6, 7, 2, 13, 25, 25, 25], [1, 4, 3], [22, 13, 17, 14, 16, 13, 26],
         [1, 2, 1, 7, 3]],
        ["ACGTAC <dna>ACGTACCCCCCCGTAAAA</dna> CCCCCC", "<dna>AAAAAA<oov>", "n tag CCC",
         "<dna></dna><dna>GTAAAA<oov>"]),
    4: ([[24, 11, 12, 24, 13, 1, 14, 15, 16, 17, 14, 15, 25, 25, 25, 16, 17, 2, 13, 25, 25, 25], [1, 9, 9, 9, 9, 9, 9],
         [22, 13, 17, 14, 16, 13, 26], [1, 2, 1, 16, 17, 14, 14, 14, 14, 11]],
        ["ACGTAC <dna>acgtacCCCCCCgt</dna> CCCCCC", "<dna>AAAAAA", "n tag CCC", "<dna></dna><dna>gtaaaaG"]),
}


@pytest.mark.parametrize("lowercase", [False, True])
def test_whitespace_model(lowercase: bool, tmp_path: Path) -> None:
    from tests.ggufmaker import write_vocab_gguf
    from tokenprism.core import open_model

    types = [2, 3, 3] + [1] * (len(_WS_TOKENS) - 3)
    path = write_vocab_gguf(tmp_path / "ws.gguf", _WS_TOKENS, "whitespace", types=types, merges=_WS_MERGES,
                            extra={"tokenizer.ggml.pre": "whitespace",
                                   "tokenizer.ggml.normalizer.lowercase": lowercase,
                                   "tokenizer.ggml.bos_token_id": 1, "tokenizer.ggml.eos_token_id": 2})
    model = open_model(path)
    for text, expected in zip(_WS_TEXTS, _WS_EXPECTED[lowercase]):
        enc = model.encode(text)
        assert enc.ids == expected, text
        assert all(0 <= s <= e <= len(text) for s, e in zip(enc.starts, enc.ends))


@pytest.mark.parametrize("tag_type", [1, 4])
def test_hybriddna_model(tag_type: int, tmp_path: Path) -> None:
    from tests.ggufmaker import write_vocab_gguf
    from tokenprism.core import open_model

    types = [2, tag_type, tag_type, tag_type] + [1] * (len(_DNA_TOKENS) - 4)
    path = write_vocab_gguf(tmp_path / "dna.gguf", _DNA_TOKENS, "hybriddna", types=types, merges=_DNA_MERGES,
                            extra={"tokenizer.ggml.pre": "gpt-2"})
    model = open_model(path)
    ids_expected, detok_expected = _DNA_EXPECTED[tag_type]
    for text, expected, detok in zip(_DNA_TEXTS, ids_expected, detok_expected):
        enc = model.encode(text)
        assert enc.ids == expected, text
        assert model.decode(enc.ids) == detok


def test_unknown_pre_tokenizer(tmp_path: Path) -> None:
    from tests.ggufmaker import write_vocab_gguf
    from tokenprism.core import GGUFError, open_model

    path = write_vocab_gguf(tmp_path / "bad.gguf", ["a", "b"], "gpt2", merges=["a b"],
                            extra={"tokenizer.ggml.pre": "no-such-pre"})
    with pytest.raises(GGUFError, match="no-such-pre"):
        open_model(path)


def test_chatglm_has_no_default_bos(tmp_path: Path) -> None:
    # llama.cpp 0.3.36 gives [11, 0, 1, 2] for "abc" with add_special on the
    # gpt-2 one, and aborts (GGML_ASSERT: no BOS id) on the chatglm one; we
    # add no BOS there instead of failing
    from tests.ggufmaker import write_vocab_gguf
    from tokenprism.core import open_model

    tokens = [chr(ord("a") + i) for i in range(20)]
    for pre, has_bos in (("chatglm-bpe", False), ("gpt-2", True)):
        path = write_vocab_gguf(tmp_path / f"{pre}.gguf", tokens, "gpt2", merges=["a b"],
                                extra={"tokenizer.ggml.pre": pre, "tokenizer.ggml.add_bos_token": True})
        cfg = open_model(path).config
        assert ("bos" in cfg.special_ids) == has_bos
        assert cfg.special_prefix == ((11,) if has_bos else ())


@pytest.mark.parametrize("vocab,expected", [
    # llama.cpp 0.3.36 given the text as UTF-8 with surrogatepass (lone
    # surrogates as their 3-byte form); the core replaces them by U+FFFD
    # before the plugin runs, the plugin itself copes with them like llama.cpp
    ("gpt-2", [64, 169, 254, 222, 65, 2124, 169, 123, 123]),
    ("gemma-4", [236746, 475, 398, 366, 236763, 1123, 475, 429, 429]),
])
def test_lone_surrogates_in_plugin(vocab: str, expected: list[int], ref_model) -> None:  # type: ignore[no-untyped-def]
    res = ref_model(vocab).tokenizer.encode_fragment("a\ud800b x\udfff", True)
    assert res.ids == expected
    assert res.starts[0] == 0 and res.ends[-1] == 10
