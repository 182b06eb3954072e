"""Finding special-token text: every occurrence of every special text,
overlapping ones included, checked against a plain search at every
position. Vocabularies whose special texts start with few characters take
the str.find path, those with many the per-character scan."""

from __future__ import annotations

from pathlib import Path

import gguf
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.ggufmaker import write_vocab_gguf
from tokenprism.core.gguf_file import read_gguf
from tokenprism.core.special import SpecialMatcher
from tokenprism.core.vocab import vocab_from_gguf

FEW = ["<a>", "<a><b>", "<b", "  ", "   ", " <"]
# more distinct first characters than the str.find path takes
MANY = FEW + [chr(0x4E00 + k) + "x" for k in range(40)] + ["😀😀"]
ALPHABET = "<>ab x😀" + "".join(chr(0x4E00 + k) for k in range(3))


def _matcher(path: Path, specials: list[str]) -> SpecialMatcher:
    tokens = ["<unk>", "a", "b"] + specials
    types = [int(gguf.TokenType.UNKNOWN)] + [int(gguf.TokenType.NORMAL)] * 2 + \
        [int(gguf.TokenType.USER_DEFINED)] * len(specials)
    return SpecialMatcher(vocab_from_gguf(read_gguf(write_vocab_gguf(path, tokens, types=types))), False)


@pytest.fixture(scope="module")
def matchers(tmp_path_factory: pytest.TempPathFactory) -> list[SpecialMatcher]:
    d = tmp_path_factory.mktemp("special")
    out = [_matcher(d / "few.gguf", FEW), _matcher(d / "many.gguf", MANY)]
    assert len(out[0].first_chars) < 8 < 32 < len(out[1].first_chars)
    return out


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=ALPHABET, max_size=40))
def test_occurrences_are_every_match(matchers: list[SpecialMatcher], text: str) -> None:
    for m in matchers:
        want = {tid: [i for i in range(len(text)) if text.startswith(s, i)] for s, tid in m.by_text.items()}
        assert m.occurrences(text) == {tid: pos for tid, pos in want.items() if pos}
