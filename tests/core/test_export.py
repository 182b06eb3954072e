"""Token-list files: every format parsed back with the standard ``json`` and
``csv`` modules, spreadsheet safety, the exact JSON round trip on every
tokenizer type, hostile imports, and atomic writes."""

from __future__ import annotations

import csv
import dataclasses
import io
import json
import os
from pathlib import Path
from typing import Any, Callable, Iterator

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tokenprism.core import Attr, Model, open_model
from tokenprism.core.formats.export import (ExportError, TokenFileError, TokenList, TokenRows, first_difference,
                                    format_for_path, id_problems, labels, load_json, load_token_file, render,
                                    restore_text, scan_ids, spreadsheet_cell, stats, token_list,
                                    tokenizer_fingerprint, write_atomic, write_export)
from tokenprism.core.library.resources import demo_models

TEXT = 'Hello wörld, "quoted"\n\ttabs =1+1 -x @y 🙂 日本語 €'


@pytest.fixture(scope="module")
def demo() -> dict[str, Model]:
    models = demo_models()
    if not models:
        pytest.skip("no demo models bundled")
    return {kind: open_model(path) for kind, path in models.items()}


def hostile(tl: TokenList) -> TokenList:
    """``tl`` with pieces a spreadsheet or a CSV parser could trip over."""
    evil = ["=1+1", "+A1", "-2", "@SUM(A1)", "\tx", "\rx", 'a,"b"\nc', "\uff1dcmd", "\0nul", "raw\udcff",
            "'quoted", " lead"]
    n = len(tl)
    pieces = tuple(evil[i % len(evil)] for i in range(n))
    return dataclasses.replace(tl, pieces=pieces, pieces_raw=pieces)


# ---- formats -----------------------------------------------------------------------------------

def test_json_holds_model_flags_text_and_every_token_field(demo: dict[str, Model]) -> None:
    m = demo["spm"]
    enc = m.encode(TEXT, add_special=True)
    tl = token_list(m, enc)
    doc = json.loads(render([tl], "json"))
    assert doc["format"] == "tokenprism-tokens" and doc["version"] == 1
    assert doc["model"]["path"] == m.path and doc["model"]["kind"] == "SPM"
    assert doc["model"]["vocab_size"] == len(m) and doc["model"]["file_size"] == os.path.getsize(m.path)
    assert doc["model"]["tokenizer_sha256"] == tokenizer_fingerprint(m) and len(doc["model"]["tokenizer_sha256"]) == 64
    assert doc["add_special"] is True and doc["parse_special"] is False and doc["text"] == TEXT
    assert doc["ids"] == enc.ids == [t["id"] for t in doc["tokens"]]
    for i, t in enumerate(doc["tokens"]):
        tok = enc.token(i)
        assert (t["index"], t["piece_raw"], t["score"], t["type"], t["attr"]) == \
            (i, tok.piece, tok.score, tok.type, tok.attr)
        assert (t["start"], t["end"], t["byte_start"], t["byte_end"], t["group"]) == \
            (tok.start, tok.end, tok.byte_start, tok.byte_end, tok.group)
        assert t["piece"] == m.display_piece(tok.id)
        assert t["char"] == (TEXT[tok.start:tok.end] if tok.group >= 0 else None)
    # the demo SPM model spells the emoji with byte-fallback tokens, which carry the character
    assert any(t["char"] == "🙂" for t in doc["tokens"])
    s = doc["stats"]
    assert s["tokens"] == len(enc) and s["chars"] == len(TEXT) and s["bytes"] == len(TEXT.encode())


def test_byte_level_pieces_are_readable(demo: dict[str, Model]) -> None:
    m = demo["bpe"]
    tl = token_list(m, text=" wörld")
    doc = json.loads(render([tl], "json"))
    assert "".join(t["piece"] for t in doc["tokens"]) == " wörld"  # not Ġw, Ã¶
    assert "".join(t["piece_raw"] for t in doc["tokens"]) != " wörld"


def test_jsonl_one_token_a_line(demo: dict[str, Model]) -> None:
    a = token_list(demo["spm"], text=TEXT)
    b = token_list(demo["wpm"], text=TEXT)
    lines = render([a], "jsonl").splitlines()
    assert [json.loads(x)["id"] for x in lines] == list(a.ids)
    assert "model" not in json.loads(lines[0])
    both = [json.loads(x) for x in render([a, b], "jsonl").splitlines()]
    assert len(both) == len(a) + len(b)
    assert [x["model"] for x in both] == [a.model.name] * len(a) + [b.model.name] * len(b)
    assert [x["id"] for x in both if x["list"] == 1] == list(b.ids)


