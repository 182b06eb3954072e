"""WordPiece (``tokenizer.ggml.model`` = ``bert``), exactly as llama.cpp's
``llm_tokenizer_wpm_session`` does it.

Preprocessing (llama.cpp ``preprocess``), per code point of the fragment:

1. with ``strip_accents``, the code point is replaced by the FIRST code point
   of its NFD (llama.cpp's one-to-one NFD table), and its flags are taken
   from that code point;
2. whitespace ends the current word;
3. U+0000, U+FFFD and controls (categories Cc, Cf, Co, Cs) are dropped, and
   with ``strip_accents`` so are marks (category M);
4. the code point is lowercased (simple mapping) with ``lowercase``;
5. punctuation (category P), ASCII symbols (S below U+007F) and CJK
   ideographs become one-character words; everything else joins the word.

Each word then gets the word-start marker ``▁`` and is cut greedily, longest
vocabulary match first; a word with a position where nothing matches becomes
one unknown token.

Implementation: the fragment is cut into pieces "leading whitespace + one
word" by the character classes of the ORIGINAL code points (through NFD
when accents are stripped; one byte per code point in a table), so nothing
is rewritten before cutting and spans stay exact. Each distinct piece is
tokenized once and remembered with its byte offsets relative to the piece,
so repeated words cost one dictionary lookup. Above the pieces, the text is
cut at U+0020 (which always ends a word) into chunks, remembered the same
way and found again from a hash of their code points where they lie in
the text (``chunks.py``): a chunk seen before never becomes a string. New
words are cut by walking a trie of the vocabulary (built by ``prepare`` or
on the 4097th new word; the first ones use plain dict lookups, so a short
text never waits for it).

Spans: a token covers the original characters its normalized characters
came from, together with the dropped characters (accents, controls) that
follow them inside the word; the first token of a word also covers dropped
characters at the word's start. A ``▁``-only token is empty at the word start.

Differences from llama.cpp: none known. Every code point U+0001..U+10FFFF
(inside a word and alone), in all four normalizer settings, gives llama.cpp's
ids (checked against llama-cpp-python 0.3.36 with a vocabulary holding every
code point). One deliberate exception: a vocabulary with no unknown token
(no ``unknown_token_id`` key and fewer than 101 tokens) makes llama.cpp emit
``LLAMA_TOKEN_NULL`` (-1) for an unmatched word; here that word gives no token.
"""

from __future__ import annotations

import re
import threading
from typing import TYPE_CHECKING, Final, Sequence

from librt.strings import BytesWriter
from librt.vecs import append, extend, vec

# native 64-bit ints for mypyc in the trie walk (tagged ints checked every
# multiplication and shift for overflow: ~290 instructions a probe); plain
# ints when not compiled. Imported at run time, as vec[i64] names it.
from mypy_extensions import i32, i64, u8

from tokenprism.core.plugin_api import (
    BytesIndex, FragmentResult, PieceCodes, RangeSet, Ranges, TextCache, Vocab, checkpoint, chunk_end,
    config_from_vocab, flag_ranges, intersect, lowercase_pairs, merged, nfd_first, piece_codes,
    piece_lookup, points, subtract, unicode_data as ud, utf8_width, whitespace, zeros64)

from .chunks import Chunk

if TYPE_CHECKING:  # the explanation records load with the first trace, never for encoding
    from tokenprism.core.plugin_api import FragmentTrace


WORD_MARK: Final = "\u2581"

# llama.cpp's defaults for "bert" vocabularies (llama_vocab::impl::load)
DEFAULT_SPECIAL_IDS: Final[dict[str, int]] = {"bos": 101, "unk": 100, "sep": 102, "pad": 0, "mask": 103}

# llm_tokenizer_wpm_session::is_chinese_char
CHINESE_RANGES: Final[tuple[tuple[int, int], ...]] = (
    (0x04E00, 0x09FFF),
    (0x03400, 0x04DBF),
    (0x20000, 0x2A6DF),
    (0x2A700, 0x2B73F),
    (0x2B740, 0x2B81F),
    (0x2B920, 0x2CEAF),  # sic: llama.cpp follows HF's 0x2B920, not 0x2B820
    (0x0F900, 0x0FAFF),
    (0x2F800, 0x2FA1F),
)

# remembered pieces per tokenizer; longer pieces are not remembered
_CACHE_LIMIT: Final = 1 << 16
_CACHE_MAX_CHARS: Final = 48

# a chunk seen before costs ~0.1 µs, a new one several: checkpoints come
# every _CHECK_EVERY units, a new chunk counting _NEW_COST of them
_CHECK_EVERY: Final = 4096
_NEW_COST: Final = 8

# new words cut by dict lookups before the trie is built. Building it
# (bert-bge: ~23M instructions) costs what ~5 000 new words walked with
# it save over dict lookups (~4 400 instructions a word, callgrind), so
# it waits for 4 096 of them: a text of fewer never pays for it (the
# 0.11 MB first-encode text has 2 451: 70M -> 57M instructions with
# 256 here), and a longer one pays at most about twice the best choice
_WORDS_BEFORE_TRIE: Final = 4096

