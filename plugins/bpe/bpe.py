"""Byte-level BPE as llama.cpp's ``llm_tokenizer_bpe_session`` runs it.

A fragment is split into words (``pretokenize``); each word is GPT-2
byte-encoded (or, for SPM-style vocabularies such as Gemma 4, kept as UTF-8
characters with spaces escaped to ``\u2581``), then merged: the adjacent pair
with the lowest merge rank is joined, the leftmost first on a tie, until no
pair has a rank. Every resulting symbol becomes its token, or, when the
vocabulary lacks it, one token per byte (missing bytes are dropped, as in
llama.cpp).

Ranks are looked up by the merge text ``"left right"``: llama.cpp splits a
merge at its first space after index 0 and keeps the first duplicate, and
symbols never hold a space (byte-level glyphs, escaped spaces; llama.cpp
asserts this), so that text identifies the pair. No pair table has to be
built from the 500 000 merges of a large vocabulary: ranks come from a
native table made from the merges' undecoded bytes on first use
(``ranks.py``, the core's ``BytesIndex``), and pieces are looked up in
the same kind of table over theirs. Results are cached per word.

Spans are UTF-8 byte offsets into the original fragment: a byte-level
symbol covers exactly its bytes; an escaped space (``\u2581``, three bytes)
covers its one space byte.
"""

from __future__ import annotations

import re
import threading
from typing import TYPE_CHECKING, Final, Optional, cast, final

from librt.vecs import append, extend, vec
from mypy_extensions import i64

from tokenprism.core.plugin_api import (
    FragmentResult, MISS, PairCache, PieceFinder, PieceIndex, STEP, TokenColumns, TokenizerConfig, Vocab,
    WORD_STEP, checkpoint, config_from_vocab, offer_gil, packed, piece_finder, piece_index, trim_heap)

if TYPE_CHECKING:  # the explanation records load with the first trace, never for encoding
    from tokenprism.core.plugin_api import FragmentTrace

from . import pretokenizers as pt
from .custom_split import piece_end
from .pretokenize import CLASS_TABLE, Splitter, UnicodeTables, tables
from .ranks import RankTable, merges_containing
from .word_cache import NATIVE as NATIVE_CACHE, WordCache, WordResult, ascii_hash

_WORD_STEP: Final = WORD_STEP  # (Final: a native constant in the compiled loop)

_CACHE_LIMIT: Final = 65_536
_HEAP_MIN: Final = 48  # words with at least this many symbols use the heap merge
_SAFE_SPLIT_MIN: Final = 256  # texts at least this long cut their words further (units)
_ESCAPED_SPACE = "\u2581"
_DNA_MARKER = "\ue000"
_LINE_CUT_RE = re.compile("(?<=[!-~]\n)(?=[!-~])")
# pre-tokenizers whose words run on across a line break (a "\n" is just
# another character to them); tests/core/test_incremental.py checks the
# line cut on every other one
_NO_LINE_CUTS = frozenset({"BLOOM", "GPT3_FINNISH", "PORO", "SUPERBPE", "VIKING"})


def _byte_glyphs() -> list[str]:
    """GPT-2's byte -> printable character table (``unicode_byte_to_utf8_map``)."""
    glyph: list[str] = [""] * 256
    keep = list(range(0x21, 0x7F)) + list(range(0xA1, 0xAD)) + list(range(0xAE, 0x100))
    for b in keep:
        glyph[b] = chr(b)
    n = 0
    for b in range(256):
        if not glyph[b]:
            glyph[b] = chr(256 + n)
            n += 1
    return glyph


BYTE_GLYPHS: list[str] = _byte_glyphs()
GLYPH_TO_BYTE: dict[str, int] = {g: b for b, g in enumerate(BYTE_GLYPHS)}
_SPACE_GLYPH = BYTE_GLYPHS[0x20]
# latin-1 text of a byte string -> its glyphs
_GLYPH_TRANS: dict[int, str] = {b: BYTE_GLYPHS[b] for b in range(256) if BYTE_GLYPHS[b] != chr(b)}
# the vocabulary text of a single raw byte (pieces are read with surrogateescape)
_RAW_BYTE_TEXT: list[str] = [chr(b) if b < 0x80 else chr(0xDC00 + b) for b in range(256)]
_HEX_BYTE_TEXT: list[str] = [f"<0x{b:02X}>" for b in range(256)]

MODE_PLAIN = 0
MODE_DNA = 1
MODE_WHITESPACE = 2


