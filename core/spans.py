"""Turning a plugin's UTF-8 byte spans into character spans and groups
(compiled: runs once per token on every keystroke)."""


import numpy as np


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
    """:func:`byte_to_char_spans` for spans in text order (each list not
    decreasing, as every tokenizer gives them): one walk over the
    characters instead of arrays the size of the text. The lists may be returned as
    they are (ASCII text)."""
    if text.isascii():
        return starts, ends
    cs = _walk(text, starts, True)
    ce = _walk(text, ends, False)
    if cs is None or ce is None:
        return byte_to_char_spans(text, starts, ends)
    return cs, ce


def _walk(text: str, offsets: list[int], is_start: bool) -> list[int] | None:
    # one step per character; an offset inside a character maps to that
    # character for a start, to the one after it for an end. None when the
    # offsets go backwards.
    n = len(text)
    out = [0] * len(offsets)
    ci = 0
    bpos = 0
    prev = 0
    for k in range(len(offsets)):
        x = offsets[k]
        if x < prev:
            return None
        prev = x
        while bpos < x and ci < n:
            c = ord(text[ci])
            bpos += 1 if c < 0x80 else 2 if c < 0x800 else 3 if c < 0x10000 else 4
            ci += 1
        if bpos > x and is_start:
            out[k] = ci - 1
        else:
            out[k] = ci
    return out


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
