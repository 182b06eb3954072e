"""What the views need from one tokenization, computed off the GUI thread.

An :class:`Analysis` wraps an :class:`~tokenprism.core.Encoding` with numpy
arrays the Qt views can search without building one Python object per token:
token and span positions in UTF-16 code units (Qt's document positions, which
differ from Python ``str`` indices as soon as the text holds characters
outside the BMP, such as emoji), one display style per token and per span,
and the statistics shown in the status bar.

A *span* is what the editor draws as one box: a token with a non-empty
character span, or a whole group of tokens that share a character (byte
fallback, or a byte-level piece cutting a character).

Nothing here imports Qt, so it runs in worker threads and is easy to test.
"""

from __future__ import annotations

import time
from array import array
from dataclasses import dataclass, field
from enum import IntEnum
from typing import Callable

import numpy as np

from tokenprism.core import Attr, Encoding, Model
from tokenprism.core.encoding import Column
from tokenprism.core.incremental import Splice, changed_chars, encode_chunked, retokenize_splice
from tokenprism.core.library.names import display_name
from tokenprism.core.vocab import decoded_pieces

INCREMENTAL_MIN = 2048
"""Shorter texts are always encoded whole (it takes about a millisecond)."""
CHUNK_CHARS = 1 << 13
"""Characters tokenized in one piece of a chunked encode. Compiled
tokenizer code never lets go of the GIL inside one call, so one piece is the
longest the GUI thread can be kept waiting by a worker: at about 2.5
characters per microsecond (llama-spm) this is ~3 ms, so a loaded machine
(where each piece may take several times longer and the GUI thread waits
for its turn) still stays well under a 100 ms stall. Progress reports (and
cancel checks) come between pieces."""
CHUNKED_MIN = 1 << 15
"""A change of this many characters or more is not retokenized in place (one
GIL-holding call over all of it) but in pieces of ``CHUNK_CHARS``."""


class Style(IntEnum):
    """How a token or span is drawn; a higher value wins inside a group."""

    NORMAL = 0
    BYTES = 1
    """Byte fallback, or a group of tokens that split one character."""
    USER = 2
    """User-defined token (always split out of the text as a whole)."""
    CONTROL = 3
    UNKNOWN = 4


def style_of_attr(attr: int) -> Style:
    """The style of a token with llama.cpp attribute bits ``attr``."""
    if attr & Attr.UNKNOWN:
        return Style.UNKNOWN
    if attr & Attr.CONTROL:
        return Style.CONTROL
    if attr & Attr.USER_DEFINED:
        return Style.USER
    if attr & Attr.BYTE:
        return Style.BYTES
    return Style.NORMAL


class ModelInfo:
    """A loaded :class:`Model` plus per-id lookup arrays, built once in the
    loader thread so that every tokenization can classify its tokens with
    one numpy indexing operation."""

    def __init__(self, model: Model) -> None:
        self.model = model
        self.path = model.path
        attrs = model.vocab.arrays().attrs
        self.attrs = attrs
        styles = np.zeros(len(attrs), dtype=np.uint8)
        # assigned lowest priority first so the highest one sticks
        styles[(attrs & Attr.BYTE) != 0] = Style.BYTES
        styles[(attrs & Attr.USER_DEFINED) != 0] = Style.USER
        styles[(attrs & Attr.CONTROL) != 0] = Style.CONTROL
        styles[(attrs & Attr.UNKNOWN) != 0] = Style.UNKNOWN
        # BERT vocabularies store [UNK] as a control token; it is still the
        # token that marks text the model could not spell
        unk = model.config.special_ids.get("unk", -1)
        self.unk_id = unk if 0 <= unk < len(attrs) else -1
        if self.unk_id >= 0:
            styles[self.unk_id] = Style.UNKNOWN
        self.styles = styles
        # the per-id merge-rank table of a BPE model takes up to ~0.2 s to
        # build (gemma-4); built here, in the loader thread, the token
        # table's first Rank cell finds it cached instead of freezing the
        # GUI. Model.merge_ranks keeps it, and gives None for a tokenizer
        # (a third-party plugin) without merge_ranks.
        model.merge_ranks()
        # a tokenizer that finds pieces in the file's bytes leaves them
        # undecoded, and the views read one per token shown: decoded all
        # at once here (~35 ms for 250k), never one by one on the GUI thread
        decoded_pieces(model.vocab)

    @property
    def name(self) -> str:
        """The name the window shows: ``general.name``, or the file's name
        when that is missing, a hash or a path (see core.names)."""
        return display_name(self.model.name, self.model.path)

    @property
    def kind(self) -> str:
        return self.model.kind

    def __repr__(self) -> str:
        return f"<ModelInfo {self.model!r}>"


