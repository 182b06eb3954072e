"""Corpus counts as plain dataclasses that merge exactly, and the counting
of one piece of a document by one set of models.

Units: a *document* is what one ``Model.encode`` call would take — a whole
text file, one JSON Lines record, one Parquet cell, standard input. Token
counts are ``sum(len(model.encode(doc, add_special)))`` over the documents
(no special tokens unless asked). A *word* is a run of non-whitespace
characters (``\\S+``); its *script* is the Unicode script of its first
character that is neither Common nor Inherited (digits and punctuation
alone: Common; a script outside the ~50 most written ones: Other). Each token counts for the first word it overlaps (SPM's
``▁the`` starts on the space but belongs to ``the``); tokens that overlap
no word (runs of whitespace) count under the script ``Space``, with the
whitespace's bytes, and the BOS/EOS tokens ``add_special`` adds under
``Special``, so the scripts' tokens and bytes add up to the model's.

Everything here is a sum or a union, so partitions merge in any order to
the same totals; only :attr:`ModelStats.words` (the costliest words) is
cut to the :data:`KEEP_WORDS` costliest of each partition, so a word's
counts there are summed over the partitions where it made the cut.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache
from typing import Sequence

import numpy as np
import regex

from ..model import Model, pause_gc, resume_gc, sanitize_text
from ..columns import segments_columns
from ..pipeline import special_ends
from ..special import segments
from ..vocab import Attr

SPACE = "Space"
SPECIAL = "Special"
COMMON = "Common"
# a script of its own that is not among _SCRIPT_NAMES (the ~50 most written)
OTHER = "Other"
# costliest words kept per partition (and in a merged result)
KEEP_WORDS = 2000

_WORD = regex.compile(r"\S+")
# the script of a word's first character that has one of its own, by the
# regex module's script property (Unicode's Scripts.txt). Against a lookup
# of unicodedata.name() (benchmarks/bench_corpus.py --scripts, 223k words of
# mixed text): 2.1-2.5 us per word vs 1.7-2.6 us, as fast within this busy
# machine's noise, and names are not scripts ("MATHEMATICAL BOLD CAPITAL A"
# is Common, "CJK ..." Han). Words repeat: script_of's cache makes it 0.4 us.
_SCRIPTED = regex.compile(r"[^\p{Script=Common}\p{Script=Inherited}]")


@lru_cache(maxsize=1 << 16)
def script_of(word: str) -> str:
    """The Unicode script of ``word`` (see the module docstring).

    >>> script_of("Привет"), script_of("42!"), script_of("«東京»")
    ('Cyrillic', 'Common', 'Han')
    """
    m = _SCRIPTED.search(word)
    if m is None:
        return COMMON
    return _script_name(m.group())


@lru_cache(maxsize=4096)
def _script_name(ch: str) -> str:
    for name in _SCRIPT_NAMES:
        if _SCRIPT_RE[name].match(ch):
            return name
    return OTHER


_SCRIPT_NAMES = (
    "Latin", "Cyrillic", "Han", "Arabic", "Devanagari", "Greek", "Hebrew", "Hiragana", "Katakana", "Hangul",
    "Thai", "Bengali", "Tamil", "Telugu", "Gujarati", "Gurmukhi", "Kannada", "Malayalam", "Oriya", "Sinhala",
    "Armenian", "Georgian", "Ethiopic", "Khmer", "Lao", "Myanmar", "Tibetan", "Mongolian", "Syriac", "Thaana",
    "Cherokee", "Canadian_Aboriginal", "Tifinagh", "Javanese", "Balinese", "Sundanese", "Bopomofo", "Yi",
    "Runic", "Ogham", "Coptic", "Glagolitic", "Braille", "Tagalog", "Vai", "Nko", "Adlam", "Ol_Chiki",
)
_SCRIPT_RE = {name: regex.compile(rf"\p{{Script={name}}}") for name in _SCRIPT_NAMES}


@dataclass
class Tally:
    """Tokens and the text they cover."""

    tokens: int = 0
    bytes: int = 0
    chars: int = 0
    words: int = 0

    def add(self, other: Tally) -> None:
        self.tokens += other.tokens
        self.bytes += other.bytes
        self.chars += other.chars
        self.words += other.words


@dataclass
class WordCost:
    """How often a word occurred and the tokens it took in all."""

    count: int = 0
    tokens: int = 0

    def score(self, word: str) -> float:
        """Tokens per character, weighted by frequency: what ranks the
        costliest words (a word split in many pieces, often)."""
        return self.tokens / max(1, len(word))


@dataclass
class ModelStats:
    """One model's counts over part of a corpus (merge with :meth:`merge`)."""

    path: str
    name: str
    vocab_size: int
    total: Tally = field(default_factory=Tally)
    byte_fallback: int = 0
    unknown: int = 0
    special: int = 0
    seen: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=bool))
    """One flag per token id: used at least once."""
    by_script: dict[str, Tally] = field(default_factory=dict)
    by_file: dict[str, Tally] = field(default_factory=dict)
    words: dict[str, WordCost] = field(default_factory=dict)
    """The costliest words (split in two tokens or more)."""

    def __post_init__(self) -> None:
        if len(self.seen) != self.vocab_size:
            self.seen = np.zeros(self.vocab_size, dtype=bool)

    @property
    def vocab_used(self) -> int:
        return int(np.count_nonzero(self.seen))

    def merge(self, other: ModelStats) -> None:
        self.total.add(other.total)
        self.byte_fallback += other.byte_fallback
        self.unknown += other.unknown
        self.special += other.special
        np.logical_or(self.seen, other.seen, out=self.seen)
        for table, more in ((self.by_script, other.by_script), (self.by_file, other.by_file)):
            for key, t in more.items():
                table.setdefault(key, Tally()).add(t)
        for w, c in other.words.items():
            mine = self.words.setdefault(w, WordCost())
            mine.count += c.count
            mine.tokens += c.tokens
        self.trim_words()

    def trim_words(self, keep: int = KEEP_WORDS) -> None:
        if len(self.words) > keep:
            best = sorted(self.words.items(), key=lambda kv: (-kv[1].score(kv[0]), kv[0]))[:keep]
            self.words = dict(best)

    def worst_words(self, n: int = 30) -> list[tuple[str, WordCost]]:
        """The ``n`` costliest words, costliest first."""
        return sorted(self.words.items(), key=lambda kv: (-kv[1].score(kv[0]), kv[0]))[:n]


