"""Why a text was cut the way it was: every stage of the encode pipeline,
replayed, as plain data (``Model.explain`` makes it, views read it).

The stages, in the order the tokenizer runs them (Hugging Face
``tokenizers``' names):

1. ``special``: the special tokens matched in llama.cpp's order (with what
   their lstrip/rstrip swallowed) and those whose text occurs but were not
   taken, with why;
2. ``normalize``: each plain fragment's text as the model sees it, each
   normalized character mapped back to the original characters it came from;
3. ``pre_tokenize``: each regex rule's chunks (BPE);
4. ``model``: per word, its tokens and the algorithm's steps (merges,
   lattice, longest-match attempts);
5. ``post``: the BOS/EOS put around the text and the final ids.

Every offset is in characters of the ORIGINAL text (``str`` indices), end
exclusive. A plugin builds a :class:`FragmentTrace` for one plain fragment,
with offsets inside that fragment; :func:`shift_fragment` moves them to the
whole text.

>>> model = open_model(demo("spm"))
>>> ex = model.explain("Hi")
>>> list(ex.ids) == list(model.encode("Hi").ids)
True
>>> [s.KIND for s in ex.stages]
['special', 'normalize', 'pre_tokenize', 'model', 'post']
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, Callable, ClassVar, Mapping, Sequence, Union

from .special import _C_SPACE  # what lstrip/rstrip swallow: C isspace(), as the matcher has it
from .vocab import Attr

__all__ = [
    "Alternative", "Attempt", "ByteFallback", "Candidate", "Explanation", "FragmentTrace", "Lattice",
    "LatticeEdge", "Merge", "ModelStage", "NormalizeStage", "NormalizedFragment", "PostStage",
    "PreTokenizeStage", "PreTokenized", "RuleChunks", "SpecialMatch", "SpecialStage", "SpecialUnmatched",
    "Stage", "Step", "Symbols", "TraceMethod", "Unknown", "Word", "explanation", "shift_fragment",
    "special_stage", "to_json",
]


# ---- model steps (one kind of record per thing an algorithm does) ------------------------------

@dataclass(frozen=True)
class Symbols:
    """Where a merge loop starts: the word's first symbols (BPE: one per
    character, or per byte-level glyph; SPM: one per character), each with
    its token id (-1: no piece, byte fallback later) and its bytes."""

    KIND: ClassVar[str] = "symbols"
    texts: tuple[str, ...]
    ids: tuple[int, ...]
    byte_values: tuple[tuple[int, ...], ...]
    """Per symbol, the UTF-8 bytes it stands for (byte-level BPE: the bytes
    behind its glyphs), so a byte-level word reads as bytes."""


@dataclass(frozen=True)
class Merge:
    """Two neighbouring symbols joined into one (BPE by lowest ``rank``,
    SPM by highest ``score``). ``position``: the left symbol's index among
    the symbols left at that moment."""

    KIND: ClassVar[str] = "merge"
    left: str
    right: str
    result: str
    result_id: int
    position: int
    rank: int = -1
    """BPE: the merge's line in the file's merge list (lower merges first)."""
    score: float | None = None
    """SPM: the result piece's score (higher merges first)."""


@dataclass(frozen=True)
class ByteFallback:
    """A symbol no piece covers, written as its UTF-8 bytes' tokens
    (``<0xNN>``), or as the unknown token when the vocabulary has none."""

    KIND: ClassVar[str] = "byte_fallback"
    text: str
    byte_values: tuple[int, ...]
    tokens: tuple[int, ...]


@dataclass(frozen=True)
class LatticeEdge:
    """A vocabulary piece starting at one position of a Unigram word."""

    start: int
    end: int
    """Normalized-word characters ``[start, end)``."""
    token: int
    piece: str
    score: float


@dataclass(frozen=True)
class Candidate:
    """One prefix a longest-match tokenizer (WPM) looked up."""

    text: str
    token: int
    """Its id, -1 when the vocabulary has no such piece."""


@dataclass(frozen=True)
class Attempt:
    """WPM: the longest-match search at one position of a word: the prefixes
    tried, longest first (``##``-prefixed after the word's start), down to
    the one found (the last candidate, ``found``) or none."""

    KIND: ClassVar[str] = "attempt"
    position: int
    candidates: tuple[Candidate, ...]
    found: bool