@dataclass(frozen=True)
class Stats:
    """Numbers shown in the status bar."""

    tokens: int
    chars: int
    utf8_bytes: int
    unknown: int
    byte_fallback: int
    encode_ms: float
    total_ms: float

    @property
    def chars_per_token(self) -> float:
        return self.chars / self.tokens if self.tokens else 0.0

    @property
    def bytes_per_token(self) -> float:
        return self.utf8_bytes / self.tokens if self.tokens else 0.0


class Utf16Map:
    """Converts between Python ``str`` indices and UTF-16 positions of one
    text. Costs nothing for texts without astral characters (the usual case);
    otherwise it keeps only the sorted indices of the astral characters."""

    def __init__(self, text: str, codepoints: np.ndarray | None = None) -> None:
        self.length = len(text)
        self._astral: np.ndarray | None = None  # str indices of astral characters
        self._astral16: np.ndarray | None = None  # their UTF-16 positions
        if text.isascii():
            return
        if codepoints is None:
            codepoints = np.frombuffer(text.encode("utf-32-le", "surrogatepass"), dtype=np.uint32)
        astral = np.flatnonzero(codepoints > 0xFFFF)
        if len(astral):
            self._astral = astral
            self._astral16 = astral + np.arange(len(astral))

    @property
    def identity(self) -> bool:
        return self._astral is None

    def to16(self, index: np.ndarray) -> np.ndarray:
        """UTF-16 positions of the ``str`` indices in ``index``."""
        index = np.asarray(index, dtype=np.int64)
        if self._astral is None:
            return index
        return index + np.searchsorted(self._astral, index, "left")

    def from16(self, pos16: int) -> int:
        """The ``str`` index of the character at (or holding) UTF-16 ``pos16``."""
        if self._astral16 is None:
            return max(0, min(pos16, self.length))
        # astral characters that end at or before pos16 take two units each
        done = int(np.searchsorted(self._astral16, pos16 - 1, "left"))
        index = pos16 - done
        if done < len(self._astral16) and self._astral16[done] == pos16 - 1:
            index -= 1  # pos16 is the second half of a surrogate pair
        return max(0, min(index, self.length))


def _array(values: Column | array[int]) -> np.ndarray:
    """An encoding column as an int64 array: a read-only view of an
    :class:`IntColumn`'s memory, or a tuple converted in slices (one
    ``np.asarray`` over a quarter of a million Python ints holds the GIL
    long enough to stall the GUI thread)."""
    if isinstance(values, array):
        out = np.frombuffer(values, dtype=np.int64) if len(values) else np.zeros(0, dtype=np.int64)
        out.flags.writeable = False
        return out
    if len(values) <= _CHUNK:
        return np.asarray(values, dtype=np.int64)
    return np.concatenate([np.asarray(values[i:i + _CHUNK], dtype=np.int64)
                           for i in range(0, len(values), _CHUNK)])


_CHUNK = 32_768