@dataclass(frozen=True)
class Skipped:
    """A path (or a record in it) left out, and why."""

    path: str
    reason: str


@dataclass
class CorpusStats:
    """The counts of some partitions of a corpus, for every model."""

    models: list[ModelStats]
    files: int = 0
    documents: int = 0
    bytes_read: int = 0
    """Bytes read from the files (before decoding)."""
    text: Tally = field(default_factory=Tally)
    """The decoded text: bytes are its UTF-8 bytes, what the models saw."""
    invalid_utf8: int = 0
    """Invalid UTF-8 sequences decoded as U+FFFD."""
    forced_cuts: int = 0
    """Documents cut where no model's plugin offered a cut point (see
    :mod:`~tokenprism.core.corpus.stream`): counts may be off by a token or
    two at each."""
    skipped: list[Skipped] = field(default_factory=list)
    partitions: list[int] = field(default_factory=list)
    """The partitions counted here."""

    def merge(self, other: CorpusStats) -> None:
        for mine, theirs in zip(self.models, other.models):
            mine.merge(theirs)
        self.files += other.files
        self.documents += other.documents
        self.bytes_read += other.bytes_read
        self.text.add(other.text)
        self.invalid_utf8 += other.invalid_utf8
        self.forced_cuts += other.forced_cuts
        self.skipped.extend(other.skipped)
        self.partitions.extend(other.partitions)


def empty_stats(models: Sequence[Model]) -> CorpusStats:
    return CorpusStats([ModelStats(m.path, m.name, len(m)) for m in models])


# ---- counting ---------------------------------------------------------------


@dataclass(frozen=True)
class _Words:
    """The words of a piece of text: UTF-8 byte spans, texts, scripts."""

    starts: np.ndarray
    ends: np.ndarray
    texts: list[str]
    scripts: list[str]
    nbytes: np.ndarray


_last_words: list[tuple[str, _Words]] = []


def _words(text: str) -> _Words:
    # every model counts the same document: its words are found once
    if _last_words and _last_words[0][0] is text:
        return _last_words[0][1]
    words = _find_words(text)
    _last_words[:] = [(text, words)]
    return words


def _find_words(text: str) -> _Words:
    spans = [m.span() for m in _WORD.finditer(text)]
    texts = [text[s:e] for s, e in spans]
    sizes = [len(w.encode("utf-8")) for w in texts]
    # byte spans: the tokens' spans come in bytes (the char spans cost the
    # pure-Python build more than the tokenizing; measured 5.8 s of 9.3 s)
    starts: list[int] = []
    ends: list[int] = []
    if text.isascii():
        starts = [s for s, _e in spans]
        ends = [e for _s, e in spans]
    else:
        at_char = at_byte = 0
        for (s, e), n in zip(spans, sizes):
            at_byte += len(text[at_char:s].encode("utf-8"))
            starts.append(at_byte)
            at_byte += n
            ends.append(at_byte)
            at_char = e
    return _Words(np.array(starts, dtype=np.int64), np.array(ends, dtype=np.int64), texts,
                  [script_of(w) for w in texts], np.array(sizes, dtype=np.int64))