@dataclass(frozen=True)
class Unknown:
    """The word became the unknown token, and why."""

    KIND: ClassVar[str] = "unknown"
    token: int
    reason: str


@dataclass(frozen=True)
class Lattice:
    """UGM: every vocabulary piece that starts at each position of the
    normalized word, with its score (a position no piece starts at gets the
    unknown token, scored as llama.cpp scores it)."""

    KIND: ClassVar[str] = "lattice"
    text: str
    edges: tuple[LatticeEdge, ...]


Step = Union[Symbols, Merge, ByteFallback, Attempt, Unknown, Lattice]


@dataclass(frozen=True)
class Alternative:
    """A segmentation of a Unigram word and its summed piece scores."""

    tokens: tuple[int, ...]
    score: float
    gap: float = 0.0
    """How much lower than the best segmentation's score (0 for the best)."""


@dataclass(frozen=True)
class Word:
    """What the model stage did with one word (a pre-tokenizer chunk, an SPM
    or WPM word, a Unigram stretch between cut points)."""

    text: str
    """The word as the model saw it (normalized)."""
    start: int
    end: int
    """Original-text characters the word's tokens cover."""
    tokens: tuple[int, ...]
    steps: tuple[Step, ...] = ()
    alternatives: tuple[Alternative, ...] | None = None
    """UGM: the k best segmentations, best first (the best is ``tokens``)."""


# ---- what a plugin returns for one plain fragment ----------------------------------------------

@dataclass(frozen=True)
class NormalizedFragment:
    """A plain fragment as the model sees it after its normalizer."""

    start: int
    end: int
    text: str
    """The original text ``[start, end)``."""
    normalized: str
    sources: tuple[tuple[int, int], ...]
    """Per normalized character, the original characters ``[a, b)`` it came
    from (``a == b`` for an inserted one, such as SPM's ``▁`` prefix)."""
    notes: tuple[str, ...] = ()
    """What the normalizer does, in words (e.g. "lowercased")."""


@dataclass(frozen=True)
class RuleChunks:
    """One regex rule of a BPE pre-tokenizer and the chunks the text is in
    after it (each rule splits the previous rule's chunks further)."""

    rule: str
    chunks: tuple[tuple[int, int], ...]
    """``[start, end)`` in original-text characters."""


@dataclass(frozen=True)
class PreTokenized:
    """The pre-tokenizer's rules over one plain fragment."""

    start: int
    end: int
    name: str
    """The pre-tokenizer's name (llama.cpp's ``tokenizer.ggml.pre``)."""
    rules: tuple[RuleChunks, ...]


@dataclass(frozen=True)
class FragmentTrace:
    """A plugin's account of ``encode_fragment(text, after_special)``: the
    fragment normalized (or None when the model does not normalize), its
    pre-tokenizer rules (or None), and its words, whose tokens in order are
    exactly the fragment's ids. Offsets are inside the fragment."""

    algorithm: str
    """``"bpe"``, ``"spm"``, ``"ugm"``, ``"wpm"``, or a plugin's own name."""
    normalized: NormalizedFragment | None
    pre_tokenized: PreTokenized | None
    words: tuple[Word, ...]


# ---- the stages ------------------------------------------------------------------------------

@dataclass(frozen=True)
class SpecialMatch:
    """A special token split out of the text: its text at ``[match_start,
    match_end)``, and the whitespace its lstrip/rstrip swallowed, which
    widen its span to ``[start, end)``."""

    token: int
    text: str
    start: int
    end: int
    match_start: int
    match_end: int
    lstrip: str = ""
    rstrip: str = ""


@dataclass(frozen=True)
class SpecialUnmatched:
    """A special token whose text occurs in the text but was not split out
    there, and why."""

    token: int
    text: str
    start: int
    """Where its text first occurs."""
    reason: str


@dataclass(frozen=True)
class SpecialStage:
    KIND: ClassVar[str] = "special"
    parse_special: bool
    matched: tuple[SpecialMatch, ...]
    """In llama.cpp's order: longest text first, then left to right."""
    unmatched: tuple[SpecialUnmatched, ...]
    fragments: tuple[tuple[int, int, int], ...]
    """The text cut into ``(start, end, token)``: token -1 for plain text."""


