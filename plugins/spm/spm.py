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
from heapq import heapify, heappop, heappush

import numpy as np

from tokenprism.core.errors import TokenPrismError
from tokenprism.core.tokenizer import FragmentResult, TokenizerConfig, resolve_special_ids
from tokenprism.core.vocab import Vocab

SPACE_MARK = "\u2581"  # ▁

# llama.cpp's defaults for tokenizer.ggml.model == "llama"
_DEFAULT_SPECIAL_IDS = {"bos": 1, "eos": 2, "unk": 0}

# words of the ORIGINAL text: a space becomes ▁, and a literal ▁ is one too
_WORD_RE = re.compile("[ \u2581]*[^ \u2581]+|[ \u2581]+")
_WORD_START_RE = re.compile("(?<=[^ \u2581])(?=[ \u2581])")

# long words are rare and would only crowd the cache
_CACHE_MAX_WORD = 48
_CACHE_MAX_ENTRIES = 1 << 16

# up to this many characters a linear scan for the best pair beats a heap
_SCAN_MAX = 64
_NO_PAIR = 1 << 60  # above every rank


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
        special_ids = resolve_special_ids(vocab, _DEFAULT_SPECIAL_IDS)
        add_bos = vocab.flag("add_bos", True)
        add_eos = vocab.flag("add_eos", False)
        self.add_space_prefix: bool = vocab.flag("add_space_prefix", True)
        bos = special_ids.get("bos", -1)
        eos = special_ids.get("eos", -1)
        self.config = TokenizerConfig(
            kind="SPM",
            special_ids=special_ids,
            special_prefix=(bos,) if add_bos and bos >= 0 else (),
            special_suffix=(eos,) if add_eos and eos >= 0 else (),
            add_bos=add_bos,
            add_eos=add_eos,
            add_space_prefix=self.add_space_prefix,
            clean_spaces=False,
            byte_level=False,
            normalizes=True,
        )
        # plain dicts: the hot loop must not go through Mapping
        t2i = vocab.token_to_id
        self._ids: dict[str, int] = t2i if isinstance(t2i, dict) else dict(t2i)
        self._ranks: dict[str, int] = _score_ranks(self._ids, vocab.scores)
        self._byte_ids: list[int] = _byte_token_ids(self._ids, special_ids.get("unk", -1))
        self.by_word: bool = by_word and not _crosses_word(vocab.pieces)
        self._cache: dict[str, WordTokens] = {}
        self._cache_prefixed: dict[str, WordTokens] = {}

    # ---- Tokenizer protocol ---------------------------------------------

    def encode_fragment(self, text: str, after_special: bool) -> FragmentResult:
        ids: list[int] = []
        starts: list[int] = []
        ends: list[int] = []
        if not text:
            return FragmentResult(ids, starts, ends)
        prefix = self.add_space_prefix and after_special
        if not self.by_word:
            _append(self._tokenize(text, prefix), 0, ids, starts, ends)
            return FragmentResult(ids, starts, ends)
        words = _WORD_RE.findall(text)
        first = self._word(words[0], prefix)
        _append(first, 0, ids, starts, ends)
        base = first.nbytes
        # the loop below is _word and _append inlined: prose has a word every
        # few characters, and most are cache hits of a single token
        cache = self._cache
        for k in range(1, len(words)):
            w = words[k]
            tokens = cache.get(w)
            if tokens is None:
                tokens = self._word(w, False)
            tids = tokens.ids
            if len(tids) == 1:
                ids.append(tids[0])
                starts.append(base + tokens.starts[0])
                ends.append(base + tokens.ends[0])
            else:
                ids.extend(tids)
                starts.extend([base + b for b in tokens.starts])
                ends.extend([base + b for b in tokens.ends])
            base += tokens.nbytes
        return FragmentResult(ids, starts, ends)

    def piece_bytes(self, token_id: int) -> bytes:
        return self.vocab.pieces[token_id].replace(SPACE_MARK, " ").encode("utf-8", "surrogateescape")

    def normalized(self, text: str) -> str:
        if not text:
            return ""
        norm = text.replace(" ", SPACE_MARK)
        return SPACE_MARK + norm if self.add_space_prefix else norm

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
        boff = _byte_offsets(text, prefix)
        lens, nxt = self._merge(norm)
        out = WordTokens(boff[-1])
        ids = self._ids
        i = 0
        while i >= 0:
            end = i + lens[i]
            tid = ids.get(norm[i:end], -1)
            if tid >= 0:
                out.ids.append(tid)
                out.starts.append(boff[i])
                out.ends.append(boff[end])
            else:
                self._byte_fallback(norm, i, end, boff, out)
            i = nxt[i]
        return out

    def _merge(self, s: str) -> tuple[list[int], list[int]]:
        """llama.cpp's merge loop over the characters of ``s``: the final
        symbols as (length, next) lists indexed by first character.

        Symbol ``i`` always starts at character ``i`` (a merge only grows
        the left symbol), so a symbol is its length plus its neighbours,
        and the text of a pair is one slice.
        """
        if len(s) <= _SCAN_MAX:
            return self._merge_scan(s)
        return self._merge_heap(s)

    def _merge_scan(self, s: str) -> tuple[list[int], list[int]]:
        """The merge loop for a short text: instead of a queue, one rank per
        live pair, and each step takes the smallest rank, leftmost first
        (``min`` then ``index``), which is the pair llama.cpp's queue pops
        next once its stale entries are skipped."""
        ranks = self._ranks
        n = len(s)
        lens = [1] * n
        nxt = list(range(1, n + 1))
        nxt[n - 1] = -1
        prv = list(range(-1, n - 1))
        pair = [ranks.get(s[i:i + 2], _NO_PAIR) for i in range(n - 1)]
        pair.append(_NO_PAIR)
        while True:
            best = min(pair)
            if best == _NO_PAIR:
                break
            left = pair.index(best)
            right = nxt[left]
            size = lens[left] + lens[right]
            lens[left] = size
            lens[right] = 0
            pair[right] = _NO_PAIR
            after = nxt[right]
            nxt[left] = after
            if after >= 0:
                prv[after] = left
                pair[left] = ranks.get(s[left:after + lens[after]], _NO_PAIR)
            else:
                pair[left] = _NO_PAIR
            before = prv[left]
            if before >= 0:
                pair[before] = ranks.get(s[before:left + size], _NO_PAIR)
        return lens, nxt

    def _merge_heap(self, s: str) -> tuple[list[int], list[int]]:
        """The merge loop with llama.cpp's priority queue, for long texts.

        A queued pair is one int, ``(rank, left, size)`` packed so that int
        order is llama.cpp's order: best score first, then the leftmost
        pair (no tuples to build and compare). Sizes are in
        characters where llama.cpp counts bytes; a pair is stale exactly
        when one of its symbols grew, which both measures show alike, and
        the right symbol is then the left one's current neighbour.
        """
        ranks = self._ranks
        n = len(s)
        lens = [1] * n
        nxt = list(range(1, n + 1))
        nxt[n - 1] = -1
        prv = list(range(-1, n - 1))
        shift = n.bit_length()  # left < n and size <= n both fit
        mask = (1 << shift) - 1
        heap: list[int] = []
        for i in range(n - 1):
            r = ranks.get(s[i:i + 2], -1)
            if r >= 0:
                heap.append((((r << shift) | i) << shift) | 2)
        heapify(heap)
        while heap:
            key = heappop(heap)
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
            after = nxt[right]
            nxt[left] = after
            if after >= 0:
                prv[after] = left
            before = prv[left]
            if before >= 0:
                r = ranks.get(s[before:left + size], -1)
                if r >= 0:
                    heappush(heap, (((r << shift) | before) << shift) | (left + size - before))
            if after >= 0:
                end = after + lens[after]
                r = ranks.get(s[left:end], -1)
                if r >= 0:
                    heappush(heap, (((r << shift) | left) << shift) | (end - left))
        return lens, nxt

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