def test_ids_and_pieces(demo: dict[str, Model]) -> None:
    a = token_list(demo["ugm"], text=TEXT, add_special=True)
    assert json.loads(render([a], "ids")) == list(a.ids)
    b = token_list(demo["bpe"], text=TEXT)
    assert [json.loads(x) for x in render([a, b], "ids").splitlines()] == [list(a.ids), list(b.ids)]
    rows = render([a], "pieces").splitlines()
    assert [int(r.split(" -> ")[0]) for r in rows] == list(a.ids)


def test_csv_parses_back_with_the_csv_module(demo: dict[str, Model]) -> None:
    tl = token_list(demo["spm"], text=TEXT, add_special=True)
    rows = list(csv.DictReader(io.StringIO(render([tl], "csv"))))
    assert [int(r["id"]) for r in rows] == list(tl.ids)
    assert [float(r["score"]) for r in rows] == list(tl.scores)  # negative scores stay numbers
    assert [(int(r["start"]), int(r["end"])) for r in rows] == list(zip(tl.starts, tl.ends))
    safe = [p for p in tl.pieces if p[:1] not in "=+-@\t\r\n"]
    assert [r["piece"] for r in rows if r["piece"][:1] != "'"] == safe


def test_csv_defuses_formulas_and_survives_quotes_and_newlines(demo: dict[str, Model]) -> None:
    tl = hostile(token_list(demo["bpe"], text=TEXT))
    text = render([tl], "csv")
    text.encode("utf-8")  # nothing without a UTF-8 form reaches the file
    rows = list(csv.reader(io.StringIO(text)))
    assert rows[0][:4] == ["index", "id", "piece", "piece_raw"] and len(rows) == len(tl) + 1
    got = [r[2] for r in rows[1:13]]
    assert got == ["'=1+1", "'+A1", "'-2", "'@SUM(A1)", "'\tx", "'\rx", 'a,"b"\nc', "'\uff1dcmd",
                   "\\x00nul", "raw\\xFF", "'quoted", " lead"]
    assert all(r[3] == r[2] for r in rows[1:])
    for row in rows[1:]:  # no cell a spreadsheet would evaluate
        for cell in row[2:4]:
            assert cell[:1] not in ("=", "+", "-", "@", "\t", "\r", "\uff1d")


@pytest.mark.parametrize("value, expected", [
    ("=HYPERLINK(\"http://x\")", "'=HYPERLINK(\"http://x\")"), ("+1", "'+1"), ("-1", "'-1"), ("@a", "'@a"),
    ("\t=1", "'\t=1"), ("\r=1", "'\r=1"), ("\n=1", "'\n=1"), ("a=1", "a=1"), ("", ""), ("▁=", "▁="),
])
def test_spreadsheet_cell(value: str, expected: str) -> None:
    assert spreadsheet_cell(value) == expected


def test_several_lists_make_one_compare_object(demo: dict[str, Model]) -> None:
    lists = [token_list(m, text=TEXT) for m in demo.values()]
    doc = json.loads(render(lists, "json"))
    assert doc["format"] == "tokenprism-compare" and doc["text"] == TEXT
    assert [d["model"]["kind"] for d in doc["lists"]] == [m.kind for m in demo.values()]
    assert [d["ids"] for d in doc["lists"]] == [list(tl.ids) for tl in lists]
    assert "text" not in doc["lists"][0]  # shared, written once
    rows = list(csv.DictReader(io.StringIO(render(lists, "csv"))))
    assert len(rows) == sum(map(len, lists)) and rows[0]["model"] == lists[0].model.name
    table = render(lists, "table").splitlines()
    assert len(table) == 1 + len(lists) and table[1].split()[-5] == "+0%"


# ---- exact round trip ---------------------------------------------------------------------------

def roundtrip(tl: TokenList, tmp_path: Path) -> None:
    path = tmp_path / "tokens.json"
    write_export(path, [tl], "json")
    [back] = load_json(path)
    assert back == tl
    assert load_json(render([tl], "json")) == [tl]  # from text as well
    assert first_difference(back, tl) == -1


@pytest.mark.parametrize("kind", ["spm", "bpe", "ugm", "wpm"])
def test_roundtrip_demo_models(demo: dict[str, Model], kind: str, tmp_path: Path) -> None:
    m = demo[kind]
    for add_special in (False, True):
        roundtrip(token_list(m, text=TEXT, add_special=add_special), tmp_path)
    roundtrip(token_list(m, text=""), tmp_path)


