"""What the "Why" panel shows for a selection, without Qt.

The panel explains the tokens the user selects (``Model.explain``, see
:mod:`tokenprism.core.explain`). A whole text is explained when it is
short; a long one only in a bounded window around the selection, and a
huge selection only in its first :data:`SELECTION_CHARS` characters, so a
1 MB selection costs what a short one does (and the panel says so). From
the explanation, :func:`view_for` keeps what touches the selection: the
special tokens, the normalized text, the pre-tokenizer's chunks, the
model's words and the BOS/EOS. :class:`Replay` steps a word's merges one
at a time (the panel's slider); :func:`path_edges` finds a Unigram
segmentation's edges in the lattice (the drawn best and runner-up paths);
:func:`attempt_lines` words WordPiece's longest-match search.
"""

from __future__ import annotations

import html
from dataclasses import dataclass
from typing import Final, Sequence

from tokenprism.core import Model

from .pieces import readable
from tokenprism.core.explain import (Alternative, Attempt, ByteFallback, Explanation, Lattice, LatticeEdge, Merge,
                                     ModelStage, NormalizedFragment, NormalizeStage, PostStage, PreTokenizeStage,
                                     SpecialMatch, SpecialStage, SpecialUnmatched, Symbols, Unknown, Word)

WHOLE_TEXT_CHARS: Final = 2000
"""A text this short is explained whole: exactly the tokens on screen.
(Explaining 4,000 characters took 130-250 ms in pure Python, 800 took
11-40 ms, on llama-spm, gpt-2, bert-bge, nomic-bert-moe and gemma-4: the
panel follows the cursor, so it explains a window, not the text.)"""
SELECTION_CHARS: Final = 1000
"""Characters of a selection explained at most (from its start)."""
MARGIN_CHARS: Final = 300
"""Context kept on each side of the selection in a long text, so the
pre-tokenizer and the model see the selection's neighbours as they are."""
NO_CAPABILITY: Final = "no explanation available for this tokenizer"


@dataclass(frozen=True)
class WhyRequest:
    """What to explain: ``text[start:end]`` (the window) for the selected
    characters ``[sel_start, sel_end)`` of the text (clipped to
    :data:`SELECTION_CHARS`; ``left_out`` characters of the selection were
    not), with the window's flags."""

    start: int
    end: int
    sel_start: int
    sel_end: int
    left_out: int
    add_special: bool
    parse_special: bool

    def whole(self, text_len: int) -> bool:
        return self.start == 0 and self.end == text_len


def request_for(text: str, sel_start: int, sel_end: int, add_special: bool = False,
                parse_special: bool = False) -> WhyRequest:
    """The window to explain for the selection ``[sel_start, sel_end)`` of
    ``text`` (character offsets; an empty selection explains the character
    at ``sel_start``)."""
    n = len(text)
    s = max(0, min(sel_start, n))
    e = max(s, min(sel_end, n))
    left_out = max(0, e - s - SELECTION_CHARS)
    e -= left_out
    if n <= WHOLE_TEXT_CHARS:
        return WhyRequest(0, n, s, e, left_out, add_special, parse_special)
    a = max(0, s - MARGIN_CHARS)
    b = min(n, e + MARGIN_CHARS)
    # start and end at line breaks where the margin holds one, a chunk or a
    # word never runs across the cut then; the ones farthest from the
    # selection, and never right before it (SentencePiece would put its ▁
    # before a selection that starts the window)
    cut = text.find("\n", a, max(a, s - 1))
    if cut >= 0:
        a = cut + 1
    cut = text.rfind("\n", e, b)
    if cut >= 0:
        b = cut + 1
    # BOS/EOS belong to the text's ends only
    return WhyRequest(a, b, s, e, left_out, add_special and a == 0 and b == n, parse_special)


def explain_request(model: Model, text: str, req: WhyRequest) -> Explanation:
    """Run ``model.explain`` on the request's window (in a worker thread)."""
    return model.explain(text[req.start:req.end], add_special=req.add_special, parse_special=req.parse_special)