@dataclass(frozen=True)
class NormalizeStage:
    KIND: ClassVar[str] = "normalize"
    fragments: tuple[NormalizedFragment, ...]
    """One per plain fragment; empty when the model does not normalize."""


@dataclass(frozen=True)
class PreTokenizeStage:
    KIND: ClassVar[str] = "pre_tokenize"
    fragments: tuple[PreTokenized, ...]
    """One per plain fragment; empty when the model has no pre-tokenizer."""


@dataclass(frozen=True)
class ModelStage:
    KIND: ClassVar[str] = "model"
    algorithm: str
    words: tuple[Word, ...]


@dataclass(frozen=True)
class PostStage:
    KIND: ClassVar[str] = "post"
    prefix: tuple[int, ...]
    """Ids put before the text (BOS, CLS) by ``add_special``."""
    suffix: tuple[int, ...]
    """Ids put after it (EOS, SEP)."""
    ids: tuple[int, ...]
    """The final ids, as ``Model.encode`` gives them."""


Stage = Union[SpecialStage, NormalizeStage, PreTokenizeStage, ModelStage, PostStage]


@dataclass(frozen=True)
class Explanation:
    """Every stage of one encode, for ``text`` and the flags given."""

    text: str
    add_special: bool
    parse_special: bool
    ids: tuple[int, ...]
    stages: tuple[Stage, ...]

    def stage(self, name: str) -> Stage:
        """The stage called ``name`` (``"special"``, ``"model"``...)."""
        for s in self.stages:
            if s.KIND == name:
                return s
        raise KeyError(name)

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready dict: ``{"ids": [...], "stages": [{"name": ..., ...}]}``,
        every record's fields by name, step records with a ``"kind"``."""
        return {"text": self.text, "add_special": self.add_special, "parse_special": self.parse_special,
                "ids": list(self.ids), "stages": [to_json(s) for s in self.stages]}


