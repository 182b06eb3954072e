"""Unigram (SentencePiece) tokenization, as llama.cpp's ``llm_tokenizer_ugm``.

After normalization (see :mod:`.charsmap`), the best split is found with
SentencePiece's Viterbi pass: moving one code point at a time, every piece
of the vocabulary that starts there is tried (normal, user-defined and
unused pieces; user-defined ones score 0), and a code point no single piece
covers gets the unknown token, scored ``min_score - 10``. Backtracking from
the end gives the tokens; consecutive unknown tokens collapse into one.

Speed, with results that stay llama.cpp's to the last bit:

* The pieces sit in a trie over code points kept in one ``bytes`` hash
  table (:mod:`.trie`): built from arrays when the model opens, walked
  with native ints, no string made per step.
* The normalized text is cut before every ``▁`` when no piece has a ``▁``
  past its first character (true of real SentencePiece vocabularies). No
  piece spans such a cut, so every path goes through it, and the best path
  is the best path of each word put end to end -- provided the
  floating-point sums do not depend on where they start. :func:`exact_limit`
  works out from the scores how long a fragment may be while every sum is
  exact (35 million characters for nomic-bert-moe); up to there the best
  path of each word is cached by its text. Longer fragments, or scores that
  do not allow it, get one pass over the whole fragment in llama.cpp's
  order.
* A word is cut again between two ASCII characters that no piece holds
  one after the other (most pairs of punctuation and letters: 7 000 of
  the 9 000 printable pairs for nomic-bert-moe). No token spans such a
  cut either, so the word's best path is its parts' best paths end to
  end (:meth:`UgmTokenizer.split_path`), and parts repeat far more than
  words do, in source code above all.
* With ``remove_extra_whitespaces`` (the usual setting), the state of the
  normalizer after a space is always the same, so each run of text between
  spaces is one word, ``▁`` + the run itself when no normalization rule
  touches it: those go straight from the input to the cache, without
  building the normalized text at all (``_encode_chunks``).
"""

from __future__ import annotations

import math
import re
import struct
import sys
import threading
from typing import TYPE_CHECKING, Final, Sequence

from librt.strings import (BytesWriter, read_f64_le, read_i32_le, read_i64_le, write_f64_le, write_i32_le,
                           write_i64_le)
from librt.vecs import append, vec
from mypy_extensions import i32, i64

from tokenprism.core.plugin_api import (
    Attr, FragmentResult, GGUFError, STEP, Scores, TextCache, TokenColumns, TokenType, Vocab, WORD_STEP,
    checkpoint, chunk_end, column_bytes, config_from_vocab, decoded_pieces, dispose, piece_codes, utf8_width)

from .charsmap import ESCAPED_SPACE, BytesNorm, Normalizer, StrNorm
from .charsmap import match_starts as _match_starts
from .charsmap import look_flag, stop_starts
from .trie import NO_NODE, build_trie, step_node, without_surrogates
from .xcda import CHARSMAP_KEY, Charsmap

if TYPE_CHECKING:  # the explanation records load with the first trace, never for encoding
    from tokenprism.core.plugin_api import FragmentTrace

_WORD_STEP: Final = WORD_STEP  # (Final: a native constant in the compiled loop)
_STEP: Final = STEP  # (a module global was a dict lookup per chunk: 5% of a first encode)

# llama.cpp initialises the Viterbi table with -DBL_MAX
NEG_SCORE: Final = -sys.float_info.max
FLT_MAX = 3.4028234663852886e38
UNKNOWN_PENALTY = 10.0
# UTF-8 sequence length by the high nibble of the first byte (unicode_len_utf8)
_UTF8_LEN = (1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 3, 4)

_CACHE_MAX_WORD = 64
_CACHE_MAX_ENTRIES = 1 << 16
_NATIVE_CHUNKS: Final = not __file__.endswith(".py")
"""Whether chunks are found in the core's :class:`TextCache` (compiled
builds). Keyed by the chunk as a ``str`` (:meth:`UgmTokenizer.chunk_path`),
every chunk of a text needs a ``str`` sliced out, hashed with SipHash and
looked up: ~650 instructions a chunk, a fifth of encoding 0.11 MB of prose
on nomic-bert-moe, first time or not. The cache hashes and compares a chunk
natively in the text itself, and only a new one is sliced out. The pure
build keeps the ``str``-keyed dict (its character loops would be ~50x
slower)."""
# the root's children below this code point are looked up in a list
_FIRST_TABLE = 0x800
# a long word offers the GIL (and a cancel) every this-plus-one characters
# (a literal, Final: mypyc inlines it in the hottest loop)
_CHECK_MASK: Final = 4095
# offsets converted by numpy in one go (_to_bytes)
_SLICE: Final = 1 << 16

UGM_DEFAULT_IDS = {"eos": 1, "unk": 2, "pad": 0}


class WordEdges:
    """The candidate pieces of one word: edge ``k`` goes from character
    ``frm[k]`` to ``to[k]`` with token ``ids[k]`` and score ``scores[k]``,
    in the order llama.cpp tries them."""

    def __init__(self, frm: list[int], to: list[int], ids: list[int], scores: list[float]) -> None:
        self.frm = frm
        self.to = to
        self.ids = ids
        self.scores = scores


def exact_limit(scores: Sequence[float], lengths: Sequence[int],
                unk_score: float, spare_bits: int = 0) -> int:
    """The longest fragment (in normalized characters) for which every sum
    of the Viterbi pass is exact, so that it does not matter where a sum
    starts: word by word gives the same comparisons, ties included, as the
    whole fragment at once. 0 when the scores do not allow it.

    All scores (and the unknown score) are multiples of ``2**g``. A path to
    character ``i`` scores between ``i * lo`` and ``i * hi`` (``lo`` from the
    unknown token and one-character pieces, which give every character an
    edge; ``hi`` from the best score per character), and a candidate adds
    at most ``top`` to that. While ``n * max(|lo|, hi) + top < 2**(52+g)``
    every value is a multiple of ``2**g`` that fits in a double's mantissa,
    hence exact. ``spare_bits``: that many low bits below ``2**g`` must stay
    exact too (the tags of :meth:`UgmTokenizer.best_path`).
    """
    return limit_of(score_bounds(scores, lengths, unk_score), spare_bits)


