"""Searching and sorting a whole vocabulary, for the vocab browser.

:class:`VocabIndex` turns a model's vocabulary into columns once (numpy
arrays of ids, scores, kinds and byte lengths, plus one search text per
token) and answers a :class:`Query` with an array of token ids: filtered by
substring, regular expression or id ranges and by kind, then sorted by any
column. Nothing here knows about Qt, so the browser runs queries in a
worker thread and tests compare them with plain Python.

It also explains single tokens: the BPE merges that build a token
(:meth:`VocabIndex.merge_tree`) and a token's rank by score.

>>> model = open_model("ggml-vocab-llama-spm.gguf")
>>> ids = VocabIndex(model).run(Query("hello", kind=kind_code("normal")))
>>> [model.vocab.pieces[i] for i in ids]
['Hello', 'hello', '▁Hello', '▁hello']
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass
from typing import Callable, Final

import numpy as np
import regex

from ..model import Model
from ..vocab import Attr, TokenType

# ---- token kinds ---------------------------------------------------------------

KIND_NAMES: Final = ("byte", "control", "normal", "undefined", "unknown", "unused", "user-defined")
"""Kinds of token by llama.cpp attribute bits, in alphabetical order so that
sorting by kind code sorts by name."""


def kind_code(name: str) -> int:
    """The code of a kind name in :data:`KIND_NAMES`."""
    return KIND_NAMES.index(name)


def kind_codes(attrs: np.ndarray) -> np.ndarray:
    """One kind code per token; a token with several bits gets the kind
    that decides how it is handled (unknown, control, user-defined, byte,
    unused, normal, in that order)."""
    out = np.full(len(attrs), kind_code("undefined"), dtype=np.int8)
    # lowest priority first so the highest one sticks
    for bit, name in ((Attr.NORMAL, "normal"), (Attr.UNUSED, "unused"), (Attr.BYTE, "byte"),
                      (Attr.USER_DEFINED, "user-defined"), (Attr.CONTROL, "control"),
                      (Attr.UNKNOWN, "unknown")):
        out[(attrs & bit) != 0] = kind_code(name)
    return out


ATTR_NAMES: Final = (
    (Attr.UNKNOWN, "unknown"), (Attr.UNUSED, "unused"), (Attr.NORMAL, "normal"),
    (Attr.CONTROL, "control"), (Attr.USER_DEFINED, "user-defined"), (Attr.BYTE, "byte"),
    (Attr.NORMALIZED, "normalized"), (Attr.LSTRIP, "lstrip"), (Attr.RSTRIP, "rstrip"),
    (Attr.SINGLE_WORD, "single-word"),
)


def attr_names(attr: int) -> list[str]:
    """The names of the attribute bits set in ``attr``."""
    return [name for bit, name in ATTR_NAMES if attr & bit]


def token_type_name(token_type: int) -> str:
    """The GGUF token type as stored (``tokenizer.ggml.token_type``)."""
    try:
        return TokenType(token_type).name.lower().replace("_", "-")
    except ValueError:
        return f"type {token_type}"


# ---- queries -------------------------------------------------------------------

MODES: Final = ("substring", "regex", "ids")
COLUMNS: Final = ("id", "piece", "score", "kind", "bytes")
REGEX_TIMEOUT_S: Final = 10.0
_CHUNK = 16_384


class QueryError(ValueError):
    """A query that cannot run: an invalid pattern or id range (the message
    is meant for the user)."""


class QueryCancelled(Exception):
    """The query was cancelled (a newer one replaced it)."""


@dataclass(frozen=True)
class Query:
    """What the browser shows: ``text`` read as ``mode`` (see :data:`MODES`),
    tokens of kind code ``kind`` only (-1: all), sorted by ``sort`` (see
    :data:`COLUMNS`)."""

    text: str = ""
    mode: str = "substring"
    case_sensitive: bool = False
    kind: int = -1
    sort: str = "id"
    descending: bool = False


def search_text(display: str) -> str:
    """What text queries are matched against: the displayed piece with
    SentencePiece's ``▁`` read as the space it stands for, so `` the``
    finds ``▁the`` and byte-level ``Ġthe`` alike."""
    return display.replace("\u2581", " ")


def parse_id_ranges(text: str, n: int) -> np.ndarray:
    """The ids named by ``"5"``, ``"100-200"``, ``"10-"`` (to the end) or
    several of those separated by commas or spaces; ids past the vocabulary
    are left out. Raises :class:`QueryError` for anything else.

    >>> parse_id_ranges("1, 5-7", 100)
    array([1, 5, 6, 7])
    """
    items = [s for s in re.split(r"[,\s]+", text.strip()) if s]
    if not items:
        return np.arange(n, dtype=np.int64)
    mask = np.zeros(n, dtype=bool)
    for item in items:
        m = re.fullmatch(r"(\d+)(?:\s*(?:-|–|\.\.)\s*(\d*))?", item)
        if m is None:
            raise QueryError(f"“{item}” is not an id or a range such as 100-200")
        lo = int(m.group(1))
        if m.group(2) is None and m.group(0) == m.group(1):
            hi = lo
        else:
            hi = int(m.group(2)) if m.group(2) else n - 1
        if hi < lo:
            raise QueryError(f"the range {item} ends before it starts")
        if lo < n:
            mask[lo:min(hi, n - 1) + 1] = True
    return np.flatnonzero(mask).astype(np.int64)


def compile_pattern(pattern: str, case_sensitive: bool) -> regex.Pattern[str]:
    """Compile ``pattern`` with the ``regex`` package; a bad pattern raises
    :class:`QueryError` saying where."""
    flags = 0 if case_sensitive else regex.IGNORECASE
    try:
        return regex.compile(pattern, flags)
    except (regex.error, ValueError, OverflowError, RecursionError) as e:
        pos = getattr(e, "pos", None)
        where = f" at position {pos + 1}" if isinstance(pos, int) else ""
        msg = getattr(e, "msg", None) or str(e)
        raise QueryError(f"invalid regular expression{where}: {msg}") from None


# Constructs whose result depends on the text around a match. Lookarounds
# and absolute anchors make a pattern run piece by piece; line anchors and
# word boundaries are run over the joined pieces in multi-line mode (a
# superset of the pieces' own matches) and every hit is checked alone.
_LOOKAROUND = regex.compile(r"\\[AZzGK]|\(\?<?[=!]|\(\?[a-zA-Z-]*r")
_ANCHOR = regex.compile(r"\\[bBmM<>]|(?<!\\)[$]|(?<![\\\[])\^")
_BREAK_CLASS = regex.compile(r"\\[snRvWSDh]|\\[pP]|\[\^")
_END_GROUP = "tokenprism_end"

def relax_assertions(pattern: str) -> str | None:
    """``pattern`` without lookarounds and ``\\A \\Z \\z \\G \\K``: zero-width
    tests whose removal can only add matches. None when that is not sure
    (a lookaround holding a group, whose removal would renumber
    backreferences; reverse searching; a pattern this reader cannot follow)."""
    if regex.search(r"\(\?[a-zA-Z-]*r", pattern):
        return None
    out: list[str] = []
    i = 0
    n = len(pattern)
    while i < n:
        c = pattern[i]
        if c == "\\":
            if pattern[i + 1:i + 2] in ("A", "Z", "z", "G", "K"):
                i += 2
                continue
            out.append(pattern[i:i + 2])
            i += 2
        elif c == "[":
            j = _class_end(pattern, i)
            if j < 0:
                return None
            out.append(pattern[i:j])
            i = j
        elif pattern.startswith(("(?=", "(?!", "(?<=", "(?<!"), i):
            j = _group_end(pattern, i)
            if j < 0 or "(" in pattern[i + 1:j]:
                return None
            i = j
        else:
            out.append(c)
            i += 1
    return "".join(out)


def _class_end(p: str, i: int) -> int:
    """The index after the character class opening at ``p[i]``, or -1."""
    k = i + 1
    if p[k:k + 1] == "^":
        k += 1
    if p[k:k + 1] == "]":  # a leading ] is literal
        k += 1
    while k < len(p):
        if p[k] == "\\":
            k += 2
        elif p[k] == "]":
            return k + 1
        elif p.startswith("[:", k):
            end = p.find(":]", k + 2)
            k = k + 1 if end < 0 else end + 2
        else:
            k += 1
    return -1


def _group_end(p: str, i: int) -> int:
    """The index after the group opening at ``p[i]``, or -1."""
    depth = 0
    k = i
    while k < len(p):
        c = p[k]
        if c == "\\":
            k += 2
            continue
        if c == "[":
            k = _class_end(p, k)
            if k < 0:
                return -1
            continue
        if c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
            if depth == 0:
                return k + 1
        k += 1
    return -1


@dataclass(frozen=True)
class MergeNode:
    """One symbol of a BPE merge tree: a leaf (a character of the piece) or
    the merge of ``left`` and ``right`` at ``rank`` (its line in
    ``tokenizer.ggml.merges``)."""

    text: str
    left: MergeNode | None = None
    right: MergeNode | None = None
    rank: int = -1

    def leaves(self) -> list[str]:
        if self.left is None or self.right is None:
            return [self.text]
        return self.left.leaves() + self.right.leaves()


BUILD_STEP: Final = 1 << 16
"""Tokens a :class:`VocabIndex` build does between looks at its ``cancelled``."""


class VocabIndex:
    """A model's vocabulary as columns, built once, queried many times.

    Safe to share between the GUI thread and one worker: the parts built on
    first use are built whole and then assigned (a race builds one twice,
    never half), and nothing ever waits for a lock.

    Building costs one pass over the vocabulary (about a second for 262 144
    tokens: meant for a worker thread); queries are numpy operations plus one
    scan of the search texts.
    """

    def __init__(self, model: Model, cancelled: Callable[[], bool] | None = None) -> None:
        """``cancelled`` is asked every :data:`BUILD_STEP` tokens; once it is
        true the build stops with :class:`QueryCancelled` (a browser that
        moved on to another model lets go of this one at once, not after a
        build that takes a minute for millions of tokens)."""
        self.model = model
        vocab = model.vocab
        n = len(vocab.pieces)
        self.size = n
        self.ids = np.arange(n, dtype=np.int64)
        columns = vocab.arrays()
        self.scores = columns.scores.astype(np.float64)
        self.types = columns.types
        self.attrs = columns.attrs
        self.kinds = kind_codes(self.attrs)
        display: list[str] = []
        byte_lengths = np.empty(n, dtype=np.int64)
        search: list[str] = []
        for lo in range(0, n, BUILD_STEP):
            if cancelled is not None and cancelled():
                raise QueryCancelled()
            hi = min(lo + BUILD_STEP, n)
            part = [model.display_piece(i) for i in range(lo, hi)]
            display += part
            byte_lengths[lo:hi] = [len(model.token_bytes(i)) for i in range(lo, hi)]
            search += [search_text(s) for s in part]
        self.display = display
        self.byte_lengths = byte_lengths
        self._search = search
        self._lower: list[str] | None = None
        self._joined: dict[str, tuple[str, np.ndarray]] = {}
        self._sep: str | None = None
        self._piece_order: np.ndarray | None = None
        self._score_rank: np.ndarray | None = None
        self._merge_ranks: dict[tuple[str, str], int] | None = None

    # ---- derived columns, built on first use --------------------------------

    def _lowered(self) -> list[str]:
        if self._lower is None:
            self._lower = [s.lower() for s in self._search]
        return self._lower

    def _joined_text(self, sep: str) -> tuple[str, np.ndarray]:
        """All search texts joined, each followed by ``sep`` (offsets, not
        the separator, tell pieces apart), and the start offset of each
        (plus the end)."""
        texts = self._search
        got = self._joined.get(sep)
        if got is None:
            lengths = np.fromiter(map(len, texts), dtype=np.int64, count=len(texts)) + 1
            starts = np.zeros(len(texts) + 1, dtype=np.int64)
            np.cumsum(lengths, out=starts[1:])
            got = (sep.join(texts) + sep, starts)
            self._joined[sep] = got
        return got

    def _separator(self) -> str:
        """A character no piece holds (fewest matches run over pieces)."""
        if self._sep is None:
            self._sep = next((c for c in ("\x00", "\x01", "\ufdd0") if not any(c in t for t in self._search)),
                             "\n")
        return self._sep

    def piece_order(self) -> np.ndarray:
        """Each token's position when all are sorted by displayed piece."""
        if self._piece_order is None:
            order = sorted(range(self.size), key=self.display.__getitem__)
            rank = np.empty(self.size, dtype=np.int64)
            rank[np.asarray(order, dtype=np.int64)] = np.arange(self.size, dtype=np.int64)
            self._piece_order = rank
        return self._piece_order

    def score_ranks(self) -> np.ndarray:
        """1 + the number of tokens with a higher score, for every token
        (SentencePiece and Unigram prefer higher scores)."""
        if self._score_rank is None:
            asc = np.sort(self.scores, kind="stable")
            self._score_rank = self.size - np.searchsorted(asc, self.scores, "right") + 1
        return self._score_rank

    @property
    def scores_differ(self) -> bool:
        """False when every token has the same score (ranks mean nothing)."""
        return bool(self.size) and bool(self.scores.min() != self.scores.max())

    def score_rank(self, token_id: int) -> int:
        return int(self.score_ranks()[token_id])

    # ---- queries -----------------------------------------------------------------

    def run(self, query: Query, cancelled: Callable[[], bool] | None = None,
            timeout: float = REGEX_TIMEOUT_S) -> np.ndarray:
        """The ids ``query`` selects, in its order. Raises :class:`QueryError`
        for a bad query (or a pattern still running after ``timeout``
        seconds) and :class:`QueryCancelled` once ``cancelled()`` is true."""
        text = query.text
        if query.mode not in MODES:
            raise QueryError(f"unknown filter mode {query.mode!r}")
        if not text:
            ids = self.ids
        elif query.mode == "ids":
            ids = parse_id_ranges(text, self.size)
        elif query.mode == "regex":
            ids = self.filter_regex(text, query.case_sensitive, cancelled, timeout)
        else:
            ids = self.filter_substring(text, query.case_sensitive)
        if query.kind >= 0:
            ids = ids[self.kinds[ids] == query.kind]
        return self.sort(ids, query.sort, query.descending)

    def filter_substring(self, text: str, case_sensitive: bool = False) -> np.ndarray:
        """Ids whose search text holds ``text``."""
        needle = search_text(text)
        texts = self._search
        if not case_sensitive:
            needle = needle.lower()
            texts = self._lowered()
        return np.fromiter((i for i, s in enumerate(texts) if needle in s), dtype=np.int64)

    def filter_regex(self, pattern: str, case_sensitive: bool = False,
                     cancelled: Callable[[], bool] | None = None,
                     timeout: float = REGEX_TIMEOUT_S) -> np.ndarray:
        """Ids whose search text ``pattern`` matches somewhere (``regex``
        package syntax, each piece matched on its own)."""
        pattern = search_text(pattern)
        rx = compile_pattern(pattern, case_sensitive)
        deadline = time.monotonic() + timeout
        try:
            scan_pattern: str | None = pattern
            context = _LOOKAROUND.search(pattern) is not None
            if context:
                # scan for the pattern without its lookarounds and absolute
                # anchors (it matches wherever the pattern does), check hits alone
                scan_pattern = None if rx.flags & regex.VERBOSE else relax_assertions(pattern)
                if scan_pattern is not None:
                    try:
                        regex.compile(scan_pattern, rx.flags)
                    except (regex.error, ValueError, OverflowError, RecursionError):
                        scan_pattern = None
            if scan_pattern is None:
                return self._regex_each(rx, self.ids, cancelled, deadline)
            pattern = scan_pattern
            anchored = context or _ANCHOR.search(pattern) is not None
            # line anchors need line breaks between the pieces, and ``.``
            # never runs over one; classes that match line breaks would
            sep = "\n" if anchored or _BREAK_CLASS.search(pattern) is None else self._separator()
            flags = rx.flags | (regex.MULTILINE if anchored else 0)
            scan = rx
            if not rx.flags & regex.VERBOSE:  # (a verbose pattern may end in a comment)
                # after a match, skip the rest of its piece: one hit per piece
                esc = regex.escape(sep)
                scan = regex.compile(f"(?:{pattern})(?P<{_END_GROUP}>)[^{esc}]*+{esc}?", flags)
            elif anchored:  # (never relaxed: verbose patterns are run piece by piece)
                scan = regex.compile(pattern, flags)
            return self._regex_joined(rx, scan, sep, anchored, cancelled, deadline)
        except TimeoutError:
            raise QueryError(f"the regular expression took longer than {timeout:g} s and was stopped; "
                             "simplify it (nested repeats such as (a+)+ can take forever)") from None

    def _regex_each(self, rx: regex.Pattern[str], ids: np.ndarray,
                    cancelled: Callable[[], bool] | None, deadline: float) -> np.ndarray:
        texts = self._search
        hits: list[int] = []
        for c in range(0, len(ids), _CHUNK):
            if cancelled is not None and cancelled():
                raise QueryCancelled()
            for i in ids[c:c + _CHUNK].tolist():
                left = deadline - time.monotonic()
                if left <= 0:
                    raise TimeoutError()
                if rx.search(texts[i], timeout=left, concurrent=True) is not None:
                    hits.append(i)
        return np.asarray(hits, dtype=np.int64)

    def _regex_joined(self, rx: regex.Pattern[str], scan: regex.Pattern[str], sep: str, verify_all: bool,
                      cancelled: Callable[[], bool] | None, deadline: float) -> np.ndarray:
        # One scan over all pieces joined is ten times faster than one call
        # per piece. Without context-dependent constructs a match inside a
        # piece is a match of the piece alone, and a piece that matches has
        # a match starting in it that the leftmost-first scan cannot miss
        # unless an earlier match ran over it: the pieces a match ran into
        # are checked one by one.
        joined, starts = self._joined_text(sep)
        spans: list[int] = []
        tail = _END_GROUP in scan.groupindex
        left = max(0.001, deadline - time.monotonic())
        for k, m in enumerate(scan.finditer(joined, timeout=left, concurrent=True)):
            if k & 4095 == 0 and cancelled is not None and cancelled():
                raise QueryCancelled()
            spans.append(m.start())
            spans.append(m.start(_END_GROUP) if tail else m.end())
        found = np.zeros(self.size, dtype=bool)
        if spans:
            se = np.asarray(spans, dtype=np.int64).reshape(-1, 2)
            s, e = se[:, 0], se[:, 1]
            tok = np.searchsorted(starts, s, "right") - 1
            keep = tok < self.size  # an empty match at the very end
            s, e, tok = s[keep], e[keep], tok[keep]
            inside = e <= starts[tok + 1] - 1  # the separator ends each piece
            if verify_all:
                inside[:] = False
                e = np.maximum(e, s + 1)
            found[tok[inside]] = True
            if not inside.all():
                first = tok[~inside]
                # a match may run up to the piece holding its end, and the
                # skipped tail of the scan pattern to that piece's end
                last = np.minimum(np.searchsorted(starts, e[~inside], "right") - 1, self.size - 1)
                marks = np.zeros(self.size + 1, dtype=np.int64)
                np.add.at(marks, first, 1)
                np.add.at(marks, last + 1, -1)
                check = (np.cumsum(marks[:-1]) > 0) & ~found
                if check.any():
                    found[self._regex_each(rx, np.flatnonzero(check), cancelled, deadline)] = True
        return np.flatnonzero(found).astype(np.int64)

    def sort(self, ids: np.ndarray, column: str = "id", descending: bool = False) -> np.ndarray:
        """``ids`` sorted by ``column`` (stable: equal keys keep id order)."""
        if column not in COLUMNS:
            raise QueryError(f"unknown sort column {column!r}")
        if column == "id":
            return ids[::-1].copy() if descending else ids
        key: np.ndarray
        if column == "piece":
            key = self.piece_order()[ids]
        elif column == "score":
            key = self.scores[ids]
        elif column == "kind":
            key = self.kinds[ids].astype(np.int64)
        else:
            key = self.byte_lengths[ids]
        order = np.argsort(-key if descending else key, kind="stable")
        return ids[order]

    # ---- single tokens ---------------------------------------------------------

    def merge_ranks(self) -> dict[tuple[str, str], int]:
        """``tokenizer.ggml.merges`` as {(left, right): rank}."""
        if self._merge_ranks is None:
            ranks: dict[tuple[str, str], int] = {}
            for rank, line in enumerate(self.model.vocab.merges):
                # llama.cpp splits at the first space after the first character
                cut = line.find(" ", 1)
                if cut > 0:
                    ranks.setdefault((line[:cut], line[cut + 1:]), rank)
            self._merge_ranks = ranks
        return self._merge_ranks

    @property
    def merges_ready(self) -> bool:
        """True once :meth:`merge_ranks` has been built (it takes a second
        on a 500 000-merge vocabulary)."""
        return self._merge_ranks is not None

    def merge_tree(self, token_id: int) -> list[MergeNode]:
        """How BPE builds token ``token_id`` from its characters: its piece's
        characters merged in rank order, as llama.cpp merges a word. One
        node when the merges reach the whole piece; several (the pieces the
        merges stop at) when they do not, as for special tokens. Empty
        when the vocabulary has no merges."""
        ranks = self.merge_ranks()
        if not ranks:
            return []
        nodes = [MergeNode(c) for c in self.model.vocab.pieces[token_id]]
        while len(nodes) > 1:
            best = -1
            best_rank = -1
            for i in range(len(nodes) - 1):
                r = ranks.get((nodes[i].text, nodes[i + 1].text), -1)
                if r >= 0 and (best_rank < 0 or r < best_rank):
                    best, best_rank = i, r
            if best < 0:
                break
            a, b = nodes[best], nodes[best + 1]
            nodes[best:best + 2] = [MergeNode(a.text + b.text, a, b, best_rank)]
        return nodes


def merge_tree_lines(nodes: list[MergeNode]) -> list[tuple[int, MergeNode]]:
    """The nodes of merge trees, parents before children, with their depth."""
    out: list[tuple[int, MergeNode]] = []

    def walk(node: MergeNode, depth: int) -> None:
        out.append((depth, node))
        if node.left is not None and node.right is not None:
            walk(node.left, depth + 1)
            walk(node.right, depth + 1)

    for root in nodes:
        walk(root, 0)
    return out
