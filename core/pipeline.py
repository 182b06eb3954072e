"""The one encode pipeline, stage by stage, as every caller drives it.

``Model.encode`` runs it over a whole text; incremental retokenizing runs
it over the segments an edit changed, and chunked encoding over one piece
of a huge text at a time. The stages, in Hugging Face ``tokenizers``'
words:

1. special tokens: :meth:`SpecialMatcher.partition` cuts the text into
   fragments, and :func:`~.special.segments` says which plain fragment
   follows a special token;
2. model (normalizer and pre-tokenizer included, inside the plugin):
   :func:`encode_segments` tokenizes the segments and walks their byte
   spans into character spans and byte-fallback groups;
3. post-processor: :func:`special_ends` says which BOS/EOS ids stand
   before and after the text, and :func:`with_special_ends` /
   :func:`end_columns` place them.

>>> model = open_model(demo("spm"))
>>> segs = segments(model.fragments("Hi<s>", parse_special=True))
>>> [tuple(s) for s in segs]
[(0, 2, -1, True), (2, 5, 1, False)]
>>> cols = encode_segments(model.tokenizer, "Hi<s>", segs)
>>> cols.ids == model.encode("Hi<s>", parse_special=True).ids
True
"""

from __future__ import annotations

import sys
from array import array
from typing import NamedTuple, Sequence

from librt.vecs import vec
from mypy_extensions import i64

from .columns import as_column, segments_columns
from .int_column import Column, IntColumn
from .spans import char_columns
from .special import Segment, segments
from .tokenizer import Tokenizer, TokenizerConfig

__all__ = ["ByteColumns", "CharSpans", "SpanColumns", "encode_bytes", "encode_segments", "end_columns",
           "extend_shifted", "segments", "special_ends", "with_special_ends"]


class SpanColumns(NamedTuple):
    """The per-token columns of an :class:`~.encoding.Encoding`, for some
    consecutive segments of a text: offsets counted from where the first
    segment starts (characters and UTF-8 bytes), ``groups`` from the
    first token of these columns."""

    ids: Column
    starts: Column
    ends: Column
    byte_starts: Column
    byte_ends: Column
    groups: Column


class CharSpans(NamedTuple):
    """What the character columns of some tokens are made from: the text
    they cover and their UTF-8 byte spans in it (native vectors)."""

    text: str
    bstarts: vec[i64]
    bends: vec[i64]

    def columns(self, byte_starts: Column, byte_ends: Column) -> tuple[Column, Column, Column]:
        """``(starts, ends, groups)`` (``byte_starts``/``byte_ends``: the
        byte spans' columns, shared as the char spans of ASCII text)."""
        return char_columns(self.text, self.bstarts, self.bends, byte_starts, byte_ends)


class ByteColumns(NamedTuple):
    """Stage 2's ids and byte spans, and what the char spans come from."""

    ids: Column
    byte_starts: Column
    byte_ends: Column
    chars: CharSpans


def encode_bytes(tokenizer: Tokenizer, text: str, segs: list[Segment]) -> ByteColumns:
    """Stage 2 over ``segs`` (consecutive, in text order) up to the byte
    spans: the tokens of ``text[segs[0].start:segs[-1].end]``, offsets
    counted from there. The character spans and groups are one call away
    (``chars.columns``): a caller may leave them to whoever asks
    (``Model.encode``: they were 20-25% of a first encode of 5 MB that
    only wanted the ids)."""
    if not segs:
        empty = IntColumn()
        return ByteColumns(empty, empty, empty, CharSpans("", vec[i64](), vec[i64]()))
    ids, bstarts, bends = segments_columns(tokenizer, text, segs)
    lo, hi = segs[0].start, segs[-1].end
    chars = CharSpans(text if lo == 0 and hi == len(text) else text[lo:hi], bstarts, bends)
    return ByteColumns(as_column(ids), as_column(bstarts), as_column(bends), chars)


def encode_segments(tokenizer: Tokenizer, text: str, segs: list[Segment]) -> SpanColumns:
    """Stage 2 over ``segs`` (consecutive, in text order): the tokens of
    ``text[segs[0].start:segs[-1].end]`` and their spans."""
    if not segs:
        empty = IntColumn()
        return SpanColumns(empty, empty, empty, empty, empty, empty)
    ids, byte_starts, byte_ends, chars = encode_bytes(tokenizer, text, segs)
    starts, ends, groups = chars.columns(byte_starts, byte_ends)
    return SpanColumns(ids, starts, ends, byte_starts, byte_ends, groups)


def special_ends(config: TokenizerConfig, add_special: bool) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """Stage 3: the special ids that stand before and after the text (BOS,
    EOS, BERT's CLS/SEP), as llama.cpp adds them with ``add_special``."""
    if not add_special:
        return (), ()
    return tuple(config.special_prefix), tuple(config.special_suffix)


def end_columns(prefix: Sequence[int], suffix: Sequence[int], n_chars: int,
                n_bytes: int) -> tuple[list[list[int]], list[list[int]]]:
    """The six columns' values of the tokens :func:`special_ends` gives:
    empty spans at the start and at the end of the text, in no group."""
    p, s = len(prefix), len(suffix)
    head = [list(prefix), [0] * p, [0] * p, [0] * p, [0] * p, [-1] * p]
    tail = [list(suffix), [n_chars] * s, [n_chars] * s, [n_bytes] * s, [n_bytes] * s, [-1] * s]
    return head, tail


def with_special_ends(cols: SpanColumns, prefix: Sequence[int], suffix: Sequence[int], n_chars: int,
                      n_bytes: int) -> SpanColumns:
    """``cols`` of a whole text with the special tokens around it; the
    text's groups move by the tokens put before them."""
    if not prefix and not suffix:
        return cols
    head, tail = end_columns(prefix, suffix, n_chars, n_bytes)
    out: list[Column] = []
    for c, col in enumerate(cols):
        flat = IntColumn(head[c])
        extend_shifted(flat, col, len(prefix) if c == 5 else 0, groups=c == 5)
        flat.fromlist(tail[c])
        out.append(flat)
    return SpanColumns(*out)


_FEW = 4096
"""Values shifted in a loop while numpy is not imported yet (a loop's ~60 ns
each against numpy's import). Once it is (the desktop app), numpy shifts
any number: 64 values in 2.7 against 3.8 us, 2 048 in 5.4 against 124 us,
and a keystroke in the middle of a 10 KB text shifts ~2 000 tokens' spans
in each of several columns."""


def extend_shifted(out: IntColumn, values: Column | array[int], d: int, groups: bool) -> None:
    """Append ``values`` plus ``d`` to ``out`` (``groups``: only the values
    >= 0 move; -1 means no group). numpy for many values: a memcpy's cost,
    where a loop over a 10 MB text's millions of values would take seconds;
    a few (a short text: the command line's) in a loop, without numpy's
    import."""
    if d and len(values) <= _FEW and "numpy" not in sys.modules:
        out.extend([x + d if x >= 0 or not groups else x for x in values])
    elif d:
        import numpy as np

        v = np.frombuffer(IntColumn(values) if isinstance(values, tuple) else values, dtype=np.int64)
        out.frombytes((np.where(v >= 0, v + d, v) if groups else v + d).tobytes())
    else:
        out.extend(values)