@dataclass(frozen=True, eq=False)
class Analysis:
    """One tokenization of one text by one model, ready for the views.

    ``generation`` is the editor revision the text was taken from; a view
    shows an analysis only while that is still the editor's revision.
    """

    encoding: Encoding
    info: ModelInfo
    generation: int
    stats: Stats
    u16: Utf16Map
    ids: np.ndarray
    tok_start16: np.ndarray
    tok_end16: np.ndarray
    tok_span: np.ndarray
    """Span index of each token, -1 for a token with an empty span."""
    tok_style: np.ndarray
    tok_newline: np.ndarray
    """True for tokens whose text holds a line break (the chips view wraps there)."""
    span_start16: np.ndarray
    span_end16: np.ndarray
    span_end16_max: np.ndarray
    """Running maximum of ``span_end16``, so that a sorted search finds every
    span reaching into a range even if spans overlap."""
    span_style: np.ndarray
    span_first: np.ndarray
    span_last: np.ndarray
    """Token index range ``[span_first, span_last)`` of each span."""
    empty_tokens: np.ndarray
    """Indices of tokens with an empty span (BOS/EOS, an inserted prefix space)."""
    empty_pos16: np.ndarray
    extra: dict[str, object] = field(default_factory=dict)
    tok_start: np.ndarray | None = None
    """Character spans and groups of the tokens as arrays (what the next
    keystroke's analysis splices instead of converting the tuples again)."""
    tok_end: np.ndarray | None = None
    tok_group: np.ndarray | None = None

    @property
    def text(self) -> str:
        return self.encoding.text

    @property
    def model(self) -> Model:
        return self.info.model

    def __len__(self) -> int:
        return len(self.encoding)

    # ---- lookups -----------------------------------------------------------

    def spans_in(self, begin16: int, end16: int) -> tuple[int, int]:
        """``[lo, hi)`` indices of the spans that intersect ``[begin16, end16)``."""
        lo = int(np.searchsorted(self.span_end16_max, begin16, "right"))
        hi = int(np.searchsorted(self.span_start16, end16, "left"))
        return lo, max(lo, hi)

    def empties_in(self, begin16: int, end16: int) -> tuple[int, int]:
        """``[lo, hi)`` indices into ``empty_tokens`` placed in ``[begin16, end16]``."""
        lo = int(np.searchsorted(self.empty_pos16, begin16, "left"))
        hi = int(np.searchsorted(self.empty_pos16, end16, "right"))
        return lo, hi

    def span_at(self, pos16: int) -> int:
        """The span holding the character at UTF-16 ``pos16``, or -1."""
        k = int(np.searchsorted(self.span_start16, pos16, "right")) - 1
        while k >= 0:
            if self.span_start16[k] <= pos16 < self.span_end16[k]:
                return k
            if self.span_end16_max[k] <= pos16:
                break
            k -= 1
        return -1

    def span_of_token(self, index: int) -> int:
        """The span holding token ``index``, or -1 for a token with an empty span."""
        return int(self.tok_span[index])

    def line_first_span(self, line16: int) -> int:
        """The first span reaching into the line that starts at UTF-16
        ``line16``: token tints alternate afresh from it on every line, so a
        keystroke that changes one line's token count restyles that line only."""
        return int(np.searchsorted(self.span_end16_max, line16, "right"))

    def span_tint(self, k: int) -> int:
        """The tint (0 or 1) of span ``k`` on the line where it starts, as
        the editor draws it there (and the views beside it, to match)."""
        starts = self.extra.get("line_starts16")
        if not isinstance(starts, np.ndarray):
            # made on first use (the editor needs none: it knows its lines)
            text = self.text
            chars = (np.frombuffer(text.encode("ascii"), dtype=np.uint8) if text.isascii() else
                     np.frombuffer(text.encode("utf-32-le", "surrogatepass"), dtype=np.uint32))
            starts = np.concatenate([np.zeros(1, dtype=np.int64), self.u16.to16(np.flatnonzero(chars == 10) + 1)])
            self.extra["line_starts16"] = starts
        s = int(self.span_start16[k])
        line = int(starts[int(np.searchsorted(starts, s, "right")) - 1])
        return (k - self.line_first_span(line)) & 1

    def token_range(self, index: int) -> tuple[int, int]:
        """``[first, last)`` tokens drawn together with token ``index``."""
        k = self.span_of_token(index)
        if k < 0:
            return index, index + 1
        return int(self.span_first[k]), int(self.span_last[k])

    def range16(self, first: int, last: int) -> tuple[int, int]:
        """UTF-16 ``[start, end)`` covered by tokens ``[first, last)``."""
        s = int(self.tok_start16[first:last].min())
        e = int(self.tok_end16[first:last].max())
        return s, e


def analyze(encoding: Encoding, info: ModelInfo, generation: int, encode_ms: float) -> Analysis:
    """Build the :class:`Analysis` of ``encoding`` (vectorized; meant for a
    worker thread)."""
    t0 = time.perf_counter()
    text = encoding.text
    ids = _array(encoding.token_ids)
    starts = _array(encoding.starts)
    ends = _array(encoding.ends)
    groups = _array(encoding.groups)
    cps = None if text.isascii() else np.frombuffer(text.encode("utf-32-le", "surrogatepass"), dtype=np.uint32)
    newline = _newlines(text, cps, starts, ends)
    return _build(encoding, info, generation, encode_ms, t0, ids, starts, ends, groups, newline, cps)