@pytest.mark.parametrize("name, text", [
    ("llama-spm", "<s>Hi 🙂 𝄞 €\n</s>"),       # byte fallback and special tokens
    ("gpt-2", "<|endoftext|> wörld 🙂"),       # byte-level pieces cutting characters
    ("bert-bge", "[CLS] Hello [SEP] naïve"),   # WordPiece, [UNK]
    ("nomic-bert-moe", "<s> hello ✓ </s>"),    # Unigram with a charsmap
])
def test_roundtrip_reference_vocabs(ref_model: Callable[[str], Model], name: str, text: str,
                                    tmp_path: Path) -> None:
    m = ref_model(name)
    tl = token_list(m, text=text, add_special=True, parse_special=True)
    assert any(a & 8 for a in tl.attrs)  # a control token was parsed out of the text
    roundtrip(tl, tmp_path)
    if name == "llama-spm":
        assert tl.ids[:2] == (1, 1) and any(g >= 0 for g in tl.groups)  # BOS, "<s>", byte fallback


def test_roundtrip_keeps_odd_pieces_and_scores(demo: dict[str, Model], tmp_path: Path) -> None:
    tl = hostile(token_list(demo["spm"], text=TEXT))
    n = len(tl)
    tl = dataclasses.replace(tl, scores=tuple([float("-inf"), 1e-45, -3.4028234663852886e38] * n)[:n])
    roundtrip(tl, tmp_path)
    raw = (tmp_path / "tokens.json").read_bytes()
    raw.decode("utf-8")  # lone surrogates are escaped, the file is valid UTF-8
    assert b"\\udcff" in raw


def test_compare_roundtrip(demo: dict[str, Model], tmp_path: Path) -> None:
    lists = [token_list(m, text=TEXT, parse_special=True) for m in demo.values()]
    assert load_json(render(lists, "json")) == lists
    mixed = [lists[0], token_list(demo["wpm"], text="other text")]
    assert load_json(render(mixed, "json")) == mixed


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=st.text(st.characters(codec="utf-8"), max_size=40))
def test_roundtrip_any_text(demo: dict[str, Model], text: str) -> None:
    for m in demo.values():
        tl = token_list(m, text=text, add_special=True)
        assert load_json(render([tl], "json")) == [tl]


# ---- hostile and foreign imports --------------------------------------------------------------

def good_doc(demo: dict[str, Model]) -> dict[str, Any]:
    return json.loads(render([token_list(demo["spm"], text="Hi 🙂")], "json"))  # type: ignore[no-any-return]


def edit(doc: dict[str, Any], fn: Callable[[dict[str, Any]], object]) -> str:
    d = json.loads(json.dumps(doc))
    fn(d)
    return json.dumps(d)


@pytest.mark.parametrize("change, message", [
    (lambda d: d.pop("format"), "has no “format”"),
    (lambda d: d.update(format="something-else"), "“format” is the text 'something-else'"),
    (lambda d: d.update(version=99), "newer than this TokenPrism"),
    (lambda d: d.pop("tokens"), "missing “tokens”"),
    (lambda d: d.update(tokens={}), "tokens: expected a list"),
    (lambda d: d["tokens"].__setitem__(1, 7), "tokens[1]: expected an object"),
    (lambda d: d["tokens"][1].__setitem__("id", "12"), "tokens[1].id: expected an integer"),
    (lambda d: d["tokens"][1].__setitem__("id", 10**9), "tokens[1].id: 1000000000 is outside 0..1499"),
    (lambda d: d["tokens"][1].__setitem__("id", True), "tokens[1].id: expected an integer, found a boolean"),
    (lambda d: d["tokens"][1].__setitem__("end", 999), "tokens[1].end: 999 is outside"),
    (lambda d: d["tokens"][1].update(start=3, end=2), "tokens[1].end: 2 is before start 3"),
    (lambda d: d["tokens"][1].__setitem__("index", 5), "tokens[1].index: is 5, expected 1"),
    (lambda d: d["tokens"][1].pop("score"), "tokens[1]: missing “score”"),
    (lambda d: d["tokens"][1].__setitem__("score", "high"), "tokens[1].score: expected a number"),
    (lambda d: d["tokens"][1].__setitem__("group", 5), "tokens[1].group: 5 is outside -1..1"),
    (lambda d: d["ids"].append(3), "ids: does not match"),
    (lambda d: d.update(add_special="yes"), "add_special: expected true or false"),
    (lambda d: d["model"].pop("path"), "model: missing “path”"),
    (lambda d: d.update(model=[]), "model: expected an object, found a list"),
])
def test_hand_edited_files_give_clear_errors(demo: dict[str, Model], change: Callable[[dict[str, Any]], object],
                                             message: str) -> None:
    with pytest.raises(TokenFileError) as e:
        load_json(edit(good_doc(demo), change))
    assert message in str(e.value) and "not a TokenPrism token list" in str(e.value)


