"""The WPM plugin's remembered chunks (the core's ``TextCache``): found by a
hash of the text's code points where they lie, so a wrong hit would give
another chunk's tokens. A first encode of text with many chunks, repeated,
distinct and too long to remember, must give what each chunk gives alone
on a tokenizer that remembers nothing."""

from __future__ import annotations

import random
from typing import Callable

from librt.vecs import vec
from mypy_extensions import i64

from tokenprism.core import Model
from tokenprism.core.hash_slots import TextCache, text_hash
from tokenprism.plugins.wpm.chunks import Chunk
from tokenprism.plugins.wpm.wpm import WpmTokenizer


def _chunk(k: int) -> Chunk:
    return Chunk(vec[i64]([k, 0, 1]), 1)


def test_table_finds_each_text_where_it_lies_and_grows() -> None:
    table: TextCache[Chunk] = TextCache(100_000)
    texts = [f"w{k}é" if k % 3 else f"x{k}" for k in range(10_000)]  # past several doublings
    for k, t in enumerate(texts):
        table.add(t, _chunk(k))
    assert len(table) == len(texts)
    line = "  ".join(texts)
    at = 0
    for k, t in enumerate(texts):
        found = table.find(line, at, at + len(t), text_hash(line, at, at + len(t)))
        assert found is not None and found.cols[0] == k, t
        at += len(t) + 2
    assert table.get("w1") is None and table.get("w1éé") is None and table.get("") is None
    # same length and hash asked for another text: compared, not trusted
    assert table.find("x0", 0, 2, text_hash("x3", 0, 2)) is None


def test_table_starts_again_empty_at_its_limit() -> None:
    table: TextCache[Chunk] = TextCache(3)
    for k, t in enumerate(["a", "b", "c"]):
        table.add(t, _chunk(k))
    assert len(table) == 3
    table.add("d", _chunk(3))
    assert len(table) == 1
    assert table.get("a") is None
    found = table.get("d")
    assert found is not None and found.cols[0] == 3


def _alone(tok: WpmTokenizer, text: str) -> list[int]:
    """Ids of ``text`` chunk by chunk, each on an emptied cache."""
    ids: list[int] = []
    for c in text.split(" "):
        tok.clear_cache()
        ids.extend(tok.encode_columns(c, False)[0])
    return ids


def test_first_encode_equals_each_chunk_alone(ref_model: Callable[[str], Model]) -> None:
    model = ref_model("bert-bge")
    rng = random.Random(31)
    pieces = [p.lstrip("▁") for p in model.vocab.pieces[1000:]]
    extra = ["", "", "day,", "f(x)", "naïve", "Ünïcode", "東京", "привет!", "x" * 60, "ab" * 30 + "é",
             "O'Brien", "\t\n", "🙂🙂"]
    words = ["".join(rng.choice(pieces) for _ in range(rng.randint(1, 3))) for _ in range(1500)] + extra
    # repeats, new chunks and chunks too long to remember, in one text
    text = " ".join(rng.choice(words) for _ in range(6000)) + "  "
    fresh = WpmTokenizer(model.vocab)
    ids, starts, ends = fresh.encode_columns(text, False)
    assert list(ids) == _alone(WpmTokenizer(model.vocab), text)
    # and the same again from what the first encode remembered
    assert fresh.encode_columns(text, False) == (ids, starts, ends)
