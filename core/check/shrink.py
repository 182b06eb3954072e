"""Shrinking a diverging text to a minimal diverging string (delta
debugging: drop chunks, then single characters, while it still diverges)."""

from __future__ import annotations

from typing import Callable

__all__ = ["shrink"]


def shrink(text: str, diverges: Callable[[str], bool], budget: int = 20000) -> str:
    """A substring-by-deletion of ``text`` that still ``diverges`` and from
    which no single character can be removed while it still diverges
    (1-minimal), unless ``budget`` calls of ``diverges`` run out first.
    ``diverges(text)`` must be true."""
    seen: dict[str, bool] = {}
    calls = 0

    def test(s: str) -> bool:
        nonlocal calls
        if s not in seen:
            if calls >= budget:
                return False
            calls += 1
            seen[s] = diverges(s)
        return seen[s]

    current = text
    # chunks: halves, quarters, ... removed while it still diverges
    n = 2
    while len(current) >= 2:
        size = max(1, len(current) // n)
        removed = False
        start = 0
        while start < len(current):
            candidate = current[:start] + current[start + size:]
            if test(candidate):
                current = candidate
                removed = True
            else:
                start += size
        if removed:
            n = max(2, n - 1)
        elif size == 1:
            break
        else:
            n = min(len(current), n * 2)
    # single characters until none can go (a removal can enable another)
    changed = True
    while changed:
        changed = False
        for i in range(len(current)):
            candidate = current[:i] + current[i + 1:]
            if test(candidate):
                current = candidate
                changed = True
                break
    return current