def analyze_edit(old: Analysis, encoding: Encoding, splice: Splice, generation: int,
                 encode_ms: float) -> Analysis:
    """:func:`analyze` of ``encoding``, made from ``old`` (the analysis of
    the encoding it was retokenized from) by splicing its token arrays: only
    the new tokens are converted, so a keystroke in a long text costs a few
    array copies."""
    t0 = time.perf_counter()
    if old.tok_start is None or old.tok_end is None or old.tok_group is None:
        return analyze(encoding, old.info, generation, encode_ms)
    text = encoding.text
    lo, hi, mid_hi = splice.left, splice.right, splice.left + splice.count
    d_idx = mid_hi - hi
    mid_start = _array(encoding.starts[lo:mid_hi])
    mid_end = _array(encoding.ends[lo:mid_hi])
    tail_group = old.tok_group[hi:]
    if d_idx:
        tail_group = np.where(tail_group >= 0, tail_group + d_idx, tail_group)
    ids = np.concatenate([old.ids[:lo], _array(encoding.token_ids[lo:mid_hi]), old.ids[hi:]])
    starts = np.concatenate([old.tok_start[:lo], mid_start, old.tok_start[hi:] + splice.char_delta])
    ends = np.concatenate([old.tok_end[:lo], mid_end, old.tok_end[hi:] + splice.char_delta])
    groups = np.concatenate([old.tok_group[:lo], _array(encoding.groups[lo:mid_hi]),
                             tail_group])
    cps = None if text.isascii() else np.frombuffer(text.encode("utf-32-le", "surrogatepass"), dtype=np.uint32)
    # line breaks inside a token only change for the new tokens
    newline = np.concatenate([old.tok_newline[:lo], _newlines(text, cps, mid_start, mid_end),
                              old.tok_newline[hi:]])
    return _build(encoding, old.info, generation, encode_ms, t0, ids, starts, ends, groups, newline, cps)


def _newlines(text: str, cps: np.ndarray | None, starts: np.ndarray, ends: np.ndarray) -> np.ndarray:
    """For each token ``[start, end)``: does it hold a line break?"""
    if "\n" in text or "\r" in text or "\u2028" in text:
        if cps is None:
            cps = np.frombuffer(text.encode("utf-32-le", "surrogatepass"), dtype=np.uint32)
        breaks = np.flatnonzero((cps == 10) | (cps == 13) | (cps == 0x2028))
        return np.asarray(np.searchsorted(breaks, starts, "left") < np.searchsorted(breaks, ends, "left"))
    return np.zeros(len(starts), dtype=bool)


def _build(encoding: Encoding, info: ModelInfo, generation: int, encode_ms: float, t0: float, ids: np.ndarray,
           starts: np.ndarray, ends: np.ndarray, groups: np.ndarray, newline: np.ndarray,
           cps: np.ndarray | None) -> Analysis:
    text = encoding.text
    n = len(ids)
    u16 = Utf16Map(text, cps)
    start16 = u16.to16(starts)
    end16 = u16.to16(ends)
    if n:
        style = info.styles[ids]
        attrs = info.attrs[ids]
    else:
        style = np.zeros(0, dtype=np.uint8)
        attrs = np.zeros(0, dtype=np.int64)

    idx = np.arange(n, dtype=np.int64)
    nonempty = starts < ends
    head = nonempty & ((groups < 0) | (groups == idx))
    ne_idx = np.flatnonzero(nonempty)
    heads_in_ne = np.flatnonzero(head[ne_idx])
    if len(heads_in_ne):
        span_start = np.minimum.reduceat(start16[ne_idx], heads_in_ne)
        span_end = np.maximum.reduceat(end16[ne_idx], heads_in_ne)
        span_style = np.maximum.reduceat(style[ne_idx], heads_in_ne)
        span_first = ne_idx[heads_in_ne]
        span_last = np.maximum.reduceat(ne_idx, heads_in_ne) + 1
        grouped = groups[span_first] >= 0
        span_style = np.where(grouped, np.maximum(span_style, int(Style.BYTES)), span_style)
        tok_span = np.full(n, -1, dtype=np.int64)
        # (summing bools casts on the fly, holding the GIL: 70 ms for 4M tokens)
        tok_span[ne_idx] = np.cumsum(head[ne_idx].astype(np.int64)) - 1
        if np.any(np.diff(span_start) < 0):  # never seen; keep searches valid anyway
            order = np.argsort(span_start, kind="stable")
            span_start, span_end = span_start[order], span_end[order]
            span_style, span_first, span_last = span_style[order], span_first[order], span_last[order]
            inverse = np.argsort(order)
            tok_span[ne_idx] = inverse[tok_span[ne_idx]]
        span_end_max = np.maximum.accumulate(span_end)
    else:
        span_start = span_end = span_end_max = span_first = span_last = np.zeros(0, dtype=np.int64)
        span_style = np.zeros(0, dtype=np.uint8)
        tok_span = np.full(n, -1, dtype=np.int64)
    empty = np.flatnonzero(~nonempty)
    empty = empty[np.argsort(start16[empty], kind="stable")]

    stats = Stats(
        tokens=n, chars=len(text),
        utf8_bytes=len(text) if text.isascii() else len(text.encode("utf-8", "surrogatepass")),
        unknown=int(np.count_nonzero(style == Style.UNKNOWN)),
        byte_fallback=int(np.count_nonzero(attrs & Attr.BYTE)),
        encode_ms=encode_ms, total_ms=encode_ms + (time.perf_counter() - t0) * 1000.0)
    return Analysis(
        encoding=encoding, info=info, generation=generation, stats=stats, u16=u16,
        ids=ids, tok_start16=start16, tok_end16=end16, tok_span=tok_span, tok_style=style, tok_newline=newline,
        span_start16=span_start, span_end16=span_end, span_end16_max=span_end_max,
        span_style=span_style.astype(np.uint8), span_first=span_first, span_last=span_last,
        empty_tokens=empty, empty_pos16=start16[empty], tok_start=starts, tok_end=ends, tok_group=groups)


