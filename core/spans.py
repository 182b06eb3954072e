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


def assign_groups(starts: list[int], ends: list[int]) -> list[int]:
    """Group consecutive tokens that share a character: each token of a
    group gets the index of the group's first token; others get -1."""
    n = len(starts)
    groups = [-1] * n
    prev = -1  # last token with a non-empty span
    for i in range(n):
        if starts[i] >= ends[i]:
            continue
        if prev >= 0 and starts[i] < ends[prev]:
            g = groups[prev]
            if g < 0:
                g = prev
                groups[prev] = g
            groups[i] = g
        prev = i
    return groups
