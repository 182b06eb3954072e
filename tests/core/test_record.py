"""The kernel's frozen value types (core.record): what ``@dataclass(frozen=True)``
gave them, kept without the decorator's start-up cost."""

from __future__ import annotations

import copy
import pickle
from pathlib import Path

import pytest

from tokenprism.core import open_model
from tokenprism.core.build_info import build_kind
from tokenprism.core.encoding import Token
from tokenprism.core.gguf_file import GGUFFile, MetadataValue, TensorInfo
from tokenprism.core.plugin_types import TokenizerSpec
from tokenprism.core.record import replace
from tokenprism.core.tokenizer import FragmentResult, TokenizerConfig

WPM = Path(__file__).resolve().parents[2] / "resources" / "demo-wpm.gguf"


def test_repr_and_defaults_read_as_a_dataclass_s() -> None:
    assert repr(FragmentResult([1, 2], [0, 3], [3, 5])) == "FragmentResult(ids=[1, 2], starts=[0, 3], ends=[3, 5])"
    assert repr(TensorInfo("w", (2, 3), 1, 64)) == "TensorInfo(name='w', shape=(2, 3), ggml_type=1, offset=64)"
    assert repr(MetadataValue(8, "x")) == "MetadataValue(type=8, value='x', elem_type=-1, offset=0)"
    config = TokenizerConfig("WPM")
    assert config.special_ids == {} and config.special_prefix == () and config.clean_spaces is False
    assert TokenizerConfig("WPM").special_ids is not config.special_ids  # a new dict each time, as default_factory


def test_equality_and_hash_follow_the_fields_and_the_class() -> None:
    a, b = Token(0, 5, "a", 0.0, 1, 2, 0, 1, 0, 1, -1), Token(0, 5, "a", 0.0, 1, 2, 0, 1, 0, 1, -1)
    assert a == b and hash(a) == hash(b) and a is not b
    assert a != Token(0, 5, "a", 0.0, 1, 2, 0, 1, 0, 1, -1, rank=3)
    assert a != (0, 5, "a") and TensorInfo("w", (), 0, 0) != MetadataValue(0, "w")
    g = GGUFFile("p", 3, 10, {})
    assert g == GGUFFile("p", 3, 10, {}, (), 0) and g != GGUFFile("p", 3, 11, {})


def test_no_field_can_be_assigned_or_deleted() -> None:
    model = open_model(WPM)
    enc = model.encode("hello")
    for obj, name in ((enc, "text"), (enc.tokens[0], "id"), (model.tokenizer.config, "kind"),
                      (TokenizerSpec("x", ("y",), lambda v: model.tokenizer), "name")):
        with pytest.raises(AttributeError):
            setattr(obj, name, None)
        with pytest.raises(AttributeError):
            delattr(obj, name)
    if build_kind() == "compiled":  # the compiled types' Final attributes are read-only there
        for obj, name in ((model.vocab, "model"), (model.vocab.metadata["tokenizer.ggml.model"], "value")):
            with pytest.raises(AttributeError):
                setattr(obj, name, None)


def test_replace_copies_with_changes_as_dataclasses_replace() -> None:
    model = open_model(WPM)
    vocab = model.vocab
    other = replace(vocab, name="renamed", flags={"add_bos": False})
    assert other.name == "renamed" and other.flags == {"add_bos": False} and vocab.name != "renamed"
    assert other.pieces is vocab.pieces and other.metadata is vocab.metadata and other.columns is vocab.columns
    assert replace(vocab) == vocab
    token = model.encode("hello").tokens[0]
    assert replace(token, rank=7) == Token(*[getattr(token, n) for n in Token._FIELDS[:-2]], rank=7,
                                           word=token.word)
    with pytest.raises(TypeError):
        replace(token, no_such_field=1)


def test_pickle_and_copy_keep_the_fields() -> None:
    model = open_model(WPM)
    token = model.encode("hello").tokens[0]
    for obj in (token, model.tokenizer.config, FragmentResult([1], [0], [1])):
        assert pickle.loads(pickle.dumps(obj)) == obj
        assert copy.copy(obj) == obj and copy.deepcopy(obj) == obj
