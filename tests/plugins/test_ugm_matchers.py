"""UGM's matchers read the vocabulary's columns from their arrays' bytes
(``column_bytes``); checked here against the same facts taken from the
columns as plain Python numbers, which is how they were made before."""

from __future__ import annotations

import math
import struct
from pathlib import Path

import pytest

from tokenprism.core import open_model
from tokenprism.core.plugin_api import Attr, TokenType, column_bytes
from tokenprism.core.vocab import Vocab
from tokenprism.plugins.ugm.ugm import _matchers

from tests.refdata import vocab_path

RESOURCES = Path(__file__).resolve().parents[2] / "resources"


def _expected(vocab: Vocab) -> tuple[list[int], list[str], float, list[float]]:
    types = list(vocab.types)
    attrs = list(vocab.attrs)
    scores = [float(x) for x in vocab.scores]
    keep = {int(TokenType.NORMAL), int(TokenType.USER_DEFINED), int(TokenType.UNUSED)}
    matchable = [i for i, t in enumerate(types) if t in keep]
    ud = [vocab.pieces[i] for i, t in enumerate(types) if t == int(TokenType.USER_DEFINED)]
    normal = [scores[i] for i, t in enumerate(types) if t == int(TokenType.NORMAL)]
    low = min(normal) if normal else 3.4028234663852886e38
    tok = [0.0 if attrs[i] & Attr.USER_DEFINED else scores[i] for i in range(len(types))]
    return matchable, ud, low, tok


def _check(vocab: Vocab) -> None:
    matchable, ud, low, tok_score = _matchers(vocab)
    want = _expected(vocab)
    assert list(matchable) == want[0]
    assert ud == want[1]
    assert low == want[2] or (math.isnan(low) and math.isnan(want[2]))
    assert list(struct.unpack(f"<{len(tok_score) // 8}d", tok_score)) == want[3]


def test_matchers_of_the_demo_ugm_model() -> None:
    _check(open_model(RESOURCES / "demo-ugm.gguf").vocab)


def test_matchers_of_nomic_bert_moe() -> None:
    path = vocab_path("nomic-bert-moe")
    vocab = open_model(path).vocab
    # the file's own float32 scores and int32 types, read as bytes
    scores, types = column_bytes(vocab.scores), column_bytes(vocab.types)
    assert scores is not None and scores[0] == "f" and len(scores[1]) == 4 * len(vocab)
    assert types is not None and types[0] == "i"
    _check(vocab)


def test_column_bytes_of_values_not_in_an_array() -> None:
    assert column_bytes((1.0, 2.0)) is None
    assert column_bytes([1, 2]) is None


def test_matchers_of_columns_given_as_tuples() -> None:
    """A vocabulary whose columns are tuples (as tests and converters may
    make them) takes the generic path and gives the same answers."""
    from tokenprism.core.record import replace

    vocab = open_model(RESOURCES / "demo-ugm.gguf").vocab
    plain = replace(vocab, scores=tuple(vocab.scores), types=tuple(vocab.types), attrs=tuple(vocab.attrs))
    assert column_bytes(plain.scores) is None
    assert _matchers(plain)[3] == _matchers(vocab)[3]
    _check(plain)