@pytest.mark.parametrize("data, message", [
    (b"", "not valid JSON"),
    (b"\xff\xfe{}", "not UTF-8"),
    (b"[1, 2, 3]", "expected an object, found a list"),
    (b'{"tokens": NaN}', "NaN is not standard JSON"),
    (b"[" * 100_000 + b"]" * 100_000, "nested too deeply"),
    (b'{"format": "tokenprism-tokens", "version": 1, "model": {' + b'"x": 1' * 3 + b"}", "not valid JSON"),
    (b'{"format": "tokenprism-compare", "version": 1, "lists": []}', "lists: expected a non-empty list"),
    (b'{"a": ' + b"9" * 5000 + b"}", "not valid JSON"),
])
def test_foreign_files_give_clear_errors(tmp_path: Path, data: bytes, message: str) -> None:
    path = tmp_path / "foreign.json"
    path.write_bytes(data)
    with pytest.raises(TokenFileError) as e:
        load_json(path)
    assert message in str(e.value) and "foreign.json" in str(e.value)


def test_claims_in_a_file_allocate_nothing(demo: dict[str, Model], tmp_path: Path) -> None:
    doc = good_doc(demo)
    doc["model"]["vocab_size"] = 2**62
    doc["model"]["file_size"] = 2**62
    [tl] = load_json(json.dumps(doc))
    assert tl.model.vocab_size == 2**62
    with pytest.raises(TokenFileError, match="no such file|No such file"):
        load_json(tmp_path / "missing.json")


def test_first_difference(demo: dict[str, Model]) -> None:
    a = token_list(demo["spm"], text="Hello world")
    b = token_list(demo["spm"], text="Hello world", add_special=True)
    assert first_difference(a, a) == -1 and first_difference(a, b) == 0
    c = dataclasses.replace(a, ids=a.ids[:-1] + (a.ids[-1] + 1,))
    assert first_difference(a, c) == len(a) - 1
    assert first_difference(a, dataclasses.replace(a, ids=a.ids[:2], starts=a.starts[:2], ends=a.ends[:2])) == 2


def test_stats_count_byte_fallback_and_unknown(demo: dict[str, Model]) -> None:
    s = stats(token_list(demo["spm"], text="a🙂"))
    assert s.byte_fallback == 4 and s.bytes == 5 and s.chars == 2
    assert stats(token_list(demo["wpm"], text="🙂")).unknown == 1  # BERT's [UNK] is a control token


# ---- atomic writes ------------------------------------------------------------------------------

def test_write_atomic_replaces_and_keeps_mode(tmp_path: Path) -> None:
    target = tmp_path / "out.txt"
    write_atomic(target, "first")
    assert target.read_text() == "first"
    os.chmod(target, 0o640)
    parts: list[str | bytes] = ["sec", b"ond"]
    write_atomic(target, iter(parts))
    assert target.read_text() == "second" and (target.stat().st_mode & 0o777) == 0o640
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.txt"]


def test_write_atomic_through_a_symlink(tmp_path: Path) -> None:
    real = tmp_path / "real.txt"
    real.write_text("old")
    link = tmp_path / "link.txt"
    link.symlink_to(real)
    write_atomic(link, "new")
    assert link.is_symlink() and real.read_text() == "new"


@pytest.mark.parametrize("broken", ["replace", "fsync", "write"])
def test_failed_write_leaves_the_old_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, broken: str) -> None:
    target = tmp_path / "tokens.json"
    target.write_text("previous")

    def fail(*args: object, **kwargs: object) -> None:
        raise OSError(28, "No space left on device")

    if broken == "write":
        def data() -> Iterator[str]:
            yield "x" * (2 << 20)  # a chunk large enough to be written before the failure
            fail()
        payload: object = data()
    else:
        monkeypatch.setattr(os, broken, fail)
        payload = "new content"
    with pytest.raises(ExportError) as e:
        write_atomic(target, payload)  # type: ignore[arg-type]
    monkeypatch.undo()
    assert "No space left on device" in str(e.value) and "tokens.json" in str(e.value)
    assert target.read_text() == "previous"
    assert [p.name for p in tmp_path.iterdir()] == ["tokens.json"]