class BpeTokenizer:
    """llama.cpp's BPE tokenizer for one vocabulary (``gpt2``, ``gemma4``,
    ``hybriddna`` and ``whitespace`` models)."""

    vocab: Vocab
    config: TokenizerConfig

    def __init__(self, vocab: Vocab) -> None:
        self.vocab = vocab
        model = vocab.model
        forced = pt.MODEL_FORCED_PRE.get(model)
        if forced is None:
            raise ValueError(f"the BPE plugin does not handle tokenizer model {model!r}")
        pre_name = forced or vocab.pre or "default"
        pre = pt.PRE_NAMES.get(pre_name)
        if pre is None:
            raise ValueError(f"unknown pre-tokenizer type: {pre_name!r}")
        ptype = pt.PRE_TYPES[pre.pre_type]
        self.pre_name = pre_name
        self.pre_type = pre.pre_type
        self.byte_encode: bool = ptype.byte_encode
        self.ignore_merges: bool = pre.ignore_merges
        self.escape: bool = pre.escape_whitespaces
        self.newline_fix: bool = pre.pre_type == "GEMMA4"
        self.lowercase: bool = model == "whitespace" and vocab.flag("normalizer_lowercase", False)
        self.mode: int = MODE_DNA if model == "hybriddna" else MODE_WHITESPACE if model == "whitespace" else MODE_PLAIN
        # only UTF-8 vocabs that do not escape spaces can have a space inside
        # a symbol; llama.cpp aborts then (GGML_ASSERT in find_bpe_rank, e.g.
        # model gpt2 with pre "whitespace"), here such a pair has no rank
        self.check_space: bool = not self.byte_encode and not self.escape

        # the native index (a lookup hashes the text in place, no slice), made
        # when a text first needs it: ~3 ms of deepseek-coder's 14 ms open
        self._t2i: Optional[PieceIndex] = None
        # piece -> id, what encoding looks pieces up in (see _piece_finder)
        self._finder: Optional[PieceFinder] = None
        self.splitter = Splitter(ptype.regexes)
        self.tab: UnicodeTables = tables()
        self._ranks: Optional[RankTable] = None
        self._token_ranks: Optional[list[int]] = None
        self._safe_split: Optional[re.Pattern[str]] = None
        self._lock = threading.Lock()
        self.cache = WordCache(_CACHE_LIMIT)
        self._misses = 0  # words not in the cache, to offer the GIL now and then
        self._pieces: list[Optional[bytes]] = [None] * len(vocab.pieces)
        # the merge loop of byte-level words (see _pair_rank)
        self._rank_cache = PairCache(len(vocab.pieces), len(vocab.merges))
        self._join_cache = PairCache(len(vocab.pieces), len(vocab.pieces))
        self._byte_ids: Optional[vec[i64]] = None
        self.dna_oov: int = self.t2i.find("<oov>") if model == "hybriddna" else -1

        defaults = dict(pt.MODEL_DEFAULT_SPECIAL.get(model, {}))
        if pre.bos_none:
            defaults.pop("bos", None)
        self.config = config_from_vocab(
            vocab, "BPE", defaults, add_bos=pre.add_bos, add_eos=False,
            force_bos=pre.pre_type in pt.FORCE_ADD_BOS_TYPES,
            add_space_prefix=vocab.flag("add_space_prefix", False),
            clean_spaces=pre.clean_spaces,
            byte_level=self.byte_encode and not self.escape,
            normalizes=self.escape or self.lowercase,
        )

    @property
    def t2i(self) -> PieceIndex:
        """Piece text -> id (the vocabulary's native index, built once,
        under its own lock, by whichever thread needs it first)."""
        t = self._t2i
        if t is None:
            t = piece_index(self.vocab)
            self._t2i = t
        return t

    def _piece_finder(self) -> PieceFinder:
        """Piece -> id for encoding, made on first use: over the pieces'
        undecoded bytes while the vocabulary has them (``piece_finder``).

        The vocabulary's own index (:attr:`t2i`) is made from every piece's
        code points: 111M of llama-bpe's 336M-instruction first encode of
        0.11 MB; the bytes' index hashes them a word at a time (~8M)."""
        f = self._finder
        if f is None:
            with self._lock:
                f = self._finder
                if f is None:
                    f = piece_finder(self.vocab)
                    self._finder = f
        return f

    def piece_id(self, s: str, start: i64, end: i64) -> i64:
        """The id of the piece ``s[start:end]``, or -1 (what encoding
        looks up: see :meth:`_piece_finder`)."""
        f = self._finder
        if f is None:
            f = self._piece_finder()
        return f.get(s, start, end)

    def byte_ids(self) -> vec[i64]:
        """The ids of the 256 byte glyphs of a byte-level vocabulary."""
        b = self._byte_ids
        if b is None:
            b = vec[i64]([self.piece_id(g, 0, 1) for g in BYTE_GLYPHS])
            self._byte_ids = b
        return b

    # ------------------------------------------------------------ ranks

    def rank_table(self) -> RankTable:
        """Merge text -> rank, the first of duplicates winning (made on
        first use, and filled lazily when the merges are undecoded)."""
        t = self._ranks
        if t is None:
            with self._lock:
                t = self._ranks
                if t is None:
                    t = RankTable(self.vocab.merges)
                    self._ranks = t
                    # the tables a dict outgrew while filling (megabytes)
                    trim_heap()
        return t

    def prepare(self) -> None:
        """The piece index made, every merge ranked, and the cuts of long
        texts found, now."""
        self._t2i = self.t2i  # (the property makes it)
        self._piece_finder()
        if self.byte_encode:
            self.byte_ids()
        # (every merge is ranked once the table is made: its dict of texts,
        # complete_all, would only cost memory)
        self.rank_table()
        if self.escape and not self.ignore_merges:
            self.safe_split()
        # what the tables' making freed
        trim_heap()

    def merge_ranks(self) -> list[int]:
        """For each token id, the rank of the merge that forms its piece, or
        -1 (single symbols, special tokens, pieces no merge makes). When
        several merges give the same piece (``"a bc"``, ``"ab c"``) the
        lowest rank counts: the one that made the token first. Built on the
        first call, for displays; encoding never needs it."""
        out = self._token_ranks
        if out is None:
            t2i = self.t2i
            out = [-1] * len(self.vocab.pieces)
            for rank, m in enumerate(self.vocab.merges):
                if rank % STEP == 0:
                    offer_gil()  # built in the loader thread: the GUI must not wait for it
                k = m.find(" ", 1)  # as llama.cpp splits a merge line
                if k < 0:
                    continue
                tid = t2i.find(m[:k] + m[k + 1:])
                if tid >= 0 and out[tid] < 0:
                    out[tid] = rank
            self._token_ranks = out
        return out

    def safe_split(self) -> re.Pattern[str]:
        """Where a line of an escaped vocabulary can be cut without changing
        its tokens: before a space run, unless some merge joins the char
        before it with a piece starting with ``\u2581``."""
        p = self._safe_split
        if p is None:
            bad: set[str] = set()
            for m in merges_containing(self.vocab.merges, " " + _ESCAPED_SPACE):
                k = m.find(" ", 1)
                if k > 0 and m[k + 1:k + 2] == _ESCAPED_SPACE and m[k - 1] != _ESCAPED_SPACE:
                    bad.add(m[k - 1])
            excl = "".join([re.escape(c) for c in sorted(bad | {" ", _ESCAPED_SPACE})])
            p = re.compile("(?<=[^" + excl + "])(?=[ " + _ESCAPED_SPACE + "])")
            self._safe_split = p
        return p

    # ------------------------------------------------------------ merging

    def _merge(self, g: str, sym: vec[i64]) -> vec[i64]:
        """llama.cpp's merges of the symbols of ``g`` (one character each,
        with tokens ``sym``, -1: none): turns ``sym`` into each final
        symbol's token, indexed by its first character, and returns the
        links to the next final symbol (-1 ends). Short words merge by token
        ids (:meth:`_merge_ids`), long ones with llama.cpp's queue
        (:meth:`merge_heap`)."""
        n: i64 = len(g)
        if n < _HEAP_MIN:
            return self._merge_ids(g, sym)
        nxt = _run(n, -1, 0)
        pos: i64 = 0
        for piece in self.merge_heap(g):
            end = pos + len(piece)
            nxt[pos] = end if end < n else -1
            sym[pos] = self.piece_id(g, pos, end)
            pos = end
        return nxt

    def merge_heap(self, word: str) -> list[str]:
        """The same merges with llama.cpp's priority queue, for long words."""
        # (imported here: heapq was ~0.4 ms of every BPE file's first open)
        from heapq import heappop, heappush

        table = self.rank_table()
        check = self.check_space
        n = len(word)
        size: list[int] = [1] * n
        nxt: list[int] = list(range(1, n + 1))
        nxt[n - 1] = -1
        prv: list[int] = list(range(-1, n - 1))
        heap: list[tuple[int, int, int, int, int]] = []
        for i in range(n - 1):
            if check and (word[i] == " " or word[i + 1] == " "):
                continue
            r = table.pair_rank(word, i, i + 1, i + 2)
            if r >= 0:
                heap.append((r, i, i + 1, 1, 1))
        heap.sort()
        while heap:
            r, left, right, ls, rs = heappop(heap)
            if size[left] != ls or size[right] != rs or nxt[left] != right:
                continue
            size[left] = ls + rs
            size[right] = 0
            nr = nxt[right]
            nxt[left] = nr
            if nr >= 0:
                prv[nr] = left
            # symbols are runs of the word: a pair's text is looked up in place
            mend = left + ls + rs
            p = prv[left]
            if p >= 0 and not (check and word.find(" ", p, mend) >= 0):
                rk = table.pair_rank(word, p, left, mend)
                if rk >= 0:
                    heappush(heap, (rk, p, left, size[p], ls + rs))
            if nr >= 0 and not (check and word.find(" ", left, nr + size[nr]) >= 0):
                rk = table.pair_rank(word, left, nr, nr + size[nr])
                if rk >= 0:
                    heappush(heap, (rk, left, nr, ls + rs, size[nr]))
        out: list[str] = []
        i = 0
        while i >= 0:
            out.append(word[i:i + size[i]])
            i = nxt[i]
        return out

    # ------------------------------------------------------------ words

    def word_bytelevel(self, word: str) -> WordResult:
        """Tokens of one pre-tokenized word of a GPT-2 byte-level vocabulary."""
        raw = word.encode("utf-8", "surrogatepass")
        nbytes: i64 = len(raw)
        if _printable_ascii(raw, nbytes, len(word)):
            # only the space has a glyph of its own here; translate()
            # looks up every character in a dict (15 % of a word's time)
            glyphs = word.replace(" ", _SPACE_GLYPH)
        else:
            glyphs = raw.decode("latin-1").translate(_GLYPH_TRANS)
        if self.ignore_merges:
            tid = self.piece_id(glyphs, 0, len(glyphs))
            if tid >= 0:
                return WordResult(_one(tid, 0, nbytes), nbytes)
        if nbytes == 0:
            return WordResult(vec[i64](), 0)
        # native vectors end to end (lists of int objects were a third of
        # a new word's instructions: boxing, list reads and writes, frees)
        byte_ids = self.byte_ids()
        sym = vec[i64](capacity=nbytes)
        k: i64 = 0
        while k < nbytes:
            sym = append(sym, byte_ids[raw[k]])
            k += 1
        nxt = self._merge(glyphs, sym)
        count: i64 = 0
        i: i64 = 0
        while i >= 0:
            count += 1
            i = nxt[i]
        cols = vec[i64](capacity=3 * count)
        i = 0
        while i >= 0:
            j = nxt[i]
            e = nbytes if j < 0 else j
            t = sym[i]
            if t >= 0:
                cols = append(append(append(cols, t), i), e)
            else:
                cols = self._symbol(glyphs[i:e], i, cols)
            i = j
        return WordResult(cols, nbytes)

    def _symbol(self, s: str, pos: i64, cols: vec[i64]) -> vec[i64]:
        """``cols`` with the final byte-level symbol ``s`` appended, which no
        token spells and which starts at byte ``pos`` of its word: llama.cpp
        looks up each UTF-8 byte of its glyphs."""
        for k in range(len(s)):
            for b in s[k].encode("utf-8", "surrogateescape"):
                bt = self.piece_id(_RAW_BYTE_TEXT[b], 0, 1)
                if bt >= 0:
                    cols = append(append(append(cols, bt), pos + k), pos + k + 1)
        return cols

    def _merge_ids(self, g: str, sym: vec[i64]) -> vec[i64]:
        """:meth:`_merge` of a short word.

        A symbol is its token plus its neighbours: symbol ``i`` starts at
        character ``i`` (a merge only grows the left one), so its text is a
        slice when one is needed. Pair ranks and the tokens of joined pairs
        come from caches keyed by the two tokens (:meth:`_pair_rank`); a
        step walks the list of ranks for the lowest, leftmost first, which
        is the pair llama.cpp's queue pops next."""
        n: i64 = len(g)
        nxt = _run(n, 1, 1)
        nxt[n - 1] = -1
        prv = _run(n, -1, 1)
        rank = vec[i64](capacity=n)  # -1: no pair there
        i: i64 = 0
        while i < n - 1:
            rank = append(rank, self._pair_rank(g, i, i + 1, i + 2, sym[i], sym[i + 1]))
            i += 1
        rank = append(rank, -1)
        while True:
            best: i64 = -1
            left: i64 = -1
            for i in range(n - 1):
                r = rank[i]
                if r >= 0 and (r < best or best < 0):
                    best = r
                    left = i
            if left < 0:
                break
            right = nxt[left]
            after = nxt[right]
            end = n if after < 0 else after
            # the joined token, kept by the two ids as _pair_rank keeps ranks
            merged = self._joined(g, left, end, sym[left], sym[right])
            sym[left] = merged
            rank[right] = -1
            nxt[left] = after
            if after >= 0:
                prv[after] = left
                a2 = nxt[after]
                rank[left] = self._pair_rank(g, left, after, n if a2 < 0 else a2, merged, sym[after])
            else:
                rank[left] = -1
            before = prv[left]
            if before >= 0:
                rank[before] = self._pair_rank(g, before, left, end, sym[before], merged)
        return nxt

    def _joined(self, g: str, start: i64, end: i64, lid: i64, rid: i64) -> i64:
        """The token of ``g[start:end]``, the join of two symbols whose
        tokens are ``lid`` and ``rid`` (-1: none), or -1; kept by the two
        ids (``core.pair_cache``) when both are tokens."""
        if lid < 0 or rid < 0:
            return self.piece_id(g, start, end)
        cache = self._join_cache
        t = cache.get(lid, rid)
        if t == MISS:
            t = self.piece_id(g, start, end)
            cache.put(lid, rid, t)
        return t

    def _pair_rank(self, g: str, i: i64, j: i64, k: i64, lid: i64, rid: i64) -> i64:
        """The merge rank of the symbols ``g[i:j]`` (token ``lid``) and
        ``g[j:k]`` (token ``rid``), or -1 when none joins them; kept by the
        two ids (``core.pair_cache``) when both are tokens."""
        if lid < 0 or rid < 0:
            r = self._text_rank(g, i, j, k)
        else:
            cache = self._rank_cache
            r = cache.get(lid, rid)
            if r == MISS:
                r = self._text_rank(g, i, j, k)
                cache.put(lid, rid, r)
        return r

    def _text_rank(self, g: str, i: i64, j: i64, k: i64) -> i64:
        """The rank of the pair ``g[i:j]``, ``g[j:k]`` by its merge text, or
        -1 (also for a pair holding a space where ``check_space``)."""
        if self.check_space and g.find(" ", i, k) >= 0:
            return -1
        return self.rank_table().pair_rank(g, i, j, k)

    def word_utf8(self, word: str) -> WordResult:
        """Tokens of one word of a vocabulary of UTF-8 pieces (Gemma 4):
        spaces escaped, ``<0xNN>`` byte fallback."""
        esc = word.replace(" ", _ESCAPED_SPACE) if self.escape else word
        is_ascii = word.isascii()
        nbytes = len(word) if is_ascii else len(word.encode("utf-8", "surrogatepass"))
        if self.ignore_merges or (self.newline_fix and esc.strip("\n") == ""):
            tid = self.piece_id(esc, 0, len(esc))
            if tid >= 0:
                return WordResult(_one(tid, 0, nbytes), nbytes)
        # byte offset of each char of the word
        offs: list[int] = []
        if not is_ascii:
            b = 0
            for ch in word:
                offs.append(b)
                b += len(ch.encode("utf-8", "surrogatepass"))
            offs.append(b)
        ids: list[int] = []
        starts: list[int] = []
        ends: list[int] = []
        n: i64 = len(esc)
        if n == 0:
            return WordResult(vec[i64](), nbytes)
        sym = vec[i64](capacity=n)
        k: i64 = 0
        while k < n:
            sym = append(sym, self.piece_id(esc, k, k + 1))
            k += 1
        nxt = self._merge(esc, sym)
        i: i64 = 0
        while i >= 0:
            j = nxt[i]
            e = n if j < 0 else j
            self._symbol_utf8(word, esc[i:e], sym[i], i, offs, ids, starts, ends)
            i = j
        return WordResult(packed(ids, starts, ends), nbytes)

    def _symbol_utf8(self, word: str, s: str, tid: int, pos: int, offs: list[int],
                     ids: list[int], starts: list[int], ends: list[int]) -> None:
        """Append the final symbol ``s`` (token ``tid``, -1: none) that
        starts at character ``pos`` of ``word`` (``offs``: the byte offset
        of each character, empty for ASCII words)."""
        is_ascii = not offs
        ln = len(s)
        if tid >= 0:
            ids.append(tid)
            starts.append(pos if is_ascii else offs[pos])
            ends.append(pos + ln if is_ascii else offs[pos + ln])
            return
        for k in range(ln):
            cb = pos + k if is_ascii else offs[pos + k]
            spaced = self.escape and word[pos + k] == " "
            j = 0
            for by in s[k].encode("utf-8", "surrogatepass"):
                hx = _HEX_BYTE_TEXT[by]
                bt = self.piece_id(hx, 0, len(hx))
                if bt >= 0:
                    ids.append(bt)
                    if spaced:
                        starts.append(cb)
                        ends.append(cb + 1)
                    else:
                        starts.append(cb + j)
                        ends.append(cb + j + 1)
                j += 1

    def word(self, word: str) -> WordResult:
        if self.byte_encode:
            return self.word_bytelevel(word)
        return self.word_utf8(word)

    # ------------------------------------------------------------ encoding

    def units(self, text: str) -> list[str]:
        """Pre-tokenized words of ``text`` as pieces of the original text (a
        word of an escaped vocabulary is further cut where that is safe)."""
        if not self.escape:
            return self.splitter.split(text)
        words = self.splitter.split(text.replace(" ", _ESCAPED_SPACE))
        out: list[str] = []
        pos = 0
        # the cuts only help the word cache of long texts; finding them
        # scans every merge, which a short first text need not wait for
        safe = None if self.ignore_merges or len(text) < _SAFE_SPLIT_MIN else self.safe_split()
        for w in words:
            orig = text[pos:pos + len(w)]
            pos += len(w)
            if safe is not None and len(orig) > 1:
                out.extend(safe.split(orig))
            else:
                out.append(orig)
        return out

    def encode_text(self, text: str, out: TokenColumns, base: int) -> int:
        """BPE-tokenize ``text`` (``llm_tokenizer_bpe_session::tokenize``),
        appending tokens with spans shifted by ``base``; returns the byte
        offset after the text."""
        kind = self.splitter.custom_kind
        if kind >= 0 and not self.escape:
            return self._encode_scanned(text, kind, out, base)
        units = self.units(text)
        n_units = len(units)
        stage = _Stage(out, len(text))
        k = 0
        for w in units:
            k += 1
            if k % _WORD_STEP == 0:
                # a fragment with no cut points (one 10 MB line) is one
                # call: report, and let the GUI thread in and cancel
                checkpoint(k, n_units)
            base = self._add_word(w, stage, base)
        stage.flush()
        return base

    def _encode_scanned(self, text: str, kind: int, out: TokenColumns, base: int) -> int:
        """:meth:`encode_text` with a ``custom_split`` splitter: each word
        goes to the cache as it is found, so no list of a long text's
        million words is made (making and freeing it was ~a fifth of the
        first encode of 5 MB)."""
        data = self.splitter.collapsed_bytes(text)
        tab = CLASS_TABLE  # (a global imported from another module: a dict lookup per word)
        n: i64 = len(text)
        stage = _Stage(out, n)
        pos: i64 = 0
        left: i64 = _WORD_STEP  # (counted down: WORD_STEP is no native constant, a % was a call)
        at: i64 = base
        while pos < n:
            e = piece_end(kind, tab, data, pos, n)
            left -= 1
            if left == 0:
                left = _WORD_STEP
                checkpoint(pos, n)  # (in characters: the words are not counted first)
            at = self._add_scanned(text, data, pos, e, stage, at)
            pos = e
        stage.flush()
        return at

    def _add_word(self, w: str, stage: _Stage, base: i64) -> i64:
        """Append the tokens of the word ``w`` (from the cache, or merged
        and cached); returns the byte offset after it."""
        r = self.cache.get(w)
        if r is None:
            r = self._new_word(w)
            self.cache.put(w, b"", -1, r)
        return self._emit(r, stage, base)

    def _add_scanned(self, text: str, data: bytes, a: i64, b: i64, stage: _Stage, base: i64) -> i64:
        """:meth:`_add_word` of the word ``text[a:b]``; ``data``: the
        text's collapsed bytes, where an ASCII word is looked up without
        slicing it out (``word_cache``)."""
        cache = self.cache
        h: i64 = -1
        if NATIVE_CACHE:
            h = ascii_hash(data, a, b)
        r = cache.get_ascii(data, a, b, h) if h >= 0 else cache.get(text[a:b])
        if r is None:
            w = text[a:b]
            r = self._new_word(w)
            cache.put(w, data[a:b] if h >= 0 else b"", h, r)
        return self._emit(r, stage, base)

    def _new_word(self, w: str) -> WordResult:
        """The tokens of a word the cache does not hold."""
        self._misses += 1
        if self._misses % 1024 == 0:
            offer_gil()  # new words are the slow part: let the GUI thread in now and then
        return self.word(w)

    def _emit(self, r: WordResult, stage: _Stage, base: i64) -> i64:
        """Put the word's tokens ``r`` at byte ``base`` on ``stage``
        (written in place); the offset after it."""
        k = stage.k
        size = stage.size
        rc = r.cols
        n: i64 = 3 * r.n
        ids = stage.ids  # (the stage's own buffers: written through)
        starts = stage.starts
        ends = stage.ends
        t: i64 = 0
        while t < n:
            if k == size:
                stage.k = k
                stage.flush()
                k = 0
            ids[k] = rc[t]
            starts[k] = base + rc[t + 1]
            ends[k] = base + rc[t + 2]
            k += 1
            t += 3
        stage.k = k
        return base + r.nbytes

    def encode_fragment(self, text: str, after_special: bool) -> FragmentResult:
        return self._encode(text).result()

    def encode_columns(self, text: str, after_special: bool) -> tuple[vec[i64], vec[i64], vec[i64]]:
        return self._encode(text).columns()

    def _encode(self, text: str) -> TokenColumns:
        out = TokenColumns(len(text) >> 1)
        if self.mode == MODE_DNA:
            self.encode_dna(text, out)
        elif self.mode == MODE_WHITESPACE:
            self.encode_whitespace(text, out)
        else:
            self.encode_text(text, out, 0)
        return out

    def encode_dna(self, text: str, out: TokenColumns) -> None:
        """``llm_tokenizer_hybriddna_session``: text inside ``<dna>..</dna>``
        becomes 6-mer tokens (uppercased, the last one padded with ``A``)."""
        t2i = self.t2i
        begin_id = t2i.find("<dna>")
        end_id = t2i.find("</dna>")
        oov = self.dna_oov
        if begin_id < 0 or end_id < 0 or oov < 0:
            self.encode_text(text, out, 0)
            return
        pos = 0
        base = 0
        n = len(text)
        while pos < n:
            start = text.find("<dna>", pos)
            if start < 0:
                base = self.encode_text(text[pos:], out, base)
                break
            if start > pos:
                base = self.encode_text(text[pos:start], out, base)
            out.add(begin_id, base, base + 5)
            base += 5
            cstart = start + 5
            end = text.find("</dna>", cstart)
            cend = n if end < 0 else end
            base = self.dna_kmers(text[cstart:cend], out, base)
            if end < 0:
                break
            out.add(end_id, base, base + 6)
            base += 6
            pos = end + 6

    def dna_kmers(self, seq: str, out: TokenColumns, base: int) -> int:
        raw = seq.encode("utf-8", "surrogatepass")
        up = bytes([c - 32 if 0x61 <= c <= 0x7A else c for c in raw])
        t2i = self.t2i
        k = 6
        i = 0
        while i < len(up):
            kmer = up[i:i + k]
            if len(kmer) < k:
                kmer = kmer + b"A" * (k - len(kmer))
            tid = t2i.find(kmer.decode("utf-8", "surrogateescape") + _DNA_MARKER)
            if tid < 0:
                tid = self.dna_oov
            out.add(tid, base + i, base + min(i + k, len(up)))
            i += k
        return base + len(raw)

    def encode_whitespace(self, text: str, out: TokenColumns) -> None:
        """``llm_tokenizer_whitespace_session``: whitespace separates
        segments and is dropped; segments may be lowercased."""
        tab = self.tab
        ws = tab.whitespace
        n = len(text)
        i = 0
        base = 0
        while i < n:
            if ord(text[i]) in ws:
                base += 1 if text[i] < "\x80" else len(text[i].encode("utf-8", "surrogatepass"))
                i += 1
                continue
            j = i
            while j < n and ord(text[j]) not in ws:
                j += 1
            seg = text[i:j]
            seg_bytes = len(seg.encode("utf-8", "surrogatepass"))
            if self.lowercase:
                low = "".join([chr(tab.tolower(ord(c))) for c in seg])
                if low != seg and len(low.encode("utf-8", "surrogatepass")) != seg_bytes:
                    self.encode_remapped(seg, low, out, base)
                else:
                    self.encode_text(low, out, base)
            else:
                self.encode_text(seg, out, base)
            base += seg_bytes
            i = j

    def encode_remapped(self, orig: str, low: str, out: TokenColumns, base: int) -> None:
        """Tokenize ``low`` (same chars as ``orig``, other UTF-8 lengths) and
        map its byte spans back onto ``orig``."""
        lower = TokenColumns()
        self.encode_text(low, lower, 0)
        lids = lower.ids
        ls = lower.starts
        le = lower.ends
        # byte offset in low -> char index; char index -> byte offset in orig
        char_at: list[int] = []
        for ci, ch in enumerate(low):
            for _ in range(len(ch.encode("utf-8", "surrogatepass"))):
                char_at.append(ci)
        char_at.append(len(low))
        ob: list[int] = [0]
        for ch in orig:
            ob.append(ob[-1] + len(ch.encode("utf-8", "surrogatepass")))
        for t in range(len(lids)):
            e = le[t]
            ce = char_at[e - 1] + 1 if e > 0 else 0
            out.add(lids[t], base + ob[char_at[ls[t]]], base + ob[ce])

    def trace_fragment(self, text: str, after_special: bool) -> FragmentTrace:
        """``encode_fragment`` replayed stage by stage (``Model.explain``);
        the tracing code is imported here, on first use only."""
        from .trace import trace_bpe
        return trace_bpe(self, text, after_special, BYTE_GLYPHS, self.mode == MODE_PLAIN)

    def cut_points(self, text: str, lo: int, hi: int) -> list[int]:
        """Starts of lines where the line break sits between two printable
        ASCII characters: every llama.cpp pre-tokenizer ends a word at such
        a break whatever follows (tested on all of them), words are merged
        one by one, and the regexes look ahead one character at most and
        never behind. Not for ``hybriddna``, whose ``<dna>`` regions run on
        across lines."""
        if self.mode == MODE_DNA or self.pre_type in _NO_LINE_CUTS:
            return []
        return [m.start() for m in _LINE_CUT_RE.finditer(text, max(lo, 1), min(hi, len(text)))]

    # ------------------------------------------------------------ decoding

    def piece_bytes(self, token_id: int) -> bytes:
        cached = self._pieces[token_id]
        if cached is not None:
            return cached
        piece: str = self.vocab.pieces[token_id]
        if self.dna_oov >= 0 and token_id > self.dna_oov and len(piece) > 1 and piece.endswith(_DNA_MARKER):
            piece = piece[:-1]
        if self.escape:
            out = piece.replace(_ESCAPED_SPACE, " ").encode("utf-8", "surrogateescape")
        else:
            out = decode_text(piece)
        self._pieces[token_id] = out
        return out

    def normalized(self, text: str) -> str:
        if self.escape:
            return text.replace(" ", _ESCAPED_SPACE)
        if self.lowercase:
            tab = self.tab
            ws = tab.whitespace
            return "".join([c if ord(c) in ws else chr(tab.tolower(ord(c))) for c in text])
        return text