def window_note(req: WhyRequest, text_len: int) -> str:
    """What part of the text was explained, when not all of it."""
    notes: list[str] = []
    if req.left_out:
        notes.append(f"The selection is {req.sel_end - req.sel_start + req.left_out:,} characters long: "
                     f"its first {req.sel_end - req.sel_start:,} are explained.")
    if not req.whole(text_len):
        notes.append(f"Explained characters {req.start:,}–{req.end:,} of {text_len:,}: a window around the "
                     "selection (the whole text is explained up to "
                     f"{WHOLE_TEXT_CHARS:,} characters).")
    return " ".join(notes)


# ---- the parts of an explanation that touch the selection -----------------------------------------

@dataclass(frozen=True)
class WhyView:
    """The explanation's records that touch the selection ``[sel_start,
    sel_end)``, in window characters."""

    explanation: Explanation
    sel_start: int
    sel_end: int
    matched: tuple[SpecialMatch, ...]
    unmatched: tuple[SpecialUnmatched, ...]
    normalized: tuple[NormalizedFragment, ...]
    chunks: tuple[tuple[str, tuple[tuple[int, int], ...]], ...]
    """Per pre-tokenizer rule, its chunks that touch the selection."""
    pre_tokenizer: str
    algorithm: str
    words: tuple[Word, ...]
    post: PostStage


def _touches(a: int, b: int, s: int, e: int) -> bool:
    if b <= a:  # an empty span (an inserted ▁, a BOS) touches where it stands
        return s <= a <= e
    return a < e and s < b if e > s else a <= s < b


def view_for(ex: Explanation, req: WhyRequest) -> WhyView:
    """The records of ``ex`` (of the request's window) that touch the
    selection."""
    s, e = req.sel_start - req.start, req.sel_end - req.start
    special = ex.stage("special")
    norm = ex.stage("normalize")
    pre = ex.stage("pre_tokenize")
    model = ex.stage("model")
    post = ex.stage("post")
    assert isinstance(special, SpecialStage) and isinstance(norm, NormalizeStage)
    assert isinstance(pre, PreTokenizeStage) and isinstance(model, ModelStage) and isinstance(post, PostStage)
    chunks: list[tuple[str, tuple[tuple[int, int], ...]]] = []
    name = ""
    for frag in pre.fragments:
        if not _touches(frag.start, frag.end, s, e):
            continue
        name = frag.name
        for rule in frag.rules:
            chunks.append((rule.rule, tuple(c for c in rule.chunks if _touches(c[0], c[1], s, e))))
    return WhyView(
        ex, s, e,
        tuple(m for m in special.matched if _touches(m.start, m.end, s, e)),
        tuple(u for u in special.unmatched if _touches(u.start, u.start + len(u.text), s, e)),
        tuple(f for f in norm.fragments if _touches(f.start, f.end, s, e)),
        tuple(chunks), name, model.algorithm,
        tuple(w for w in model.words if _touches(w.start, w.end, s, e)),
        post)


def normalized_part(frag: NormalizedFragment, s: int, e: int) -> str:
    """The normalized characters of ``frag`` that come from the original
    characters ``[s, e)`` (an inserted character goes with what follows)."""
    out: list[str] = []
    for ch, (a, b) in zip(frag.normalized, frag.sources):
        if _touches(a, b, s, e):
            out.append(ch)
    return "".join(out)


# ---- merges, one at a time ----------------------------------------------------------------------