# the room a word's cut starts with: id, start, end of four tokens
_WORD_COLS: Final = 12

# the code points below U+0080 of llama.cpp's whitespace (unicode_data.WHITESPACE)
_ASCII_WS: Final = " \t\n\v\f\r"

# mypyc has no primitive for str.isascii: ``s.isascii()`` looks the method
# up by name on every call (7 % of a code text's instructions, most of a
# new chunk's); calling the method object itself skips the lookup
_isascii: Final = str.isascii

# ---- character classes ------------------------------------------------------

# code points per page of _Tables' lazily filled class table
_PAGE_BITS: Final = 8
_PAGE: Final = 1 << _PAGE_BITS


def _ascii_symbols() -> Ranges:
    """The symbols (general category S) below U+007F: WPM splits them off
    like punctuation; the non-ASCII ones stay inside words."""
    return intersect(flag_ranges(ud.SYMBOL), [(0, 0x7E)])


# classes of one code point (0: not known yet, in a lazily filled table)
WS: Final = 1
DROP: Final = 2
SPLIT: Final = 3
WORD: Final = 4


class CharClasses:
    """The whitespace, dropped and split sets for one ``strip_accents``
    setting, as ranges over ORIGINAL code points."""

    def __init__(self, strip_accents: bool) -> None:
        ws = points(whitespace())
        drop_l: Ranges = flag_ranges(ud.CONTROL) + [(0, 0), (0xFFFD, 0xFFFD)]
        if strip_accents:
            drop_l += flag_ranges(ud.ACCENT_MARK)
        drop = subtract(merged(drop_l), ws)
        split_l: Ranges = flag_ranges(ud.PUNCTUATION) + list(CHINESE_RANGES) + _ascii_symbols()
        split = subtract(subtract(merged(split_l), ws), drop)
        if strip_accents:
            # flags are those of the NFD's first code point: every code point
            # of one NFD range shares its target, so the range moves as a
            # whole into the target's class (26 000 code points, 1 800 ranges)
            sets = (RangeSet(ws), RangeSet(drop), RangeSet(split))
            moved: dict[int, Ranges] = {WS: [], DROP: [], SPLIT: [], WORD: []}
            cover: Ranges = []
            for first, last, target in nfd_first():
                cover.append((first, last))
                moved[_classify(sets, target)].append((first, last))
            cov = merged(cover)
            ws = merged(subtract(ws, cov) + moved[WS])
            drop = merged(subtract(drop, cov) + moved[DROP])
            split = merged(subtract(split, cov) + moved[SPLIT])
        self.ws: Ranges = ws
        self.drop: Ranges = drop
        self.split: Ranges = split
        self._sets = (RangeSet(ws), RangeSet(drop), RangeSet(split))

    def char_class(self, cp: int) -> int:
        """WS, DROP, SPLIT or WORD for an original code point."""
        return _classify(self._sets, cp)


def _classify(sets: tuple[RangeSet, RangeSet, RangeSet], cp: int) -> int:
    if cp in sets[0]:
        return WS
    if cp in sets[1]:
        return DROP
    if cp in sets[2]:
        return SPLIT
    return WORD


def _translate_table(lowercase: bool, strip_accents: bool, hi: int = 0x10FFFF) -> dict[int, int]:
    """Code point -> its normalized code point, for every one up to ``hi``
    that changes (dropped code points are removed before translating)."""
    pairs = lowercase_pairs() if lowercase else []
    lower: dict[int, int] = dict(pairs)
    table: dict[int, int] = {}
    if strip_accents:
        # one NFD range has one target: filled range by range (dict.fromkeys
        # fills in C; a Python loop over the 26 000 code points took ms)
        for first, last, target in nfd_first():
            if first > hi:
                continue
            t = lower.get(target, target)
            table.update(dict.fromkeys(range(first, min(last, hi) + 1), t))
            if first <= t <= last and t <= hi:
                del table[t]
    for cp, lc in pairs:
        if cp != lc and cp <= hi and cp not in table:
            table[cp] = lc
    return table


def _class_bytes(cc: CharClasses) -> bytes:
    """WS, DROP, SPLIT or WORD for every code point, one byte each: 1.1 MB
    filled range by range in well under a millisecond, where compiling the
    same classes into regular expressions took 8 ms."""
    out = bytearray([WORD]) * 0x110000
    for ranges, k in ((cc.split, SPLIT), (cc.drop, DROP), (cc.ws, WS)):
        for a, b in ranges:
            out[a : b + 1] = bytes([k]) * (b - a + 1)
    return bytes(out)


def _ascii_class_bytes() -> bytes:
    """WS, DROP, SPLIT or WORD for the code points below U+0080, straight
    from the tables: NFD leaves them alone, so ``strip_accents`` changes
    none of them, and no mark is ASCII."""
    out = bytearray([WORD]) * 0x80
    for a, b in flag_ranges(ud.PUNCTUATION) + _ascii_symbols():
        for c in range(a, min(b, 0x7F) + 1):
            out[c] = SPLIT
    out[0] = DROP
    for a, b in flag_ranges(ud.CONTROL):
        for c in range(a, min(b, 0x7F) + 1):
            out[c] = DROP
    for c in whitespace():
        if c < 0x80:
            out[c] = WS
    return bytes(out)