_STAGE: Final = 2048


@final
class _Stage:
    """Tokens on their way to ``out``, written in place into three small
    vectors and moved over a chunk at a time: three appends a token, each
    a call into the vector library, were ~a sixth of a first encode of
    5 MB. Sized for the text (a token has at least one byte; a stage
    fills and moves over as often as it must), so short fragments make
    short stages."""

    def __init__(self, out: TokenColumns, n_chars: i64) -> None:
        size = min(_STAGE, n_chars + 1)
        self.out = out
        self.size: i64 = size
        self.ids = _run(size, 0, 0)
        self.starts = _run(size, 0, 0)
        self.ends = _run(size, 0, 0)
        self.k: i64 = 0

    def flush(self) -> None:
        """Move the staged tokens to ``out`` (a full stage as it is: a
        slice copies value by value)."""
        k = self.k
        out = self.out
        if k == self.size:
            out.ids = extend(out.ids, self.ids)
            out.starts = extend(out.starts, self.starts)
            out.ends = extend(out.ends, self.ends)
        elif k > 0:
            out.ids = extend(out.ids, self.ids[0:k])
            out.starts = extend(out.starts, self.starts[0:k])
            out.ends = extend(out.ends, self.ends[0:k])
        self.k = 0


def _printable_ascii(raw: bytes, nbytes: i64, nchars: i64) -> bool:
    """Whether the UTF-8 ``raw`` of a word of ``nchars`` characters is
    printable ASCII, read natively (``str.isascii`` and ``isprintable``
    are method calls from compiled code, ~800 instructions each)."""
    if nbytes != nchars:
        return False
    k: i64 = 0
    while k < nbytes:
        b: i64 = raw[k]
        if b < 0x20 or b > 0x7E:
            return False
        k += 1
    return True