def tokenize(info: ModelInfo, text: str, generation: int, add_special: bool,
             parse_special: bool, base: Analysis | None = None,
             report: Callable[[int, int], bool] | None = None) -> Analysis | None:
    """Encode ``text`` with ``info``'s model and analyze the result.

    ``base``, an analysis of an earlier text by the same model and options,
    lets only the edited part be retokenized and analyzed again (same
    result). A huge change is tokenized in pieces with ``report(done,
    total)`` called between them; it returns False to cancel, and the
    result is then ``None``."""
    t0 = time.perf_counter()
    model = info.model
    if base is not None and (base.info is not info or base.encoding.add_special != add_special
                             or base.encoding.parse_special != parse_special or len(text) < INCREMENTAL_MIN):
        base = None  # (a short text is encoded whole: as quick, and one plain path)
    # a big change (a paste) is encoded in pieces, whether or not there is
    # a base: one call over it would hold the GIL, and so the GUI thread,
    # for its whole length (see CHUNK_CHARS)
    big = (len(text) if base is None else changed_chars(base.text, text)) >= CHUNKED_MIN
    if base is not None and not big:
        enc, splice = retokenize_splice(base.encoding, text)
        ms = (time.perf_counter() - t0) * 1000.0
        if splice is not None:
            return _whole(analyze_edit(base, enc, splice, generation, ms), False)
        return _whole(analyze(enc, info, generation, ms), True)
    if big:
        chunked = encode_chunked(model, text, add_special, parse_special, report, CHUNK_CHARS)
        if chunked is None:
            return None
        return _whole(analyze(chunked, info, generation, (time.perf_counter() - t0) * 1000.0), True)
    enc = model.encode(text, add_special=add_special, parse_special=parse_special)
    return _whole(analyze(enc, info, generation, (time.perf_counter() - t0) * 1000.0), True)


def _whole(a: Analysis, whole: bool) -> Analysis:
    """Note in ``a.extra["whole"]`` whether the whole text was encoded (True)
    or only an edited part of it (False): what the live tokenizer learns
    its cost estimates from."""
    a.extra["whole"] = whole
    return a


NORMALIZED_MAX = 1 << 15
"""Longest text whose normalized form is shown: the normalizer is one
compiled call that holds the GIL (about 0.6 ms per 1000 characters)."""


@dataclass(frozen=True)
class Normalized:
    """What a normalizing model (UGM) actually sees: the text after its
    normalizer, and where each token's piece lies in it."""

    text: str
    tok_start16: np.ndarray | None
    """UTF-16 start of each token's piece in ``text``, plus the end as a
    last entry; None when the pieces do not spell ``text`` (unknown tokens)."""
    too_long: bool = False


def normalized_view(a: Analysis) -> Normalized | None:
    """The :class:`Normalized` text of ``a`` (meant for a worker thread), or
    None if its model does not normalize."""
    model = a.model
    if not model.config.normalizes:
        return None
    if len(a.text) > NORMALIZED_MAX:
        return Normalized("", None, too_long=True)
    text = model.normalized(a.text)
    pieces = model.vocab.pieces
    ids = a.encoding.token_ids
    # only the pieces of real text tokens (BOS/EOS cover nothing)
    spelled = [pieces[t] if s < e else "" for t, s, e in zip(ids, a.encoding.starts, a.encoding.ends)]
    if "".join(spelled) != text:
        return Normalized(text, None)
    lengths = np.array([len(p.encode("utf-16-le", "surrogatepass")) // 2 for p in spelled], dtype=np.int64)
    return Normalized(text, np.concatenate([[0], np.cumsum(lengths)]))
