"""Turning a plugin's UTF-8 byte spans into character spans and groups
(compiled: runs once per token on every keystroke)."""


import numpy as np

from .gil import offer_gil


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
    """:func:`byte_to_char_spans` by one walk over the characters, for
    spans in text order (as every tokenizer gives them) instead of arrays
    the size of the text. The lists may be returned as they are (ASCII)."""
    if text.isascii():
        return starts, ends
    n = len(text)
    m = len(starts)
    cs = [0] * m
    ce = [0] * m
    ci = 0  # the cursor: character ci starts at byte bpos
    bpos = 0
    # steps back (overlapping tokens); spans far out of order would make
    # the walk quadratic, so then the arrays take over
    budget = 2 * n + 64
    for k in range(m):
        if (k & 4095) == 0:
            offer_gil()  # millions of tokens in a pasted text: let the GUI thread in
        x = starts[k]
        while bpos > x:
            ci -= 1
            bpos -= _clen(ord(text[ci]))
            budget -= 1
        while bpos < x and ci < n:
            w = _clen(ord(text[ci]))
            if bpos + w > x:
                break  # x is inside character ci
            bpos += w
            ci += 1
        cs[k] = ci
        y = ends[k]
        while bpos > y:
            ci -= 1
            bpos -= _clen(ord(text[ci]))
            budget -= 1
        while bpos < y and ci < n:
            bpos += _clen(ord(text[ci]))
            ci += 1
        ce[k] = ci  # past y when y is inside a character: that one counts
        if budget < 0:
            return byte_to_char_spans(text, starts, ends)
    return cs, ce


def _clen(c: int) -> int:
    """UTF-8 length of code point ``c`` (surrogates count 3, as with
    surrogatepass)."""
    if c < 0x80:
        return 1
    if c < 0x800:
        return 2
    if c < 0x10000:
        return 3
    return 4


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
    n = len(starts)
    groups = [-1] * n
    prev = -1  # last token with a non-empty span
    prev_end = 0
    for i in range(n):
        if (i & 4095) == 0:
            offer_gil()
        s = starts[i]
        e = ends[i]
        if s >= e:
            continue
        if prev >= 0 and s < prev_end:
            g = groups[prev]
            if g < 0:
                g = prev
                groups[prev] = g
            groups[i] = g
        prev = i
        prev_end = e
    return groups
