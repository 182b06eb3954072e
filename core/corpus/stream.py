"""One document counted while it is read, in pieces of about :data:`STEP`
characters, so a 100 MB line is never held whole (nor its tokens).

Each model cuts the document at its own plugin's cut points
(:func:`~tokenprism.core.tokenizer.cut_points`: no token crosses them and
each side tokenizes on its own), only where a word ends (a cut that is
also a whitespace boundary), so the words are the same for every model.
The pieces' tokens then add up to ``model.encode(document)``'s, as
``core.incremental.encode_chunked`` relies on too. A plugin is asked for
cut points in a window of :data:`WINDOW` characters around the place
wanted; where it offers none (a text without line breaks for BPE, UGM past
the length where its sums are exact word by word) the document is held
until one comes, as ``Model.encode`` would hold it — up to :data:`HOLD`
characters: past that (a 100 MB line of minified JSON, for BPE, whose cut
points are line starts) the document is cut where a word ends anyway and
the cut is counted in :attr:`~.stats.CorpusStats.forced_cuts`, reported
with the counts (each may move a token or two across the cut).
"""

from __future__ import annotations

from typing import Iterable, Sequence

from ..model import Model
from ..tokenizer import cut_points
from .stats import CorpusStats, count_piece

STEP = 1 << 20
# text kept after the wanted cut: more than any special token and a
# plugin's look-ahead, so the text before it is final
MARGIN = 4096
WINDOW = 2048
# how far before the wanted cut to look for one (WINDOW at a time)
SEARCH = 1 << 16
# the most text held for one model without a cut point
HOLD = 2 << 20


def _boundary(text: str, p: int) -> bool:
    return 0 < p < len(text) and (text[p - 1].isspace() or text[p].isspace())


def _forced_cut(text: str, lo: int, hi: int) -> int:
    """The last word boundary in ``[lo, hi)``, else ``hi``."""
    for p in range(hi - 1, lo - 1, -1):
        if text[p].isspace() and _boundary(text, p):
            return p
    return hi


def find_cut(model: Model, text: str, lo: int, hi: int) -> int | None:
    """The last position in ``[lo, hi)`` where ``model``'s tokens of
    ``text`` may be cut and a word ends, or None. ``hi`` must leave
    :data:`MARGIN` characters after it."""
    tok = model.tokenizer
    end = hi
    while end > lo:
        start = max(lo, end - WINDOW)
        w_lo = max(0, start - WINDOW)
        window = text[w_lo:end + MARGIN]
        for f in reversed(model.fragments(window)):
            if f.token >= 0:
                continue
            a, b = max(start - w_lo, f.start + 1), min(end - w_lo, f.end)
            if a >= b:
                continue
            for p in reversed(cut_points(tok, window[f.start:f.end], a - f.start, b - f.start)):
                g = w_lo + f.start + p
                if _boundary(text, g):
                    return g
        end = start
    return None


def count_document(stats: CorpusStats, models: Sequence[Model], chunks: Iterable[str], doc: str, *,
                   add_special: bool = False, step: int = STEP, hold: int = HOLD) -> None:
    """Count the document read as ``chunks`` (in order) for every model."""
    buf = ""
    base = 0  # document position of buf[0]
    done = [0] * len(models)  # for each model, how far it has counted
    for chunk in chunks:
        buf += chunk
        if len(buf) < step + MARGIN:
            continue
        for k, model in enumerate(models):
            while base + len(buf) - done[k] >= step + MARGIN:
                hi = base + len(buf) - MARGIN
                lo = max(done[k] - base + 1, hi - base - SEARCH)
                cut = find_cut(model, buf, lo, hi - base)
                if cut is None:
                    if hi - done[k] < hold:
                        break
                    cut = _forced_cut(buf, lo, hi - base)
                    stats.forced_cuts += 1
                count_piece(stats, k, model, buf[done[k] - base:cut], doc, first=done[k] == 0, last=False,
                            add_special=add_special)
                done[k] = base + cut
        low = min(done)
        if low > base:
            buf = buf[low - base:]
            base = low
    for k, model in enumerate(models):
        count_piece(stats, k, model, buf[done[k] - base:], doc, first=done[k] == 0, last=True,
                    add_special=add_special)