def to_json(value: Any) -> Any:
    """One record (or tuple of them) as JSON-ready data: a stage gets its
    ``"name"`` and a step its ``"kind"`` first, then its fields."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        out: dict[str, Any] = {}
        kind = getattr(type(value), "KIND", None)
        if kind is not None:
            out["name" if type(value).__name__.endswith("Stage") else "kind"] = kind
        for f in dataclasses.fields(value):
            out[f.name] = to_json(getattr(value, f.name))
        return out
    if isinstance(value, (tuple, list)):
        return [to_json(v) for v in value]
    return value


# ---- moving a fragment's trace to the whole text -------------------------------------------------

def shift_fragment(trace: FragmentTrace, d: int) -> FragmentTrace:
    """``trace`` with every original-text offset moved by ``d`` (where its
    fragment starts). Offsets inside a normalized word (lattice edges,
    attempt positions) stay as they are."""
    if not d:
        return trace
    norm = trace.normalized
    if norm is not None:
        norm = dataclasses.replace(norm, start=norm.start + d, end=norm.end + d,
                                   sources=tuple((a + d, b + d) for a, b in norm.sources))
    pre = trace.pre_tokenized
    if pre is not None:
        pre = dataclasses.replace(pre, start=pre.start + d, end=pre.end + d, rules=tuple(
            RuleChunks(r.rule, tuple((a + d, b + d) for a, b in r.chunks)) for r in pre.rules))
    words = tuple(dataclasses.replace(w, start=w.start + d, end=w.end + d) for w in trace.words)
    return FragmentTrace(trace.algorithm, norm, pre, words)


# ---- the special-token stage, replayed ------------------------------------------------------------

MAX_UNMATCHED = 200
"""Unmatched occurrences reported at most (a text of repeated specials)."""


def special_stage(text: str, fragments: Sequence[tuple[int, int, int]], occurrences: Mapping[int, Sequence[int]],
                  pieces: Sequence[str], attrs: Sequence[int], rank: Mapping[int, int],
                  parse_special: bool) -> SpecialStage:
    """The special stage of ``text`` cut into ``fragments`` (what the
    pipeline's matcher gave), from ``occurrences``: where every special text
    occurs (all special tokens, as with ``parse_special`` on) and ``rank``
    each token's place in llama.cpp's order (longest text first)."""
    taken_by: dict[int, tuple[int, int, int]] = {}
    matched: list[SpecialMatch] = []
    for a, b, tid in fragments:
        if tid < 0:
            continue
        piece = pieces[tid]
        p = _match_in(text, a, b, piece, occurrences.get(tid, ()))
        matched.append(SpecialMatch(tid, piece, a, b, p, p + len(piece), text[a:p], text[p + len(piece):b]))
        taken_by[p] = (a, b, tid)
    # llama.cpp takes the tokens one after the other (longest text first),
    # each left to right: the order a reader follows the matches in
    matched.sort(key=lambda m: (rank.get(m.token, len(rank)), m.match_start))
    unmatched: list[SpecialUnmatched] = []
    spans = [(a, b, t) for a, b, t in fragments if t >= 0]
    for tid in sorted(occurrences, key=lambda t: (rank.get(t, len(rank)), t)):
        piece = pieces[tid]
        for p in occurrences[tid]:
            if p in taken_by and taken_by[p][2] == tid:
                continue
            if len(unmatched) >= MAX_UNMATCHED:
                break
            unmatched.append(SpecialUnmatched(tid, piece, p, _why_not(p, p + len(piece), tid, spans, pieces, attrs,
                                                                      parse_special)))
    return SpecialStage(parse_special, tuple(matched), tuple(unmatched), tuple(fragments))


def _match_in(text: str, a: int, b: int, piece: str, where: Sequence[int]) -> int:
    """Where in the special fragment ``[a, b)`` its token's text stands: the
    first occurrence with only swallowed whitespace around it."""
    for p in where:
        if a <= p and p + len(piece) <= b and all(c in _C_SPACE for c in text[a:p]) \
                and all(c in _C_SPACE for c in text[p + len(piece):b]):
            return p
    return a


def _why_not(s: int, e: int, tid: int, spans: list[tuple[int, int, int]], pieces: Sequence[str],
             attrs: Sequence[int], parse_special: bool) -> str:
    if attrs[tid] & (Attr.CONTROL | Attr.UNKNOWN) and not parse_special:
        kind = "an unknown" if attrs[tid] & Attr.UNKNOWN else "a control"
        return f"parse_special is off: {kind} token is split out only with parse_special"
    for a, b, t in spans:
        if a < e and s < b:
            how = "longer texts go first" if len(pieces[t]) > len(pieces[tid]) else "it came first"
            return f"overlaps {pieces[t]!r} (id {t}) matched there before ({how})"
    return "not split out"


# ---- the stages put together ----------------------------------------------------------------------

TraceMethod = Callable[[str, bool], FragmentTrace]


def explanation(text: str, add_special: bool, parse_special: bool, special: SpecialStage,
                segs: Sequence[tuple[int, int, int, bool]], trace: TraceMethod, prefix: Sequence[int],
                suffix: Sequence[int], algorithm: str) -> Explanation:
    """The whole story: ``special`` (the text cut into ``segs``, as the
    pipeline's segments), each plain segment traced by the plugin's
    ``trace`` (its ``trace_fragment``), and the ``prefix``/``suffix`` ids
    ``add_special`` puts around the text. ``algorithm`` names the model
    stage of a text with no plain fragment."""
    norms: list[NormalizedFragment] = []
    pres: list[PreTokenized] = []
    words: list[Word] = []
    ids: list[int] = list(prefix)
    named = ""
    for start, end, token, after_special in segs:
        if token >= 0:
            ids.append(token)
            continue
        t = shift_fragment(trace(text[start:end], after_special), start)
        named = named or t.algorithm
        if t.normalized is not None:
            norms.append(t.normalized)
        if t.pre_tokenized is not None:
            pres.append(t.pre_tokenized)
        words.extend(t.words)
        for w in t.words:
            ids.extend(w.tokens)
    ids.extend(suffix)
    stages: tuple[Stage, ...] = (special, NormalizeStage(tuple(norms)), PreTokenizeStage(tuple(pres)),
                                 ModelStage(named or algorithm, tuple(words)),
                                 PostStage(tuple(prefix), tuple(suffix), tuple(ids)))
    return Explanation(text, add_special, parse_special, tuple(ids), stages)
