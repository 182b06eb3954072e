"""A parsed file and its vocab are shared by every view and worker thread:
their lookup tables refuse changes."""

from __future__ import annotations

import copy
import pickle
from pathlib import Path
from typing import Any, Callable

import pytest

from tokenprism.core import open_model
from tokenprism.core.frozen import FrozenDict
from tokenprism.core.vocab import token_table
from tokenprism.core.gguf_file import read_gguf

MUTATIONS: list[Callable[[Any], object]] = [
    lambda m: m.__setitem__("new", 1),
    lambda m: m.__delitem__(next(iter(m))),
    lambda m: m.update({"new": 1}),
    lambda m: m.pop(next(iter(m))),
    lambda m: m.popitem(),
    lambda m: m.setdefault("new", 1),
    lambda m: m.clear(),
]


@pytest.mark.parametrize("mutation", MUTATIONS)
@pytest.mark.parametrize("table", ["token_to_id", "special_ids", "flags", "metadata", "gguf.metadata"])
def test_tables_refuse_changes(table: str, mutation: Callable[[Any], object], char_model_path: Path) -> None:
    model = open_model(char_model_path)
    obj = model.gguf.metadata if table == "gguf.metadata" else getattr(model.vocab, table)
    assert len(obj) > 0, table
    before = dict(obj)
    with pytest.raises(TypeError):
        mutation(obj)
    assert dict(obj) == before


def test_in_place_or_refused(char_model_path: Path) -> None:
    t2i = open_model(char_model_path).vocab.token_to_id
    with pytest.raises(TypeError):
        t2i |= {"zz": 1}  # type: ignore[operator]
    assert "zz" not in t2i


def test_fresh_read_is_read_only_and_arrays_too(char_model_path: Path) -> None:
    gf = read_gguf(char_model_path)
    with pytest.raises(TypeError):
        gf.metadata["general.name"] = gf.metadata["tokenizer.ggml.model"]  # type: ignore[index]
    types = gf.metadata["tokenizer.ggml.token_type"].value
    assert isinstance(types, memoryview) and types.readonly
    with pytest.raises(TypeError):  # (a read-only typed memoryview: opening a file imports no numpy)
        types[0] = 99


def test_still_usable_as_dicts(char_model_path: Path) -> None:
    v = open_model(char_model_path).vocab
    t2i = v.token_to_id
    assert t2i.get("a") == v.pieces.index("a")
    # the plugins' hot loops take the dict itself, made once
    table = token_table(v)
    assert isinstance(table, FrozenDict) and table is token_table(v) and table == t2i
    clone = pickle.loads(pickle.dumps(t2i))
    assert clone == t2i and isinstance(clone, FrozenDict)
    deep = copy.deepcopy(v.special_ids)
    assert deep == v.special_ids and isinstance(deep, FrozenDict)
    merged = {**t2i, "zz": -1}  # building a new dict from one is fine
    assert merged["zz"] == -1 and "zz" not in t2i


@pytest.mark.parametrize("name", ["llama-spm", "gpt-2", "bert-bge", "nomic-bert-moe"])
def test_vocab_arrays_are_the_tuples_and_read_only(name: str, ref_model: Callable[[str], Any]) -> None:
    import numpy as np

    vocab = ref_model(name).vocab
    cols = vocab.arrays()
    assert cols.scores.dtype == np.float32 and cols.scores.tolist() == [float(np.float32(s)) for s in vocab.scores]
    assert cols.types.tolist() == list(vocab.types)
    assert cols.attrs.tolist() == list(vocab.attrs)
    for a in (cols.scores, cols.types, cols.attrs):
        with pytest.raises(ValueError):
            a[0] = 1


def test_attributes_of_every_stored_token_type(tmp_path: Path) -> None:
    """Each GGUF token type gives llama.cpp's attribute bit; a type outside
    0..6 (negative, or past BYTE) gives none, as an unknown type does in
    llama.cpp."""
    from tests.ggufmaker import write_vocab_gguf
    from tokenprism.core.gguf_file import read_gguf
    from tokenprism.core.vocab import Attr, vocab_from_gguf

    types = [-5, 0, 1, 2, 3, 4, 5, 6, 7, 99, -2**31]
    tokens = [f"t{i}" for i in range(len(types))]
    p = write_vocab_gguf(tmp_path / "types.gguf", tokens, types=types)
    v = vocab_from_gguf(read_gguf(p))
    want = [0, 0, Attr.NORMAL, Attr.UNKNOWN, Attr.CONTROL, Attr.USER_DEFINED, Attr.UNUSED, Attr.BYTE, 0, 0, 0]
    assert list(v.attrs) == want
    assert v.arrays().attrs.tolist() == want
    assert list(v.types) == types
