"""Incremental retokenization: the tokens of an edited text, redoing only
the text around the edit.

``Model.encode`` splits the text into fragments (special tokens and plain
text) and tokenizes each plain fragment on its own, so a fragment's tokens
are a pure function of its text and of whether a special token comes right
before it. After an edit:

1. Both texts are partitioned; fragments before the edit (and after it,
   shifted) that are identical in both keep their tokens.
2. Inside a changed plain fragment, the plugin's cut points
   (:func:`~tokenprism.core.tokenizer.cut_points`: where no token crosses
   and each side tokenizes on its own) narrow the work further: the tokens
   before the last cut that lies in the unchanged text before the edit
   stay, and so do the tokens after the first cut in the unchanged text
   after it, where the old and the new text both have a cut.
3. Only the text between the two cuts is encoded again; the tail's char
   and byte offsets and groups are shifted.

A plugin without cut points gets whole changed fragments redone, which is
still exact. The result is identical to ``model.encode(new_text, ...)``;
``tests/core/test_incremental.py`` checks that after random edit sequences
on every tokenizer type.

>>> model = open_model("ggml-vocab-llama-spm.gguf")
>>> enc = model.encode("Hello world")
>>> retokenize(enc, "Hello brave world").ids == model.encode("Hello brave world").ids
True
"""

from __future__ import annotations

from bisect import bisect_left
from dataclasses import dataclass
from itertools import chain
from typing import Callable


from .columns import utf8_len
from .encoding import Column, Encoding, IntColumn
from .gil import Cancelled, offer_gil, progress_hook
from .model import Model, pause_gc, resume_gc, sanitize_text
from .pipeline import SpanColumns, encode_segments, end_columns, extend_shifted, segments, special_ends
from .special import Fragment, Segment
from .tokenizer import Tokenizer, cut_points

# how far from the edit to look for a cut point first (four times more until found)
_FIRST_WINDOW = 256
# pieces of a huge text tokenized between two progress reports
CHUNK_CHARS = 1 << 17
# the text around a cut the plugin looks at (cut points must lie this far
# inside the unchanged text, so old and new agree on them)
_CONTEXT = 4


@dataclass(frozen=True)
class Splice:
    """Where a retokenized encoding differs from the old one: old tokens
    ``[left, right)`` were replaced by new tokens ``[left, left + count)``;
    the tokens after them moved by ``char_delta`` characters and
    ``byte_delta`` bytes."""

    left: int
    right: int
    count: int
    char_delta: int
    byte_delta: int


def retokenize(old: Encoding, new_text: str) -> Encoding:
    """The encoding of ``new_text`` by ``old``'s model and options, reusing
    ``old``'s tokens outside the edited region. Identical to
    ``old.model.encode(new_text, old.add_special, old.parse_special)``."""
    return retokenize_splice(old, new_text)[0]


def retokenize_splice(old: Encoding, new_text: str) -> tuple[Encoding, Splice | None]:
    """:func:`retokenize`, and what changed (``None`` when the whole text
    was encoded again)."""
    model = _model(old)
    text = sanitize_text(new_text)
    old_text = old.text
    if text == old_text:
        return old, Splice(0, 0, 0, 0, 0)
    pre = _common_prefix(old_text, text)
    suf = _common_suffix(old_text, text, min(len(old_text), len(text)) - pre)
    edit = _Edit(old_text, text, pre, suf)
    old_frags = model.fragments(old_text, old.parse_special)
    new_frags = model.fragments(text, old.parse_special)
    if not old_frags or not new_frags:
        return _encoded_like(old, text), None
    k0, k1 = _kept_fragments(old_frags, new_frags, edit)
    mid_old = old_frags[k0:len(old_frags) - k1]
    mid_new = new_frags[k0:len(new_frags) - k1]
    if not mid_new:  # only possible if the edit vanished into kept fragments
        return _encoded_like(old, text), None
    cut_l, cut_r = _narrowed(model.tokenizer, mid_old, mid_new, edit)
    after_special = k0 == 0 or new_frags[k0 - 1].token >= 0
    segs = _segments_between(mid_new, cut_l, cut_r, after_special)
    new = encode_segments(model.tokenizer, text, segs)
    return _spliced_encoding(old, model, new, cut_l, cut_r, edit)


@dataclass(frozen=True)
class _Edit:
    """An edit as two texts and the length of what they share at either
    end: everything between ``pre`` and ``len(text) - suf`` changed."""

    old_text: str
    text: str
    pre: int
    suf: int

    @property
    def delta(self) -> int:
        """How far the text after the edit moved."""
        return len(self.text) - len(self.old_text)