class _Tables:
    """Compiled data for one (lowercase, strip_accents) setting.

    Non-ASCII code points get their class and normalized form when a text
    first holds them (:meth:`kinds`), one at a time from llama.cpp's flag
    and NFD tables: a text holds a few hundred distinct ones, and making
    the Unicode-wide class table and translate dict up front cost ~40M
    instructions (5-10 ms) of the first encode of any non-ASCII text."""

    def __init__(self, lowercase: bool, strip_accents: bool) -> None:
        self.lowercase = lowercase
        self.strip_accents = strip_accents
        self.ascii_class: bytes = _ascii_class_bytes()
        self.ws_chars: str = "".join(chr(c) for c in whitespace())
        ascii_table = _translate_table(lowercase, strip_accents, 0x7F)
        self.ascii_map: list[int] = [ascii_table.get(c, c) for c in range(128)]
        # the 256-byte table of bytes.translate: an ASCII text's classes
        self.ascii_kinds: bytes = self.ascii_class + bytes(128)
        # the class of every non-ASCII code point seen so far (0: not yet),
        # in pages of 256 code points added as texts reach them; _page_of
        # holds each block's page number + 1 (0: none). A dict keyed by
        # code point made an int object per character looked up
        self._page_of: vec[i32] = vec[i32]([0] * (0x110000 >> _PAGE_BITS))
        self._classes: vec[i32] = vec[i32]()
        # code point -> normalized code point, for those seen that change
        self._norm: dict[int, int] = {}
        self._loaded = False
        self._ws: set[int] = set()
        # the tables as the core gives them, searched in place (lists of
        # their starts and a dict of the lowercase pairs were ~1M
        # instructions of the first non-ASCII text)
        self._flag_ranges: tuple[int, ...] = ()
        self._nfd: list[tuple[int, ...]] = []
        self._lower: list[tuple[int, ...]] = []
        self._control = self._accent = self._punct = self._symbol = 0
        # ASCII's normalized forms, for non-ASCII texts holding ASCII letters
        for c in range(0x80):
            if self.ascii_map[c] != c:
                self._norm[c] = self.ascii_map[c]

    def _load(self) -> None:
        """The lookup tables of :meth:`_class_and_norm`, made on first use."""
        with _tables_lock:
            if not self._loaded:
                self._ws = set(whitespace())
                self._flag_ranges = ud.FLAG_RANGES
                # (the module's attributes, read once)
                self._control = ud.CONTROL
                self._accent = ud.ACCENT_MARK
                self._punct = ud.PUNCTUATION
                self._symbol = ud.SYMBOL
                if self.strip_accents:
                    self._nfd = list(nfd_first())
                if self.lowercase:
                    self._lower = list(lowercase_pairs())
                self._loaded = True

    def kinds(self, text: str) -> bytes:
        """The class of each character of ``text``, in order (filling the
        classes and normalized forms of code points not seen before)."""
        if _isascii(text):
            return text.encode("ascii").translate(self.ascii_kinds)
        if not self._loaded:
            self._load()
        ascii_class = self.ascii_class
        out = BytesWriter()
        n: i64 = len(text)
        # held for the whole text: pages are added (and filled) as they go
        with _tables_lock:
            page_of = self._page_of
            classes = self._classes
            i: i64 = 0
            while i < n:
                cp: i64 = ord(text[i])
                i += 1
                if cp < 0x80:
                    out.append(u8(ascii_class[cp]))
                    continue
                block = cp >> _PAGE_BITS
                pg: i64 = i64(page_of[block])
                if pg == 0:
                    classes = extend(classes, _EMPTY_PAGE)
                    self._classes = classes
                    pg = len(classes) >> _PAGE_BITS
                    page_of[block] = i32(pg)
                at = ((pg - 1) << _PAGE_BITS) | (cp & (_PAGE - 1))
                k: i64 = i64(classes[at])
                if k == 0:
                    k = self._class_and_norm(cp)
                    classes[at] = i32(k)
                out.append(u8(k))
        return out.getvalue()

    def norm(self) -> dict[int, int]:
        """The ``str.translate`` table of every code point seen so far (and
        of ASCII) that normalizes to another one."""
        return self._norm

    def _class_and_norm(self, cp: int) -> int:
        """WS, DROP, SPLIT or WORD for ``cp``, recording its normalized
        code point. With ``strip_accents`` both come from the first code
        point of its NFD (as ``CharClasses`` and ``_translate_table``
        build them for every code point)."""
        t = cp
        if self.strip_accents:
            k = _row_at_most(self._nfd, cp)
            if k >= 0 and cp <= self._nfd[k][1]:
                t = self._nfd[k][2]
        n = t
        k = _row_at_most(self._lower, t)
        if k >= 0 and self._lower[k][0] == t:
            n = self._lower[k][1]
        if n != cp:
            self._norm[cp] = n
        if t in self._ws:
            return WS
        f = _flags_of(self._flag_ranges, t)
        if f & self._control or t == 0 or t == 0xFFFD or (self.strip_accents and f & self._accent):
            return DROP
        if f & self._punct or (t <= 0x7E and f & self._symbol):
            return SPLIT
        for lo, hi in CHINESE_RANGES:
            if lo <= t <= hi:
                return SPLIT
        return WORD