def score_bounds(scores: Sequence[float], lengths: Sequence[int],
                 unk_score: float) -> tuple[int, float, float] | None:
    """``(g, max(|lo|, hi), top)`` as :func:`exact_limit` describes them
    (``g`` = 0 when every score is 0); None when a score is not finite."""
    w = BytesWriter()
    for x in scores:
        write_f64_le(w, float(x))
    sc = w.getvalue()
    ln = vec[i64]([int(k) for k in lengths])
    return _bounds(sc, vec[i64](range(len(ln))), ln, unk_score)


def _bounds(scores: bytes, ids: vec[i64], lens: vec[i64], unk_score: float) -> tuple[int, float, float] | None:
    """:func:`score_bounds` of the little-endian float64 ``scores`` of token
    ``ids[i]`` (8 bytes each, by id), of length ``lens[i]``, and of the
    unknown token (length 1), in one native pass: numpy's dozen passes
    over temporary arrays were 13 ms of opening a 250k-token vocabulary.

    ``g``: a score ``x != 0`` is ``m * 2**(e - 1075)`` with ``m`` its 53-bit
    significand (``e`` its biased exponent, 1 for subnormals, whose ``m``
    has no implicit bit), so its lowest set bit is ``e - 1075 + ctz(m)``.
    The significands are or-ed per exponent and the trailing zeros counted
    once per exponent at the end."""
    n: i64 = len(ids)
    unk_bits: i64 = read_i64_le(struct.pack("<d", unk_score), 0)
    ors = vec[i64](capacity=2048)
    k: i64 = 0
    while k < 2048:
        ors = append(ors, 0)
        k += 1
    lo = 0.0
    hi = 0.0
    top = 0.0
    i: i64 = 0
    while i <= n:
        # (no conditional expressions here: mypyc boxed their values)
        bits: i64 = unk_bits
        x: float = unk_score
        length: i64 = 1
        if i < n:
            at: i64 = ids[i] * 8
            bits = read_i64_le(scores, at)
            x = read_f64_le(scores, at)
            length = lens[i]
        e: i64 = (bits >> 52) & 0x7FF
        if e == 0x7FF:
            return None  # inf or nan
        frac: i64 = bits & 0xFFFFFFFFFFFFF
        if e == 0:
            if frac != 0:
                ors[1] = ors[1] | frac
        else:
            ors[e] = ors[e] | frac | (1 << 52)
        if length == 1 and x < lo:
            lo = x
        if length > 0:
            per = x / float(length)
            if per > hi:
                hi = per
        ax = abs(x)
        if ax > top:
            top = ax
        i += 1
    g: i64 = 0
    found = False
    k = 1
    while k < 2047:
        m: i64 = ors[k]
        if m != 0:
            z: i64 = 0
            while m & 1 == 0:
                m >>= 1
                z += 1
            low: i64 = k - 1075 + z
            if not found or low < g:
                g = low
                found = True
        k += 1
    return int(g), max(-lo, hi), top