def test_failure_in_the_data_passes_through_after_clean_up(tmp_path: Path) -> None:
    target = tmp_path / "t.csv"
    target.write_text("previous")

    def data() -> Iterator[str]:
        yield "partial"
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        write_atomic(target, data())
    assert target.read_text() == "previous" and [p.name for p in tmp_path.iterdir()] == ["t.csv"]


def test_unwritable_places(tmp_path: Path) -> None:
    with pytest.raises(ExportError, match="Cannot write"):
        write_atomic(tmp_path / "missing-folder" / "x.json", "x")
    with pytest.raises(ExportError, match="folder"):
        write_atomic(tmp_path, "x")


def test_csv_files_start_with_a_byte_order_mark(demo: dict[str, Model], tmp_path: Path) -> None:
    tl = token_list(demo["spm"], text=TEXT)
    write_export(tmp_path / "t.csv", [tl], "csv")
    raw = (tmp_path / "t.csv").read_bytes()
    assert raw.startswith(b"\xef\xbb\xbf")
    rows = list(csv.DictReader(io.StringIO(raw.decode("utf-8-sig"))))
    assert [int(r["id"]) for r in rows] == list(tl.ids)


def test_format_for_path() -> None:
    assert [format_for_path(p) for p in ("a.JSON", "b.jsonl", "c.csv", "d.txt", "e.gguf")] == \
        ["json", "jsonl", "csv", "ids", None]


# ---- pasted ids -----------------------------------------------------------------------------------

def test_scan_ids_forms_and_places() -> None:
    for text in ("1 22 333", "1,22,333", "[1, 22, 333]", " [1,\n22 ,333] "):
        assert [it.value for it in scan_ids(text)] == [1, 22, 333]
    items = scan_ids("[5, abc, 1.5, -3, 70000, 99999999999999999999999999999999]")
    assert [it.value for it in items] == [5, None, None, -3, 70000, None]
    assert [(it.start, it.end) for it in items[:3]] == [(1, 2), (4, 7), (9, 12)]
    problems = id_problems(items, 1000)
    assert [(it.text[:5], why.split(" (")[0]) for it, why in problems] == [
        ("abc", "not a token id"), ("1.5", "not a token id"), ("-3", "outside the vocabulary"),
        ("70000", "outside the vocabulary"), ("99999", "not a token id")]
    assert scan_ids("") == () and scan_ids(" , [ ] ") == ()


# ---- optional columns: BPE merge rank, WordPiece word ---------------------------------------------

OLD_TOKEN_KEYS = ["index", "id", "piece", "piece_raw", "score", "type", "attr", "start", "end", "byte_start",
                  "byte_end", "group", "char"]
WORD_TEXT = "Hello wörld, naïve unaffable x!! 42"


def expected_ranks(m: Model, ids: tuple[int, ...]) -> list[int]:
    """Rank of each token worked out from the merges list itself: the first
    merge "a b" whose halves spell the piece (-1 for special tokens and
    pieces no merge makes)."""
    first: dict[str, int] = {}
    for r, line in enumerate(m.vocab.merges):
        a, b = line.split(" ", 1)
        first.setdefault(a + b, r)
    return [first.get(m.vocab.pieces[t], -1) if m.vocab.attrs[t] & Attr.NORMAL else -1 for t in ids]


def expected_words(text: str, starts: tuple[int, ...], ends: tuple[int, ...]) -> list[int]:
    """Word of each token: BERT splits at whitespace and makes every
    punctuation character a word of its own; empty spans are special tokens."""
    import re
    words = [(mt.start(), mt.end()) for mt in re.finditer(r"[^\W_]+|[^\w\s]", text)]
    out = []
    for s, e in zip(starts, ends):
        hits = [k for k, (ws, we) in enumerate(words) if ws <= s and e <= we] if s < e else []
        out.append(hits[0] if hits else -1)
    return out


def test_bpe_tokens_carry_their_merge_rank(demo: dict[str, Model]) -> None:
    m = demo["bpe"]
    tl = token_list(m, text=TEXT + " <|endoftext|>", add_special=True, parse_special=True)
    want = expected_ranks(m, tl.ids)
    assert tl.ranks == tuple(want) and tl.words is None
    assert sum(r >= 0 for r in want) >= 5 and -1 in want  # merged tokens, and bytes and <|endoftext|>
    doc = json.loads(render([tl], "json"))
    assert doc["ranks"] == want and "words" not in doc
    assert [t["rank"] for t in doc["tokens"]] == want
    assert all(list(t) == OLD_TOKEN_KEYS + ["rank"] for t in doc["tokens"])
    assert [json.loads(x)["rank"] for x in render([tl], "jsonl").splitlines()] == want
    rows = list(csv.DictReader(io.StringIO(render([tl], "csv"))))
    assert [int(r["rank"]) for r in rows] == want and "word" not in rows[0]
    assert [t.rank for t in tl] == want and tl.token(3).rank == want[3]