def _kept_fragments(old_frags: list[Fragment], new_frags: list[Fragment], edit: _Edit) -> tuple[int, int]:
    """How many fragments at the start (``k0``) and at the end (``k1``) of
    both texts stay whole: identical, and before (after) the edited text."""
    n_new, delta = len(edit.text), edit.delta
    k0 = 0
    lim = min(len(old_frags), len(new_frags))
    while k0 < lim and old_frags[k0] == new_frags[k0] and new_frags[k0].end <= edit.pre:
        k0 += 1
    k1 = 0
    while k1 < lim - k0:
        fo, fn = old_frags[-1 - k1], new_frags[-1 - k1]
        if not (fn.start - delta == fo.start and fn.end - delta == fo.end and fn.token == fo.token
                and fn.start >= n_new - edit.suf):
            break
        k1 += 1
    # a kept fragment after the edit must follow the same kind of fragment
    # as before (after a special token, SPM adds its space prefix)
    while k1 and _kind_before(old_frags, len(old_frags) - k1) != _kind_before(new_frags, len(new_frags) - k1):
        k1 -= 1
    return k0, k1


def _narrowed(tok: Tokenizer, mid_old: list[Fragment], mid_new: list[Fragment], edit: _Edit) -> tuple[int, int]:
    """The text ``[cut_l, cut_r)`` of the new text to encode again: the
    changed fragments, narrowed at the first and the last with the
    plugin's cut points both texts share."""
    old_text, text, delta = edit.old_text, edit.text, edit.delta
    first_new, last_new = mid_new[0], mid_new[-1]
    cut_l, cut_r = first_new.start, last_new.end
    if mid_old and first_new.token < 0 and mid_old[0].token < 0 and mid_old[0].start == first_new.start:
        fo = mid_old[0]
        a = _cut_before(tok, old_text[fo.start:fo.end], text[first_new.start:first_new.end],
                        edit.pre - first_new.start - _CONTEXT)
        if a > 0:
            cut_l = first_new.start + a
    if (mid_old and last_new.token < 0 and mid_old[-1].token < 0
            and mid_old[-1].end == last_new.end - delta):
        fo = mid_old[-1]
        lo = (len(text) - edit.suf) + _CONTEXT - last_new.start
        b = _cut_after(tok, old_text[fo.start:fo.end], text[last_new.start:last_new.end], lo)
        if b > 0 and last_new.start + b > cut_l:
            cut_r = last_new.start + b
    return cut_l, cut_r


def _segments_between(mid_new: list[Fragment], cut_l: int, cut_r: int, after_special: bool) -> list[Segment]:
    """The pipeline's segments for the changed fragments' text within
    ``[cut_l, cut_r)`` (``after_special``: what precedes the first one)."""
    segs: list[Segment] = []
    for i, f in enumerate(mid_new):
        s, e = max(f.start, cut_l), min(f.end, cut_r)
        if s >= e:
            continue
        flag = (after_special if i == 0 else mid_new[i - 1].token >= 0) if s == f.start else False
        segs.append(Segment(s, e, f.token, flag))
    return segs


def _spliced_encoding(old: Encoding, model: Model, new: SpanColumns, cut_l: int, cut_r: int,
                      edit: _Edit) -> tuple[Encoding, Splice | None]:
    """``old``'s tokens before ``cut_l`` and after ``cut_r`` (of the new
    text) with ``new``, the tokens of the text between, in their place."""
    old_text, text, delta = edit.old_text, edit.text, edit.delta
    n_old = len(old_text)
    # tokens of the old encoding that stay
    prefix, suffix = special_ends(model.config, old.add_special)
    left = max(bisect_left(old.starts, cut_l), len(prefix)) if cut_l > 0 else len(prefix)
    cut_r_old = cut_r - delta
    right = bisect_left(old.starts, cut_r_old, left)
    if cut_r_old >= n_old:  # only the suffix tokens (EOS) at the end stay
        right = len(old.starts) - len(suffix)
    right = max(right, left)

    byte_l = utf8_len(text, 0, cut_l)
    ids = new.ids
    bdelta = utf8_len(text, cut_l, cut_r) - utf8_len(old_text, cut_l, cut_r_old)

    unk = model.config.special_ids.get("unk", -1)
    if unk >= 0 and _unknowns_touch(old, ids, left, right, unk):
        return _encoded_like(old, text), None

    idelta = left + len(ids) - right
    enc = Encoding(
        text, model,
        _spliced(old.token_ids, left, ids, 0, right, 0),
        _spliced(old.starts, left, new.starts, cut_l, right, delta),
        _spliced(old.ends, left, new.ends, cut_l, right, delta),
        _spliced(old.byte_starts, left, new.byte_starts, byte_l, right, bdelta),
        _spliced(old.byte_ends, left, new.byte_ends, byte_l, right, bdelta),
        _spliced(old.groups, left, new.groups, left, right, idelta, groups=True),
        old.add_special, old.parse_special)
    return enc, Splice(left, right, len(ids), delta, bdelta)