def _row_at_most(rows: list[tuple[int, ...]], cp: int) -> i64:
    """The index of the last of ``rows`` (ascending by their first value)
    whose first value is at most ``cp``, or -1: ``nfd_first``'s
    ``(first, last, target)`` rows, ``lowercase_pairs``'
    ``(code point, lowercase)`` pairs."""
    lo: i64 = 0
    hi: i64 = len(rows)
    while lo < hi:
        mid = (lo + hi) >> 1
        if rows[mid][0] <= cp:
            lo = mid + 1
        else:
            hi = mid
    return lo - 1


def _flags_of(ranges: tuple[int, ...], cp: int) -> int:
    """The flags of ``cp`` in llama.cpp's flag table: start, flags of each
    range in turn, ascending, the first starting at 0."""
    lo: i64 = 0
    hi: i64 = len(ranges) >> 1
    while lo < hi:
        mid = (lo + hi) >> 1
        if ranges[2 * mid] <= cp:
            lo = mid + 1
        else:
            hi = mid
    return ranges[2 * lo - 1]


_tables_lock = threading.Lock()
# a page of _Tables' classes, none known yet
_EMPTY_PAGE: Final = vec[i32]([0] * _PAGE)
_tables_cache: dict[tuple[bool, bool], _Tables] = {}


def _get_tables(lowercase: bool, strip_accents: bool) -> _Tables:
    key = (lowercase, strip_accents)
    with _tables_lock:
        t = _tables_cache.get(key)
        if t is None:
            t = _Tables(lowercase, strip_accents)
            _tables_cache[key] = t
        return t


# ---- tokenizing ---------------------------------------------------------------


class Piece(Chunk):
    """The tokens of one piece (leading whitespace + one word), with byte
    offsets relative to the piece, and the normalized word."""

    def __init__(self, cols: vec[i64], nbytes: int, word: str) -> None:
        super().__init__(cols, nbytes)
        self.word = word


# what an empty chunk (between two spaces) adds: no token, no byte
_NO_CHUNK: Final = Chunk(vec[i64](), 0)


def _utf8_offsets(text: str) -> list[int]:
    """UTF-8 byte offset of every character of ``text``, and of its end."""
    n = len(text)
    out = [0] * (n + 1)
    pos = 0
    for i in range(n):
        out[i] = pos
        # (ord of an indexed character: no one-character string made)
        pos += utf8_width(ord(text[i]))
    out[n] = pos
    return out


_cut_re: re.Pattern[str] | None = None  # compiled on first use: 0.12 ms of every open otherwise


def _cut_pattern() -> re.Pattern[str]:
    global _cut_re
    if _cut_re is None:
        _cut_re = re.compile("(?<=[!-~])(?=[ \n])")
    return _cut_re


# edges of the vocabulary trie: key = parent node << 24 | code point (the
# first six bytes of a packed slot, as they are), slot from node *
# _NODE_MUL + code point * _CP_MUL; every factor stays below 2**30, where
# mypyc multiplies without its big-int fallback
_NODE_SHIFT: Final = 24
_NODE_MUL: Final = 0x61C8865
_CP_MUL: Final = 0x9E3779


def _slot(cells: vec[i64], mask: i64, node: i64, cp: i64) -> i64:
    """The slot of the edge from ``node`` by ``cp`` in a trie table: the
    edge's own, or the empty slot where it would go (``cells[slot * 2]``
    then is -1)."""
    key: i64 = (node << _NODE_SHIFT) | cp
    h: i64 = node * _NODE_MUL + cp * _CP_MUL
    s: i64 = (h ^ (h >> 19)) & mask
    k = cells[s << 1]
    while k != key and k >= 0:
        s = (s + 1) & mask
        k = cells[s << 1]
    return s


def _find(cells: vec[i64], mask: i64, node: i64, cp: i64) -> i64:
    """The slot of the edge from ``node`` by ``cp``, or -1 (``_slot``
    without the empty slot)."""
    key: i64 = (node << _NODE_SHIFT) | cp
    h: i64 = node * _NODE_MUL + cp * _CP_MUL
    s: i64 = (h ^ (h >> 19)) & mask
    while True:
        k = cells[s << 1]
        if k == key:
            return s
        if k < 0:
            return -1
        s = (s + 1) & mask


def _slot_id(cells: vec[i64], s: i64) -> i64:
    """The id of the piece ending at slot ``s``, or -1."""
    return cells[(s << 1) + 1] - 1


