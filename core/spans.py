"""Turning a plugin's UTF-8 byte spans into character spans and groups
(compiled: runs once per token on every keystroke)."""

from __future__ import annotations

from typing import TYPE_CHECKING, cast

import numpy as np

from .gil import offer_gil

if TYPE_CHECKING:
    # native 64-bit ints in the compiled walk (no overflow checks); plain
    # ints when run as Python
    from mypy_extensions import i64


def byte_to_char_spans(text: str, starts: list[int], ends: list[int]) -> tuple[list[int], list[int]]:
    """Turn UTF-8 byte spans into ``str`` spans, widening a span that starts
    or ends inside a character to that whole character."""
    if text.isascii():
        return list(starts), list(ends)
    data = np.frombuffer(text.encode("utf-8", "surrogatepass"), dtype=np.uint8)
    is_start = np.empty(len(data) + 1, dtype=np.bool_)
    is_start[:-1] = (data & 0xC0) != 0x80
    is_start[-1] = True
    cum = np.cumsum(is_start)
    s = np.asarray(starts, dtype=np.int64)
    e = np.asarray(ends, dtype=np.int64)
    cs = cum[s] - 1
    ce = np.where(is_start[e], cum[e] - 1, cum[e])
    return cs.tolist(), ce.tolist()


def char_spans(text: str, starts: list[int], ends: list[int]) -> tuple[list[int], list[int]]:
    """:func:`byte_to_char_spans` by one walk over the UTF-8 bytes, for
    spans in text order (as every tokenizer gives them) instead of arrays
    the size of the text. The lists may be returned as they are (ASCII)."""
    if text.isascii():
        return starts, ends
    cols = _char_columns(text, starts, ends)
    if cols is None:
        return byte_to_char_spans(text, starts, ends)
    return cast("list[int]", cols[0]), cast("list[int]", cols[1])


def _columns_of(text: str, starts: list[int], ends: list[int]) -> tuple[list[int], list[int], tuple[int, ...]]:
    """:func:`char_spans` of non-ASCII ``text`` and the groups of those spans."""
    cols = _char_columns(text, starts, ends)
    if cols is None:
        cs, ce = byte_to_char_spans(text, starts, ends)
        return cs, ce, _groups(cs, ce)
    cs = cast("list[int]", cols[0])
    ce = cast("list[int]", cols[1])
    gs = cols[2]
    return cs, ce, cast("tuple[int, ...]", tuple(gs)) if gs else (-1,) * len(cs)


Columns = tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...], tuple[int, ...], tuple[int, ...]]


def span_columns(text: str, bstarts: list[int], bends: list[int]) -> Columns:
    """``(starts, ends, byte_starts, byte_ends, groups)`` of an
    :class:`~tokenprism.core.encoding.Encoding`, from a plugin's byte spans
    of ``text``: one walk along the text for the char spans and the groups
    (ASCII: the byte spans are the char spans, and one pass over them
    finds the groups).

    The int objects are as few as the values allow: ASCII char spans are
    the byte span tuples themselves, a char start or end equal to the
    previous token's is that token's object (the partial tokens of one
    character all share two), and ungrouped tokens share one -1. Making
    and freeing an int per value (allocation, page faults, cache misses)
    was most of the core's time on long non-ASCII text."""
    bs = tuple(bstarts)
    be = tuple(bends)
    if text.isascii():
        return bs, be, bs, be, _groups(bstarts, bends)
    cs, ce, groups = _columns_of(text, bstarts, bends)
    return tuple(cs), tuple(ce), bs, be, groups


def utf8_width(c: i64) -> i64:
    """UTF-8 length of code point ``c`` (a lone surrogate: 3, as
    ``surrogatepass`` encodes it)."""
    if c < 0x80:
        return 1
    if c < 0x800:
        return 2
    if c < 0x10000:
        return 3
    return 4