def _run(n: i64, first: i64, step: i64) -> vec[i64]:
    """``first, first + step, ...``: ``n`` values."""
    out = vec[i64](capacity=n)
    k: i64 = 0
    while k < n:
        out = append(out, first + k * step)
        k += 1
    return out


def _one(tid: i64, start: i64, end: i64) -> vec[i64]:
    """The columns of one token."""
    return append(append(append(vec[i64](capacity=3), tid), start), end)


def decode_text(piece: str) -> bytes:
    """``llama_decode_text``: byte-level glyphs back to bytes; a char that is
    no glyph becomes ``[UNK_BYTE_0x<its utf-8 hex><the whole piece>]``."""
    raw = piece.encode("utf-8", "surrogateescape")
    cpts = [ord(c) for c in piece] if raw.isascii() or not _has_surrogates(piece) else llama_cpts(raw)
    out = bytearray()
    for c in cpts:
        b = GLYPH_TO_BYTE.get(chr(c), -1) if c <= 0x10FFFF and not 0xD800 <= c <= 0xDFFF else -1
        if b >= 0:
            out.append(b)
        else:
            out += b"[UNK_BYTE_0x" + cpt_utf8(c).hex().encode("ascii") + raw + b"]"
    return bytes(out)


def _has_surrogates(s: str) -> bool:
    for c in s:
        if 0xD800 <= ord(c) <= 0xDFFF:
            return True
    return False


