"""VocabIndex against plain Python over the same vocabulary: filters,
sorts, id ranges, regex errors, merge trees and score ranks."""

from __future__ import annotations

import numpy as np
import pytest
import regex

from tokenprism.core import Attr, Model, open_model
from tokenprism.core.library.resources import demo_models
from tokenprism.core.library.vocab_query import (COLUMNS, KIND_NAMES, Query, QueryCancelled, QueryError, VocabIndex,
                                         kind_code, parse_id_ranges, relax_assertions)

PATTERNS = ("the", "^the", "ing$", "e", "[0-9]+", r"\d{3}", "a.*b", r"\bthe\b", r"\s", r"(?<=a)b",
            "^$", "", "x*", "é", r"(\w)\1", "<.*>", "(?x) t h e  # verbose", r"(?<!a)b", r"\Athe", r"the\Z",
            r"(?=.*e)t", r"(?<![\w)])in", r"a(?!b)", r"(?<=(a))b", r"(?=a)?b", r"(?<=x|[)(])y", r"(?r)th")
SUBSTRINGS = (" the", "THE", "▁the", "é", "<", "\n", "", "zzzzqqq")


def ref_kind(attr: int) -> str:
    for bit, name in ((Attr.UNKNOWN, "unknown"), (Attr.CONTROL, "control"), (Attr.USER_DEFINED, "user-defined"),
                      (Attr.BYTE, "byte"), (Attr.UNUSED, "unused"), (Attr.NORMAL, "normal")):
        if attr & bit:
            return name
    return "undefined"


def haystack(model: Model) -> list[str]:
    return [model.display_piece(i).replace("▁", " ") for i in range(len(model))]


def check_index(model: Model, index: VocabIndex, patterns: tuple[str, ...] = PATTERNS) -> None:
    hay = haystack(model)
    n = len(hay)
    assert index.size == n
    for q in SUBSTRINGS:
        needle = q.replace("▁", " ")
        want = [i for i in range(n) if needle in hay[i]]
        assert index.run(Query(q, case_sensitive=True)).tolist() == want, q
        want = [i for i in range(n) if needle.lower() in hay[i].lower()]
        assert index.run(Query(q)).tolist() == want, q
    for p in patterns:
        for cs in (True, False):
            rx = regex.compile(p.replace("▁", " "), 0 if cs else regex.IGNORECASE)
            want = [i for i in range(n) if rx.search(hay[i])]
            assert index.run(Query(p, mode="regex", case_sensitive=cs)).tolist() == want, (p, cs)
    kinds = [ref_kind(a) for a in model.vocab.attrs]
    for name in set(kinds):
        want = [i for i in range(n) if kinds[i] == name and "e" in hay[i].lower()]
        assert index.run(Query("e", kind=kind_code(name))).tolist() == want
    # sorts: stable, ties in id order, over a filtered subset
    subset = index.run(Query("a"))
    keys = {"id": lambda i: i, "piece": lambda i: model.display_piece(i), "score": lambda i: model.vocab.scores[i],
            "kind": lambda i: kinds[i], "bytes": lambda i: len(model.token_bytes(i))}
    for col in COLUMNS:
        key = keys[col]
        asc = sorted(subset.tolist(), key=key)
        assert index.run(Query("a", sort=col)).tolist() == asc, col
        if col == "id":
            desc = asc[::-1]
        else:
            # descending, equal keys still in id order
            groups: dict[object, list[int]] = {}
            for i in asc:
                groups.setdefault(key(i), []).append(i)
            desc = [i for k in sorted(groups, reverse=True) for i in groups[k]]
        assert index.run(Query("a", sort=col, descending=True)).tolist() == desc, col


@pytest.mark.parametrize("kind", ["spm", "bpe", "ugm", "wpm"])
def test_demo_models_match_plain_python(kind: str) -> None:
    model = open_model(demo_models()[kind])
    check_index(model, VocabIndex(model))


def test_gemma4_matches_plain_python(ref_model) -> None:  # type: ignore[no-untyped-def]
    model = ref_model("gemma-4")
    index = VocabIndex(model)
    assert index.size == 262_144
    check_index(model, index, ("the", "^▁the", "ing$", "[0-9]{3}", r"\s", "<.*>", "é", r"(?<!▁)the\Z"))
    assert index.run(Query("")).tolist() == list(range(262_144))


def test_kind_codes_follow_attribute_priority() -> None:
    model = open_model(demo_models()["spm"])
    index = VocabIndex(model)
    assert [KIND_NAMES[k] for k in index.kinds] == [ref_kind(a) for a in model.vocab.attrs]
    assert list(KIND_NAMES) == sorted(KIND_NAMES)  # sorting by code sorts by name


