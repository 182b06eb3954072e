"""The corpus profiler counted in this process (``scheduler="synchronous"``):
counts equal the sums of ``Model.encode`` over the documents for one model
of each algorithm, bad input is skipped with reasons, long documents are
streamed in pieces with the same counts, reports render."""

from __future__ import annotations

import csv
import io
import json
import os
import threading
from pathlib import Path

import pytest

from tests.core.corpus_data import INVALID, SKIPPED, expected, make_corpus, mixed_text, text_totals
from tests.refdata import vocab_path
from tokenprism.core.corpus import SYNCHRONOUS, CorpusReport, profile, script_of
from tokenprism.core.corpus.report import to_csv, to_dict, to_html, to_json, to_text
from tokenprism.core.corpus.stats import SPACE, empty_stats
from tokenprism.core.corpus.stream import count_document
# the service's per-process cache (open_model + prepare): nomic-bert-moe takes
# ~9 s to open here, so the expected counts reuse the model it opened
from tokenprism.core.corpus.worker import cached_model as open_model

pytest.importorskip("pyarrow")
REF_MODELS = ("llama-spm", "gpt-2", "nomic-bert-moe", "bert-bge")  # SPM, BPE, UGM, WPM


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[str]]:
    root = tmp_path_factory.mktemp("corpus")
    return root, make_corpus(root)


@pytest.fixture(scope="module")
def report(corpus: tuple[Path, list[str]]) -> CorpusReport:
    root, _docs = corpus
    return profile([str(root)], [vocab_path(n) for n in REF_MODELS], scheduler=SYNCHRONOUS, part_bytes=2000)


def test_counts_equal_encode_sums(corpus: tuple[Path, list[str]], report: CorpusReport) -> None:
    _root, docs = corpus
    s = report.stats
    assert len(report.stats.partitions) > 2  # the corpus was cut in partitions
    assert not report.missing and not report.cancelled
    nbytes, nchars, nwords = text_totals(docs)
    assert (s.text.bytes, s.text.chars, s.text.words) == (nbytes, nchars, nwords)
    assert s.documents == len(docs)
    assert s.invalid_utf8 == INVALID
    for name, ms in zip(REF_MODELS, s.models):
        want = expected(open_model(vocab_path(name)), docs)
        got = (ms.total.tokens, ms.byte_fallback, ms.unknown, ms.vocab_used)
        assert got == (want.tokens, want.byte_fallback, want.unknown, len(want.ids)), name
        # every token and byte is in exactly one script
        assert sum(t.tokens for t in ms.by_script.values()) == want.tokens
        assert sum(t.bytes for t in ms.by_script.values()) == nbytes
        assert sum(t.words for t in ms.by_script.values()) == nwords
        assert sum(t.tokens for t in ms.by_file.values()) == want.tokens
    spm = s.models[0]
    assert sorted(Path(k).name for k in spm.by_file) == ["a.txt", "b.md", "bad.txt", "c.jsonl", "d.parquet"]
    assert spm.byte_fallback > 0  # the emoji and the invalid bytes' U+FFFD... fall back to bytes
    assert {"Latin", "Cyrillic", "Han", "Arabic", "Devanagari", SPACE} <= set(spm.by_script)


def test_skipped_with_reasons(corpus: tuple[Path, list[str]], report: CorpusReport) -> None:
    root, _docs = corpus
    reasons = {Path(k.path).name: k.reason for k in report.stats.skipped}
    for name, why in SKIPPED.items():
        assert reasons[name] == why
    jsonl = sorted(r for p, r in reasons.items() if p.startswith("c.jsonl@"))
    assert jsonl[0] == "no text field 'text'" and jsonl[1].startswith("not JSON")
    assert not any("skip.txt" in k.path for k in report.stats.skipped)  # hidden folders are not read
    assert report.stats.files == 5  # a.txt b.md c.jsonl d.parquet bad.txt


