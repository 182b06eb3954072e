"""``tokenprism explain`` (issue #28): the stages as text or JSON, and the
one-line refusals."""

from __future__ import annotations

import json

import pytest

from tests.refdata import VOCAB_DIR, vocab_path
from tokenprism.app.cli import main
from tokenprism.core.library.resources import demo_models

pytestmark = pytest.mark.skipif(VOCAB_DIR is None, reason="reference vocabs not found")


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


def test_json(capsys: pytest.CaptureFixture[str]) -> None:
    # options anywhere, as for the other commands
    code, out, err = run(capsys, "explain", "--format", "json", vocab_path("llama-spm"), "<s>Hi naïve",
                         "--add-special", "--parse-special")
    assert code == 0 and err == ""
    data = json.loads(out)
    assert data["ids"] == [1, 1, 6324, 1055, 30085, 345]  # llama.cpp: BOS, <s>, ▁Hi ▁na ï ve
    assert [s["name"] for s in data["stages"]] == ["special", "normalize", "pre_tokenize", "model", "post"]
    model = data["stages"][3]
    assert model["algorithm"] == "spm"
    assert [(w["text"], w["start"], w["end"], w["tokens"]) for w in model["words"]] == [
        ("\u2581Hi", 3, 5, [6324]), ("\u2581naïve", 5, 11, [1055, 30085, 345])]
    assert model["words"][0]["steps"][0]["kind"] == "symbols"


def test_text_story(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "explain", vocab_path("gpt-2"), "naïve 123")
    assert code == 0 and err == ""
    for line in ("1. special tokens", "2. normalizer", "3. pre-tokenizer", "4. model (bpe): 2 word(s)",
                 "5. post", "ids:    2616 38776 17031"):
        assert line in out
    # a byte-level merge shown with its bytes
    assert "'Ã' + '¯' -> 'Ã¯'" in out and "(bytes 'ï')" in out


def test_ugm_and_wpm_text(capsys: pytest.CaptureFixture[str]) -> None:
    # the bundled Unigram demo opens in a fraction of nomic-bert-moe's time
    code, out, _ = run(capsys, "explain", str(demo_models()["ugm"]), "hello")
    assert code == 0 and "lattice of '▁hello'" in out and "1. " in out and "(best)" in out
    code, out, _ = run(capsys, "explain", vocab_path("bert-bge"), "unaffable")
    assert code == 0 and "at 0 (word start): '▁unaffable'✗" in out and "(## continuation)" in out


def test_max_chars_refused(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "explain", vocab_path("llama-spm"), "x" * 30, "--max-chars", "20")
    assert code == 1 and out == ""
    assert err == "tokenprism: error: the text has 30 characters; explain takes at most 20 (--max-chars N allows more)\n"
    code, _, err = run(capsys, "explain", vocab_path("llama-spm"), "x", "--max-chars", "0")
    assert code == 1 and "--max-chars must be 1 or more" in err


def test_max_chars_has_a_ceiling(capsys: pytest.CaptureFixture[str]) -> None:
    from tokenprism.app.cli.explain import CEILING
    from tokenprism.core.model import EXPLAIN_CEILING

    assert CEILING == EXPLAIN_CEILING == 50_000  # the parser's copy of the core's number
    # 100 000 characters took 611 MB on nomic-bert-moe: refused in one line, the model never opened
    code, out, err = run(capsys, "explain", "no-such.gguf", "x" * 100_000, "--max-chars", "200000")
    assert (code, out) == (1, "")
    assert err == ("tokenprism: error: --max-chars is at most 50,000 (not 200,000): a trace's memory grows with "
                   "the text; explain a part of it\n")
    code, out, _ = run(capsys, "explain", vocab_path("llama-spm"), "x" * 9, "--max-chars", "50000")
    assert code == 0 and "ids:" in out