class _ModelMasks:
    """Per-model lookups made once per process."""

    def __init__(self, model: Model) -> None:
        attrs = model.vocab.arrays().attrs
        self.byte = (attrs & Attr.BYTE) != 0
        self.unknown = (attrs & Attr.UNKNOWN) != 0


_MASKS: dict[int, _ModelMasks] = {}


def _masks(model: Model) -> _ModelMasks:
    m = _MASKS.get(id(model))
    if m is None:
        m = _MASKS[id(model)] = _ModelMasks(model)
    return m


def _as_array(v: object) -> np.ndarray:
    """A plugin's int64 vector as numpy, without a copy (read only)."""
    out: np.ndarray = np.frombuffer(memoryview(v).cast("B"), dtype=np.int64)  # type: ignore[arg-type]
    return out


def count_piece(stats: CorpusStats, k: int, model: Model, text: str, doc: str, *, first: bool, last: bool,
                add_special: bool = False) -> None:
    """Add to ``stats.models[k]`` the counts of ``model`` over ``text``, a
    piece of the document ``doc`` (``first``/``last``: it starts/ends the
    document). Pieces cut where the model may be cut
    (:mod:`~tokenprism.core.corpus.stream`) count the same tokens as the
    whole document encoded at once. The first model's pieces also count
    the text itself (every model's pieces end where words end, so all see
    the same words)."""
    text = sanitize_text(text)
    words = _words(text)
    piece = Tally(0, len(text.encode("utf-8")), len(text), len(words.texts))
    if k == 0:
        stats.text.add(piece)
    was = pause_gc()
    try:
        _count_model(stats.models[k], model, text, words, piece, doc, first, last, add_special)
    finally:
        resume_gc(was)


def _count_model(ms: ModelStats, model: Model, text: str, words: _Words, piece: Tally, doc: str, first: bool,
                 last: bool, add_special: bool) -> None:
    segs = segments(model.fragments(text))
    if not first and segs and segs[0].token < 0:
        # a continuation: the plugin sees text that follows text
        segs[0] = segs[0]._replace(after_special=False)
    # the model stage alone: ids and byte spans (what encode_segments
    # starts from, without the character spans)
    vec_ids, vec_starts, vec_ends = segments_columns(model.tokenizer, text, segs)
    ids = _as_array(vec_ids)
    prefix, suffix = special_ends(model.config, add_special)
    added = (len(prefix) if first else 0) + (len(suffix) if last else 0)
    masks = _masks(model)
    ms.seen[ids] = True
    for tid in (prefix if first else ()) + (suffix if last else ()):
        ms.seen[tid] = True
    ms.byte_fallback += int(np.count_nonzero(masks.byte[ids]))
    ms.unknown += int(np.count_nonzero(masks.unknown[ids]))
    ms.special += added
    n_tok = len(ids) + added
    ms.total.add(Tally(n_tok, piece.bytes, piece.chars, piece.words))
    ms.by_file.setdefault(doc, Tally()).add(Tally(n_tok, piece.bytes, piece.chars, piece.words))
    per_word = _tokens_per_word(words, _as_array(vec_starts), _as_array(vec_ends))
    spaced = len(ids) - int(per_word.sum())
    by_script = ms.by_script
    for w, script, nb, nt in zip(words.texts, words.scripts, words.nbytes.tolist(), per_word.tolist()):
        t = by_script.get(script)
        if t is None:
            t = by_script[script] = Tally()
        t.tokens += nt
        t.bytes += nb
        t.chars += len(w)
        t.words += 1
    space_bytes = piece.bytes - int(words.nbytes.sum())
    if spaced or space_bytes:
        # the whitespace between words, so the scripts' bytes add up too
        t = by_script.setdefault(SPACE, Tally())
        t.tokens += spaced
        t.bytes += space_bytes
        t.chars += piece.chars - sum(map(len, words.texts))
    if added:
        by_script.setdefault(SPECIAL, Tally()).tokens += added
    costly = ms.words
    for i in np.flatnonzero(per_word >= 2).tolist():
        c = costly.get(words.texts[i])
        if c is None:
            c = costly[words.texts[i]] = WordCost()
        c.count += 1
        c.tokens += int(per_word[i])
    if len(costly) > 4 * KEEP_WORDS:
        ms.trim_words()


def _tokens_per_word(words: _Words, starts: np.ndarray, ends: np.ndarray) -> np.ndarray:
    """How many tokens each word takes: a token counts for the first word
    it overlaps (none: it covers whitespace only)."""
    n = len(words.texts)
    if n == 0 or len(starts) == 0:
        return np.zeros(n, dtype=np.int64)
    idx = np.searchsorted(words.ends, starts, side="right")
    inside = idx < n
    safe = np.minimum(idx, n - 1)
    # a token of part of one character (byte fallback) may have start == end
    overlaps = inside & (words.starts[safe] < np.maximum(ends, starts + 1))
    return np.bincount(idx[overlaps], minlength=n).astype(np.int64)
