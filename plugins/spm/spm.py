"""SentencePiece BPE with byte fallback, as llama.cpp's ``llm_tokenizer_spm``.

llama.cpp tokenizes an SPM fragment like this: prepend a space when the
fragment is the first one or follows a special token (and the vocabulary
wants a space prefix), replace every ASCII space by ``▁``, split the result
into characters, then repeatedly merge the adjacent pair whose concatenation
is the highest-scoring token (ties: the leftmost pair). A final symbol that is
not a token is spelled as ``<0xNN>`` byte tokens.

Three things here are not in llama.cpp, and none changes a single id:

* When no token has ``▁`` right after another character, no merge can cross
  the start of a word (a run of spaces or ``▁`` and what follows up to the
  next one), so each word is merged on its own. Merges in different words
  never compete for a symbol, so their relative order does not matter.
* Short texts find their best pair by a linear scan instead of a priority
  queue; it picks the same pair the queue would.
* Results for short words are cached, which is what makes prose fast in
  pure Python. An entry is a pure function of the word, so sharing the cache
  between threads is safe (the worst a race does is compute a word twice).

llama.cpp's ``rev_merge`` re-segmentation is left out on purpose: it only runs
for a final symbol that is not a token, every merged symbol is a token by
construction, so only single characters reach it, and its keys are always
at least two characters long, so it never matches.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Final
from heapq import heapify, heappop, heappush

from librt.strings import read_i64_le
from librt.vecs import vec
from mypy_extensions import i32, i64

from tokenprism.core.plugin_api import (
    BytesIndex, FragmentResult, PairCache, PieceCodes, PieceFinder, STEP, TokenColumns, TokenPrismError,
    Scores, TokenizerConfig, Vocab, WORD_STEP, checkpoint, config_from_vocab, piece_codes, piece_finder)

if TYPE_CHECKING:  # the explanation records load with the first trace, never for encoding
    from tokenprism.core.plugin_api import FragmentTrace

SPACE_MARK: Final = "\u2581"  # ▁
# constants marked Final compile to C values; a plain module global is a
# dict lookup on every use, which the per-character loops would pay
_STEP: Final = STEP
_WORD_STEP: Final = WORD_STEP
_SPACE_MARK_CP: Final = 0x2581

# llama.cpp's defaults for tokenizer.ggml.model == "llama"
_DEFAULT_SPECIAL_IDS = {"bos": 1, "eos": 2, "unk": 0}

# words of the ORIGINAL text: a space becomes ▁, and a literal ▁ is one too
_WORD_RE = re.compile("[ \u2581]*[^ \u2581]+|[ \u2581]+")
_WORD_START_RE = re.compile("(?<=[^ \u2581])(?=[ \u2581])")

# long words are rare and would only crowd the cache
_CACHE_MAX_WORD: Final = 48
_CACHE_MAX_ENTRIES: Final = 1 << 16

# up to this many characters a linear scan for the best pair beats a heap
_SCAN_MAX: Final = 64
_NO_SCORE: Final = float("-inf")  # a slot without a pair (see _merge_scan)

# code points below this get their token from a table (the BMP), in blocks
# of 256 made when a text first meets one: the whole table, made at once,
# was 128 fresh pages (~0.4 ms) of every first encode, "Hello" included
_CHAR_TABLE_SIZE: Final = 0x10000
_BLOCK_BITS: Final = 8
_BLOCK: Final = 1 << _BLOCK_BITS
_NO_BLOCK: Final = vec[i32]()


class WordTokens:
    """Tokens of one piece of original text, with UTF-8 byte spans relative
    to its start; ``nbytes`` is its UTF-8 length."""

    __slots__ = ("ids", "starts", "ends", "nbytes")

    def __init__(self, nbytes: int) -> None:
        self.ids: list[int] = []
        self.starts: list[int] = []
        self.ends: list[int] = []
        self.nbytes: int = nbytes


class SpmTokenizer:
    """llama.cpp's SPM tokenizer bound to one vocabulary.

    ``by_word=False`` forces llama.cpp's literal whole-fragment loop even
    when words could be merged one by one (for tests and comparisons).
    """

    vocab: Vocab
    config: TokenizerConfig

    def __init__(self, vocab: Vocab, by_word: bool = True) -> None:
        self.vocab = vocab
        self.add_space_prefix: bool = vocab.flag("add_space_prefix", True)
        self.config = config_from_vocab(vocab, "SPM", _DEFAULT_SPECIAL_IDS, add_bos=True, add_eos=False,
                                        add_space_prefix=self.add_space_prefix, normalizes=True)
        # the native index (a lookup hashes the text in place, no slice),
        # and what comes from it, are made on first use (_index): opening
        # reads no piece's code points (llama-spm's first open ~3 ms less)
        self._ids: PieceFinder | None = None
        # scores are read where the file's array holds them (Scores)
        self._scores = Scores(vocab.scores)
        self._ranks: list[int] | None = None
        self._n_tokens: int = len(vocab.scores)
        # blocks of the character table, made on first use (see _chars)
        self._char_blocks: list[vec[i32]] = [_NO_BLOCK] * (_CHAR_TABLE_SIZE >> _BLOCK_BITS)
        self._pairs = PairCache(self._n_tokens, self._n_tokens)
        self._byte_ids: list[int] = []
        self._by_word: bool = by_word
        self._cache: dict[str, WordTokens] = {}
        self._cache_prefixed: dict[str, WordTokens] = {}
        # words after exactly one space, keyed without it (see _encode_text)
        self._cache_spaced: dict[str, WordTokens] = {}

    def _index(self) -> None:
        """The piece index, the byte tokens and whether words can be merged
        one by one, made the first time a text needs them (two threads at
        once at worst both make the same)."""
        if self._ids is None:
            ids = piece_finder(self.vocab)
            self._byte_ids = _byte_token_ids(ids, self.config.special_ids.get("unk", -1))
            raw = ids.raw
            crosses = (_crosses_word_bytes(raw, len(self.vocab.pieces)) if raw is not None
                       else _crosses_word(piece_codes(self.vocab)))
            self._by_word = self._by_word and not crosses
            self._ids = ids

    def prepare(self) -> None:
        """Make the piece index now rather than for the first text."""
        self._index()

    def _piece_ids(self) -> PieceFinder:
        if self._ids is None:
            self._index()
        ids = self._ids
        assert ids is not None
        return ids

    @property
    def by_word(self) -> bool:
        """Whether each word is merged on its own (no piece holds a ``▁``
        after another character), unless ``by_word=False`` was asked."""
        self._index()
        return self._by_word

    # ---- Tokenizer protocol ---------------------------------------------

    def encode_fragment(self, text: str, after_special: bool) -> FragmentResult:
        return self._encode(text, after_special).result()

    def encode_columns(self, text: str, after_special: bool) -> tuple[vec[i64], vec[i64], vec[i64]]:
        return self._encode(text, after_special).columns()

    def _encode(self, text: str, after_special: bool) -> TokenColumns:
        out = TokenColumns(len(text) >> 1)
        if not text:
            return out
        prefix = self.add_space_prefix and after_special
        self._index()
        if not self._by_word:
            _append(self._tokenize(text, prefix), 0, out)
        elif SPACE_MARK in text:
            self._encode_words(_WORD_RE.findall(text), prefix, out)
        else:
            self._encode_text(text, prefix, out)
        return out

    def _encode_text(self, text: str, prefix: bool, out: TokenColumns) -> None:
        """The words of a text without a literal ``▁`` (a run of spaces and
        what follows up to the next space), found with ``str.find`` at
        memchr speed where the word regex steps through every character,
        and sliced one at a time, so that no list of all words is made:
        freed at once, its strings' memory is reused by the next one,
        where fresh memory costs a page fault per 4 KB. Most words follow
        one space; their cache is keyed by the word without it."""
        cache = self._cache
        cache1 = self._cache_spaced
        n = len(text)
        base = 0
        first = True
        pos = 0
        k = 0
        while pos < n:
            q = pos
            while q < n and text[q] == " ":
                q += 1
            if q == n:
                # trailing spaces (or only spaces)
                _append(self._word(text[pos:], prefix and first), base, out)
                return
            end = text.find(" ", q)
            if end < 0:
                end = n
            k += 1
            if k % _WORD_STEP == 0:
                # a fragment with no cut points taken is one call:
                # report, and let the GUI thread in and cancel
                checkpoint(pos, n)
            tokens: WordTokens | None
            if first:
                tokens = self._word(text[pos:end], prefix)
                first = False
            elif q - pos == 1:
                part = text[q:end]
                tokens = cache1.get(part)
                if tokens is None:
                    tokens = self._tokenize(" " + part, False)
                    if len(part) < _CACHE_MAX_WORD:
                        if len(cache1) >= _CACHE_MAX_ENTRIES:
                            cache1.clear()
                        cache1[part] = tokens
            else:
                w = text[pos:end]
                tokens = cache.get(w)
                if tokens is None:
                    tokens = self._word(w, False)
            _append(tokens, base, out)
            base += tokens.nbytes
            pos = end

    def _encode_words(self, words: list[str], prefix: bool, out: TokenColumns) -> None:
        """Tokens of consecutive words (``_WORD_RE``), the first one with
        the space prefix when ``prefix``."""
        first = self._word(words[0], prefix)
        _append(first, 0, out)
        base = first.nbytes
        cache = self._cache
        for k in range(1, len(words)):
            if k % _WORD_STEP == 0:
                checkpoint(k, len(words))
            w = words[k]
            tokens = cache.get(w)
            if tokens is None:
                tokens = self._word(w, False)
            _append(tokens, base, out)
            base += tokens.nbytes

    def piece_bytes(self, token_id: int) -> bytes:
        return self.vocab.pieces[token_id].replace(SPACE_MARK, " ").encode("utf-8", "surrogateescape")

    def normalized(self, text: str) -> str:
        if not text:
            return ""
        norm = text.replace(" ", SPACE_MARK)
        return SPACE_MARK + norm if self.add_space_prefix else norm

    def trace_fragment(self, text: str, after_special: bool) -> FragmentTrace:
        """``encode_fragment`` replayed stage by stage (``Model.explain``);
        the tracing code is imported here, on first use only."""
        from .trace import trace_spm
        return trace_spm(self, text, after_special)

    def cut_points(self, text: str, lo: int, hi: int) -> list[int]:
        """Word starts (see ``by_word``): each word is merged on its own and
        only the first one gets the space prefix."""
        if not self.by_word:
            return []
        return [m.start() for m in _WORD_START_RE.finditer(text, max(lo, 1), min(hi, len(text)))]

    # ---- the algorithm ---------------------------------------------------

    def _word(self, w: str, prefix: bool) -> WordTokens:
        if len(w) > _CACHE_MAX_WORD:
            return self._tokenize(w, prefix)
        cache = self._cache_prefixed if prefix else self._cache
        hit = cache.get(w)
        if hit is not None:
            return hit
        res = self._tokenize(w, prefix)
        if len(cache) >= _CACHE_MAX_ENTRIES:
            cache.clear()
        cache[w] = res
        return res

    def _tokenize(self, text: str, prefix: bool) -> WordTokens:
        """Tokens of ``text`` (original text; with the prefix space when
        ``prefix``), with byte spans into ``text``."""
        norm = text.replace(" ", SPACE_MARK)
        if prefix:
            norm = SPACE_MARK + norm
        sym, boff = self._chars(text, prefix)
        nxt = self._merge(norm, sym)
        out = WordTokens(boff[-1])
        n = len(norm)
        i = 0
        while i >= 0:
            j = nxt[i]
            end = j if j >= 0 else n
            tid = sym[i]
            if tid >= 0:
                out.ids.append(tid)
                out.starts.append(boff[i])
                out.ends.append(boff[end])
            else:
                # only a single character can be a symbol that is no token
                self._byte_fallback(norm, i, end, boff, out)
            i = j
        return out

    def _chars(self, text: str, prefix: bool) -> tuple[list[int], list[int]]:
        """For each character of the normalized text: its token (or -1),
        and its UTF-8 offset in ``text`` (plus the end; the inserted prefix
        covers no byte).

        Code points come from one encode of the whole word, and a char's
        token from a table indexed by code point: no one-character string
        and no lookup in the big piece table per character."""
        ids = self._piece_ids()
        sym: list[int] = []
        boff: list[int] = []
        space = self._char_id(_SPACE_MARK_CP)
        if prefix:
            sym.append(space)
            boff.append(0)
        if text.isascii():
            low = self._block(0)
            data = text.encode("ascii")
            for k in range(len(data)):
                c = data[k]
                if c == 32:
                    t = space
                else:
                    t = low[c]
                    if t == -2:
                        t = self._fill(low, c)
                sym.append(t)
                boff.append(k)
            boff.append(len(data))
            return sym, boff
        blocks = self._char_blocks
        data = text.encode("utf-32-le", "surrogatepass")
        acc = 0
        for k in range(0, len(data), 4):
            c = data[k] | (data[k + 1] << 8) | (data[k + 2] << 16)
            boff.append(acc)
            if c < 0x80:
                acc += 1
            elif c < 0x800:
                acc += 2
            elif c < 0x10000:
                acc += 3
            else:
                acc += 4
            if c == 32:
                t = space
            elif c < _CHAR_TABLE_SIZE:
                blk = blocks[c >> _BLOCK_BITS]
                if len(blk) == 0:
                    blk = self._block(c >> _BLOCK_BITS)
                t = blk[c & (_BLOCK - 1)]
                if t == -2:
                    t = self._fill(blk, c)
            else:
                t = ids.char(c)
            sym.append(t)
        boff.append(acc)
        return sym, boff

    def _block(self, hi: int) -> vec[i32]:
        """Block ``hi`` of the character table (-2: not looked up yet),
        made when first asked for. Two threads may both make it; the one
        stored last is kept, and what the other filled in is looked up
        again."""
        blk = self._char_blocks[hi]
        if len(blk) == 0:
            # a new vector of its own (appending to the shared empty one
            # would leave which buffer it grows to up to the vector library)
            blk = vec[i32]([-2] * _BLOCK)
            self._char_blocks[hi] = blk
        return blk

    def _fill(self, blk: vec[i32], c: int) -> int:
        """The token of the character ``c`` (-1: none), kept in its block."""
        t = self._piece_ids().char(c)
        blk[c & (_BLOCK - 1)] = i32(t)  # the same value whichever thread writes it
        return t

    def _char_id(self, c: int) -> int:
        """The token of the character ``c`` below :data:`_CHAR_TABLE_SIZE`."""
        blk = self._block(c >> _BLOCK_BITS)
        t = blk[c & (_BLOCK - 1)]
        return self._fill(blk, c) if t == -2 else int(t)

    def _merge(self, s: str, sym: list[int]) -> list[int]:
        """llama.cpp's merge loop over the characters of ``s``, whose tokens
        are ``sym`` (-1: none): turns ``sym`` into each final symbol's
        token, indexed by its first character, and returns the ``next``
        links of the final symbols (-1 ends).

        Symbol ``i`` always starts at character ``i`` (a merge only grows
        the left symbol), so a symbol is its token plus its neighbours, and
        the text of a pair is one slice.
        """
        if len(s) <= _SCAN_MAX:
            return self._merge_scan(s, sym)
        return self._merge_heap(s, sym)

    def _merge_scan(self, s: str, sym: list[int]) -> list[int]:
        """The merge loop for a short text: instead of a queue, the token
        and score of each live pair, and each step walks them for the best
        score, leftmost first, which is the pair llama.cpp's queue pops next
        once its stale entries are skipped.

        The walk is a plain loop over a float list on purpose: compiled, it
        runs in C without making an object (``min``/``index`` over boxed
        ranks cost more than the whole walk), and a pair's token id is,
        once merged, the symbol's token without a second lookup.
        """
        # a pair's token, kept by the two ids once looked up (PairCache.joined)
        pairs = self._pairs
        ids = self._piece_ids()
        scores = self._scores
        n = len(s)
        nxt = list(range(1, n + 1))
        nxt[n - 1] = -1
        prv = list(range(-1, n - 1))
        pair = [pairs.joined(ids, s, i, i + 2, sym[i], sym[i + 1]) for i in range(n - 1)]
        pair.append(-1)
        # each pair's score beside its token: the walk reads one list
        psc = [scores.at(t) if t >= 0 else _NO_SCORE for t in pair]
        while True:
            left = -1
            best = _NO_SCORE
            # every slot, dead ones included (they hold no pair): a range
            # loop reads one list where following the links reads two
            for i in range(n - 1):
                sc = psc[i]
                if sc > best:
                    best = sc
                    left = i
            if left < 0:
                # no pair left, or only pairs scoring -inf: the leftmost
                for i in range(n - 1):
                    if pair[i] >= 0:
                        left = i
                        break
                if left < 0:
                    break
            # a symbol ends where the next one starts: no lengths to keep
            right = nxt[left]
            merged = pair[left]
            sym[left] = merged
            pair[right] = -1
            psc[right] = _NO_SCORE
            after = nxt[right]
            nxt[left] = after
            t = -1
            end = n
            if after >= 0:
                end = after
                prv[after] = left
                a2 = nxt[after]
                t = pairs.joined(ids, s, left, a2 if a2 >= 0 else n, merged, sym[after])
            pair[left] = t
            psc[left] = scores.at(t) if t >= 0 else _NO_SCORE
            before = prv[left]
            if before >= 0:
                t = pairs.joined(ids, s, before, end, sym[before], merged)
                pair[before] = t
                psc[before] = scores.at(t) if t >= 0 else _NO_SCORE
        return nxt

    def _merge_heap(self, s: str, sym: list[int]) -> list[int]:
        """The merge loop with llama.cpp's priority queue, for long texts.

        A queued pair is one int, ``(rank, left, size)`` packed so that int
        order is llama.cpp's order: best score first, then the leftmost
        pair (no tuples to build and compare). Sizes are in
        characters where llama.cpp counts bytes; a pair is stale exactly
        when one of its symbols grew, which both measures show alike, and
        the right symbol is then the left one's current neighbour.
        """
        ranks = self._score_ranks()
        pairs = self._pairs
        ids = self._piece_ids()
        n = len(s)
        lens = [1] * n
        nxt = list(range(1, n + 1))
        nxt[n - 1] = -1
        prv = list(range(-1, n - 1))
        shift = n.bit_length()  # left < n and size <= n both fit
        mask = (1 << shift) - 1
        heap: list[int] = []
        for i in range(n - 1):
            t = pairs.joined(ids, s, i, i + 2, sym[i], sym[i + 1])
            if t >= 0:
                heap.append((((ranks[t] << shift) | i) << shift) | 2)
        heapify(heap)
        pops = 0
        while heap:
            key = heappop(heap)
            pops += 1
            if pops % _STEP == 0:
                # one word of megabytes (text without a space) is one
                # call: report, and let the GUI thread in and cancel
                checkpoint(pops, pops + len(heap))
            left = (key >> shift) & mask
            llen = lens[left]
            if llen == 0:
                continue
            right = nxt[left]
            size = key & mask
            if right < 0 or llen + lens[right] != size:
                continue
            lens[left] = size
            lens[right] = 0
            merged = pairs.joined(ids, s, left, left + size, sym[left], sym[right])
            sym[left] = merged
            after = nxt[right]
            nxt[left] = after
            if after >= 0:
                prv[after] = left
            before = prv[left]
            if before >= 0:
                t = pairs.joined(ids, s, before, left + size, sym[before], merged)
                if t >= 0:
                    heappush(heap, (((ranks[t] << shift) | before) << shift) | (left + size - before))
            if after >= 0:
                end = after + lens[after]
                t = pairs.joined(ids, s, left, end, merged, sym[after])
                if t >= 0:
                    heappush(heap, (((ranks[t] << shift) | left) << shift) | (end - left))
        return nxt

    def _score_ranks(self) -> list[int]:
        """Each token's score as a rank (see ``_rank_table``), made on the
        first long word: most texts never need it, and it is a pure
        function of the vocabulary, so two threads making it at once is
        harmless."""
        ranks = self._ranks
        if ranks is None:
            scores = self._scores
            ranks = _rank_table([scores.at(t) for t in range(self._n_tokens)])
            self._ranks = ranks
        return ranks

    def _byte_fallback(self, norm: str, start: int, end: int, boff: list[int], out: WordTokens) -> None:
        """One byte token per UTF-8 byte of ``norm[start:end]``, each spanning
        its own byte; the bytes of a ``▁`` standing for a space (or for the
        inserted prefix) all span that space (or nothing)."""
        byte_ids = self._byte_ids
        for c in range(start, end):
            data = norm[c].encode("utf-8")
            lo = boff[c]
            hi = boff[c + 1]
            same = hi - lo == len(data)
            for j in range(len(data)):
                tid = byte_ids[data[j]]
                if tid < 0:
                    raise TokenPrismError(
                        f"the vocabulary has no token for byte 0x{data[j]:02X} and no unknown token")
                out.ids.append(tid)
                if same:
                    out.starts.append(lo + j)
                    out.ends.append(lo + j + 1)
                else:
                    out.starts.append(lo)
                    out.ends.append(hi)


def _append(tokens: WordTokens, base: int, out: TokenColumns) -> None:
    """Append ``tokens`` with spans shifted by ``base``."""
    tids = tokens.ids
    ts = tokens.starts
    te = tokens.ends
    for j in range(len(tids)):
        out.add(tids[j], base + ts[j], base + te[j])


def _rank_table(scores: list[float]) -> list[int]:
    """Each token's score as a rank, 0 for the best: an int that orders
    like the score and packs into a heap key. Equal scores share a rank."""
    # (no numpy: its import cost a first encode more than this loop; NaNs,
    # each distinct, rank above every number, as numpy's sort puts them)
    nans = sum(1 for x in scores if x != x)
    distinct = sorted({x for x in scores if x == x})
    top = len(distinct) + nans - 1
    rank = {x: top - i for i, x in enumerate(distinct)}
    return [rank[x] if x == x else nans - 1 for x in scores]


def _crosses_word(codes: PieceCodes) -> bool:
    """Whether some piece has ``▁`` right after another character, that is,
    a ``▁`` left once its leading ones are stripped. A native read per
    code point (no piece decoded)."""
    cps = codes.cps
    offs = codes.offs
    i: i64 = 1
    while i < len(offs):
        j = offs[i - 1] + 1
        while j < offs[i]:
            if cps[j] == _SPACE_MARK_CP and cps[j - 1] != _SPACE_MARK_CP:
                return True
            j += 1
        i += 1
    return False


def _crosses_word_bytes(raw: BytesIndex, n: i64) -> bool:
    """:func:`_crosses_word` read from the UTF-8 of the ``n`` pieces where
    the file holds them (``raw``'s strings), no code point made: a ``▁``
    (E2 96 81) after the piece's leading ones. The bytes E2 96 81 are a
    ``▁`` wherever they lie: E2 continues no sequence."""
    region = raw.region
    offsets = raw.offsets
    i: i64 = 0
    while i < n:
        p = read_i64_le(offsets, i << 3)
        a = p + 8
        end = a + read_i64_le(region, p)  # (checked when the index was made)
        while a + 3 <= end and region[a] == 0xE2 and region[a + 1] == 0x96 and region[a + 2] == 0x81:
            a += 3
        while a + 3 <= end:
            if region[a] == 0xE2 and region[a + 1] == 0x96 and region[a + 2] == 0x81:
                return True
            a += 1
        i += 1
    return False


def _byte_token_ids(ids: PieceFinder, unk: int) -> list[int]:
    """The token llama.cpp's ``byte_to_token`` gives each byte: ``<0xNN>``,
    else the byte itself as a piece. llama.cpp aborts when both are
    missing; the unknown token (or -1, an error when used) stands in."""
    out: list[int] = []
    for b in range(256):
        tid = ids.find(f"<0x{b:02X}>")
        if tid < 0:
            tid = ids.find(bytes([b]).decode("utf-8", "surrogateescape"))
            if tid < 0:
                tid = unk
        out.append(tid)
    return out


def build_spm(vocab: Vocab) -> SpmTokenizer:
    """The SPM tokenizer for ``vocab`` (``tokenizer.ggml.model`` = ``llama``)."""
    return SpmTokenizer(vocab)
