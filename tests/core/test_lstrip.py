"""llama.cpp's LSTRIP rule: a special token with the lstrip attribute eats
the whitespace to its left when special tokens are parsed (llama-vocab.cpp,
tokenizer_st_partition). llama.cpp sets it on ``<mask>`` for nomic-bert-moe,
jina-v2-* and jina-bert-v3, and on ``[MASK]`` for modern-bert. Expected
ids are written from the vocabulary by name, not from the encoder."""

from __future__ import annotations

from pathlib import Path

import gguf
import pytest

from tests.ggufmaker import CHAR_TOKENS, char_types, write_vocab_gguf
from tokenprism.core import Attr, open_model

TOKENS = CHAR_TOKENS + ["<mask>", "[MASK]"]
TYPES = char_types() + [int(gguf.TokenType.CONTROL)] * 2


def _char_model(tmp_path: Path, arch: str, name: str = "tiny test vocab"):  # type: ignore[no-untyped-def]
    return open_model(write_vocab_gguf(tmp_path / f"{arch}-{name}.gguf", TOKENS, types=TYPES, arch=arch,
                                       name=name))


def test_lstrip_eats_the_spaces_before_mask(tmp_path: Path, char_plugin: object) -> None:
    model = _char_model(tmp_path, "nomic-bert-moe")
    t = model.vocab.token_to_id
    assert model.vocab.has_attr(t["<mask>"], Attr.LSTRIP)
    enc = model.encode("a  <mask> b", parse_special=True)
    # the two spaces before <mask> are gone, the one after it stays (no RSTRIP)
    assert enc.ids == [t["a"], t["<mask>"], t[" "], t["b"]]
    assert model.encode("\t\n <mask>", parse_special=True).ids == [t["<mask>"]]
    # without parse_special nothing is special, so nothing is stripped
    plain = model.encode("a  <mask>").ids
    assert plain[:3] == [t["a"], t[" "], t[" "]] and t["<mask>"] not in plain


def test_no_lstrip_elsewhere(tmp_path: Path, char_plugin: object) -> None:
    model = _char_model(tmp_path, "llama")
    t = model.vocab.token_to_id
    assert not model.vocab.has_attr(t["<mask>"], Attr.LSTRIP)
    assert model.encode("a  <mask>", parse_special=True).ids == [t["a"], t[" "], t[" "], t["<mask>"]]


def test_modern_bert_strips_before_its_mask(tmp_path: Path, char_plugin: object) -> None:
    model = _char_model(tmp_path, "modern-bert", name="ModernBERT-base (modern-bert)")
    t = model.vocab.token_to_id
    assert model.encode("a [MASK]", parse_special=True).ids == [t["a"], t["[MASK]"]]
    assert model.encode("a <mask>", parse_special=True).ids == [t["a"], t[" "], t["<mask>"]]


def test_nomic_bert_moe_reference(vocab_dir: str) -> None:
    model = open_model(Path(vocab_dir) / "ggml-vocab-nomic-bert-moe.gguf")
    t = model.vocab.token_to_id
    assert model.vocab.has_attr(t["<mask>"], Attr.LSTRIP)
    enc = model.encode("a  <mask>", parse_special=True)
    assert enc.ids == [t["\u2581a"], t["<mask>"]]
    # the eaten spaces belong to <mask>, not to the word before it
    assert (enc.starts[0], enc.ends[0]) == (0, 1) and enc.ends[1] == len("a  <mask>")
    enc = model.encode("a  <mask>", add_special=True, parse_special=True)
    assert enc.ids == [t["<s>"], t["\u2581a"], t["<mask>"], t["</s>"]]
    assert model.encode("a  <mask> b", parse_special=True).ids == [t["\u2581a"], t["<mask>"], t["\u2581b"]]


@pytest.mark.parametrize("text", ["a  </s>", "a  <mask>"])
def test_nomic_bert_moe_only_mask_has_lstrip(text: str, vocab_dir: str) -> None:
    model = open_model(Path(vocab_dir) / "ggml-vocab-nomic-bert-moe.gguf")
    t = model.vocab.token_to_id
    enc = model.encode(text, parse_special=True)
    special = text.split()[-1]
    # </s> has no lstrip: the spaces stay outside it
    assert enc.starts[-1] == (1 if special == "<mask>" else 3)
    assert enc.ids[-1] == t[special]
