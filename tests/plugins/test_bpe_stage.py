"""The BPE plugin's staged output (``bpe._Stage``): a text's tokens are
written into small vectors and moved to the output a stage at a time. At
every stage boundary (mid-word, a word longer than a stage, more tokens
than characters, a short fragment) the columns are the words' own tokens,
laid end to end: each word merged alone, its spans moved by its offset."""

from __future__ import annotations

from typing import Callable

import pytest

from tokenprism.core import Model
from tokenprism.plugins.bpe.bpe import BpeTokenizer


def _word_by_word(tok: BpeTokenizer, text: str) -> tuple[list[int], list[int], list[int]]:
    ids: list[int] = []
    starts: list[int] = []
    ends: list[int] = []
    base = 0
    for w in tok.units(text):
        r = tok.word(w)
        ids += r.ids
        starts += [base + s for s in r.starts]
        ends += [base + e for e in r.ends]
        base += r.nbytes
    return ids, starts, ends


@pytest.mark.parametrize("text", [
    "a",
    "\U0001f642\u00e9\U0001f643",  # more tokens than characters, in a stage sized for them + 1
    "\U0001f642" * 1500 + " word" * 700,  # one word of ~6000 byte tokens: several stages inside it
    "".join(f" w{i}\u00e9\U0001f600," for i in range(3000)),  # stages filling mid-word again and again
])
# scanned words (gpt-2, llama-bpe), words of a regex list (deepseek-coder),
# escaped spaces (gemma-4)
@pytest.mark.parametrize("name", ["gpt-2", "llama-bpe", "deepseek-coder", "gemma-4"])
def test_staged_columns_are_the_words_tokens_end_to_end(ref_model: Callable[[str], Model], name: str,
                                                        text: str) -> None:
    tok = ref_model(name).tokenizer
    assert isinstance(tok, BpeTokenizer)
    want = _word_by_word(tok, text)
    ids, starts, ends = tok.encode_columns(text, False)
    assert (list(ids), list(starts), list(ends)) == want
    assert len(text) < 2048 or len(ids) > 2048  # (the long ones fill several stages)