def test_gpt2_ranks_match_the_merges_list(ref_model: Callable[[str], Model]) -> None:
    m = ref_model("gpt-2")
    tl = token_list(m, text=" the quick brown fox jumps over the lazy dog, naïvely 🙂")
    want = expected_ranks(m, tl.ids)
    assert tl.ranks == tuple(want)
    assert m.vocab.pieces[tl.ids[0]] == "Ġthe" and tl.ranks[0] == m.vocab.merges.index("Ġt he") == 6
    assert load_json(render([tl], "json"))[0].ranks == tl.ranks


def test_wordpiece_tokens_carry_their_word(demo: dict[str, Model]) -> None:
    m = demo["wpm"]
    tl = token_list(m, text=WORD_TEXT, add_special=True)
    want = expected_words(WORD_TEXT, tl.starts, tl.ends)
    assert tl.words == tuple(want) and tl.ranks is None
    assert want[0] == want[-1] == -1 and max(want) == 8  # [CLS] [SEP]; Hello wörld , naïve unaffable x ! ! 42
    assert any(want[i] == want[i + 1] >= 0 for i in range(len(want) - 1))  # a word of several pieces
    doc = json.loads(render([tl], "json"))
    assert doc["words"] == want and "ranks" not in doc
    assert [list(t) for t in doc["tokens"]] == [OLD_TOKEN_KEYS + ["word"]] * len(tl)
    rows = list(csv.DictReader(io.StringIO(render([tl], "csv"))))
    assert [int(r["word"]) for r in rows] == want and "rank" not in rows[0]


def test_bert_bge_words(ref_model: Callable[[str], Model]) -> None:
    m = ref_model("bert-bge")
    text = "[CLS] Unaffable tokenizers, hello!"
    tl = token_list(m, text=text, add_special=True, parse_special=True)
    assert tl.words == tuple(expected_words(text.replace("[CLS]", "     "), tl.starts, tl.ends))
    assert load_json(render([tl], "json")) == [tl]


def test_models_without_the_columns_write_what_they_always_wrote(demo: dict[str, Model]) -> None:
    for kind in ("spm", "ugm"):
        tl = token_list(demo[kind], text=TEXT, add_special=True)
        assert tl.ranks is None and tl.words is None
        doc = json.loads(render([tl], "json"))
        assert list(doc) == ["format", "version", "model", "add_special", "parse_special", "text", "stats",
                             "ids", "tokens"]
        assert [list(t) for t in doc["tokens"]] == [OLD_TOKEN_KEYS] * len(tl)
        assert [list(json.loads(x)) for x in render([tl], "jsonl").splitlines()] == [OLD_TOKEN_KEYS] * len(tl)
        assert render([tl], "csv").splitlines()[0] == ",".join(OLD_TOKEN_KEYS)
        assert all(t.rank == -1 and t.word == -1 for t in tl)


def test_several_lists_keep_each_models_columns(demo: dict[str, Model]) -> None:
    spm, bpe, wpm = (token_list(demo[k], text=TEXT) for k in ("spm", "bpe", "wpm"))
    rows = list(csv.DictReader(io.StringIO(render([spm, bpe, wpm], "csv"))))
    assert list(rows[0])[-2:] == ["rank", "word"]
    by_model = {name: [r for r in rows if r["model"] == name] for name in (spm.model.name, bpe.model.name,
                                                                           wpm.model.name)}
    assert {(r["rank"], r["word"]) for r in by_model[spm.model.name]} == {("", "")}
    assert [int(r["rank"]) for r in by_model[bpe.model.name]] == list(bpe.ranks or ())
    assert {r["word"] for r in by_model[bpe.model.name]} == {""}
    assert [int(r["word"]) for r in by_model[wpm.model.name]] == list(wpm.words or ())
    lines = [json.loads(x) for x in render([spm, bpe], "jsonl").splitlines()]
    assert ["rank" in x for x in lines] == [False] * len(spm) + [True] * len(bpe)
    assert load_json(render([spm, bpe, wpm], "json")) == [spm, bpe, wpm]