@dataclass(frozen=True)
class Replay:
    """A word's merge loop (BPE or SPM) to step through: its first symbols,
    the merges in the order applied, and the byte fallback at the end."""

    symbols: tuple[str, ...]
    merges: tuple[Merge, ...]
    fallbacks: tuple[ByteFallback, ...]
    symbol_bytes: tuple[bytes, ...] = ()
    """The bytes each first symbol stands for (byte-level BPE's glyphs are
    bytes; empty: read the symbols as text)."""

    @property
    def steps(self) -> int:
        """The slider's last position (all merges applied)."""
        return len(self.merges)

    def pieces_at(self, step: int) -> list[str]:
        """The symbols after the first ``step`` merges."""
        pieces = list(self.symbols)
        for m in self.merges[:max(0, min(step, len(self.merges)))]:
            pieces[m.position:m.position + 2] = [m.result]
        return pieces

    def labels_at(self, step: int) -> list[str]:
        """The symbols after ``step`` merges as a person reads them: their
        bytes as text (a byte-level ``Ġ`` is the space it stands for, a
        byte that is part of a character is ``\\xNN``)."""
        if len(self.symbol_bytes) != len(self.symbols):
            return self.pieces_at(step)
        parts = list(self.symbol_bytes)
        for m in self.merges[:max(0, min(step, len(self.merges)))]:
            parts[m.position:m.position + 2] = [parts[m.position] + parts[m.position + 1]]
        return [byte_label(b) for b in parts]

    def merged_at(self, step: int) -> int:
        """Which symbol the ``step``-th merge made (-1 for step 0)."""
        return self.merges[step - 1].position if 0 < step <= len(self.merges) else -1

    def describe(self, step: int) -> str:
        """The ``step``-th merge in words (step 0: where the loop starts)."""
        if step <= 0 or not self.merges:
            return f"{len(self.symbols)} symbols before any merge"
        step = min(step, len(self.merges))
        m = self.merges[step - 1]
        before = self.labels_at(step - 1)
        left, right = before[m.position], before[m.position + 1]
        why = (f"rank {m.rank:,}" if m.rank >= 0 else f"score {m.score:g}" if m.score is not None else "")
        return f"merge {step} of {len(self.merges)}: {left!r} + {right!r} → {left + right!r}" + (
            f" ({why})" if why else "")


def replay_for(word: Word) -> Replay | None:
    """The word's merges to replay, or None when its algorithm does not merge."""
    syms = next((s for s in word.steps if isinstance(s, Symbols)), None)
    if syms is None:
        return None
    return Replay(syms.texts, tuple(s for s in word.steps if isinstance(s, Merge)),
                  tuple(s for s in word.steps if isinstance(s, ByteFallback)),
                  tuple(bytes(b) for b in syms.byte_values))


def byte_label(data: bytes) -> str:
    """Bytes as readable text; bytes that are no whole character as ``\\xNN``."""
    return readable(data.decode("utf-8", "backslashreplace"))


# ---- Unigram: the lattice and its paths -----------------------------------------------------------

def lattice_of(word: Word) -> Lattice | None:
    return next((s for s in word.steps if isinstance(s, Lattice)), None)


def path_edges(lattice: Lattice, tokens: Sequence[int]) -> tuple[LatticeEdge, ...] | None:
    """The lattice edges a segmentation walks, left to right; None when
    ``tokens`` does not spell a path through it."""
    by_start: dict[tuple[int, int], LatticeEdge] = {}
    for edge in lattice.edges:
        by_start.setdefault((edge.start, edge.token), edge)
    out: list[LatticeEdge] = []
    pos = 0
    for t in tokens:
        step = by_start.get((pos, t))
        if step is None:
            return None
        out.append(step)
        pos = step.end
    return tuple(out) if pos == len(lattice.text) else None


def alternative_lines(model: Model, alts: Sequence[Alternative]) -> list[str]:
    """The k best segmentations, best first, with the score gap to the best."""
    if not alts:
        return []
    best = alts[0].score
    lines = []
    for k, alt in enumerate(alts):
        pieces = " ".join(model.display_piece(t) for t in alt.tokens)
        gap = "best" if k == 0 else f"{alt.score - best:+.3f}"
        lines.append(f"{k + 1}. {pieces}   score {alt.score:.3f} ({gap})")
    return lines


# ---- WordPiece: the longest-match search --------------------------------------------------------

