"""Turning a plugin's UTF-8 byte spans into character spans and groups
(compiled: runs once per token on every keystroke)."""

from __future__ import annotations

from librt.vecs import append, vec

# native 64-bit ints in the compiled walk (no overflow checks), plain ints
# when run as Python; imported at run time too, as vec[i64] names it
from librt.strings import BytesWriter, read_i64_le, write_i64_le
from mypy_extensions import i64

from .columns import as_column, filled
from .int_column import Column, IntColumn
from .gil import offer_gil


def byte_to_char_spans(text: str, starts: list[int], ends: list[int]) -> tuple[list[int], list[int]]:
    """Turn UTF-8 byte spans into ``str`` spans, widening a span that starts
    or ends inside a character to that whole character."""
    if text.isascii():
        return list(starts), list(ends)
    import numpy as np  # (a fallback: the walks below need none)

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
    cols = _char_columns(text, vec[i64](starts), vec[i64](ends))
    if cols is None:
        return byte_to_char_spans(text, starts, ends)
    return list(cols[0]), list(cols[1])


def char_columns(text: str, bstarts: vec[i64], bends: vec[i64], bs: Column,
                 be: Column) -> tuple[Column, Column, Column]:
    """``(starts, ends, groups)`` of the tokens whose UTF-8 byte spans are
    ``bstarts``/``bends`` (``bs``/``be``: their columns, which ASCII text's
    char spans are): one walk along the spans for the char spans and the
    groups (ASCII: one pass over the byte spans finds the groups).

    No int object is made per value: the columns are
    :class:`~tokenprism.core.encoding.IntColumn` arrays copied from native
    vectors (ASCII char spans are the byte span columns themselves), and
    ungrouped tokens share one -1. Making and freeing an int per value
    (allocation, page faults, cache misses) was most of the core's time on
    long non-ASCII text."""
    n = len(bstarts)
    if text.isascii():
        return bs, be, _group_column(_groups(bstarts, bends), n)
    cont = continuation_bytes(text)
    if cont is not None:
        cols = _sparse_char_columns(cont, bstarts, bends)
        if cols is not None:
            return as_column(cols[0]), as_column(cols[1]), _group_column(cols[2], n)
    cols = _char_columns(text, bstarts, bends)
    if cols is None:
        cs, ce = byte_to_char_spans(text, list(bstarts), list(bends))
        return IntColumn(cs), IntColumn(ce), _group_column(_groups(vec[i64](cs), vec[i64](ce)), n)
    return as_column(cols[0]), as_column(cols[1]), _group_column(cols[2], n)


def _group_column(groups: vec[i64], n: int) -> Column:
    """The groups column of ``n`` tokens from :func:`_groups`' vector."""
    return as_column(groups) if len(groups) else (-1,) * n


