"""The load-time fix-ups find the few texts they look up with one scan
(``_last_ids``) instead of the whole piece -> id table, which is built
only when a tokenizer asks for it. Checked: the same fix-ups over the
whole table give the same attributes, special ids, end-of-generation ids
and special-token order, on every reference vocabulary and on made-up
ones full of duplicates."""

from __future__ import annotations

import random
from pathlib import Path

import numpy as np
import pytest

from tests.ggufmaker import write_vocab_gguf
from tests.refdata import SKIP_REASON, VOCAB_DIR, vocab_path
from tokenprism.core import open_model
from tokenprism.core.frozen import TokenIndex
from tokenprism.core.gguf_file import read_gguf
from tokenprism.core.vocab import (
    _FIXUP_TEXTS, Vocab, _last_ids, attrs_of_types, fix_up, special_ids_of, token_table, vocab_from_gguf,
)

NAMES = sorted(p.name[len("ggml-vocab-"):-len(".gguf")] for p in Path(VOCAB_DIR).glob("ggml-vocab-*.gguf")) \
    if VOCAB_DIR else []


def _check_against_whole_table(path: str | Path) -> Vocab:
    gf = read_gguf(path)
    v = vocab_from_gguf(gf, table_now=False)
    assert not v.token_to_id.built()  # type: ignore[attr-defined]
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


def test_last_ids_equal_a_dict_in_id_order() -> None:
    rng = random.Random(11)
    alphabet = ["<", "|", "e", "n", "d", ">", "▁", "[", "]", "é", "\U0001f642", ""]
    pieces = tuple("".join(rng.choice(alphabet) for _ in range(rng.randrange(0, 5))) for _ in range(5000))
    wanted = set(rng.sample(sorted(set(pieces)), 40)) | {"<|end|>", "never a piece", "<", "▁"}
    whole: dict[str, int] = {}
    for i, p in enumerate(pieces):
        whole[p] = i
    assert _last_ids(pieces, wanted) == {t: whole[t] for t in wanted if t in whole and t}


def test_a_unigram_open_never_builds_the_table(tmp_path: Path) -> None:
    if not NAMES:
        pytest.skip(SKIP_REASON)
    m = open_model(vocab_path("nomic-bert-moe"))
    t2i = m.vocab.token_to_id
    assert isinstance(t2i, TokenIndex) and not t2i.built()
    ids = m.encode("Hello <mask> world, ünïcödé 日本").token_ids
    assert not t2i.built()
    # built when asked, and right
    assert t2i["<mask>"] == m.vocab.pieces.index("<mask>") and t2i.built()
    assert len(ids) > 3


def test_other_plugins_build_it_once_at_open() -> None:
    if not NAMES:
        pytest.skip(SKIP_REASON)
    for name in ("llama-spm", "gpt-2", "bert-bge"):
        v = open_model(vocab_path(name)).vocab
        t2i = v.token_to_id
        assert isinstance(t2i, TokenIndex) and t2i.built()  # built at open, the fix-ups asked it
        assert token_table(v) is token_table(v)
        last = {p: i for i, p in enumerate(v.pieces)}
        assert dict(token_table(v)) == last
        assert np.array_equal(np.asarray(v.attrs), v.arrays().attrs)