class _Trie:
    """Every vocabulary piece as a path of code points, for ``_greedy``.

    One open-addressing table of edges in one vector: the slot ``s`` where
    the edge into a node is stored is that node's number, ``cells[2 * s]``
    the edge's key (-1: empty) and ``cells[2 * s + 1]`` the id + 1 of the
    piece ending at the node (0: none), so a step reads neighbouring items.
    Native int64s: a list of int objects cost a cache miss per object
    read, and the bytes table packed from it to avoid that took longer to
    make (numpy) than the trie itself. A longest-match walk reads a few
    items per character, where looking up candidate slices in the vocabulary dict cost a slice, a
    hash and a probe each (new English words: ~30% less time than the
    filtered slice lookups this replaced). Building it is one probe per
    piece character (bert-bge: 210k, ~3 ms), which is why short texts
    do without it."""

    cells: vec[i64]
    mask: i64
    root: i64
    mark: i64

    def __init__(self, codes: PieceCodes) -> None:
        total = len(codes.cps)
        # pieces share prefixes: a vocabulary's trie has about a third as
        # many nodes as its pieces have characters (bert-bge: 65k of 210k)
        size = 1 << 10
        while size < total // 2:
            size <<= 1
        while not self._build(codes, size):
            size <<= 1

    def _build(self, codes: PieceCodes, size: i64) -> bool:
        """Fill a table of ``size`` slots; False when it gets too full.

        The table is one native int64 vector (key, id of each slot in
        turn): a list held an int object per key, made and later read
        back one by one (the build and its packing were ~25 ms of
        bert-bge's first encode, now ~4)."""
        mask: i64 = size - 1
        limit: i64 = size - (size >> 2)
        root: i64 = size
        n_cells: i64 = 2 * size
        cells = vec[i64](capacity=n_cells)
        k: i64 = 0
        while k < n_cells:
            cells = append(cells, -1)
            cells = append(cells, 0)
            k += 2
        used: i64 = 0
        cps = codes.cps
        offs = codes.offs
        n_pieces: i64 = len(offs) - 1
        # in id order: a piece listed twice keeps its last id, as in llama.cpp
        tid: i64 = 0
        while tid < n_pieces:
            node: i64 = root
            i: i64 = offs[tid]
            end: i64 = offs[tid + 1]
            while i < end:
                cp = i64(cps[i])
                s = _slot(cells, mask, node, cp)
                if cells[s << 1] < 0:
                    cells[s << 1] = (node << _NODE_SHIFT) | cp
                    used += 1
                    if used > limit:
                        return False
                node = s
                i += 1
            if node != root:
                cells[(node << 1) + 1] = tid + 1
            tid += 1
        self.cells = cells
        self.mask = mask
        self.root = root
        # the node after the word-start mark: every word's walk begins there
        self.mark = self.child(root, ord(WORD_MARK))
        return True

    def child(self, node: i64, cp: i64) -> i64:
        """The node under ``node`` by ``cp``, or -1."""
        cells = self.cells
        mask = self.mask
        s = _slot(cells, mask, node, cp)
        return s if cells[s << 1] >= 0 else -1