def continuation_bytes(text: str, most: i64 = -1) -> bytes | None:
    """The offsets of the UTF-8 continuation bytes of ``text`` (each a
    native int64, little-endian), or None when there are more than
    ``most`` of them (default: half the text's length, at least 64k).

    A character's offset is its first byte's offset less the continuation
    bytes before it, so where non-ASCII characters are few (code, most
    prose) the char spans come from a walk over the tokens and these
    offsets: a walk over the characters (``ord(text[i])`` each) was 90 ms
    of a 5 MB source text with 60 non-ASCII characters. Dense scripts
    (CJK: two a character) keep the character walk, whose memory does
    not grow with the text."""
    data = text.encode("utf-8", "surrogatepass")
    count: i64 = len(data) - len(text)  # each character adds its width - 1
    limit: i64 = most if most >= 0 else max(len(text) // 2, 1 << 16)
    if count > limit:
        return None
    w = BytesWriter()
    i: i64 = 0
    n: i64 = len(data)
    while i < n:  # native: ~1 ns a byte
        if data[i] & 0xC0 == 0x80:
            write_i64_le(w, i)
        i += 1
    return w.getvalue()


def _sparse_char_columns(cont: bytes, starts: vec[i64],
                         ends: vec[i64]) -> tuple[vec[i64], vec[i64], vec[i64]] | None:
    """Char starts, char ends and groups of the byte spans (as
    :func:`_char_columns` gives them) from :func:`continuation_bytes`'
    offsets: a start less the continuation bytes at or before it (inside a
    character: back to its start), an end less those before it (inside
    one: past it). Two cursors move along the offsets as the spans go,
    each with the offsets on either side of it at hand, so a token between
    two non-ASCII characters reads nothing more; None when the spans step
    back too far (the character walk or the arrays then take over)."""
    kc: i64 = len(cont) // 8
    m: i64 = len(starts)
    big: i64 = 1 << 62
    cs = vec[i64](capacity=m)
    ce = vec[i64](capacity=m)
    # cursor a: the continuation bytes at or before the current start;
    # a_lo / a_hi: the offsets just below and at the cursor (or beyond all)
    a: i64 = 0
    a_lo: i64 = -1
    a_hi: i64 = big
    if kc > 0:
        a_hi = read_i64_le(cont, 0)
    # cursor b: those before the current end, likewise
    b: i64 = 0
    b_lo: i64 = -1
    b_hi: i64 = a_hi
    budget: i64 = 2 * kc + 64
    # the groups, as _groups makes them (the same state, kept here too so
    # the columns take one pass)
    groups = vec[i64]()  # filled at the first group
    prev: i64 = -1
    prev_end: i64 = 0
    in_group = False
    group: i64 = -1
    k: i64 = 0
    while k < m:
        if (k & 4095) == 0:
            offer_gil()
        x: i64 = starts[k]
        if a_hi <= x or a_lo > x:
            while a < kc and read_i64_le(cont, a << 3) <= x:
                a += 1
            while a > 0 and read_i64_le(cont, (a - 1) << 3) > x:
                a -= 1
                budget -= 1
            # (if statements: a conditional expression of an i64 and a
            # literal boxes its value in the compiled code)
            a_lo = -1
            if a > 0:
                a_lo = read_i64_le(cont, (a - 1) << 3)
            a_hi = big
            if a < kc:
                a_hi = read_i64_le(cont, a << 3)
        y: i64 = ends[k]
        if b_hi < y or b_lo >= y:
            while b < kc and read_i64_le(cont, b << 3) < y:
                b += 1
            while b > 0 and read_i64_le(cont, (b - 1) << 3) >= y:
                b -= 1
                budget -= 1
            b_lo = -1
            if b > 0:
                b_lo = read_i64_le(cont, (b - 1) << 3)
            b_hi = big
            if b < kc:
                b_hi = read_i64_le(cont, b << 3)
        if budget < 0:
            return None
        s = x - a
        e = y - b
        cs = append(cs, s)
        ce = append(ce, e)
        # the groups, as _groups and _char_columns keep them: written out in
        # each walk, since a call per token (mypyc inlines none) is what
        # these walks exist to save
        if s < e:
            if prev >= 0 and s < prev_end:
                if len(groups) == 0:
                    groups = filled(m, -1)
                if not in_group:
                    group = prev
                    groups[prev] = group
                    in_group = True
                groups[k] = group
            else:
                in_group = False
            prev = k
            prev_end = e
        k += 1
    return cs, ce, groups


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


def _char_columns(text: str, starts: vec[i64], ends: vec[i64]) -> tuple[vec[i64], vec[i64], vec[i64]] | None:
    """Char starts and char ends of the UTF-8 byte spans into ``text``, and
    their groups as :func:`_groups` makes them (empty: none); None when the
    spans are too far out of text order for one walk. A start inside a
    character moves back to that character's start, an end inside one
    moves past it (as :func:`byte_to_char_spans`).

    The walk goes a character at a time (its width from its code point),
    not a byte at a time over the encoded text: on mixed scripts, about
    half the steps, and no encoded copy of the text. The columns are
    native int64 vectors, not lists: an int object per value (allocated,
    page-faulted in, freed again) was most of this walk's time on long
    non-ASCII text."""
    n: i64 = len(text)
    m: i64 = len(starts)
    cs = vec[i64](capacity=m)
    ce = vec[i64](capacity=m)
    ci: i64 = 0  # the cursor: character ci starts at byte bpos
    bpos: i64 = 0
    # steps back (overlapping tokens); spans far out of order would make
    # the walk quadratic, so then the arrays take over
    budget: i64 = 2 * n + 64
    # the groups (see _groups): the last token that covers something, and
    # whether it is in a group already
    groups = vec[i64]()  # filled at the first group
    prev: i64 = -1
    prev_end: i64 = 0
    in_group = False
    group: i64 = -1
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
        cs = append(cs, s)
        ce = append(ce, e)
        if s < e:
            if prev >= 0 and s < prev_end:
                if len(groups) == 0:
                    groups = filled(m, -1)
                if not in_group:
                    group = prev
                    groups[prev] = group
                    in_group = True
                groups[k] = group
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
    groups = _groups(vec[i64](starts), vec[i64](ends))
    return list(groups) if len(groups) else [-1] * len(starts)


def _groups(starts: vec[i64], ends: vec[i64]) -> vec[i64]:
    """:func:`assign_groups` as a vector; empty when no token is in a group."""
    n: i64 = len(starts)
    groups = vec[i64]()  # filled at the first group
    prev: i64 = -1
    prev_end: i64 = 0
    in_group = False
    group: i64 = -1
    i: i64 = 0
    while i < n:
        if (i & 4095) == 0:
            offer_gil()
        s = starts[i]
        e = ends[i]
        if s < e:
            if prev >= 0 and s < prev_end:
                if len(groups) == 0:
                    groups = filled(n, -1)
                if not in_group:
                    group = prev
                    groups[prev] = group
                    in_group = True
                groups[i] = group
            else:
                in_group = False
            prev = i
            prev_end = e
        i += 1
    return groups

