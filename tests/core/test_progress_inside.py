"""Progress and cancel from inside one long plugin call (core.gil.checkpoint).

A 10 MB paste into a UGM model (nomic-bert-moe) is one fragment the plugin
cannot cut: past ``UgmTokenizer.exact_chars / expand`` characters its cut
points are not provably exact, so ``encode_chunked`` hands the whole text
to one ``encode_fragment`` call. A 10 MB text is too slow for a unit test,
so here the limit of a second, separately opened copy of the model is
lowered to the length of a ~200 kB text. That takes the very branches a
10 MB text takes (no cut points; ``normalize_str`` then the best path word
by word -- or, with a lower limit still, over the whole fragment); only the
threshold is moved. The result is compared with the untouched model, whose
limit (35 million characters) covers this text many times over, so both
must agree exactly.
"""

from __future__ import annotations

from typing import Any, Callable

import pytest

from tests.refdata import vocab_path
from tokenprism.core import Model, open_model
from tokenprism.core.incremental import encode_chunked
from tokenprism.core.tokenizer import cut_points

WORDS = ("the quick brown fox jumps over a lazy dog; Ünïcödé naïve café, 東京 и Москва 123 "
         "tokenization  of   spaced\ttext\nwith lines ").split(" ")


def long_text(n_words: int) -> str:
    return " ".join(WORDS[(i * 7) % len(WORDS)] + ("" if i % 5 else str(i)) for i in range(n_words))


@pytest.fixture(scope="module")
def models() -> tuple[Model, Model]:
    path = vocab_path("nomic-bert-moe")
    return open_model(path), open_model(path)


@pytest.fixture(scope="module")
def text() -> str:
    return long_text(40_000)  # ~220k characters


def uncuttable(model: Model, text: str, branch: str) -> Model:
    tok = model.tokenizer
    n_norm = len(model.normalized(text))
    # "words": the limit is the normalized length itself, so the fragment
    # is best-pathed word by word (as a 10 MB paste is); "whole": below it,
    # one pass over the whole fragment in llama.cpp's order
    tok.exact_chars = n_norm if branch == "words" else n_norm // 4  # type: ignore[attr-defined]
    assert cut_points(tok, text, 1, len(text)) == [], "the text must be one piece for encode_chunked"
    return model


@pytest.mark.parametrize("branch", ["words", "whole"])
def test_progress_from_inside_one_fragment(models: tuple[Model, Model], text: str, branch: str) -> None:
    lowered, reference = models
    uncuttable(lowered, text, branch)
    reports: list[tuple[int, int]] = []
    enc = encode_chunked(lowered, text, report=lambda d, t: reports.append((d, t)) is None)
    assert enc is not None
    want = reference.encode(text)
    assert enc.token_ids == want.token_ids
    assert (enc.starts, enc.ends) == (want.starts, want.ends)
    assert (enc.byte_starts, enc.byte_ends) == (want.byte_starts, want.byte_ends)
    # without checkpoints there would be two reports: before and after the one call
    inside = [d for d, _ in reports if 0 < d < len(text)]
    assert len(inside) >= 5, f"only {len(reports)} progress reports"
    assert all(t == len(text) for _, t in reports)
    assert [d for d, _ in reports] == sorted(d for d, _ in reports)
    assert reports[-1] == (len(text), len(text))
    # both passes report: normalizing (first half) and the best path (second)
    assert any(d < len(text) // 2 for d in inside) and any(d > len(text) // 2 for d in inside)


@pytest.mark.parametrize("branch", ["words", "whole"])
def test_cancel_inside_one_fragment(models: tuple[Model, Model], text: str, branch: str) -> None:
    lowered, reference = models
    uncuttable(lowered, text, branch)
    calls: list[int] = []
    stop_at = len(text) * 3 // 4  # in the second pass, the best path

    def report(done: int, total: int) -> bool:
        calls.append(done)
        return done < stop_at

    assert encode_chunked(lowered, text, report=report) is None
    # the call that said stop was the last one: nothing ran on after it
    assert calls[-1] >= stop_at and all(d < stop_at for d in calls[:-1])
    assert calls[-1] < len(text), "cancelled only after the whole fragment was done"
    # a cancelled call leaves no half-made state behind
    short = text[:5000]
    assert lowered.encode(short).token_ids == reference.encode(short).token_ids
    enc = encode_chunked(lowered, text)
    assert enc is not None and enc.token_ids == reference.encode(text).token_ids


def test_cancel_early_in_normalizer(models: tuple[Model, Model], text: str) -> None:
    lowered, _ = models
    uncuttable(lowered, text, "words")
    calls: list[int] = []

    def report(done: int, total: int) -> bool:
        calls.append(done)
        return done == 0  # the first report that shows progress inside the call

    assert encode_chunked(lowered, text, report=report) is None
    # the report before the call, and the normalizer's own while it finds
    # where to look (no position yet), come first
    assert len(calls) >= 2 and 0 < calls[-1] < len(text) // 2


def test_plugin_without_checkpoints_still_reports_per_piece(models: tuple[Model, Model], text: str) -> None:
    """Without any hook installed (no report), nothing changes."""
    lowered, reference = models
    uncuttable(lowered, text, "words")
    enc = encode_chunked(lowered, text)
    assert enc is not None and enc.token_ids == reference.encode(text).token_ids


def _unused(_: Callable[[], None]) -> None:
    pass


def test_a_huge_piece_leaves_a_plugins_cached_vectors_alone(
        text: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """A huge uncuttable piece goes through the pipeline as the plugin's
    own vectors (no list of ints is made); a plugin that keeps the vectors
    it hands out (a cache) finds them as it left them."""
    from tokenprism.core.tokenizer import columns_method
    model, reference = open_model(vocab_path("nomic-bert-moe")), open_model(vocab_path("nomic-bert-moe"))
    inner = model.tokenizer
    inner_columns = columns_method(inner)
    kept: list[tuple[list[int], ...]] = []
    handed: list[Any] = []

    class Caching:  # a plugin that keeps every result it hands out
        def __getattr__(self, name: str) -> object:
            return getattr(inner, name)

        def encode_columns(self, fragment: str, first: bool) -> Any:
            cols = inner_columns(fragment, first)
            handed.append(cols)
            kept.append(tuple(list(c) for c in cols))
            return cols

    for t in (text, text.encode("ascii", "ignore").decode()):
        uncuttable(model, t, "words")
        kept.clear()
        handed.clear()
        want = reference.encode(t)
        monkeypatch.setattr(model, "tokenizer", Caching())
        enc = encode_chunked(model, t)
        monkeypatch.setattr(model, "tokenizer", inner)
        assert enc is not None
        assert (enc.token_ids, enc.starts, enc.ends, enc.byte_starts, enc.byte_ends, enc.groups) == \
            (want.token_ids, want.starts, want.ends, want.byte_starts, want.byte_ends, want.groups)
        assert len(handed) == 1, "the uncuttable piece is one plugin call"
        assert tuple(list(c) for c in handed[0]) == kept[0], "the plugin's vectors were changed"
        assert kept[0][0] == list(want.token_ids)
