"""Finding special-token text: every occurrence of every special text,
overlapping ones included, checked against a plain search at every
position. Vocabularies whose special texts start with few characters take
the str.find path, those with many the per-character scan."""

from __future__ import annotations

from pathlib import Path

import gguf
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from tests.ggufmaker import write_vocab_gguf
from tokenprism.core.gguf_file import read_gguf
from tokenprism.core.special import SpecialMatcher
from tokenprism.core.vocab import Attr, vocab_from_gguf

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


def _partition_like_llama(m: SpecialMatcher, text: str) -> list[tuple[int, int, int]]:
    """tokenizer_st_partition's loop, written the way llama.cpp writes it:
    each special text in turn is searched left to right in every plain
    fragment left so far; LSTRIP/RSTRIP take the C whitespace beside a
    match within its fragment (here counted into the special's span)."""
    frags = [(0, len(text), -1)] if text else []
    for tid in sorted(m.order, key=lambda t: m.order[t]):
        s, strip = m.text_of[tid], m.strip[tid]
        out: list[tuple[int, int, int]] = []
        for a, b, t in frags:
            if t >= 0:
                out.append((a, b, t))
                continue
            pos = a
            while (p := text.find(s, pos, b)) >= 0:
                left, right = p, p + len(s)
                while strip & Attr.LSTRIP and left > pos and text[left - 1] in " \t\n\v\f\r":
                    left -= 1
                while strip & Attr.RSTRIP and right < b and text[right] in " \t\n\v\f\r":
                    right += 1
                if left > pos:
                    out.append((pos, left, -1))
                out.append((left, right, tid))
                pos = right
            if pos < b:
                out.append((pos, b, -1))
        frags = out
    return frags


@settings(max_examples=400, deadline=None)
@given(st.text(alphabet=ALPHABET + "\t\n", max_size=60), st.lists(st.integers(0, 3), min_size=8, max_size=8))
# whitespace that an earlier (longer) special took is not taken again
@example("x   <a>", [3] * 8)
@example("<a>    b", [3] * 8)
@example("a \t<a> <a>\n <b  <a><b>", [3] * 8)
def test_partition_replays_llama_cpps_order(matchers: list[SpecialMatcher], text: str, strips: list[int]) -> None:
    for m in matchers:
        # some texts swallow whitespace on one side or both, as lstrip/rstrip tokens do
        saved = dict(m.strip)
        try:
            for k, tid in enumerate(sorted(m.order)[:8]):
                m.strip[tid] = (Attr.LSTRIP if strips[k] & 1 else 0) | (Attr.RSTRIP if strips[k] & 2 else 0)
            got = [(f.start, f.end, f.token) for f in m.partition(text)]
            assert got == _partition_like_llama(m, text)
        finally:
            m.strip.clear()
            m.strip.update(saved)
