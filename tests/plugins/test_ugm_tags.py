"""The tagged best scores of ``UgmTokenizer.best_path``: the token that
reached a character is remembered in the low bits of its score, so ties
between equal sums are the hard case. Small vocabularies whose scores tie
often are checked against a plain Viterbi pass written here (llama.cpp's
order: positions ascending, pieces by length, strict ``>``; an unknown
token where no piece covers a single character), and against the untagged
pass the tokenizer keeps for long words."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import gguf
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.plugins.test_ugm import write_t5_gguf
from tokenprism.core import open_model

NORMAL = int(gguf.TokenType.NORMAL)
UNKNOWN = int(gguf.TokenType.UNKNOWN)
CONTROL = int(gguf.TokenType.CONTROL)

ALPHABET = "abc▁"


def reference_path(word: str, pieces: dict[str, int], scores: list[float], unk: int,
                   unk_score: float) -> list[int]:
    """Flat (token, start, end) triples of the best split of ``word``."""
    n = len(word)
    best = [-float("inf")] * (n + 1)
    best[0] = 0.0
    tok = [unk] * (n + 1)
    back = [0] * (n + 1)
    longest = max(map(len, pieces))
    for i in range(n):
        single = False
        for j in range(i + 1, min(n, i + longest) + 1):
            t = pieces.get(word[i:j])
            if t is None:
                continue
            single = single or j == i + 1
            s = best[i] + scores[t]
            if s > best[j]:
                best[j], tok[j], back[j] = s, t, i
        if not single:
            s = best[i] + unk_score
            if s > best[i + 1]:
                best[i + 1], tok[i + 1], back[i + 1] = s, unk, i
    out: list[int] = []
    pos = n
    while pos > 0:
        out[:0] = [tok[pos], back[pos], pos]
        pos = back[pos]
    return out


# scores that are small multiples of one step tie all the time; "bb" has
# a score too big for the int32 table; the last vocabulary has no piece
# for "c" (unknown tokens) and pieces up to 9 long
VOCABS: dict[str, list[tuple[str, float]]] = {
    "halves": [("a", -1.0), ("b", -1.0), ("c", -1.0), ("▁", -1.0), ("ab", -2.0), ("ba", -2.0), ("abc", -3.0),
               ("▁a", -1.5), ("bc", -2.0), ("ca", -1.0), ("aa", -2.0), ("cab", -2.5), ("▁ab", -2.5)],
    "ones": [("a", -1.0), ("b", -2.0), ("c", -1.0), ("▁", -1.0), ("ab", -3.0), ("abc", -4.0), ("bca", -4.0),
             ("▁ab", -3.0), ("cc", -2.0), ("ccc", -3.0), ("bb", 2.0 ** 31)],
    "sparse": [("a", -0.25), ("b", -0.5), ("▁", -0.25), ("ab", -0.75), ("aab", -1.0), ("abab", -1.5),
               ("ababababa", -2.25), ("▁a", -0.5), ("ba", -0.75)],
}


@pytest.fixture(scope="module")
def tag_models(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    d = tmp_path_factory.mktemp("ugm-tags")
    out = {}
    for name, pieces in VOCABS.items():
        triples = [("<pad>", 0.0, CONTROL), ("</s>", 0.0, CONTROL), ("<unk>", 0.0, UNKNOWN)]
        triples += [(p, s, NORMAL) for p, s in pieces]
        out[name] = open_model(write_t5_gguf(Path(d) / f"{name}.gguf", triples))
    return out


@pytest.mark.parametrize("name", list(VOCABS))
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(word=st.text(ALPHABET, min_size=1, max_size=40))
def test_tagged_path_is_the_plain_viterbi(tag_models: Any, name: str, word: str) -> None:
    tok = tag_models[name].tokenizer
    assert 0 < len(word) <= tok.tag_chars
    pieces = {p: 3 + k for k, (p, _) in enumerate(VOCABS[name])}
    scores = [0.0, 0.0, 0.0] + [s for _, s in VOCABS[name]]
    expected = reference_path(word, pieces, scores, tok.unk_id, tok.unk_score)
    assert list(tok.best_path(word)) == expected
    assert list(tok._best_path_lists(word)) == expected


def test_a_score_too_big_for_the_table_is_read_from_the_list(tag_models: Any) -> None:
    tok = tag_models["ones"].tokenizer
    bb = 3 + [p for p, _ in VOCABS["ones"]].index("bb")
    assert tok.score_units[4 * bb:4 * bb + 4] == (-2 ** 31).to_bytes(4, "little", signed=True)
    # that score makes "bb" win wherever it fits
    assert list(tok.best_path("▁abb")) == [6, 0, 1, 3, 1, 2, bb, 2, 4]


def test_ties_go_to_the_earlier_start(tag_models: Any) -> None:
    # "abc" = a|bc = ab|c = abc = -3 in "halves": llama.cpp keeps the
    # first candidate that reached the end, the one starting at 0
    tok = tag_models["halves"].tokenizer
    assert list(tok.best_path("abc")) == [9, 0, 3]
    # "ab" = a|b = ab = -2: "ab" (from 0) came after "a" reached 1, but
    # reaches 2 before "b" (from 1) does
    assert list(tok.best_path("ab")) == [7, 0, 2]


def test_long_words_take_the_untagged_pass(tag_models: Any) -> None:
    tok = tag_models["sparse"].tokenizer
    word = "abab▁ababababa"
    expected = reference_path(word, {p: 3 + k for k, (p, _) in enumerate(VOCABS["sparse"])},
                              [0.0, 0.0, 0.0] + [s for _, s in VOCABS["sparse"]], tok.unk_id, tok.unk_score)
    saved = tok.tag_chars
    tok.tag_chars = 5  # as if the scores allowed no more
    try:
        assert list(tok.best_path(word)) == expected
    finally:
        tok.tag_chars = saved


# ---- cuts between ASCII characters no piece joins (split_path) ---------------


def _pairs(pieces: list[str]) -> set[tuple[str, str]]:
    return {(p[k], p[k + 1]) for p in pieces for k in range(len(p) - 1)}


@pytest.mark.parametrize("name", list(VOCABS))
def test_the_trie_knows_which_ascii_pairs_pieces_join(tag_models: Any, name: str) -> None:
    trie = tag_models[name].tokenizer.trie
    held = _pairs([p for p, _ in VOCABS[name]])
    for a in "abcd▁":
        for b in "abcd▁":
            assert trie.joined(ord(a), ord(b)) == ((a, b) in held or a == "▁" or b == "▁"), (a, b)


@pytest.mark.parametrize("name", list(VOCABS))
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(word=st.text(ALPHABET + "d", min_size=1, max_size=40))
def test_the_path_put_together_from_parts_is_the_plain_viterbi(tag_models: Any, name: str, word: str) -> None:
    tok = tag_models[name].tokenizer
    pieces = {p: 3 + k for k, (p, _) in enumerate(VOCABS[name])}
    scores = [0.0, 0.0, 0.0] + [s for _, s in VOCABS[name]]
    expected = reference_path(word, pieces, scores, tok.unk_id, tok.unk_score)
    tok.clear_caches()
    assert list(tok.split_path(word)) == expected
    # and again with every part cached (parts of this word and others)
    assert list(tok.split_path(word)) == expected
    assert list(tok.word_path(word)) == expected


def test_parts_are_cached_as_words(tag_models: Any) -> None:
    tok = tag_models["halves"].tokenizer
    tok.clear_caches()
    # "c" never precedes "b" in a piece, nor "b" another "b": cuts there
    assert not tok.trie.joined(ord("c"), ord("b")) and not tok.trie.joined(ord("b"), ord("b"))
    path = list(tok.split_path("▁abcbb"))
    assert set(tok._paths) == {"▁abc", "b"}
    assert path == list(tok.best_path("▁abcbb"))


def test_split_paths_on_a_real_vocabulary(ref_model: Any) -> None:
    """Words of source code and prose, cut between ASCII pairs no piece of
    the 250k vocabulary joins, give the same path as one pass."""
    tok = ref_model("nomic-bert-moe").tokenizer
    words = ["▁self.assertEqual(x,", "▁foo_bar[i]->baz();", "▁{\"key\":", "▁0x7fff_ffff);", "▁a+b*c/d",
             "▁https://example.com/a?b=c&d=e", "▁((()))", "▁Größe(ß)", "▁日本語(テスト)", "▁--verbose=3;"]
    tok.clear_caches()
    cut = 0
    for w in words:
        assert list(tok.split_path(w)) == list(tok.best_path(w)), w
        cut += sum(not tok.trie.joined(ord(a), ord(b)) for a, b in zip(w, w[1:]))
    assert cut > 10  # (the test is only worth something when words are cut)