def attempt_lines(word: Word) -> list[str]:
    """One line per position: the prefixes tried, longest first, and the one
    found (or that none was); then why the word became unknown, if it did."""
    lines: list[str] = []
    for step in word.steps:
        if isinstance(step, Attempt):
            tried = [c.text for c in step.candidates]
            if step.found and tried:
                head = f"at {step.position}: found {tried[-1]!r}"
                missed = tried[:-1]
            else:
                head = f"at {step.position}: no piece found"
                missed = tried
            if missed:
                shown = ", ".join(repr(t) for t in missed[:8]) + (" …" if len(missed) > 8 else "")
                head += f" after {len(missed)} longer tr{'ies' if len(missed) != 1 else 'y'} ({shown})"
            lines.append(head)
        elif isinstance(step, Unknown):
            lines.append(f"→ unknown token {step.token}: {step.reason}")
    return lines


# ---- the story, as rich text ------------------------------------------------------------------

def _code(text: str) -> str:
    return f"<code>{html.escape(readable(text))}</code>"


def plural(n: int, word: str) -> str:
    """``3 words``, ``1 word``."""
    return f"{n:,} {word}{'s' if n != 1 else ''}"


def story_html(view: WhyView, model: Model) -> str:
    """The stages that touch the selection, top to bottom (rich text for
    the panel)."""
    ex = view.explanation
    text = ex.text
    out: list[str] = []

    def section(n: int, title: str, body: list[str]) -> None:
        items = "".join(f"<li>{b}</li>" for b in body) or "<li style='color: gray'>none in the selection</li>"
        out.append(f"<p style='margin-bottom: 0'><b>{n}. {title}</b></p><ul style='margin-top: 2px'>{items}</ul>")

    def label(t: int) -> str:
        return f"{_code(model.display_piece(t))} <span style='color: gray'>{t}</span>"

    special = [f"{label(m.token)} matched at {m.match_start}" + (
        f", swallowing {_code(m.lstrip)} before" if m.lstrip else "") + (
        f", {_code(m.rstrip)} after" if m.rstrip else "") for m in view.matched]
    special += [f"{_code(u.text)} at {u.start} not matched: {html.escape(u.reason)}" for u in view.unmatched]
    section(1, "Special tokens" + ("" if ex.parse_special else " (parse special is off)"), special)

    norm: list[str] = []
    for f in view.normalized:
        part = normalized_part(f, view.sel_start, view.sel_end)
        norm.append(f"{_code(text[max(f.start, view.sel_start):min(f.end, view.sel_end)] or text[f.start:f.end])}"
                    f" → {_code(part)}" + "".join(f"<br><span style='color: gray'>{html.escape(n)}</span>"
                                                   for n in f.notes))
    section(2, "Normalizer", norm if view.normalized else ["the model does not normalize its text"])

    pre: list[str] = []
    for rule, chunks in view.chunks:
        shown = " ".join(_code(text[s:e]) for s, e in chunks[:24]) + (" …" if len(chunks) > 24 else "")
        pre.append(f"<span style='color: gray'>{html.escape(rule)}</span><br>{shown}")
    title = "Pre-tokenizer" + (f" ({html.escape(view.pre_tokenizer)})" if view.pre_tokenizer else "")
    section(3, title, pre if view.chunks else ["no pre-tokenizer rules: the model cuts words itself"])

    words = [f"{_code(w.text)} → " + " ".join(label(t) for t in w.tokens) for w in view.words[:60]]
    if len(view.words) > 60:
        words.append(f"… and {len(view.words) - 60:,} more words")
    section(4, f"Model ({html.escape(view.algorithm.upper())})", words)

    post = view.post
    ends = []
    if post.prefix:
        ends.append("before the text: " + " ".join(label(t) for t in post.prefix))
    if post.suffix:
        ends.append("after it: " + " ".join(label(t) for t in post.suffix))
    if not ends:
        ends.append("no BOS/EOS added" + ("" if ex.add_special else " (add special is off)"))
    ends.append(f"{plural(len(post.ids), 'id')} in all")
    section(5, "Post (BOS/EOS)", ends)
    return "<qt>" + "".join(out) + "</qt>"