def _char_columns(text: str, starts: list[int],
                  ends: list[int]) -> tuple[list[object], list[object], list[object]] | None:
    """Char starts and char ends of the UTF-8 byte spans into ``text``, and
    their groups as :func:`_groups` makes them (empty: none); None when the
    spans are too far out of text order for one walk. A start inside a
    character moves back to that character's start, an end inside one
    moves past it (as :func:`byte_to_char_spans`).

    The walk goes a character at a time (its width from its code point),
    not a byte at a time over the encoded text: on mixed scripts, about
    half the steps, and no encoded copy of the text."""
    n: i64 = len(text)
    m: i64 = len(starts)
    neg: object = -1
    # filled by index: cheaper than appending, no regrowth
    cs: list[object] = [neg] * m
    ce: list[object] = [neg] * m
    ci: i64 = 0  # the cursor: character ci starts at byte bpos
    bpos: i64 = 0
    # steps back (overlapping tokens); spans far out of order would make
    # the walk quadratic, so then the arrays take over
    budget: i64 = 2 * n + 64
    last_start: i64 = -1  # the previous token's char span, and its int objects
    last_start_obj: object = neg
    last_end: i64 = -1
    last_end_obj: object = neg
    # the groups (see _groups): the last token that covers something, and
    # whether it is in a group already
    groups: list[object] = []  # made at the first group
    prev: i64 = -1
    prev_end: i64 = 0
    in_group = False
    group_obj: object = neg
    k: i64 = 0
    while k < m:
        if (k & 4095) == 0:
            offer_gil()  # millions of tokens in a pasted text: let the GUI thread in
        x: i64 = starts[k]
        while bpos > x and ci > 0:
            ci -= 1
            bpos -= utf8_width(ord(text[ci]))
            budget -= 1
        while ci < n:
            w: i64 = utf8_width(ord(text[ci]))
            if bpos + w > x:
                break
            bpos += w
            ci += 1
        s = ci  # the character that holds byte x (or starts at it)
        y: i64 = ends[k]
        while bpos > y and ci > 0:
            ci -= 1
            bpos -= utf8_width(ord(text[ci]))
            budget -= 1
        while ci < n:
            w = utf8_width(ord(text[ci]))
            if bpos + w > y:
                break
            bpos += w
            ci += 1
        e: i64 = ci if bpos >= y or ci >= n else ci + 1  # y inside character ci: past it
        if budget < 0:
            return None
        # the partial tokens of one character have the same span: their
        # ints are the previous token's, not new objects
        s_obj: object
        if s == last_end:
            s_obj = last_end_obj
        elif s == last_start:
            s_obj = last_start_obj
        else:
            s_obj = s
        e_obj: object
        if e == s:
            e_obj = s_obj
        elif e == last_end:
            e_obj = last_end_obj
        else:
            e_obj = e
        cs[k] = s_obj
        ce[k] = e_obj
        last_start = s
        last_start_obj = s_obj
        last_end = e
        last_end_obj = e_obj
        if s < e:
            if prev >= 0 and s < prev_end:
                if not groups:
                    groups = [neg] * m
                if not in_group:
                    group_obj = prev
                    groups[prev] = group_obj
                    in_group = True
                groups[k] = group_obj
            else:
                in_group = False
            prev = k
            prev_end = e
        k += 1
    return cs, ce, groups


def shift_into(dst: list[int], src: list[int], delta: int) -> None:
    """Append every value of ``src`` plus ``delta`` to ``dst``."""
    if delta == 0:
        dst.extend(src)
        return
    for x in src:
        dst.append(x + delta)


def assign_groups(starts: list[int], ends: list[int]) -> list[int]:
    """Group consecutive tokens that share a character: each token of a
    group gets the index of the group's first token; others get -1."""
    return list(_groups(starts, ends))


def _groups(starts: list[int], ends: list[int]) -> tuple[int, ...]:
    """:func:`assign_groups` as a tuple; one shared -1 and one int object
    per group (a group's tokens hold the same index)."""
    n = len(starts)
    neg: object = -1
    groups: list[object] = []  # made at the first group
    prev = -1
    prev_end = 0
    in_group = False
    group_obj: object = neg
    for i in range(n):
        if (i & 4095) == 0:
            offer_gil()
        s = starts[i]
        e = ends[i]
        if s >= e:
            continue
        if prev >= 0 and s < prev_end:
            if not groups:
                groups = [neg] * n
            if not in_group:
                groups[prev] = prev
                group_obj = groups[prev]
                in_group = True
            groups[i] = group_obj
        else:
            in_group = False
        prev = i
        prev_end = e
    return cast("tuple[int, ...]", tuple(groups)) if groups else (-1,) * n