def _model(enc: Encoding) -> Model:
    """The model that made ``enc`` (retokenizing drives the model's own
    pipeline stages, which :class:`~.encoding.TokenSource` does not offer)."""
    model = enc.model
    if not isinstance(model, Model):
        raise TypeError(f"retokenizing needs an encoding made by a Model, not by {type(model).__name__}")
    return model


def _encoded_like(old: Encoding, text: str) -> Encoding:
    """``text`` encoded whole, its columns of the kind of ``old``'s (a huge
    text's encoding keeps its :class:`IntColumn` arrays)."""
    enc = old.model.encode(text, old.add_special, old.parse_special)
    if not isinstance(old.token_ids, IntColumn):
        return enc
    return Encoding(enc.text, enc.model, IntColumn(enc.token_ids), IntColumn(enc.starts), IntColumn(enc.ends),
                    IntColumn(enc.byte_starts), IntColumn(enc.byte_ends), IntColumn(enc.groups),
                    enc.add_special, enc.parse_special)


def changed_chars(old_text: str, new_text: str) -> int:
    """How many characters of ``new_text`` differ from ``old_text`` (what
    is between their common prefix and suffix): a quick size of an edit."""
    pre = _common_prefix(old_text, new_text)
    suf = _common_suffix(old_text, new_text, min(len(old_text), len(new_text)) - pre)
    return len(new_text) - pre - suf


def encode_chunked(model: Model, text: str, add_special: bool = False, parse_special: bool = False,
                   report: Callable[[int, int], bool] | None = None,
                   chunk_chars: int = CHUNK_CHARS) -> Encoding | None:
    """``model.encode(text, ...)`` one piece at a time, for huge texts: long
    plain fragments are cut at the plugin's cut points about every
    ``chunk_chars`` characters, and ``report(done, total)`` is called (with
    character counts) after each piece. It returns False to cancel, and
    the result is then ``None``. Same result as ``model.encode``.

    A piece the plugin cannot cut (UGM beyond the length where its sums
    are exact word by word, or a text without cut points) is one plugin
    call that may take seconds; plugins that call
    :func:`~tokenprism.core.gil.checkpoint` in their long loops report
    from inside it too, and are cancelled there."""
    # as in Model.encode: millions of lists and ints, none of them cyclic;
    # each full pass of the cyclic collector meanwhile walks every token
    # list made so far (measured: 0.2-0.4 s pauses of every thread, the
    # GUI's too, several times per 10 MB, and half the run time with WPM)
    # The result's tuples hold millions of ints, and the collector's first
    # pass after it resumes would walk every object made meanwhile (0.2-0.5
    # s, every thread paused). None of them are cyclic: frozen, they are
    # skipped, and still freed by reference counting (open_model freezes
    # its vocabulary for the same reason).
    was = pause_gc()
    try:
        return _encode_chunked(model, text, add_special, parse_special, report, chunk_chars)
    finally:
        resume_gc(was, freeze=True)


def _encode_chunked(model: Model, text: str, add_special: bool, parse_special: bool,
                    report: Callable[[int, int], bool] | None, chunk_chars: int) -> Encoding | None:
    text = sanitize_text(text)
    segs = _chunk_segments(model, text, parse_special, chunk_chars)
    encoded = _encode_pieces(model, text, segs, report)
    if encoded is None:
        return None
    parts, n_bytes = encoded
    return _joined(model, text, parts, n_bytes, add_special, parse_special)


# a piece's tokens: (its start in the text, in UTF-8 bytes, its columns)
_Piece = tuple[int, int, SpanColumns]