def _append(tokens: WordTokens, base: int, ids: list[int], starts: list[int], ends: list[int]) -> None:
    ids.extend(tokens.ids)
    if base == 0:
        starts.extend(tokens.starts)
        ends.extend(tokens.ends)
    else:
        starts.extend([base + b for b in tokens.starts])
        ends.extend([base + b for b in tokens.ends])


def _utf8_len(c: str) -> int:
    o = ord(c)
    if o < 0x80:
        return 1
    if o < 0x800:
        return 2
    if o < 0x10000:
        return 3
    return 4


def _byte_offsets(text: str, prefix: bool) -> list[int]:
    """Original UTF-8 offset of each character of the normalized text, plus
    its end; the inserted prefix covers no original byte."""
    n = len(text)
    offs = [0] if prefix else []
    if text.isascii():
        offs.extend(range(n + 1))
        return offs
    acc = 0
    for c in text:
        offs.append(acc)
        acc += _utf8_len(c)
    offs.append(acc)
    return offs


def _score_ranks(ids: dict[str, int], scores: tuple[float, ...]) -> dict[str, int]:
    """Each piece's score as a rank, 0 for the best: an int that orders
    like the score and packs into a heap key. Equal scores share a rank."""
    sc = np.asarray(scores, dtype=np.float64)
    # np.unique without it: np.unique imports numpy.ma (12 ms) on first use
    srt = np.sort(sc)
    distinct = srt[np.concatenate(([True], srt[1:] != srt[:-1]))]  # ascending
    rank_of_id: list[int] = (len(distinct) - 1 - np.searchsorted(distinct, sc)).tolist()
    return {piece: rank_of_id[tid] for piece, tid in ids.items()}


def _crosses_word(pieces: tuple[str, ...]) -> bool:
    """Whether some piece has ``▁`` right after another character, that is,
    a ``▁`` left once its leading ones are stripped (one substring search
    over all pieces instead of one regex search per piece)."""
    return SPACE_MARK in "".join([p.lstrip(SPACE_MARK) for p in pieces])


def _byte_token_ids(ids: dict[str, int], unk: int) -> list[int]:
    """The token llama.cpp's ``byte_to_token`` gives each byte: ``<0xNN>``,
    else the byte itself as a piece. llama.cpp aborts when both are
    missing; the unknown token (or -1, an error when used) stands in."""
    out: list[int] = []
    for b in range(256):
        tid = ids.get(f"<0x{b:02X}>", -1)
        if tid < 0:
            tid = ids.get(bytes([b]).decode("utf-8", "surrogateescape"), unk)
        out.append(tid)
    return out


def build_spm(vocab: Vocab) -> SpmTokenizer:
    """The SPM tokenizer for ``vocab`` (``tokenizer.ggml.model`` = ``llama``)."""
    return SpmTokenizer(vocab)
