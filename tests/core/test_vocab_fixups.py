"""The load-time fix-ups look their texts up in the native piece index
(``core.piece_codes``) when the tokenizer does not read the piece -> id
dict, which is then built only when someone asks for it. Checked: the
same fix-ups over the whole dict give the same attributes, special ids,
end-of-generation ids and special-token order, on every reference
vocabulary and on made-up ones full of duplicates."""

from __future__ import annotations

import random
from pathlib import Path

import numpy as np
import pytest

from tests.ggufmaker import write_vocab_gguf
from tests.refdata import SKIP_REASON, VOCAB_DIR, vocab_path
from tokenprism.core import open_model
from tokenprism.core.frozen import NATIVE, TokenIndex
from tokenprism.core.gguf_file import read_gguf
from tokenprism.core.string_array import StringArray
from tokenprism.core.vocab import (
    _FIXUP_TEXTS, Vocab, attrs_of_types, fix_up, special_ids_of, token_table, vocab_from_gguf,
)

NAMES = sorted(p.name[len("ggml-vocab-"):-len(".gguf")] for p in Path(VOCAB_DIR).glob("ggml-vocab-*.gguf")) \
    if VOCAB_DIR else []


def _check_against_whole_table(path: str | Path) -> Vocab:
    gf = read_gguf(path)
    v = vocab_from_gguf(gf, table_now=False)
    assert v.token_to_id.built() is not NATIVE  # type: ignore[attr-defined]  # (pure: the dict answers)
    if NATIVE and not any(v.pieces[i] == f"[EMPTY_{i}]" for i in range(len(v))):
        assert isinstance(v.pieces, StringArray) and not v.pieces.decoded()
    attrs = attrs_of_types(v.arrays().types)
    special = special_ids_of(gf, len(v))
    eog, order = fix_up(v.pieces, attrs, special, v.name, v.pre, v.architecture,
                        table=dict(token_table(v)))
    assert list(v.attrs) == attrs.tolist()
    assert dict(v.special_ids) == special
    assert v.eog_ids == frozenset(eog)
    assert list(v.special_tokens) == order
    return v


@pytest.mark.parametrize("name", NAMES or [pytest.param("-", marks=pytest.mark.skip(reason=SKIP_REASON))])
def test_fixups_equal_those_over_the_whole_table(name: str) -> None:
    _check_against_whole_table(vocab_path(name))


def test_fixups_with_duplicates_and_special_ids(tmp_path: Path) -> None:
    rng = random.Random(5)
    texts = sorted(_FIXUP_TEXTS) + ["<unused0>", "<unused1>", "[unused3]", "hello", "▁<x>", "<"]
    tokens = [rng.choice(texts) if rng.random() < 0.5 else f"w{i}" for i in range(600)]
    types = [rng.choice([1, 1, 1, 3, 3, 4, 6]) for _ in tokens]
    extra = {"tokenizer.ggml.bos_token_id": tokens.index("hello") if "hello" in tokens else 1,
             "tokenizer.ggml.eos_token_id": 7, "tokenizer.ggml.unknown_token_id": 599}
    for arch, name in (("llama", "phi-3 mini"), ("nomic-bert-moe", "x"), ("llama", "modern-bert"), ("gpt2", "y")):
        p = write_vocab_gguf(tmp_path / f"{arch}-{name}.gguf", tokens, types=types, extra=extra, arch=arch,
                             name=name)
        _check_against_whole_table(p)


@pytest.mark.parametrize("name", ["nomic-bert-moe", "llama-spm", "bert-bge", "gpt-2", "gemma-4"])
def test_the_four_plugins_open_without_the_table(name: str) -> None:
    if not NAMES:
        pytest.skip(SKIP_REASON)
    m = open_model(vocab_path(name))
    t2i = m.vocab.token_to_id
    if not NATIVE:
        pytest.skip("the pure-Python build looks pieces up in the dict (frozen.DictIndex)")
    assert isinstance(t2i, TokenIndex) and not t2i.built()
    pieces = m.vocab.pieces
    assert isinstance(pieces, StringArray) and not pieces.decoded()
    ids = m.encode("Hello <mask> world, ünïcödé 日本 [MASK] </s>").token_ids
    m.prepare()
    assert not t2i.built() and not pieces.decoded()
    # lookups answered by the native index; the dict built when asked, and right
    last = {p: i for i, p in enumerate(pieces)}
    assert all(t2i[pieces[t]] == last[pieces[t]] for t in ids) and not t2i.built()
    assert dict(token_table(m.vocab)) == last and t2i.built()
    assert len(ids) > 3


def test_a_plugin_that_reads_the_dict_gets_it_built_at_open() -> None:
    if not NAMES:
        pytest.skip(SKIP_REASON)
    for name in ("gpt-2", "llama-spm"):
        v = vocab_from_gguf(read_gguf(vocab_path(name)), table_now=True)
        t2i = v.token_to_id
        assert isinstance(t2i, TokenIndex) and t2i.built()  # built at open, the fix-ups asked it
        assert isinstance(v.pieces, tuple)
        assert token_table(v) is token_table(v)
        last = {p: i for i, p in enumerate(v.pieces)}
        assert dict(token_table(v)) == last
        assert np.array_equal(np.asarray(v.attrs), v.arrays().attrs)