class WpmTokenizer:
    """llama.cpp's WPM tokenizer for one vocabulary."""

    def __init__(self, vocab: Vocab) -> None:
        self.vocab = vocab
        lowercase = vocab.flag("normalizer_lowercase", True)
        strip_accents = vocab.flag("normalizer_strip_accents", lowercase)
        self.lowercase: bool = lowercase
        self.strip_accents: bool = strip_accents
        # llama.cpp puts CLS and SEP around the text whatever the flags say
        self.config = config_from_vocab(vocab, "WPM", DEFAULT_SPECIAL_IDS, add_bos=True, add_eos=False,
                                        suffix="sep", wrap_always=True, clean_spaces=True,
                                        normalizes=True)
        special = self.config.special_ids
        self._pieces: Sequence[str] = vocab.pieces
        self._unk: int = special.get("unk", -1)
        # the piece index is made on first use (_index): opening reads no
        # piece (bert-bge's first open ~3 ms less)
        self._t2i: BytesIndex | None = None
        tables = _get_tables(lowercase, strip_accents)
        self._tables = tables
        self._ascii_class: bytes = tables.ascii_class
        self._ws_chars: str = tables.ws_chars
        # the ASCII characters that are one-character words in this setting
        self._ascii_split: str = "".join(
            chr(c) for c in range(0x80) if tables.ascii_class[c] == SPLIT
        )
        self._cache: dict[str, Piece] = {}
        self._chunks: TextCache[Chunk] = TextCache(_CACHE_LIMIT)  # (see chunks.py)
        self._trie: _Trie | None = None
        self._max_chars: int = vocab.max_piece_chars
        self._dict_words: int = 0
        # below U+0080 the table either lowercases or does nothing, so
        # ASCII words can skip the (slower) table lookup per character
        ascii_map = tables.ascii_map
        self._lowercase_ascii: bool = ascii_map == [ord(chr(c).lower()) for c in range(128)]
        self._ascii_lower: bool = self._lowercase_ascii or ascii_map == list(range(128))

    # ---- the contract ---------------------------------------------------

    def encode_fragment(self, text: str, after_special: bool) -> FragmentResult:
        ids, starts, ends = self.encode_columns(text, after_special)
        return FragmentResult(list(ids), list(starts), list(ends))

    def encode_columns(self, text: str, after_special: bool) -> tuple[vec[i64], vec[i64], vec[i64]]:
        """``encode_fragment``'s columns as native int64 vectors: appended
        without an int object per value (boxing the offsets, and the lists
        of objects, were half of this loop's time and most of its memory)."""
        # U+0020 always ends a word (it is whitespace in every setting, and
        # its own NFD), so the space-separated chunks tokenize independently.
        # Chunks repeat in real text: one pass over the code points finds
        # each chunk's end and its hash, and a chunk seen before is found
        # from them (see chunks.py); only a new one becomes a string.
        table = self._chunks
        # every chunk of an ASCII text is ASCII: one test instead of one a chunk
        all_ascii = _isascii(text)
        n_text: i64 = len(text)
        # first every chunk's tokens, then the vectors at their exact size:
        # a guess zero-fills memory it may not use (~2 us a page fault per
        # 4 KB here) or grows them by copying
        found: list[Chunk] = []
        total: i64 = 0
        total_work = 2 * n_text + 2  # (two passes over the text)
        k: i64 = 0
        next_check: i64 = _CHECK_EVERY
        a: i64 = 0
        while True:
            i, h = chunk_end(text, a, n_text)
            k += 1
            if k >= next_check:
                # a huge fragment without cut points is one call: report
                # progress, let the GUI thread in, and let it cancel
                checkpoint(i + 1, total_work)
                next_check = k + _CHECK_EVERY
            if i == a:
                # between two spaces (indentation): nothing to look up
                found.append(_NO_CHUNK)
            else:
                r = table.find(text, a, i, h) if i - a <= _CACHE_MAX_CHARS else None
                if r is None:
                    c = text[a:i]
                    r = self._chunk(c, all_ascii or _isascii(c), h)
                    next_check -= _NEW_COST
                found.append(r)
                total += r.n
            if i >= n_text:
                break
            a = i + 1
        # made at their size and stored into: an append is a call into the
        # vector library per value (three per token)
        ids = zeros64(total)
        starts = zeros64(total)
        ends = zeros64(total)
        pos: i64 = 0
        at_tok: i64 = 0
        n_found: i64 = len(found)
        f: i64 = 0
        for r in found:
            if f & (_CHECK_EVERY - 1) == 0:
                checkpoint(n_text + 1 + f * n_text // n_found, total_work)
            f += 1
            rc = r.cols
            for t in range(0, 3 * r.n, 3):
                ids[at_tok] = rc[t]
                starts[at_tok] = pos + rc[t + 1]
                ends[at_tok] = pos + rc[t + 2]
                at_tok += 1
            # the chunk and the space after it
            pos += r.nbytes + 1
        return ids, starts, ends

    def piece_bytes(self, token_id: int) -> bytes:
        piece: str = self._pieces[token_id]
        return piece.replace(WORD_MARK, " ").encode("utf-8", "surrogateescape")

    def normalized(self, text: str) -> str:
        """The words llama.cpp's preprocessing makes, joined by spaces."""
        words: list[str] = []
        for p in self._split(text):
            w = self._piece(p).word
            if w:
                words.append(w)
        return " ".join(words)

    def cut_points(self, text: str, lo: int, hi: int) -> list[int]:
        """Before a space or line break that follows a printable ASCII
        character: a word always ends there and the next piece starts, and
        pieces are tokenized one by one."""
        return [m.start() for m in _cut_pattern().finditer(text, max(lo, 1), min(hi, len(text)))]

    # ---- extras -----------------------------------------------------------

    def words(self, text: str) -> list[str]:
        """The normalized words of ``text``, as llama.cpp's ``preprocess`` returns them."""
        out: list[str] = []
        for p in self._split(text):
            w = self._piece(p).word
            if w:
                out.append(w)
        return out

    def word_indices(self, text: str) -> list[int]:
        """For each token ``encode_fragment(text)`` gives, the index of the
        word (in ``words(text)``) it comes from."""
        out: list[int] = []
        k = 0
        for p in self._split(text):
            r = self._piece(p)
            if r.word:
                for _ in range(r.n):
                    out.append(k)
                k += 1
        return out

    def trace_fragment(self, text: str, after_special: bool) -> FragmentTrace:
        """``encode_fragment`` replayed stage by stage (``Model.explain``);
        the tracing code is imported here, on first use only."""
        from .trace import trace_wpm
        return trace_wpm(self, text, after_special)

    # (for the trace: the pieces, their tokens, which characters go, unknown)
    def split_pieces(self, text: str) -> list[str]:
        return self._split(text)

    def piece_tokens(self, p: str) -> Piece:
        return self._piece(p)

    def kept(self, c: str) -> bool:
        return self._tables.kinds(c)[0] != DROP

    @property
    def whitespace_chars(self) -> str:
        return self._ws_chars

    @property
    def unk_id(self) -> int:
        return self._unk

    def clear_cache(self) -> None:
        """Forget the remembered pieces (for benchmarks; results never change)."""
        self._cache.clear()
        self._chunks.clear()

    # ---- internals ----------------------------------------------------------

    def _split(self, text: str, asc: bool = False) -> list[str]:
        """Pieces "leading whitespace + one word" (and trailing whitespace);
        joined, they give ``text`` back.

        One walk over the characters' classes (``_Tables.kinds``):
        whitespace, then a run of word characters (dropped ones included:
        they are removed later, inside the word) or one split character;
        whitespace at the end stands alone. For the short chunks this gets,
        cheaper than starting a regular expression. ``asc``: ``text`` is
        known to be ASCII."""
        tab = self._tables
        kinds = text.encode("ascii").translate(tab.ascii_kinds) if asc else tab.kinds(text)
        out: list[str] = []
        n = len(text)
        i = 0
        while i < n:
            j = i
            while j < n and kinds[j] == WS:
                j += 1
            if j < n:
                if kinds[j] == SPLIT:
                    j += 1
                else:
                    while j < n:
                        k = kinds[j]
                        if k == WS or k == SPLIT:
                            break
                        j += 1
            out.append(text[i:j])
            i = j
        return out

    def _chunk(self, c: str, asc: bool, h: i64 = -1) -> Chunk:
        """Tokens of a text without U+0020, remembered when short; ``asc``
        tells whether it is ASCII, ``h`` is its hash if known (-1: not)."""
        ascii_lower = asc and self._ascii_lower
        if ascii_lower and c.isalnum():
            # ASCII letters and digits are all word characters (never
            # whitespace, split or dropped), so the chunk is one word,
            # tokenized straight into the chunk (not into a Piece too)
            ch = Chunk(self._ascii_word(c)[0], len(c))
            self._remember_chunk(c, ch, h)
            return ch
        if asc and len(c) >= 2 and c[-1] in self._ascii_split and c[:-1].isalnum():
            # a word and one ASCII punctuation or symbol ("day," "f("): the
            # two pieces _split would give, without the walk
            pieces = [c[:-1], c[-1]]
        else:
            pieces = self._split(c, asc)
        chunks = self._chunks
        parts: list[Chunk] = []
        n_cols: i64 = 0
        for p in pieces:
            r: Chunk
            if ascii_lower and p.isalnum():
                # a word that is also a chunk of its own ("day" of "day,"):
                # one cache for both, so it is cut only once
                found = chunks.get(p)
                r = self._chunk(p, True) if found is None else found
            else:
                r = self._piece(p)
            parts.append(r)
            n_cols += 3 * r.n
        # made at its size and stored into (appends grew it by copying)
        cols = zeros64(n_cols)
        at: i64 = 0
        pos: i64 = 0
        for r in parts:
            rc = r.cols
            for t in range(0, 3 * r.n, 3):
                cols[at] = rc[t]
                cols[at + 1] = pos + rc[t + 1]
                cols[at + 2] = pos + rc[t + 2]
                at += 3
            pos += r.nbytes
        ch = Chunk(cols, pos)
        self._remember_chunk(c, ch, h)
        return ch

    def _remember_chunk(self, c: str, ch: Chunk, h: i64) -> None:
        if len(c) <= _CACHE_MAX_CHARS:
            # (the table starts again empty when full)
            self._chunks.add(c, ch, h)

    def _piece(self, p: str) -> Piece:
        cache = self._cache
        r = cache.get(p)
        if r is None:
            r = self._tokenize_piece(p)
            if len(p) <= _CACHE_MAX_CHARS:
                if len(cache) >= _CACHE_LIMIT:
                    cache.clear()
                cache[p] = r
        return r

    def _unknown_word(self, start: i64, end: i64) -> vec[i64]:
        """The tokens of a word the greedy cut could not cover: the unknown
        token (when the vocabulary has one) over ``[start, end)``, as in
        llama.cpp."""
        if self._unk >= 0:
            return vec[i64]([self._unk, start, end])
        return vec[i64]()

    def _ascii_word(self, w: str) -> tuple[vec[i64], str]:
        """Tokens of ``w``, ASCII letters and digits only, with character
        (= byte) offsets into ``w``, and the normalized word. For
        ``_ascii_lower`` tokenizers only."""
        word = w.lower() if self._lowercase_ascii else w
        cols = self._greedy(word)
        if len(cols) == 0:
            cols = self._unknown_word(0, len(w))
        return cols, word

    def _tokenize_piece(self, p: str) -> Piece:
        ascii_p = _isascii(p)
        if ascii_p and self._ascii_lower and p.isalnum():
            cols0, word0 = self._ascii_word(p)
            return Piece(cols0, len(p), word0)
        # ASCII: whitespace is these six, and printable characters are all
        # kept (cheaper than the Unicode-wide strip set and class table)
        core = p.lstrip(_ASCII_WS) if ascii_p else p.lstrip(self._ws_chars)
        k: i64 = len(p) - len(core)
        n_core: i64 = len(core)
        origin: list[int] = []
        kept = core
        if not (ascii_p and core.isprintable()):
            kinds = self._tables.kinds(core)
            for i in range(n_core):
                if kinds[i] == DROP:
                    origin = [j for j in range(n_core) if kinds[j] != DROP]
                    kept = "".join([core[j] for j in origin])
                    break
        nk: i64 = len(kept)
        if ascii_p and self._ascii_lower:
            word = kept.lower() if self._lowercase_ascii else kept
        else:
            # (kept's characters are p's, whose kinds filled the table)
            word = kept.translate(self._tables.norm())
        cols = vec[i64]()
        if nk > 0:
            cols = self._greedy(word)
            if len(cols) == 0:
                cols = self._unknown_word(k, len(p))
            else:
                # token ranges are in the normalized word; map them to
                # characters of p (in place: the vector is this piece's own)
                for t in range(0, len(cols), 3):
                    a = cols[t + 1]
                    b = cols[t + 2]
                    if b <= a:
                        cols[t + 1] = k
                        cols[t + 2] = k
                    elif origin:
                        cols[t + 1] = k if a == 0 else k + origin[a]
                        cols[t + 2] = k + n_core if b == nk else k + origin[b]
                    else:
                        cols[t + 1] = k + a
                        cols[t + 2] = k + b
        if ascii_p:
            return Piece(cols, len(p), word)
        offs = _utf8_offsets(p)
        for t in range(0, len(cols), 3):
            cols[t + 1] = offs[cols[t + 1]]
            cols[t + 2] = offs[cols[t + 2]]
        return Piece(cols, offs[len(p)], word)

    def prepare(self) -> None:
        """Build the piece index and the vocabulary trie now rather than on
        the first words that need them (the character tables fill per code
        point as texts bring them: nothing Unicode-wide is left to build)."""
        self._index()
        self._get_trie()

    def _get_trie(self) -> _Trie:
        """The trie of ``_greedy``, made on first use (a benign race at
        worst makes it twice)."""
        t = self._trie
        if t is None:
            t = _Trie(piece_codes(self.vocab))
            self._trie = t
        return t

    def _greedy(self, word: str) -> vec[i64]:
        """Longest-match-first cut of ``"▁" + word``, as llama.cpp does it:
        id, start, end of each token in turn, with character offsets into
        ``word``: the first token starts at 0 (its ``▁`` covers nothing), a
        ``▁``-only token is ``(0, 0)``. Empty when some position has no
        match."""
        tr = self._trie
        if tr is None:
            self._dict_words += 1
            if self._dict_words <= _WORDS_BEFORE_TRIE:
                return self._greedy_dict(word)
            tr = self._get_trie()
        tb = tr.cells
        mask: i64 = tr.mask
        root: i64 = tr.root
        n: i64 = len(word)
        # the walk of each position stops at the first character no piece
        # continues with: every longer candidate is then absent as well,
        # so the last piece passed is the longest match
        cols = vec[i64](capacity=_WORD_COLS)
        node: i64 = tr.mark
        if node < 0:
            return cols
        best: i64 = _slot_id(tb, node)
        best_j: i64 = 0
        i: i64 = 0
        j: i64 = 0
        while True:
            while j < n:
                s = _find(tb, mask, node, ord(word[j]))
                if s < 0:
                    break
                node = s
                j += 1
                t = _slot_id(tb, s)
                if t >= 0:
                    best = t
                    best_j = j
            if best < 0:
                return vec[i64]()
            cols = append(cols, best)
            cols = append(cols, i)
            cols = append(cols, best_j)
            i = best_j
            if i >= n:
                return cols
            node = root
            best = -1
            j = i

    def _index(self) -> BytesIndex:
        """The piece index of ``_greedy_dict``, made on first use over the
        pieces' undecoded bytes (``piece_lookup``: a tenth of the core's
        code-point index's cost, which the trie still reads later; a race
        at worst makes it twice)."""
        t = self._t2i
        if t is None:
            t = piece_lookup(self._pieces)
            self._t2i = t
        return t

    def _greedy_dict(self, word: str) -> vec[i64]:
        """``_greedy`` as llama.cpp writes it: every candidate length from
        the longest piece's down, looked up in the vocabulary dict."""
        t2i = self._index()
        w1 = WORD_MARK + word
        n: i64 = len(w1)
        max_chars: i64 = self._max_chars
        # room for four tokens: most words need no more, and growing the
        # vector from empty was a reallocation per token or two
        cols = vec[i64](capacity=_WORD_COLS)
        i: i64 = 0
        while i < n:
            j = i + max_chars
            if j > n:
                j = n
            # every candidate length from j down, the longest piece first
            hit = t2i.longest(w1, i, j)
            if hit < 0:
                return vec[i64]()
            cols = append(cols, hit & 0xFFFFFFFF)
            j = hit >> 32
            # offsets in w1, one more than in word; "▁" alone is (0, 0)
            cols = append(cols, i - 1 if i > 0 else 0)
            cols = append(cols, j - 1)
            i = j
        return cols


def build_wpm(vocab: Vocab) -> WpmTokenizer:
    """The WPM tokenizer for a ``bert`` vocabulary."""
    return WpmTokenizer(vocab)
