"""``UnicodeTables.collapse`` before the 1.1M-entry table exists (by
``str.translate`` in the pure build, by ``custom_split.collapse`` compiled;
no numpy either way) gives the bytes the table gives."""

from __future__ import annotations

import pytest

from tokenprism.plugins.bpe.pretokenize import NATIVE_CUSTOM_SPLIT, UnicodeTables, collapse_text

TEXTS = [
    "Hello world",
    "héllo wörld, съешь же ещё 日本語 😀 \u00a0\u2003x\u0301 ١٢٣ ∑ «»",
    "a\ud800b\udcffc",  # lone surrogates, as a text read with surrogateescape holds
    "".join(chr(c) for c in range(0x80, 0x80 + 3000)),  # more distinct chars than the translate path takes
]


@pytest.mark.parametrize("text", TEXTS)
def test_translate_path_equals_the_table(text: str) -> None:
    fresh = UnicodeTables()
    got = fresh.collapse(text)
    assert fresh._collapse_bytes is None or len(set(text)) > 2048
    want = collapse_text(UnicodeTables().collapse_bytes(), text).encode("latin-1")
    assert got == want and len(got) == len(text)
    # ASCII stays itself; the rest become representative chars
    assert all(b == ord(c) for b, c in zip(got, text) if c < "\x80")


def test_repeat_calls_reuse_the_reps() -> None:
    fresh = UnicodeTables()
    first = fresh.collapse("ünïcode ünïcode")
    assert fresh.collapse("ünïcode") == first[:7]
    if not NATIVE_CUSTOM_SPLIT:  # (compiled, custom_split's memo keeps them: test_collapse.py)
        assert {ord("ü"), ord("ï")} <= set(fresh._reps)
