"""find-tokens against a brute-force scan of the whole vocabulary, written
here: every token's bytes (``Model.token_bytes``, llama.cpp's
token_to_piece) tested with ``startswith`` / ``endswith`` / ``in`` on the
string's UTF-8, literally, on SPM, byte-level BPE, WordPiece and Unigram
vocabularies; the word-start pieces listed apart; the CLI's json and text;
bad strings."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tokenprism.app.cli import main
from tokenprism.core import Attr, Model, open_model
from tokenprism.core.library.find_tokens import MAX_BYTES, FindError, TokenBytes, by_kind, find_tokens
from tokenprism.core.library.resources import demo_models
from tokenprism.core.library.vocab_query import KIND_NAMES

# ASCII, a byte-fallback letter, CJK, emoji, spaces, a special token's text, a whole common word,
# and strings whose start is a word-start piece's text without its space
STRINGS = ("Hello world", "naïve", " the", "日本語", "a🙂b", "  x\n", "</s>", "hello", "ing", "é", "é x")


def brute_force(model: Model, string: str, word_start_space: bool) -> dict[str, set[int]]:
    """Every token whose bytes occur in ``string``'s UTF-8, literally, by a
    scan of all of them; and apart, when ``word_start_space`` (SPM / UGM
    with a space prefix, WPM), the NORMAL tokens whose bytes are a space
    and then a prefix of the string (a word-start ``▁`` the text lacks)."""
    data = string.encode("utf-8")
    out: dict[str, set[int]] = {"prefix": set(), "suffix": set(), "substring": set(), "word_start": set()}
    for i in range(len(model)):
        b = model.token_bytes(i)
        if not b:
            continue
        if data.startswith(b):
            out["prefix"].add(i)
        if data.endswith(b):
            out["suffix"].add(i)
        if b in data:
            out["substring"].add(i)
        if (word_start_space and len(b) > 1 and b[:1] == b" " and model.vocab.attrs[i] & Attr.NORMAL
                and data.startswith(b[1:])):
            out["word_start"].add(i)
    return out


def check(model: Model, word_start_space: bool) -> None:
    table = TokenBytes(model)
    for s in STRINGS:
        want = brute_force(model, s, word_start_space)
        got = find_tokens(table, s)
        for rel in ("prefix", "suffix", "substring"):
            assert set(got.relation(rel)) == want[rel], (model.name, s, rel)
            assert list(got.relation(rel)) == sorted(want[rel])
        assert list(got.word_start) == sorted(want["word_start"]), (model.name, s)
        assert list(got.tokenization) == model.encode(s).ids
        # a token equal to the whole string is in all three
        for i in table.ids_of(s.encode()):
            assert i in got.prefix and i in got.suffix and i in got.substring


@pytest.mark.parametrize("name,word_start", [("llama-spm", True), ("gpt-2", False), ("bert-bge", True)])
def test_matches_a_scan_of_the_vocabulary(ref_model: Any, name: str, word_start: bool) -> None:
    check(ref_model(name), word_start)


def test_matches_a_scan_of_a_unigram_vocabulary() -> None:
    # the bundled Unigram demo (nomic-bert-moe's 250k pieces take seconds to open in pure Python)
    model = open_model(str(demo_models()["ugm"]))
    assert model.kind == "UGM" and model.config.add_space_prefix
    check(model, True)


def test_known_answers(ref_model: Any) -> None:
    spm = ref_model("llama-spm")
    found = find_tokens(TokenBytes(spm), "naïve")
    # ï is c3 af: its two byte-fallback tokens are inside, and the word's first piece starts it
    assert {spm.vocab.token_to_id["<0xC3>"], spm.vocab.token_to_id["<0xAF>"]} <= set(found.substring)
    # ▁na writes " na": not literally a prefix of "naïve", but the piece the tokenizer starts it with
    na = spm.vocab.token_to_id["▁na"]
    assert na not in found.prefix and na not in found.substring and na in found.word_start
    assert found.tokenization == (1055, 30085, 345)
    assert spm.vocab.token_to_id["na"] in found.prefix
    found = find_tokens(TokenBytes(spm), " naïve")  # with the space it is literal
    assert na in found.prefix and na not in found.word_start
    bert = ref_model("bert-bge")
    found = find_tokens(TokenBytes(bert), "hello")
    assert found.tokenization == (7592,)  # ▁hello writes " hello": a word start, in none of the three
    assert 7592 not in found.prefix + found.suffix + found.substring and 7592 in found.word_start
    gpt2 = ref_model("gpt-2")
    table = TokenBytes(gpt2)
    found = find_tokens(table, " world")
    assert gpt2.vocab.token_to_id["Ġworld"] in found.prefix
    assert gpt2.vocab.token_to_id["world"] in found.suffix and gpt2.vocab.token_to_id["world"] not in found.prefix
    groups = by_kind(table, found.substring)
    assert list(groups) == ["normal"]
    lengths = [len(gpt2.token_bytes(i)) for i in groups["normal"]]
    assert lengths == sorted(lengths, reverse=True)


def test_bad_strings(ref_model: Any) -> None:
    table = TokenBytes(ref_model("llama-spm"))
    with pytest.raises(FindError, match="empty"):
        find_tokens(table, "")
    with pytest.raises(FindError, match="at most"):
        find_tokens(table, "a" * (MAX_BYTES + 1))
    with pytest.raises(FindError, match="surrogate"):
        find_tokens(table, "\ud800")


def test_cli_json_and_text(ref_model: Any, capsys: pytest.CaptureFixture[str]) -> None:
    model = ref_model("gpt-2")
    assert main(["find-tokens", model.path, "Hello", "--format", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert set(doc) == {"prefix", "suffix", "substring", "tokenization", "word_start"}
    assert doc["word_start"] == []  # byte-level BPE: its Ġ is a real space
    want = brute_force(model, "Hello", False)
    assert doc["prefix"] == sorted(want["prefix"]) and doc["suffix"] == sorted(want["suffix"])
    assert doc["substring"] == sorted(want["substring"])
    assert doc["tokenization"] == [15496]
    assert 15496 in doc["prefix"] and 15496 in doc["suffix"] and 15496 in doc["substring"]
    assert main(["find-tokens", model.path, "Hello"]) == 0
    out = capsys.readouterr().out
    assert "tokenization (1): 15496 Hello" in out
    assert "prefix (5):" in out and "  normal (5): 15496 Hello" in out
    assert main(["find-tokens", model.path, ""]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "empty" in err
    assert set(KIND_NAMES) >= {"normal", "byte"}
    bert = ref_model("bert-bge")
    assert main(["find-tokens", bert.path, "hello"]) == 0
    out = capsys.readouterr().out
    assert "prefix (" in out and "word_start, its ▁ standing for the word start (4):\n  normal (4): 7592 ▁hello  3109 ▁hell" in out