def test_relaxed_patterns() -> None:
    assert relax_assertions(r"(?<=a)b\Z") == "b"
    assert relax_assertions(r"[(?=]x(?!y)\\A") == r"[(?=]x\\A"
    assert relax_assertions(r"(?<=(a))b") is None  # a group inside: backreferences would shift
    assert relax_assertions(r"(?r)ab") is None


def test_id_ranges() -> None:
    assert parse_id_ranges("5", 100).tolist() == [5]
    assert parse_id_ranges("100-200", 1000).tolist() == list(range(100, 201))
    assert parse_id_ranges(" 1, 5-7  9 ", 100).tolist() == [1, 5, 6, 7, 9]
    assert parse_id_ranges("95-", 100).tolist() == [95, 96, 97, 98, 99]
    assert parse_id_ranges("3..4, 4–5", 100).tolist() == [3, 4, 5]
    assert parse_id_ranges("", 4).tolist() == [0, 1, 2, 3]
    assert parse_id_ranges("98-500, 1000", 100).tolist() == [98, 99]  # past the end: left out
    for bad in ("abc", "5-3", "1-2-3", "-5", "0x10", "1.5", "5,,x"):
        with pytest.raises(QueryError):
            parse_id_ranges(bad, 100)


def test_id_range_query_with_kind_and_sort() -> None:
    model = open_model(demo_models()["spm"])
    index = VocabIndex(model)
    got = index.run(Query("0-40", mode="ids", kind=kind_code("byte"), sort="id", descending=True))
    want = [i for i in range(40, -1, -1) if ref_kind(model.vocab.attrs[i]) == "byte"]
    assert got.tolist() == want and want


def test_regex_errors_timeouts_and_cancel() -> None:
    index = VocabIndex(open_model(demo_models()["bpe"]))
    for bad in ("(", "[a-", "a{2,1}", "\\", "(?<name"):
        with pytest.raises(QueryError, match="invalid regular expression"):
            index.run(Query(bad, mode="regex"))
    with pytest.raises(QueryError, match="took longer"):
        index.filter_regex("(a|aa)+$", timeout=1e-9)
    with pytest.raises(QueryError, match="took longer"):
        index.filter_regex("(?<=a)(b|bb)+$", timeout=1e-9)  # the one-piece-at-a-time path
    with pytest.raises(QueryCancelled):
        index.run(Query("(?<=a)b", mode="regex"), cancelled=lambda: True)
    with pytest.raises(QueryError):
        index.run(Query("x", mode="nonsense"))


def check_merge_trees(model: Model, pieces: list[str]) -> None:
    index = VocabIndex(model)
    ranks = index.merge_ranks()
    vocab = model.vocab
    for piece in pieces:
        tid = vocab.token_to_id[piece]
        nodes = index.merge_tree(tid)
        assert len(nodes) == 1 and nodes[0].text == piece, piece
        assert "".join(nodes[0].leaves()) == piece
        # the leaves' bytes make the token's bytes
        assert b"".join(model.token_bytes(vocab.token_to_id[c]) for c in nodes[0].leaves()) == \
            model.token_bytes(tid)
        stack = [nodes[0]]
        while stack:
            node = stack.pop()
            if node.left is None or node.right is None:
                continue
            assert node.text == node.left.text + node.right.text
            assert ranks[(node.left.text, node.right.text)] == node.rank
            assert vocab.merges[node.rank] == f"{node.left.text} {node.right.text}"
            assert node.text in vocab.token_to_id
            stack += [node.left, node.right]


def test_merge_trees_byte_level(ref_model) -> None:  # type: ignore[no-untyped-def]
    check_merge_trees(ref_model("llama-bpe"), ["Ġthe", "Ġtokenizer", "ing", "ĠHello", "Ċ"])
    check_merge_trees(ref_model("gpt-2"), ["Ġthe", "Ġworld", "ation"])


def test_merge_trees_gemma4(ref_model) -> None:  # type: ignore[no-untyped-def]
    model = ref_model("gemma-4")
    check_merge_trees(model, ["▁the", "▁about", "ing"])
    index = VocabIndex(model)
    bos = model.vocab.special_ids["bos"]
    nodes = index.merge_tree(bos)  # a control token is matched whole, never merged
    assert len(nodes) > 1 and "".join(n.text for n in nodes) == model.vocab.pieces[bos]


def test_no_merges_no_tree() -> None:
    index = VocabIndex(open_model(demo_models()["spm"]))
    assert index.merge_tree(10) == []


def test_score_ranks() -> None:
    model = open_model(demo_models()["spm"])
    index = VocabIndex(model)
    scores = model.vocab.scores
    for tid in range(0, len(scores), 37):
        assert index.score_rank(tid) == 1 + sum(1 for s in scores if s > scores[tid])
    assert index.scores_differ
    best = int(np.argmax(np.asarray(scores)))
    assert index.score_rank(best) == 1