def _encode_pieces(model: Model, text: str, segs: list[Segment],
                   report: Callable[[int, int], bool] | None) -> tuple[list[_Piece], int] | None:
    """Each of ``segs`` encoded on its own (two next to each other again as
    one where unknown tokens meet at their cut), ``report`` called before
    each and from inside the plugin; with the text's length in bytes, or
    ``None`` if ``report`` cancelled."""
    total = len(text)
    unk = model.config.special_ids.get("unk", -1)
    # each piece's tokens are columns of int64s at once: no list of Python
    # ints is made (those were most of the memory a 10 MB text took, ~230
    # bytes a token)
    parts: list[_Piece] = []
    byte_pos = 0
    i = 0
    reached = [0]  # how far the reports got (they only move forward)
    while i < len(segs):
        seg = segs[i]
        reached[0] = max(reached[0], seg.start)
        if report is not None and not report(reached[0], total):
            return None
        if report is None or seg.token >= 0:
            cols = encode_segments(model.tokenizer, text, [seg])
        else:
            try:
                with progress_hook(_inner_report(report, reached, seg.start, seg.end, total)):
                    cols = encode_segments(model.tokenizer, text, [seg])
            except Cancelled:
                return None
        prev_ids = parts[-1][2].ids if parts else None
        if (prev_ids and seg.token < 0 and not seg.after_special and segs[i - 1].token < 0 and cols.ids
                and cols.ids[0] == unk and prev_ids[-1] == unk):
            # unknown tokens on both sides of a cut merge: redo both as one
            prev_start, byte_pos, _cols = parts.pop()
            prev = segs[i - 1]
            segs[i - 1:i + 1] = [Segment(prev.start, seg.end, -1, prev.after_special)]
            i -= 1
            continue
        parts.append((seg.start, byte_pos, cols))
        byte_pos += utf8_len(text, seg.start, seg.end)
        i += 1
    if report is not None and not report(total, total):
        return None
    return parts, byte_pos


def _joined(model: Model, text: str, parts: list[_Piece], n_bytes: int, add_special: bool,
            parse_special: bool) -> Encoding:
    """The pieces' columns end to end, each shifted to its place, BOS/EOS
    around them. ``parts`` is emptied at the end: the pieces' columns are
    freed before the encoding is made, not when the caller lets go."""
    prefix, suffix = special_ends(model.config, add_special)
    heads, tails = end_columns(prefix, suffix, len(text), n_bytes)
    counts = [len(cols.ids) for _s, _b, cols in parts]
    out: list[IntColumn] = []
    for c in range(6):
        flat = IntColumn(heads[c])
        base = len(prefix)
        for k in range(len(parts)):
            start, bpos, cols = parts[k]
            col = cols[c]
            # a piece's offsets count from its own start, its groups from
            # its own first token
            delta = (0, start, start, bpos, bpos, base)[c]
            extend_shifted(flat, col, delta, groups=c == 5)
            base += counts[k]
        flat.fromlist(tails[c])
        out.append(flat)
        offer_gil()
    parts.clear()
    return Encoding(text, model, out[0], out[1], out[2], out[3], out[4], out[5], add_special, parse_special)


def _chunk_segments(model: Model, text: str, parse_special: bool, chunk_chars: int) -> list[Segment]:
    """The pipeline's segments of ``text``, long plain fragments cut at the
    plugin's cut points about every ``chunk_chars`` characters."""
    tok = model.tokenizer
    out: list[Segment] = []
    for seg in segments(model.fragments(text, parse_special)):
        if seg.token >= 0 or seg.end - seg.start <= chunk_chars:
            out.append(seg)
            continue
        flag = seg.after_special
        start = seg.start
        frag = text[seg.start:seg.end]
        pos = 0
        while len(frag) - pos > chunk_chars:
            p = _cut_after(tok, frag, frag, pos + chunk_chars)
            if p <= pos:
                break
            out.append(Segment(seg.start + pos, seg.start + p, -1, flag))
            flag = False
            pos = p
        start = seg.start + pos
        out.append(Segment(start, seg.end, -1, flag))
    return out


def _inner_report(report: Callable[[int, int], bool], reached: list[int], s: int, e: int,
                  total: int) -> Callable[[int, int], bool]:
    """The :func:`~tokenprism.core.gil.progress_hook` for the plugin call
    over text ``[s, e)``: its ``done`` of ``inner`` becomes a character
    position of the whole text in ``reached[0]``, passed to ``report``."""
    def hook(done: int, inner: int) -> bool:
        if inner > 0:
            pos = s + (e - s) * min(done, inner) // inner
            if pos > reached[0]:
                reached[0] = pos
        return report(reached[0], total)
    return hook


def retokenize_edit(old: Encoding, position: int, removed: int, added: str) -> Encoding:
    """:func:`retokenize` for an edit given as ``removed`` characters at
    ``position`` replaced by ``added``."""
    t = old.text
    return retokenize(old, t[:position] + added + t[position + removed:])


# ---- helpers ----------------------------------------------------------------