def limit_of(bounds: tuple[int, float, float] | None, spare_bits: int = 0) -> int:
    """:func:`exact_limit` from :func:`score_bounds`."""
    if bounds is None:
        return 0
    g, per_char, top = bounds
    if top == 0.0:
        return sys.maxsize  # every score is 0
    room = math.ldexp(1.0, 52 + g - spare_bits) - top
    if room <= 0:
        return 0
    if per_char == 0.0:
        return sys.maxsize
    return int(min(room / per_char, float(sys.maxsize // 2)))


def _f32(x: float) -> float:
    return float(struct.unpack("<f", struct.pack("<f", x))[0])


def _int_bytes(values: Sequence[int]) -> tuple[bytes, i64]:
    """A vocabulary column of ints as little-endian bytes and their width
    (4 or 8): its array's own bytes when it has one."""
    raw = column_bytes(values)
    if raw is not None and raw[0] in ("i", "q"):
        return raw[1], 4 if raw[0] == "i" else 8
    w = BytesWriter()
    for x in values:
        write_i64_le(w, int(x))
    return w.getvalue(), 8


def _matchers(vocab: Vocab) -> tuple[vec[i64], list[str], float, bytes]:
    """The ids of the pieces the Viterbi pass may match (normal,
    user-defined and unused ones, ascending), the user-defined pieces, the
    lowest normal score (for the unknown token's) and every token's score
    (little-endian float64s by id).

    llama.cpp builds its matchers from the token types as stored, before
    its load-time fix-ups change any attribute; the session scores by the
    attributes after the fix-ups (a user-defined piece scores 0). One
    native pass over the columns: numpy's masks cost its ~65 ms import."""
    types, tw = _int_bytes(vocab.types)
    attrs, aw = _int_bytes(vocab.attrs)
    scores = Scores(vocab.scores)
    n: i64 = len(types) // tw
    if len(types) != n * tw or len(attrs) != n * aw or len(scores) != n:
        raise ValueError("the vocabulary's columns differ in length")
    normal: i64 = int(TokenType.NORMAL)
    user: i64 = int(TokenType.USER_DEFINED)
    unused: i64 = int(TokenType.UNUSED)
    ud_bit: i64 = int(Attr.USER_DEFINED)
    matchable = vec[i64]()
    ud_ids: list[int] = []
    min_score = FLT_MAX
    any_normal = False
    w = BytesWriter()
    i: i64 = 0
    while i < n:
        t: i64 = i64(read_i32_le(types, i * 4)) if tw == 4 else read_i64_le(types, i * 8)
        a: i64 = i64(read_i32_le(attrs, i * 4)) if aw == 4 else read_i64_le(attrs, i * 8)
        x = scores.at(i)
        if t == normal:
            # (NaN compares false, as numpy's min would have propagated it:
            # a NaN score makes the bounds None below either way)
            if not any_normal or x < min_score or x != x:
                min_score = x
            any_normal = True
            matchable = append(matchable, i)
        elif t == user:
            ud_ids.append(i)
            matchable = append(matchable, i)
        elif t == unused:
            matchable = append(matchable, i)
        write_f64_le(w, 0.0 if a & ud_bit else x)
        i += 1
    pieces = vocab.pieces
    return matchable, [pieces[t] for t in ud_ids], min_score, w.getvalue()


def _longest(lens: vec[i64]) -> i64:
    """The largest of ``lens`` (0 for none)."""
    m: i64 = 0
    for k in lens:
        if k > m:
            m = k
    return m


def _tag_layout(bounds: tuple[int, float, float] | None, tag_bits: int, scores: bytes, ids: vec[i64],
                n: int) -> tuple[int, float, float, float, bytes]:
    """How :meth:`UgmTokenizer.best_path` tags its scores: ``(tag_chars,
    tag_unit, tag_scale, grain, score_units)``, ``tag_chars`` 0 when the
    scores leave no room for ``tag_bits`` below their grain.

    ``score_units``: the scores (float64 by id in ``scores``) of ``ids``
    (ascending) again, in units of the grain as int32 by token id (``n`` of
    them, 0 for the others): read from one bytes object, a score costs no
    list item and no float object far apart in memory (-2**31: too big, in
    ``tok_score`` only)."""
    tag_chars = limit_of(bounds, tag_bits)
    if tag_chars <= 0 or bounds is None:
        return tag_chars, 1.0, 1.0, 1.0, b""
    g = bounds[0]
    unit = math.ldexp(1.0, g - tag_bits)
    scale = math.ldexp(1.0, tag_bits - g)
    grain = math.ldexp(1.0, g)
    if not (unit > 0.0 and math.isfinite(scale) and grain > 0.0 and math.isfinite(1.0 / grain)):
        return 0, unit, scale, grain, b""
    return tag_chars, unit, scale, grain, _score_units(scores, ids, n, 1.0 / grain)


def _score_units(scores: bytes, ids: vec[i64], n: i64, per_unit: float) -> bytes:
    """:func:`_tag_layout`'s ``score_units``, written in id order in one
    native pass (numpy's temporaries were ~3 ms of a 250k-token open)."""
    out = BytesWriter()
    pos: i64 = 0
    for tid in ids:
        if tid < pos or tid >= n:
            raise ValueError("token ids out of order")  # (_matchers' are ascending)
        while pos < tid:
            write_i32_le(out, 0)
            pos += 1
        u = read_f64_le(scores, tid * 8) * per_unit
        unit: i32 = -2147483648  # (-2**31: too big)
        if abs(u) < 2147483648.0:
            unit = i32(int(u))
        write_i32_le(out, unit)
        pos += 1
    while pos < n:
        write_i32_le(out, 0)
        pos += 1
    return out.getvalue()


def _space_like(nz: Normalizer, ud_pieces: list[str]) -> list[str]:
    """The characters the charsmap turns into one space and that no key
    holds past its start (tab, newline, ...): when a text is encoded by
    chunks between spaces, they are spaces in all but their bytes, so they
    are made spaces first."""
    cm = nz.charsmap
    ud_text = "".join(ud_pieces)
    return [ch for ch in sorted(cm.single)
            if (ch < "\x80" and ch != " " and ch not in cm.multi_first and ch not in cm.second
                and ord(ch) not in cm.inner_ascii and ch not in ud_text and nz.cm_match(ch, 0) == (1, " "))]


class UgmTokenizer:
    """llama.cpp's UGM tokenizer for one vocabulary."""

    def __init__(self, vocab: Vocab, escape_whitespaces: bool = True,
                 treat_whitespace_as_suffix: bool = False) -> None:
        self.vocab = vocab
        self.config = config_from_vocab(vocab, "UGM", UGM_DEFAULT_IDS, add_bos=False, add_eos=True,
                                        add_space_prefix=vocab.flag("add_space_prefix", False),
                                        normalizes=True)
        special_ids = self.config.special_ids
        if "unk" not in special_ids:
            raise GGUFError("", "the UGM tokenizer needs an unknown token, and the vocabulary has none "
                            "(tokenizer.ggml.unknown_token_id)", None, "tokenizer.ggml.unknown_token_id")
        self.unk_id: int = special_ids["unk"]
        if CHARSMAP_KEY in vocab.metadata and not vocab.precompiled_charsmap:
            raise GGUFError("", "precompiled_charsmap too small for xcda_blob_size header", None, CHARSMAP_KEY)
        self.charsmap = Charsmap(vocab.precompiled_charsmap)

        matchable, ud_pieces, min_score, tok_score = _matchers(vocab)
        self.unk_score = _f32(_f32(min_score) - UNKNOWN_PENALTY)
        # float64s in one bytes object, read natively: a list of 250k
        # float objects cost ~7 ms and ~2 000 page faults of every open
        self.tok_score: bytes = tok_score
        # a vector: a list of 250k ints cost ~7 ms of the open
        self.matchable = matchable

        self.normalizer = Normalizer(self.charsmap, ud_pieces, self.config.add_space_prefix,
                                     vocab.flag("remove_extra_whitespaces", False),
                                     escape_whitespaces, treat_whitespace_as_suffix)
        self.space = self.normalizer.space

        codes = piece_codes(vocab)
        valid = self.matchable
        self.trie, facts = build_trie(codes, valid, ord(self.space), _FIRST_TABLE)
        if facts.surrogates:
            # pieces that are not valid UTF-8 can only match inside a
            # character in llama.cpp, which leads nowhere: the character
            # path leaves them out (built again without them: rare)
            valid = without_surrogates(codes, valid)
            self.trie, facts = build_trie(codes, valid, ord(self.space), _FIRST_TABLE)
        lens = facts.lens_vec
        # ▁ inside a piece (past its first character)
        self.cut_on_space = not facts.inner_space
        self._bytes_pref: dict[bytes, int] | None = None
        self._lock = threading.Lock()
        self._cache: dict[str, WordEdges] = {}
        self._paths: dict[str, vec[i64]] = {}
        bounds = _bounds(self.tok_score, valid, facts.lens_vec, self.unk_score)
        self.exact_chars = limit_of(bounds) if self.cut_on_space else 0
        # best_path keeps, in the low bits of each best score, how many
        # characters back the token that reached it starts (see there):
        # tag_bits of them, below the scores' grain 2**g
        self.tag_bits: int = int(max(1, _longest(lens))).bit_length()
        tags = _tag_layout(bounds, self.tag_bits, self.tok_score, valid, len(vocab.pieces))
        self.tag_chars: int = tags[0]
        self.tag_unit: float = tags[1]
        self.tag_scale: float = tags[2]
        self.grain: float = tags[3]
        self.score_units: bytes = tags[4]

        # With remove_extra_whitespaces, the text between two spaces is
        # normalized on its own (the state after a space is always the same)
        # and, ▁ being a cut, it is one word: "▁" + the text when no rule
        # touches it. Such words go straight from the text to the cache of
        # best paths, without building the normalized text.
        nz = self.normalizer
        self.by_chunks = (nz.merge_spaces and not nz.append_space and nz.simple_space and nz.str_ok
                          and not self.charsmap.space_in_keys and self.cut_on_space
                          and not any(" " in p for p in ud_pieces))
        stop_pattern = nz.look_re.pattern
        self.chunk_stop_re = re.compile(stop_pattern + "|" + re.escape(self.space) if stop_pattern != "(?!)"
                                        else re.escape(self.space))
        self.space_like: list[str] = _space_like(nz, ud_pieces) if self.by_chunks else []
        longest = max(self.charsmap.longest, 1)
        # normalized length <= (longest replacement + a ▁) per character
        self.expand = longest + 1
        self._chunks: dict[str, vec[i64]] = {}
        # (compiled: _encode_chunks finds a chunk's path here by its
        # characters where they lie in the text; see _NATIVE_CHUNKS)
        self._chunk_cache: TextCache[vec[i64]] = TextCache(_CACHE_MAX_ENTRIES)
        # (_ascii_stops: the pattern, and its characters when it is a class of them)
        self._ascii_stop: tuple[re.Pattern[str], bytes | None] | None = None
        # chunk_stop_re as a table by code point (built on first use: 1 MB)
        self._stop_flags = b""
        self._cut_re: re.Pattern[str] | None = None

    def clear_caches(self) -> None:
        """Forget every cached word (for benchmarks and tests)."""
        self._cache.clear()
        self._paths.clear()
        self._chunks.clear()
        self._chunk_cache.clear()

    # ---- the Tokenizer protocol -------------------------------------------

    def encode_fragment(self, text: str, after_special: bool) -> FragmentResult:
        if self._chunked(text):
            out = self._encode_chunks(text)
            if out is not None:
                return out.result()
        return self._encode_whole(text)

    def encode_columns(self, text: str, after_special: bool) -> tuple[vec[i64], vec[i64], vec[i64]]:
        if self._chunked(text):
            out = self._encode_chunks(text)
            if out is not None:
                return out.columns()
        res = self._encode_whole(text)
        return vec[i64](res.ids), vec[i64](res.starts), vec[i64](res.ends)

    def _chunked(self, text: str) -> bool:
        """Whether ``text`` is tokenized a space-delimited chunk at a time."""
        return self.by_chunks and len(text) * self.expand < self.exact_chars

    def _encode_whole(self, text: str) -> FragmentResult:
        """The fragment normalized as a whole (llama.cpp's UGM session
        normalizes every fragment on its own)."""
        if not self._chunked(text):
            # two passes as far as progress reports go: normalizing, then
            # the best path (core.gil.checkpoint; a huge fragment takes seconds)
            sn = self.normalizer.normalize_str(text, 2)
            if sn is not None:
                return self._encode_str(text, sn)
        data = text.encode("utf-8", "surrogatepass")
        return self._encode_bytes(self.normalizer.normalize_bytes(data, 2))

    def token_score(self, token_id: int) -> float:
        """The score the Viterbi pass gives ``token_id`` (0 for user-defined tokens)."""
        return read_f64_le(self.tok_score, token_id * 8)

    def piece_bytes(self, token_id: int) -> bytes:
        return self.vocab.pieces[token_id].replace(ESCAPED_SPACE, " ").encode("utf-8", "surrogateescape")

    def normalized(self, text: str) -> str:
        sn = self.normalizer.normalize_str(text)
        if sn is not None:
            return sn.text
        data = text.encode("utf-8", "surrogatepass")
        return self.normalizer.normalize_bytes(data).data.decode("utf-8", "replace")

    def cut_points(self, text: str, lo: int, hi: int) -> list[int]:
        """Ends of space-delimited chunks of printable ASCII that no
        normalization rule touches (only with ``by_chunks``, within the
        length where word-by-word sums are exact): the normalizer's state
        after such a chunk is fresh and every path goes through the ``▁``
        that follows. (Unknown tokens on both sides of a cut would merge;
        callers check that.)"""
        if not self.by_chunks or len(text) * self.expand >= self.exact_chars:
            return []
        pat = self._cut_re
        if pat is None:
            sp = re.escape("".join([" "] + self.space_like))
            pat = re.compile("(?:^|(?<=[" + sp + "]))[!-~]+(?=[" + sp + "])")
            self._cut_re = pat
        stop = self.chunk_stop_re
        out: list[int] = []
        for m in pat.finditer(text, max(0, lo - 256), min(hi, len(text))):
            e = m.end()
            if lo <= e and stop.search(text, m.start(), e) is None:
                out.append(e)
        return out

    def trace_fragment(self, text: str, after_special: bool) -> FragmentTrace:
        """``encode_fragment`` replayed stage by stage (``Model.explain``);
        the tracing code is imported here, on first use only."""
        from .trace import trace_ugm
        return trace_ugm(self, text, after_special)

    # ---- the character path -----------------------------------------------

    def word_edges(self, word: str) -> WordEdges:
        """Every piece that starts at every character of ``word``, and the
        unknown token where no piece covers exactly one character."""
        trie = self.trie
        scores = self.tok_score
        unk = self.unk_id
        unk_score = self.unk_score
        frm: list[int] = []
        to: list[int] = []
        ids: list[int] = []
        sc: list[float] = []
        m = len(word)
        for i in range(m):
            if i & _CHECK_MASK == _CHECK_MASK:
                checkpoint(0, 0)  # a huge word without spaces
            single = False
            j = i + 1
            node: i64 = trie.child(0, ord(word[i]))
            while node != NO_NODE:
                v = trie.token(node)
                if v >= 0:
                    if j == i + 1:
                        single = True
                    frm.append(i)
                    to.append(j)
                    ids.append(v)
                    sc.append(read_f64_le(scores, v * 8))
                if j >= m or not trie.has_children(node):
                    break
                node = trie.child(node, ord(word[j]))
                j += 1
            if not single:
                frm.append(i)
                to.append(i + 1)
                ids.append(unk)
                sc.append(unk_score)
        return WordEdges(frm, to, ids, sc)

    def _edges(self, word: str) -> WordEdges:
        if len(word) > _CACHE_MAX_WORD:
            return self.word_edges(word)
        cache = self._cache
        e = cache.get(word)
        if e is None:
            e = self.word_edges(word)
            if len(cache) >= _CACHE_MAX_ENTRIES:
                cache.clear()
            cache[word] = e
        return e

    def best_path(self, word: str) -> vec[i64]:
        """The best split of ``word`` on its own, flat: token id, start and
        end (in characters of ``word``) of each token in turn; unknown
        tokens not merged yet. (Native ints: a cached path is read again
        every time its word comes back.)

        The candidates are tried as :meth:`word_edges` lists them, but
        scored as they are found instead of being listed first.

        Only the best scores are kept, each tagged with how far back the
        token that reached it starts: ``d * tag_unit`` added below the
        scores' grain (every score is a multiple of ``2**g``, every sum
        exact up to ``tag_chars`` characters, tags included). A larger sum
        wins as before; on equal sums the larger ``d`` wins, which is the
        candidate tried first, as llama.cpp's strict ``>`` keeps. That
        spares two lists of boxed ints (token, start) per word; the token
        of each piece on the best path is looked up again at the end."""
        m: i64 = len(word)
        if m > self.tag_chars:
            return self._best_path_lists(word)
        trie = self.trie
        su = self.score_units
        scores = self.tok_score
        grain = self.grain
        unk_score = self.unk_score
        unit = self.tag_unit
        scale = self.tag_scale
        tag_mask: i64 = (1 << self.tag_bits) - 1
        first = trie.first
        n_first: i64 = len(first)
        best = _scores_row(m)
        i: i64 = 0
        while i < m:
            if i & _CHECK_MASK == _CHECK_MASK:
                checkpoint(0, 0)  # a huge word without spaces
            tagged = best[i]
            tag: i64 = int(tagged * scale)
            cur = tagged - float(tag & tag_mask) * unit
            single = False
            j: i64 = i + 1
            d = unit
            c: i64 = ord(word[i])
            # r: a packed PieceTrie.step (token + 1, has children, node);
            # (an if, not a conditional expression: mypyc boxed its value)
            r: i64
            if c < n_first:
                r = first[c]
            else:
                r = trie.step(0, c)
            while r != NO_NODE:
                v: i64 = (r >> 32) - 1
                if v >= 0:
                    if j == i + 1:
                        single = True
                    units = read_i32_le(su, v * 4)
                    if units == -0x80000000:
                        s = cur + read_f64_le(scores, v * 8) + d
                    else:
                        s = cur + float(units) * grain + d
                    if s > best[j]:
                        best[j] = s
                if j >= m or (r >> 31) & 1 == 0:
                    break
                r = trie.step(step_node(r), ord(word[j]))
                j += 1
                d += unit
            if not single:
                s = cur + unk_score + unit
                if s > best[i + 1]:
                    best[i + 1] = s
            i += 1
        back = vec[i64]()
        pos: i64 = m
        while pos > 0:
            tag = int(best[pos] * scale)
            start = pos - (tag & tag_mask)
            back = append(back, pos)
            back = append(back, start)
            back = append(back, self._piece_between(word, start, pos))
            pos = start
        return _forward(back)

    def _piece_between(self, word: str, i: i64, j: i64) -> i64:
        """The token of ``word[i:j]`` as the Viterbi pass found it: its piece,
        or the unknown token for one character no piece covers."""
        trie = self.trie
        first = trie.first
        c: i64 = ord(word[i])
        r: i64
        if c < len(first):
            r = first[c]
        else:
            r = trie.step(0, c)
        k: i64 = i + 1
        while k < j and r != NO_NODE:
            r = trie.step(step_node(r), ord(word[k]))
            k += 1
        if r == NO_NODE or r >> 32 == 0:
            return self.unk_id
        return (r >> 32) - 1

    def _best_path_lists(self, word: str) -> vec[i64]:
        """:meth:`best_path` for words too long for its tags: the token and
        start of every best score in lists of their own."""
        trie = self.trie
        scores = self.tok_score
        unk = self.unk_id
        unk_score = self.unk_score
        first = trie.first
        n_first: i64 = len(first)
        m: i64 = len(word)
        best = _scores_row(m)
        tok = [unk] * (m + 1)
        back = [0] * (m + 1)
        i: i64 = 0
        while i < m:
            if i & _CHECK_MASK == _CHECK_MASK:
                checkpoint(0, 0)  # a huge word without spaces
            cur = best[i]
            single = False
            j: i64 = i + 1
            c: i64 = ord(word[i])
            # r: a packed PieceTrie.step (token + 1, has children, node);
            # (an if, not a conditional expression: mypyc boxed its value)
            r: i64
            if c < n_first:
                r = first[c]
            else:
                r = trie.step(0, c)
            while r != NO_NODE:
                v: i64 = (r >> 32) - 1
                if v >= 0:
                    if j == i + 1:
                        single = True
                    s = cur + read_f64_le(scores, v * 8)
                    if s > best[j]:
                        best[j] = s
                        tok[j] = v
                        back[j] = i
                if j >= m or (r >> 31) & 1 == 0:
                    break
                r = trie.step(step_node(r), ord(word[j]))
                j += 1
            if not single:
                s = cur + unk_score
                if s > best[i + 1]:
                    best[i + 1] = s
                    tok[i + 1] = unk
                    back[i + 1] = i
            i += 1
        path = vec[i64]()
        pos = m
        while pos > 0:
            path = append(path, pos)
            path = append(path, back[pos])
            path = append(path, tok[pos])
            pos = back[pos]
        return _forward(path)

    def word_path(self, word: str) -> vec[i64]:
        """``best_path`` of a word of the normalized text, cached."""
        p = self._paths.get(word)
        if p is None:
            p = self.split_path(word)
            _keep(self._paths, word, len(word), p)
        return p

    def split_path(self, word: str) -> vec[i64]:
        """``best_path`` of ``word`` (where word-by-word sums are exact),
        put together from the best paths of its parts: ``word`` is cut
        between two ASCII characters that no piece holds one after the
        other (:meth:`PieceTrie.joined`). No token spans such a cut, so
        every path goes through it, and the best path is the parts' best
        paths end to end, for the reason a ``▁`` is a cut (see the module
        docstring). Parts repeat far more than words do (in source code,
        2 900 distinct words of 40 000 characters have 1 300 distinct parts
        of 6 800), and each is cached as a word of its own."""
        trie = self.trie
        m: i64 = len(word)
        out = vec[i64]()
        if m == 0:
            return out
        s: i64 = 0
        prev: i64 = ord(word[0])
        p: i64 = 1
        while p < m:
            if p & _CHECK_MASK == _CHECK_MASK:
                checkpoint(0, 0)  # a huge word without spaces
            c: i64 = ord(word[p])
            if not trie.joined(prev, c):
                out = self._add_part(word[s:p], s, out)
                s = p
            prev = c
            p += 1
        if s == 0:
            return self.best_path(word)
        return self._add_part(word[s:], s, out)

    def _add_part(self, part: str, at: i64, out: vec[i64]) -> vec[i64]:
        """``out`` with the cached best path of ``part`` after it, its
        offsets moved by ``at``."""
        pp = self._paths.get(part)
        if pp is None:
            pp = self.best_path(part)
            _keep(self._paths, part, len(part), pp)
        n: i64 = len(pp)
        k: i64 = 0
        while k < n:
            out = append(out, pp[k])
            out = append(out, pp[k + 1] + at)
            out = append(out, pp[k + 2] + at)
            k += 3
        return out

    def viterbi_str(self, norm: str) -> tuple[list[int], list[int], list[int]]:
        """Token ids with their ``[start, end)`` in normalized characters."""
        n = len(norm)
        if n == 0:
            return [], [], []
        if n <= self.exact_chars:
            return self._by_words(norm, list(range(n)), list(range(1, n + 1)))
        return self._whole(norm, 1)

    def _by_words(self, norm: str, src_s: list[int], src_e: list[int],
                  passes: int = 1) -> tuple[list[int], list[int], list[int]]:
        """Word by word (see the module docstring for why this is exact);
        spans through the maps ``src_s``/``src_e`` of normalized characters.
        ``passes``: this is the last of that many passes over the text, for
        progress reports (``core.gil.checkpoint``)."""
        out = TokenColumns()
        self._add_words(norm, src_s, src_e, out, False, passes)
        return list(out.ids), list(out.starts), list(out.ends)

    def _add_words(self, norm: str, src_s: list[int], src_e: list[int], out: TokenColumns, prev_unk: bool,
                   passes: int = 0) -> bool:
        """Append the tokens of ``norm``, word by word; ``prev_unk`` says the
        last token so far is unknown (consecutive unknowns merge). Returns
        the same for the new last token. ``passes`` as in :meth:`_by_words`
        (0: a piece of a bigger job, which reports no progress of its own)."""
        n = len(norm)
        span = n * passes
        base = span - n if span else 0
        space = self.space
        unk = self.unk_id
        a = 0
        words = 0
        while a < n:
            words += 1
            if words % _WORD_STEP == 0:
                # a long text: let the GUI thread in now and then, and the
                # caller hear how far it got (or cancel)
                checkpoint(base + a if span else 0, span)
            b = norm.find(space, a + 1)
            if b < 0:
                b = n
            p = self.word_path(norm[a:b])
            for k in range(0, len(p), 3):
                t = p[k]
                is_unk = t == unk
                if is_unk and prev_unk:
                    out.stretch_last(src_e[a + p[k + 2] - 1])
                else:
                    out.add(t, src_s[a + p[k + 1]], src_e[a + p[k + 2] - 1])
                prev_unk = is_unk
            a = b
        return prev_unk

    def chunk_path(self, chunk: str) -> vec[i64]:
        """``best_path`` of ``▁`` + ``chunk``, cached by ``chunk`` (native
        ints: read for every time the chunk comes again)."""
        chunks = self._chunks
        p = chunks.get(chunk)
        if p is None:
            p = self.split_path(self.space + chunk)
            _keep(chunks, chunk, len(chunk) + 1, p)  # (+1: the ▁)
        return p

    def _encode_chunks(self, text: str) -> TokenColumns | None:
        """Normalize and split ``text`` one space-delimited chunk at a time
        (only with ``by_chunks``); ``None`` when the byte path is needed."""
        nz = self.normalizer
        original = text
        for ch in self.space_like:
            if ch in text:
                text = text.replace(ch, " ")
        if text.isascii():
            stops = self._ascii_stop_starts(text)
        else:
            found = stop_starts(self._flags(), text)
            if found is None:
                return None  # a lone surrogate
            stops = found
        n_stops: i64 = len(stops)
        si: i64 = 0
        out = TokenColumns(len(text) >> 2)
        found_chunks = self._chunk_cache
        prev_unk = False
        run_s: i64 = -1
        run_e: i64 = -1
        n: i64 = len(text)
        i: i64 = 0
        steps: i64 = 0
        unk_id: i64 = self.unk_id
        while i < n:
            steps += 1
            if steps % _STEP == 0:
                checkpoint(i, n)  # a long text: let the GUI thread in (or cancel)
            if text[i] == " ":
                k: i64 = i + 1
                while k < n and text[k] == " ":
                    k += 1
                if run_s < 0:
                    run_s = i
                run_e = k
                i = k
                continue
            # (a native scan that hashes the chunk for the cache as it goes:
            # a chunk is a few characters, and str.find's call cost more)
            j, h = chunk_end(text, i, n)
            while si < n_stops and stops[si] < i:
                si += 1
            if si < n_stops and stops[si] < j:
                # something in this chunk needs the normalizer
                sn = nz.normalize_range(text, i, j, run_s, run_e)
                if sn is None:
                    return None
                prev_unk = self._add_words(sn.text, sn.src_start, sn.src_end, out, prev_unk)
                run_s = sn.run_start
                run_e = sn.run_end
                i = j
                continue
            # "▁" + the chunk, as it is; the ▁ stands for the spaces before
            sp_s: i64 = i
            sp_e: i64 = i
            if run_s >= 0:
                sp_s = run_s
                sp_e = run_e
            run_s = -1
            p: vec[i64]
            if _NATIVE_CHUNKS:
                kept = found_chunks.find(text, i, j, h)
                if kept is None:
                    chunk = text[i:j]
                    p = self.split_path(self.space + chunk)
                    if j - i < _CACHE_MAX_WORD:  # (as _keep: +1 for the ▁)
                        found_chunks.add(chunk, p, h)
                else:
                    p = kept
            else:
                p = self.chunk_path(text[i:j])
            n_p: i64 = len(p)
            q: i64 = 0
            while q < n_p:
                t = p[q]
                e = p[q + 2]
                end: i64 = sp_e if e == 1 else i + e - 1
                is_unk = t == unk_id
                if is_unk and prev_unk:
                    out.stretch_last(end)
                else:
                    s0 = p[q + 1]
                    out.add(t, sp_s if s0 == 0 else i + s0 - 1, end)
                prev_unk = is_unk
                q += 3
            i = j
        if not original.isascii():
            spans = _walk_spans(original, out.starts, out.ends)
            if spans is None:
                bs, be = _to_bytes(original, list(out.starts), list(out.ends))
                spans = vec[i64](bs), vec[i64](be)
            out.starts, out.ends = spans
        return out

    def _ascii_stop_starts(self, text: str) -> list[int]:
        """Where ``chunk_stop_re`` matches in ASCII ``text``. In real text
        it mostly matches nowhere (control characters), and bytes.translate
        tells that in a twentieth of the time the pattern takes to scan."""
        pattern, chars = self._ascii_stops()
        if chars is not None:
            data = text.encode("ascii")
            if len(data.translate(None, chars)) == len(data):
                return []
        return _match_starts(pattern, text, 0, len(text))

    def prepare(self) -> None:
        """Build now the tables a first encode would otherwise build: the
        stop flags by code point and the ASCII characters where
        ``chunk_stop_re`` matches."""
        if self.by_chunks:
            self._ascii_stops()

    def _flags(self) -> bytes:
        """``chunk_stop_re`` as a table by code point (``look_flags``),
        built on first use."""
        flags = self._stop_flags
        if not flags:
            flags = self.normalizer.look_flags(self.space)
            self._stop_flags = flags
        return flags

    def _ascii_stops(self) -> tuple[re.Pattern[str], bytes | None]:
        """``chunk_stop_re`` for ASCII text: its huge classes make the
        regular-expression engine slow on every character. The ASCII
        characters where it matches are read from the stop flags (trying
        each before every ASCII follower took 16 000 matches, ~4 ms of a
        first encode of ASCII text); when a match depends on the follower
        (a character that starts a key before an ASCII character that can
        follow it), the pattern itself is kept (and no characters are
        given)."""
        r = self._ascii_stop
        if r is None:
            flags = self._flags()
            chars: list[str] = []
            starts = False
            follows = False
            for c in range(128):
                f = look_flag(flags, c)
                if f & 1:
                    chars.append(chr(c))
                elif f & 2:
                    starts = True
                if f & 4:
                    follows = True
            r = (self.chunk_stop_re, None)
            if not (starts and follows):
                r = (re.compile("[" + re.escape("".join(chars)) + "]" if chars else "(?!)"),
                     "".join(chars).encode("ascii"))
            self._ascii_stop = r
        return r

    def _whole(self, norm: str, passes: int = 1) -> tuple[list[int], list[int], list[int]]:
        """The pass over the whole fragment, sums in llama.cpp's order (the
        last of ``passes`` for progress reports)."""
        n = len(norm)
        if n == 0:
            return [], [], []
        best = [NEG_SCORE] * (n + 1)
        best[0] = 0.0
        tok = [self.unk_id] * (n + 1)
        back = [0] * (n + 1)
        space = self.space
        a = 0
        words = 0
        span = n * passes
        while a < n:
            words += 1
            if words % _WORD_STEP == 0:
                checkpoint(span - n + a, span)
            b = norm.find(space, a + 1) if self.cut_on_space else -1
            if b < 0:
                b = n
            e = self._edges(norm[a:b])
            frm = e.frm
            to = e.to
            ids = e.ids
            sc = e.scores
            for k in range(len(frm)):
                i = a + frm[k]
                j = a + to[k]
                s = best[i] + sc[k]
                if s > best[j]:
                    best[j] = s
                    tok[j] = ids[k]
                    back[j] = i
            a = b
        out = self._backtrack(n, tok, back)
        if n > _SLICE:
            dispose(best)  # (see _encode_str)
            dispose(back)
        return out

    def _backtrack(self, n: int, tok: list[int], back: list[int]) -> tuple[list[int], list[int], list[int]]:
        unk = self.unk_id
        ids: list[int] = []
        starts: list[int] = []
        ends: list[int] = []
        pos = n
        prev_unk = False
        steps = 0
        while True:
            steps += 1
            if steps % _STEP == 0:
                checkpoint(0, 0)
            t = tok[pos]
            f = back[pos]
            is_unk = t == unk
            if prev_unk and is_unk:
                starts[-1] = f
            else:
                ids.append(t)
                starts.append(f)
                ends.append(pos)
            if f == 0:
                break
            prev_unk = is_unk
            pos = f
        ids.reverse()
        starts.reverse()
        ends.reverse()
        return ids, starts, ends

    def _encode_str(self, text: str, sn: StrNorm) -> FragmentResult:
        norm = sn.text
        n = len(norm)
        src_s = sn.src_start
        src_e = sn.src_end
        if n == 0:
            return FragmentResult([], [], [])
        if n <= self.exact_chars:
            ids, starts, ends = self._by_words(norm, src_s, src_e, 2)
        else:
            ids, ns, ne = self._whole(norm, 2)
            starts = [src_s[i] for i in ns]
            ends = [src_e[j - 1] for j in ne]
        if n > _SLICE:
            # the normalizer's maps hold an int per character: freed at
            # once on return, they would hold the GIL for ~0.5 s (10 MB)
            dispose(src_s)
            dispose(src_e)
        if not text.isascii():
            starts, ends = _to_bytes(text, starts, ends)
        return FragmentResult(ids, starts, ends)

    # ---- the byte path (llama.cpp, literally) -----------------------------

    def _bytes_trie(self) -> dict[bytes, int]:
        bp = self._bytes_pref
        if bp is None:
            with self._lock:
                bp = self._bytes_pref
                if bp is None:
                    bp = {}
                    pieces = decoded_pieces(self.vocab)
                    for tid in self.matchable:
                        b = pieces[tid].encode("utf-8", "surrogateescape")
                        for k in range(1, len(b)):
                            if b[:k] not in bp:
                                bp[b[:k]] = -1
                        bp[b] = tid
                    self._bytes_pref = bp
        return bp

    def viterbi_bytes(self, data: bytes, passes: int = 1) -> tuple[list[int], list[int], list[int]]:
        """Token ids with their ``[start, end)`` in normalized bytes (the
        last of ``passes`` over the text, for progress reports)."""
        n = len(data)
        if n == 0:
            return [], [], []
        pref = self._bytes_trie()
        scores = self.tok_score
        unk = self.unk_id
        unk_score = self.unk_score
        best = [NEG_SCORE] * (n + 1)
        best[0] = 0.0
        tok = [unk] * (n + 1)
        back = [0] * (n + 1)
        i = 0
        steps = 0
        span = n * passes
        while i < n:
            steps += 1
            if steps % _STEP == 0:
                checkpoint(span - n + i, span)
            units = min(_UTF8_LEN[data[i] >> 4], n - i)
            cur = best[i]
            single = False
            j = i + 1
            while j <= n:
                v = pref.get(data[i:j], -2)
                if v == -2:
                    break
                if v >= 0:
                    if j - i == units:
                        single = True
                    s = cur + read_f64_le(scores, v * 8)
                    if s > best[j]:
                        best[j] = s
                        tok[j] = v
                        back[j] = i
                j += 1
            if not single:
                s = cur + unk_score
                j = i + units
                if s > best[j]:
                    best[j] = s
                    tok[j] = unk
                    back[j] = i
            i += units
        out = self._backtrack(n, tok, back)
        if n > _SLICE:
            dispose(best)  # (see _encode_str)
            dispose(back)
        return out

    def _encode_bytes(self, bn: BytesNorm) -> FragmentResult:
        ids, ns, ne = self.viterbi_bytes(bn.data, 2)
        src_s = bn.src_start
        src_e = bn.src_end
        res = FragmentResult(ids, [src_s[i] for i in ns], [src_e[j - 1] for j in ne])
        if len(src_s) > _SLICE:
            dispose(src_s)  # (see _encode_str)
            dispose(src_e)
        return res


def _keep(cache: dict[str, vec[i64]], key: str, chars: int, path: vec[i64]) -> None:
    """Remember the path of a word of ``chars`` characters under ``key``,
    unless the word is too long to be worth it; a full cache starts over."""
    if chars <= _CACHE_MAX_WORD:
        if len(cache) >= _CACHE_MAX_ENTRIES:
            cache.clear()
        cache[key] = path


def _scores_row(m: i64) -> vec[float]:
    """The best scores of a pass over ``m`` characters before it starts:
    0 at the start, NEG_SCORE everywhere else. Native floats: a list
    boxed every score it was given (a float object made, another freed)."""
    row = vec[float](capacity=m + 1)
    row = append(row, 0.0)
    k: i64 = 0
    while k < m:
        row = append(row, NEG_SCORE)
        k += 1
    return row


def _forward(back: vec[i64]) -> vec[i64]:
    """A path gathered from its end (end, start, token of each token) in
    the order of the text: token, start, end."""
    n: i64 = len(back)
    out = vec[i64](capacity=n)
    k: i64 = n - 3
    while k >= 0:
        out = append(out, back[k + 2])
        out = append(out, back[k + 1])
        out = append(out, back[k])
        k -= 3
    return out


def _to_bytes(text: str, starts: list[int], ends: list[int]) -> tuple[list[int], list[int]]:
    """Character offsets into ``text`` as UTF-8 byte offsets."""
    spans = _walk_spans(text, vec[i64](starts), vec[i64](ends))
    if spans is not None:
        return list(spans[0]), list(spans[1])
    bs = _walk_bytes(text, starts)
    be = _walk_bytes(text, ends)
    if bs is not None and be is not None:
        return bs, be
    return _to_bytes_np(text, starts, ends)


def _walk_spans(text: str, starts: vec[i64], ends: vec[i64]) -> tuple[vec[i64], vec[i64]] | None:
    """``_to_bytes`` in one walk along ``text`` when each token starts at
    or after the end of the one before (None when not)."""
    n: i64 = len(starts)
    if len(ends) != n:
        return None
    bs = vec[i64](capacity=n)
    be = vec[i64](capacity=n)
    c: i64 = 0
    b: i64 = 0
    k: i64 = 0
    while k < n:
        if k & 0xFFFF == 0xFFFF:
            checkpoint(0, 0)
        x: i64 = starts[k]
        if x < c:
            return None
        while c < x:
            cp: i64 = ord(text[c])
            if cp < 0x80:
                b += 1  # (most characters: no call)
            else:
                b += utf8_width(cp)
            c += 1
        bs = append(bs, b)
        y: i64 = ends[k]
        if y < c:
            return None
        while c < y:
            cq: i64 = ord(text[c])
            if cq < 0x80:
                b += 1
            else:
                b += utf8_width(cq)
            c += 1
        be = append(be, b)
        k += 1
    return bs, be


def _walk_bytes(text: str, offsets: list[int]) -> list[int] | None:
    """``_to_bytes`` in one walk along ``text`` for ascending ``offsets``
    (None when they are not): no arrays made from and back to lists."""
    out: list[int] = []
    c: i64 = 0
    b: i64 = 0
    k: i64 = 0
    for x in offsets:
        k += 1
        if k & 0xFFFF == 0:
            checkpoint(0, 0)
        if x < c:
            return None
        while c < x:
            cp: i64 = ord(text[c])
            b += utf8_width(cp)
            c += 1
        out.append(b)
    return out


def _to_bytes_np(text: str, starts: list[int], ends: list[int]) -> tuple[list[int], list[int]]:
    """``_to_bytes`` for offsets in any order."""
    import numpy as np  # (only here: offsets out of order are rare, and the import costs ~65 ms)

    cps = np.frombuffer(text.encode("utf-32-le", "surrogatepass"), dtype=np.uint32)
    lens = 1 + (cps >= 0x80).astype(np.int64) + (cps >= 0x800) + (cps >= 0x10000)
    cum = np.zeros(len(cps) + 1, dtype=np.int64)
    np.cumsum(lens, out=cum[1:])
    if len(starts) <= _SLICE:
        return cum[np.asarray(starts, dtype=np.intp)].tolist(), cum[np.asarray(ends, dtype=np.intp)].tolist()
    # converting a list of millions of ints to an array and back is one
    # numpy call each way that holds the GIL (~0.3 s for a 10 MB text):
    # in slices, with the GIL offered (and a cancel checked) in between
    bs: list[int] = []
    be: list[int] = []
    for k in range(0, len(starts), _SLICE):
        bs.extend(cum[np.asarray(starts[k:k + _SLICE], dtype=np.intp)].tolist())
        be.extend(cum[np.asarray(ends[k:k + _SLICE], dtype=np.intp)].tolist())
        checkpoint(0, 0)
    return bs, be


def build_ugm(vocab: Vocab) -> UgmTokenizer:
    """The UGM tokenizer for ``vocab`` (raises ``GGUFError`` for an unusable
    charsmap or a vocabulary without an unknown token)."""
    return UgmTokenizer(vocab)
