"""What an open reads from the undecoded pieces' bytes (``core.undecoded``)
is what their decoded texts say: whether one is empty, the longest one's
length in code points, the id of each looked-up text (the last of
duplicates). Checked against the decoded strings on made-up arrays (invalid
UTF-8, multi-byte pieces longer in characters than the longest in bytes,
chunk edges) and on every reference vocabulary."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from tests.ggufmaker import string_array
from tests.refdata import SKIP_REASON, VOCAB_DIR, vocab_path
from tokenprism.core import undecoded
from tokenprism.core.gguf_file import read_gguf
from tokenprism.core.string_array import StringArray
from tokenprism.core.vocab import _FIXUP_TEXTS, KEY_TOKENS

NAMES = sorted(p.name[len("ggml-vocab-"):-len(".gguf")] for p in Path(VOCAB_DIR).glob("ggml-vocab-*.gguf")) \
    if VOCAB_DIR else []


def _decoded(items: list[bytes]) -> list[str]:
    return [b.decode("utf-8", "surrogateescape") for b in items]


def _last_ids(texts: list[str], wanted: list[str]) -> dict[str, int]:
    out: dict[str, int] = {}
    want = set(wanted)
    for i, t in enumerate(texts):
        if t in want:
            out[t] = i
    return out


def test_facts_and_ids_of_made_up_pieces() -> None:
    rng = random.Random(3)
    alphabet = [b"a", b"<", b"/", b"s", b">", b"\xff", "\u00e9".encode()]
    items = [b"".join(rng.choices(alphabet, k=rng.randint(1, 2))) for _ in range(70_000)]  # three chunks
    items[32_767] = "\U0001f600".encode() * 5  # the longest in bytes (20), at a chunk's end: 5 code points
    items[32_768] = "\u00e9".encode() * 7  # 14 bytes, 7 code points
    items[50_000] = "\u2581".encode() * 2 + b"b" * 6  # 12 bytes, 8 code points
    items[65_000] = b"\xff\xfe" + b"z" * 8  # invalid UTF-8, a code point per byte: 10, the longest
    items[66_000] = b"\xed\xa0\x80"  # a surrogate's encoding: three code points
    items[69_999] = b"</s>"
    items[40_000] = b"</s>"  # the later duplicate wins
    texts = _decoded(items)
    arr = string_array(items, lead=b"GGUF....")
    assert undecoded.facts(arr) == (False, max(map(len, texts))) == (False, 10)
    wanted = ["</s>", "<s>", "a", texts[123], texts[50_001], texts[66_000], "\u00e9", "nope", "", "\udcff",
              "\U0001f600" * 5]
    got = undecoded.ids_of(arr, wanted)
    assert got == _last_ids(texts, wanted) and got["</s>"] == 69_999 and got[texts[66_000]] == 66_000


def test_an_empty_piece_is_reported() -> None:
    assert undecoded.facts(string_array([b"ab", b"", b"c"])) == (True, 0)
    assert undecoded.facts(string_array([b"ab", b"c", b""])) == (True, 0)


def test_decoded_arrays_give_none_and_many_candidates_are_counted() -> None:
    arr = string_array([b"ab", b"c"])
    arr.totuple()
    assert undecoded.facts(arr) is None and undecoded.ids_of(arr, ["ab"]) is None
    # the longest in bytes is one character; every other piece could be longer
    many = [b"\xf0\x9f\x98\x80"] + [b"xy"] * 5000 + [b"\xe2\x96\x81" * 2 + b"\xc3"]
    assert undecoded.facts(string_array(many)) == (False, 3)


@pytest.mark.parametrize("name", NAMES or [pytest.param("-", marks=pytest.mark.skip(reason=SKIP_REASON))])
def test_reference_vocabularies(name: str) -> None:
    pieces = read_gguf(vocab_path(name)).metadata[KEY_TOKENS].value
    assert isinstance(pieces, StringArray)
    codes = pieces.codes()
    facts = undecoded.facts(pieces)
    assert facts is None or facts == (codes.has_empty(), 0 if codes.has_empty() else codes.max_length())
    rng = random.Random(name)
    wanted = sorted(_FIXUP_TEXTS) + [pieces[i] for i in rng.sample(range(len(pieces)), 50)]
    got = undecoded.ids_of(pieces, wanted)
    assert got == _last_ids(pieces.tolist(), wanted) and got


@pytest.mark.parametrize("kind", ["spm", "wpm", "bpe"])
def test_open_leaves_the_piece_index_to_the_first_text(kind: str) -> None:
    from tokenprism.core import open_model
    from tokenprism.core.library.resources import demo_models

    path = demo_models()[kind]
    lazy, ready = open_model(path), open_model(path)
    index = "_ids" if kind == "spm" else "_t2i"
    assert getattr(lazy.tokenizer, index) is None and getattr(ready.tokenizer, index) is None
    ready.prepare()
    assert getattr(ready.tokenizer, index) is not None
    text = "Hello wörld, tokenizers\u2581 and 😀 <s>"
    assert lazy.encode(text).ids == ready.encode(text).ids
    # compiled BPE encodes through its piece finder (over the pieces' bytes,
    # which then stand in for the code-point index)
    made = getattr(lazy.tokenizer, "_finder", None) if kind == "bpe" else None
    assert made is not None or getattr(lazy.tokenizer, index) is not None
