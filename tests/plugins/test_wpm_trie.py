"""The longest-match cuts of the WPM plugin agree: the dict lookups it
starts with (llama.cpp's loop as written) and the trie walk it builds
after a few thousand new words (or in ``prepare``)."""

from __future__ import annotations

import random
from typing import Any, Callable

from tokenprism.core import Model, open_model

# words with pieces of many lengths, unknown characters, a lone "▁"
# candidate and non-Latin scripts (normalized words, as _greedy gets them)
WORDS = ["the", "unaffable", "tokenization", "hippopotamus", "x", "qqqqqqqqqqqq", "straße", "naive",
         "東", "привет", "ελληνικα", "123456789", "o'brien", "a1b2c3", "zzz", "☃", "🙂", "ab🙂",
         "antidisestablishmentarianism", "internationalization"]


def _cuts(tok: Any, word: str, trie: bool) -> list[int]:
    """id, start, end of each token in turn; empty when the cut fails."""
    if trie:
        tok.prepare()
        return list(tok._greedy(word))
    return list(tok._greedy_dict(word))


def test_trie_walk_equals_dict_lookups(ref_model: Callable[[str], Model]) -> None:
    model = ref_model("bert-bge")
    tok = model.tokenizer
    rng = random.Random(5)
    pieces = [p.lstrip("▁") for p in model.vocab.pieces[999:]]
    words = list(WORDS)
    # glued vocabulary pieces: cuts of several tokens at every length
    for _ in range(2000):
        words.append("".join(rng.choice(pieces) for _ in range(rng.randint(1, 4))))
    found_unknown = found_multi = False
    for w in words:
        if not w:
            continue
        a = _cuts(tok, w, False)
        b = _cuts(tok, w, True)
        assert a == b, w
        found_unknown |= not a
        found_multi |= len(a) > 3
    assert found_unknown and found_multi


def test_long_text_same_before_and_after_the_trie(ref_model: Callable[[str], Model]) -> None:
    path = ref_model("bert-bge").path
    rng = random.Random(3)
    fresh = open_model(path)
    pieces = [p.lstrip("▁") for p in fresh.vocab.pieces[999:]]
    text = " ".join("".join(rng.choice(pieces) for _ in range(rng.randint(1, 3))) for _ in range(6000))
    # a fresh model cuts its first words with dict lookups, then builds
    # the trie; a prepared one uses the trie from the first word
    prepared = open_model(path)
    prepared.prepare()
    assert fresh.encode(text).ids == prepared.encode(text).ids
    assert fresh.tokenizer._trie is not None  # type: ignore[attr-defined]  # (the switch happened)
    assert fresh.encode(text).starts == prepared.encode(text).starts