def _common_prefix(a: str, b: str) -> int:
    n = min(len(a), len(b))
    if a[:n] == b[:n]:
        return n
    lo, hi = 0, n  # a[:lo] == b[:lo], a[:hi] != b[:hi]
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if a[lo:mid] == b[lo:mid]:
            lo = mid
        else:
            hi = mid
    return lo


def _common_suffix(a: str, b: str, limit: int) -> int:
    """Length of the common suffix, at most ``limit``."""
    if limit <= 0:
        return 0
    la, lb = len(a), len(b)
    if a[la - limit:] == b[lb - limit:]:
        return limit
    lo, hi = 0, limit
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if a[la - mid:la - lo] == b[lb - mid:lb - lo]:
            lo = mid
        else:
            hi = mid
    return lo


def _cut_before(tok: Tokenizer, old_frag: str, new_frag: str, limit: int) -> int:
    """The last cut point ``<= limit`` of both fragments (they agree on the
    text before ``limit + _CONTEXT``), or 0."""
    if limit <= 0:
        return 0
    window = _FIRST_WINDOW
    while True:
        lo = max(1, limit - window)
        pts = cut_points(tok, new_frag, lo, limit + 1)
        for p in reversed(pts):
            if p in cut_points(tok, old_frag, p, p + 1):
                return p
        if lo <= 1:
            return 0
        window *= 4


def _cut_after(tok: Tokenizer, old_frag: str, new_frag: str, lo: int) -> int:
    """The first cut point ``>= lo`` of ``new_frag`` that is also one of
    ``old_frag`` at the same distance from the end (the fragments agree on
    the text after ``lo - _CONTEXT``), or 0."""
    n = len(new_frag)
    shift = (len(old_frag) - n)  # position in old = position in new + shift
    lo = max(lo, 1)
    window = _FIRST_WINDOW
    while lo < n:
        hi = min(n, lo + window)
        for p in cut_points(tok, new_frag, lo, hi):
            q = p + shift
            if 0 < q < len(old_frag) and q in cut_points(tok, old_frag, q, q + 1):
                return p
        if hi >= n:
            return 0
        lo = hi
        window *= 4
    return 0


def _kind_before(frags: list[Fragment], k: int) -> int:
    """What precedes fragment ``k``: -1 nothing, 1 a special token, 0 text."""
    if k <= 0:
        return -1
    return 1 if frags[k - 1].token >= 0 else 0


def _unknowns_touch(old: Encoding, ids: Column, left: int, right: int, unk: int) -> bool:
    """Consecutive unknown tokens merge in UGM, so a cut between two of them
    is not a cut at all."""
    ti = old.token_ids
    if left > 0 and ti[left - 1] == unk and ((ids and ids[0] == unk) or (not ids and right < len(ti)
                                                                        and ti[right] == unk)):
        return True
    return bool(ids) and ids[-1] == unk and right < len(ti) and ti[right] == unk


_SHIFT_SLICE = 32768


def _spliced(old: Column, left: int, new: Column, new_d: int, right: int, d: int,
             groups: bool = False) -> Column:
    """``old[:left] + new + old[right:]``, ``new`` shifted by ``new_d`` and
    the kept tail by ``d`` (``groups``: only values >= 0 move), in
    ``old``'s kind of column."""
    if isinstance(old, IntColumn):
        out = IntColumn(old[:left])
        extend_shifted(out, new, new_d, groups)
        extend_shifted(out, old[right:], d, groups)
        return out
    tail_t = old[right:]
    new_t = tuple(new)
    if groups:
        if d and tail_t.count(-1) != len(tail_t):
            tail_t = tuple([g + d if g >= 0 else -1 for g in tail_t])
        if new_d and new_t.count(-1) != len(new_t):
            new_t = tuple([g + new_d if g >= 0 else -1 for g in new_t])
    else:
        tail_t = _shift(tail_t, d)
        new_t = _shift(new_t, new_d)
    return old[:left] + new_t + tail_t


def _shift(values: tuple[int, ...], d: int) -> tuple[int, ...]:
    if d == 0 or not values:
        return values
    if len(values) <= _SHIFT_SLICE:
        return tuple(map(d.__add__, values))
    # one tuple(map(...)) over a megabyte's 300k tokens is one C call of
    # ~30 ms that holds the GIL (and so the GUI thread) throughout; slices
    # let the interpreter switch threads between them
    parts = [tuple(map(d.__add__, values[i:i + _SHIFT_SLICE])) for i in range(0, len(values), _SHIFT_SLICE)]
    return tuple(chain.from_iterable(parts))