def cpt_utf8(c: int) -> bytes:
    """``unicode_cpt_to_utf8`` (surrogate code points included)."""
    if c <= 0x7F:
        return bytes([c])
    if c <= 0x7FF:
        return bytes([0xC0 | (c >> 6), 0x80 | (c & 0x3F)])
    if c <= 0xFFFF:
        return bytes([0xE0 | (c >> 12), 0x80 | ((c >> 6) & 0x3F), 0x80 | (c & 0x3F)])
    return bytes([0xF0 | (c >> 18), 0x80 | ((c >> 12) & 0x3F), 0x80 | ((c >> 6) & 0x3F), 0x80 | (c & 0x3F)])


def llama_cpts(raw: bytes) -> list[int]:
    """``unicode_cpts_from_utf8``: lenient UTF-8 decoding, an invalid byte
    giving U+FFFD."""
    out: list[int] = []
    i = 0
    n = len(raw)
    while i < n:
        b0 = raw[i]
        if not b0 & 0x80:
            out.append(b0)
            i += 1
            continue
        if b0 & 0x40:
            if not b0 & 0x20:
                if i + 1 < n and raw[i + 1] & 0xC0 == 0x80:
                    out.append(((b0 & 0x1F) << 6) | (raw[i + 1] & 0x3F))
                    i += 2
                    continue
            elif not b0 & 0x10:
                if i + 2 < n and raw[i + 1] & 0xC0 == 0x80 and raw[i + 2] & 0xC0 == 0x80:
                    out.append(((b0 & 0x0F) << 12) | ((raw[i + 1] & 0x3F) << 6) | (raw[i + 2] & 0x3F))
                    i += 3
                    continue
            elif not b0 & 0x08:
                if (i + 3 < n and raw[i + 1] & 0xC0 == 0x80 and raw[i + 2] & 0xC0 == 0x80
                        and raw[i + 3] & 0xC0 == 0x80):
                    out.append(((b0 & 0x07) << 18) | ((raw[i + 1] & 0x3F) << 12) | ((raw[i + 2] & 0x3F) << 6)
                               | (raw[i + 3] & 0x3F))
                    i += 4
                    continue
        out.append(0xFFFD)
        i += 1
    return out


def build_bpe(vocab: Vocab) -> BpeTokenizer:
    """Build the BPE tokenizer of ``vocab`` (raises ``ValueError`` for an
    unknown pre-tokenizer)."""
    return BpeTokenizer(vocab)