def test_add_special_counts_bos_eos(corpus: tuple[Path, list[str]]) -> None:
    root, docs = corpus
    bge = vocab_path("bert-bge")
    r = profile([str(root / "a.txt"), str(root / "c.jsonl")], [bge], scheduler=SYNCHRONOUS, add_special=True)
    want = expected(open_model(bge), [docs[0], *docs[2:8]], add_special=True)
    assert r.stats.models[0].total.tokens == want.tokens
    assert r.stats.models[0].special == 2 * 7  # [CLS] and [SEP] around each document


def test_unreadable_and_vanished(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ok = tmp_path / "ok.txt"
    ok.write_text("hello there")
    gone = tmp_path / "gone.txt"
    gone.write_text("soon gone")
    from tokenprism.core.corpus import worker

    real = worker.count_document

    def vanish(*args: object, **kw: object) -> None:
        gone.unlink(missing_ok=True)  # the file goes after planning, before its partition is read
        real(*args, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(worker, "count_document", vanish)
    r = profile([str(ok), str(gone), str(tmp_path / "never.txt")], [vocab_path("gpt-2")], scheduler=SYNCHRONOUS,
                part_bytes=1)
    reasons = {Path(k.path).name: k.reason for k in r.stats.skipped}
    assert reasons == {"gone.txt": "vanished before it was read", "never.txt": "no such file"}
    assert r.stats.models[0].total.tokens == len(open_model(vocab_path("gpt-2")).encode("hello there"))


def test_limit_bytes_cuts_the_corpus(corpus: tuple[Path, list[str]]) -> None:
    root, docs = corpus
    gpt2 = vocab_path("gpt-2")
    r = profile([str(root / "a.txt")], [gpt2], scheduler=SYNCHRONOUS, limit_bytes=500)
    head = docs[0].encode("utf-8")[:500].decode("utf-8", "replace")
    assert r.stats.bytes_read == 500
    assert r.stats.models[0].total.tokens == len(open_model(gpt2).encode(head))


@pytest.mark.parametrize("name", REF_MODELS)
def test_long_document_streamed_exactly(name: str) -> None:
    """A document much longer than a piece is counted in pieces, each model
    cut at its own cut points, with the counts of one encode."""
    model = open_model(vocab_path(name))
    text = mixed_text(7, 4000, breaks="  \n")
    stats = empty_stats([model])
    pieces: list[int] = []
    from tokenprism.core.corpus import stream

    real = stream.count_piece

    def spy(st: object, k: int, m: object, t: str, *a: object, **kw: object) -> None:
        pieces.append(len(t))
        real(st, k, m, t, *a, **kw)  # type: ignore[arg-type]

    chunks = [text[i:i + 3000] for i in range(0, len(text), 3000)]
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(stream, "count_piece", spy)
        count_document(stats, [model], chunks, "doc", step=2000)
    assert len(pieces) > 5 and sum(pieces) == len(text)
    enc = model.encode(text)
    assert stats.models[0].total.tokens == len(enc)
    assert stats.models[0].vocab_used == len(set(enc.ids))
    assert stats.forced_cuts == 0


def test_single_line_without_cut_points_is_held_then_forced() -> None:
    """BPE cuts only at line starts: a line without breaks is held (exact)
    up to ``hold``, then cut where a word ends, and that is reported."""
    model = open_model(vocab_path("gpt-2"))
    text = mixed_text(8, 1500, breaks=" ")
    stats = empty_stats([model])
    count_document(stats, [model], [text[i:i + 1000] for i in range(0, len(text), 1000)], "d", step=1000,
                   hold=1 << 30)
    assert stats.models[0].total.tokens == len(model.encode(text)) and stats.forced_cuts == 0
    stats = empty_stats([model])
    count_document(stats, [model], [text[i:i + 1000] for i in range(0, len(text), 1000)], "d", step=1000,
                   hold=3000)
    assert stats.forced_cuts > 0
    # gpt-2's words start with their space, so cuts before a space change nothing here
    assert stats.models[0].total.tokens == len(model.encode(text))


def test_cancel_returns_partial_report(corpus: tuple[Path, list[str]]) -> None:
    root, _docs = corpus
    cancel = threading.Event()
    seen: list[int] = []

    def progress(p: object) -> None:
        seen.append(getattr(p, "parts_done"))
        if getattr(p, "parts_done") == 1:
            cancel.set()

    r = profile([str(root)], [vocab_path("gpt-2")], scheduler=SYNCHRONOUS, part_bytes=500, progress=progress,
                cancel=cancel)
    assert r.cancelled and r.stats.partitions == [0]
    assert r.missing and all(m.reason == "cancelled" for m in r.missing)
    assert len(r.missing) + 1 == seen[-1] or len(r.missing) >= 2
    assert "INCOMPLETE" in to_text(r)


def test_scripts() -> None:
    assert [script_of(w) for w in ("hello", "Привет", "東京", "مرحبا", "नमस्ते", "42,", "(日本)", "Ελλάδα")] == [
        "Latin", "Cyrillic", "Han", "Arabic", "Devanagari", "Common", "Han", "Greek"]


def test_reports_render(report: CorpusReport) -> None:
    data = json.loads(to_json(report))
    assert {"files", "bytes", "skipped", "models"} <= set(data)
    m = data["models"][1]
    for key in ("name", "path", "tokens", "bytes_per_token", "chars_per_token", "tokens_per_word", "byte_fallback",
                "unknown", "vocab_used", "by_script", "worst_words"):
        assert key in m
    assert m["tokens"] == report.stats.models[1].total.tokens
    assert m["bytes_per_token"] == round(data["bytes"] / m["tokens"], 4)
    assert set(m["by_script"]["Latin"]) >= {"tokens", "bytes", "words"}
    assert data == to_dict(report)
    rows = list(csv.DictReader(io.StringIO(to_csv(report))))
    assert len(rows) == sum(len(ms.by_script) for ms in report.stats.models)
    assert sum(int(r["tokens"]) for r in rows if r["model"] == "gpt-2") == report.stats.models[1].total.tokens
    page = to_html(report)
    assert page.count("<svg") == 3 and "<script" not in page
    assert "src=" not in page and "href=\"http" not in page  # self-contained
    text = to_text(report)
    assert "gpt-2" in text and "Cyrillic" in text


def test_tokens_counted_for_their_word(tmp_path: Path) -> None:
    """WPM splits at spaces, so each word's tokens are its own encoding's:
    the by-script counts must match word by word."""
    bge = open_model(vocab_path("bert-bge"))
    words = {"Latin": "hello naïve", "Cyrillic": "Привет", "Han": "東京", "Arabic": "مرحبا", "Common": "42"}
    text = " ".join(words.values()) + "\n"
    (tmp_path / "t.txt").write_text(text, encoding="utf-8")
    r = profile([str(tmp_path)], [bge.path], scheduler=SYNCHRONOUS)
    ms = r.stats.models[0]
    for script, w in words.items():
        assert ms.by_script[script].tokens == sum(len(bge.encode(x)) for x in w.split()), script
        assert ms.by_script[script].bytes == sum(len(x.encode("utf-8")) for x in w.split()), script
    assert ms.by_script[SPACE].bytes == text.count(" ") + 1 and ms.by_script[SPACE].tokens == 0


@pytest.mark.skipif(hasattr(os, "geteuid") and os.geteuid() == 0, reason="root reads files whatever their mode")
def test_unreadable_file(tmp_path: Path) -> None:
    locked = tmp_path / "locked.txt"
    locked.write_text("secret")
    locked.chmod(0)
    try:
        r = profile([str(tmp_path)], [vocab_path("gpt-2")], scheduler=SYNCHRONOUS)
    finally:
        locked.chmod(0o644)
    assert [(Path(k.path).name, k.reason) for k in r.stats.skipped] == [("locked.txt", "unreadable: Permission denied")]