def test_empty_lists_keep_their_columns(demo: dict[str, Model]) -> None:
    for kind, rank, word in (("bpe", True, False), ("wpm", False, True), ("spm", False, False)):
        tl = token_list(demo[kind], text="")
        assert len(tl) == 0 and (tl.ranks == ()) == rank and (tl.words == ()) == word
        [back] = load_json(render([tl], "json"))
        assert back == tl and (back.ranks is None) != rank and (back.words is None) != word


def test_import_without_the_columns_defaults_to_minus_one(demo: dict[str, Model]) -> None:
    doc = json.loads(render([token_list(demo["bpe"], text=TEXT)], "json"))
    [tl] = load_json(edit(doc, lambda d: [d.pop("ranks")] + [t.pop("rank") for t in d["tokens"]]))
    assert tl.ranks is None and all(t.rank == -1 and t.word == -1 for t in tl)
    k = doc["ranks"].index(max(doc["ranks"]))
    [tl] = load_json(edit(doc, lambda d: [d.pop("ranks"), d["tokens"][k].pop("rank")]))
    assert tl.ranks is not None and tl.ranks[k] == -1 < doc["ranks"][k]
    assert tl.ranks[:k] + tl.ranks[k + 1:] == tuple(doc["ranks"][:k] + doc["ranks"][k + 1:])


@pytest.mark.parametrize("change, message", [
    (lambda d: d["tokens"][1].__setitem__("rank", "7"), "tokens[1].rank: expected an integer"),
    (lambda d: d["tokens"][1].__setitem__("rank", -2), "tokens[1].rank: -2 is outside -1.."),
    (lambda d: d["tokens"][1].__setitem__("rank", d["tokens"][1]["rank"] + 1), "ranks: does not match"),
    (lambda d: d["tokens"][d["ranks"].index(max(d["ranks"]))].pop("rank"), "ranks: does not match"),
    (lambda d: d["tokens"][0].__setitem__("word", 1.5), "tokens[0].word: expected an integer"),
    (lambda d: d.__setitem__("words", [0] * len(d["tokens"])), "words: does not match"),
])
def test_hand_edited_ranks_and_words_give_clear_errors(demo: dict[str, Model],
                                                       change: Callable[[dict[str, Any]], object],
                                                       message: str) -> None:
    doc = json.loads(render([token_list(demo["bpe"], text=TEXT)], "json"))
    with pytest.raises(TokenFileError) as e:
        load_json(edit(doc, change))
    assert message in str(e.value)


# ---- every export format reads back (load_token_file) -----------------------------------------

@pytest.mark.parametrize("kind", ["spm", "bpe", "ugm", "wpm"])
@pytest.mark.parametrize("fmt", ["jsonl", "csv", "ids"])
def test_every_file_format_imports_back(demo: dict[str, Model], kind: str, fmt: str, tmp_path: Path) -> None:
    m = demo[kind]
    text = "Hello world, <s> 🙂 again" if kind in ("spm", "bpe") else "hello world again"
    for add, parse in ((False, False), (True, True)):
        tl = token_list(m, text=text, add_special=add, parse_special=parse)
        path = tmp_path / f"t.{fmt}"
        write_export(path, [tl], fmt)
        rows = load_token_file(path)
        assert isinstance(rows, TokenRows) and rows.fmt == fmt and rows.lists == 1
        assert rows.ids == tl.ids
        if fmt != "ids":
            assert (rows.starts, rows.ends, rows.attrs) == (tl.starts, tl.ends, tl.attrs)
        restored, r_add, r_parse = restore_text(rows, m)
        enc = m.encode(restored, add_special=r_add, parse_special=r_parse)
        assert rows.first_difference(enc.token_ids, enc.starts, enc.ends) == -1
        if kind in ("spm", "bpe"):  # no normalizer: the very text comes back
            parsed = parse and any(a & Attr.CONTROL for a, s, e in zip(tl.attrs, tl.starts, tl.ends) if e > s)
            assert restored == text and (r_add, r_parse) == (add and m.config.add_bos, parsed)


def test_json_still_imports_through_load_token_file(demo: dict[str, Model], tmp_path: Path) -> None:
    tl = token_list(demo["spm"], text="Hi 🙂", add_special=True)
    path = tmp_path / "renamed.txt"  # the content decides, not the name
    write_export(path, [tl], "json")
    assert load_token_file(path) == [tl]


