"""What the plugins' progress tests share: running one ``encode_fragment``
call under a progress hook, to see its reports or to cancel it."""

from __future__ import annotations

import pytest

from tokenprism.core.gil import Cancelled, progress_hook
from tokenprism.core.tokenizer import FragmentResult, Tokenizer


def reports_of(tokenizer: Tokenizer, text: str) -> tuple[list[tuple[int, int]], FragmentResult]:
    """The ``(done, total)`` reports of one call on ``text``, and its result."""
    seen: list[tuple[int, int]] = []
    with progress_hook(lambda done, total: seen.append((done, total)) is None):
        res = tokenizer.encode_fragment(text, True)
    return seen, res


def cancel_at(tokenizer: Tokenizer, text: str, n: int) -> int:
    """Cancel one call on ``text`` at its ``n``-th report (it must raise
    :class:`Cancelled`); how many reports the hook saw."""
    calls = 0

    def stop(done: int, total: int) -> bool:
        nonlocal calls
        calls += 1
        return calls < n

    with progress_hook(stop), pytest.raises(Cancelled):
        tokenizer.encode_fragment(text, True)
    return calls