@pytest.mark.parametrize("fmt", ["jsonl", "csv", "ids"])
def test_a_comparison_file_gives_its_first_list(demo: dict[str, Model], fmt: str, tmp_path: Path) -> None:
    lists = [token_list(demo[k], text="compare =this") for k in ("spm", "bpe", "wpm")]
    path = tmp_path / f"cmp.{fmt}"
    write_export(path, lists, fmt)
    rows = load_token_file(path)
    assert isinstance(rows, TokenRows) and rows.lists == 3 and rows.ids == lists[0].ids
    if fmt != "ids":
        assert rows.model_name == labels(lists)[0]


@pytest.mark.parametrize("data, message", [
    (b"hello there\n", "JSON Lines (.jsonl), CSV (.csv)"),
    (b'{"index": 0, "id": 5, "attr": 4, "start": 0, "end": 1}\n{"index": 0, "id": 6}\n',
     "line 2.index: 0 is outside 1..1"),
    (b'{"index": 0, "id": 5, "attr": 4, "start": 0, "end": 1}\nnot json\n', "line 2: not valid JSON"),
    (b"index,id,attr,start,end\n0,5,4,0,x\n", "line 2, end: expected an integer"),
    (b"index,id,piece,start,end\n0,5,a,0,1\n", "no \u201cattr\u201d column"),
    (b"[1, 2, x]\n", "'x' on line 1 is not an id"),
])
def test_foreign_token_files_say_what_imports(tmp_path: Path, data: bytes, message: str) -> None:
    path = tmp_path / "odd.file"
    path.write_bytes(data)
    with pytest.raises(TokenFileError) as e:
        load_token_file(path)
    assert message in str(e.value) and "odd.file" in str(e.value)


def test_ids_outside_the_model_are_refused(demo: dict[str, Model]) -> None:
    rows = TokenRows("ids", (1, 10**6), None, None, None, "", 1)
    with pytest.raises(TokenFileError, match="outside .* vocabulary"):
        restore_text(rows, demo["spm"])


@pytest.mark.parametrize("name, text", [
    ("llama-spm", "<s>Hi 🙂 𝄞 €\n</s>"),
    ("gpt-2", "<|endoftext|> wörld 🙂"),
    ("bert-bge", "[CLS] hello [SEP] naïve"),
    ("nomic-bert-moe", "<s> hello ✓ </s>"),
])
@pytest.mark.parametrize("fmt", ["jsonl", "csv", "ids"])
def test_reference_vocabs_import_every_format(ref_model: Callable[[str], Model], name: str, text: str, fmt: str,
                                              tmp_path: Path) -> None:
    m = ref_model(name)
    tl = token_list(m, text=text, add_special=True, parse_special=True)
    path = tmp_path / f"t.{fmt}"
    write_export(path, [tl], fmt)
    rows = load_token_file(path)
    assert isinstance(rows, TokenRows)
    restored, add, parse = restore_text(rows, m)
    enc = m.encode(restored, add_special=add, parse_special=parse)
    assert rows.first_difference(enc.token_ids, enc.starts, enc.ends) == -1, restored


@pytest.mark.parametrize("kind", ["spm", "bpe", "ugm", "wpm"])
def test_a_range_of_tokens_is_a_whole_list(demo: dict[str, Model], kind: str, tmp_path: Path) -> None:
    m = demo[kind]
    enc = m.encode(TEXT, add_special=True)
    whole = token_list(m, enc)
    n = len(whole)
    for first, last in ((0, n), (0, 3), (2, n - 1), (n - 2, n), (4, 4)):
        part = token_list(m, enc, rows=(first, last))
        assert part == whole.sublist(first, last)
        assert part.ids == whole.ids[first:last] and part.pieces == whole.pieces[first:last]
        if last > first:
            cs = min(whole.starts[first:last])
            assert part.text == TEXT[cs:max(whole.ends[first:last])]
            assert [part.text[s:e] for s, e in zip(part.starts, part.ends)] == \
                [TEXT[s:e] for s, e in zip(whole.starts[first:last], whole.ends[first:last])]
            raw = part.text.encode("utf-8")
            assert [raw[s:e] for s, e in zip(part.byte_starts, part.byte_ends)] == \
                [TEXT.encode("utf-8")[s:e] for s, e in zip(whole.byte_starts[first:last], whole.byte_ends[first:last])]
        write_export(tmp_path / "part.json", [part], "json")
        assert load_json(tmp_path / "part.json") == [part]  # a whole list: reads back exactly
    assert token_list(m, enc, rows=(0, n)) == whole
    with pytest.raises(IndexError):
        token_list(m, enc, rows=(2, n + 1))
