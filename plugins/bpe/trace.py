"""Why BPE cut a fragment the way it did (``Model.explain``): each regex
rule of the pre-tokenizer with its chunks, then per word the merges in the
order applied, each with its rank.

Imported only when a trace is asked for (``BpeTokenizer.trace_fragment``),
and not compiled. The chunks come from the tokenizer's own splitter, run
one rule at a time; the merge loop is replayed here as llama.cpp's
``llm_tokenizer_bpe_session`` runs it (lowest rank first, leftmost on a
tie: ``merge_order``), recording each merge; the tokens are the
tokenizer's own.
"""

from __future__ import annotations

from typing import Mapping, Protocol, Sequence

from tokenprism.core.plugin_api import (ByteFallback, FragmentResult, FragmentTrace, Merge, NormalizedFragment,
                                        PieceIndex, PreTokenized, RuleChunks, Step, Symbols, Word, merge_order)

from .pretokenize import Splitter, collapse_text
from .ranks import RankTable, rank_of

ESCAPED_SPACE = "\u2581"


class WordResult(Protocol):
    @property
    def ids(self) -> list[int]: ...


class BpeTokenizer(Protocol):
    """What the trace reads of ``bpe.BpeTokenizer`` (which imports this
    module on first use; this one does not import it back)."""

    @property
    def escape(self) -> bool: ...
    @property
    def byte_encode(self) -> bool: ...
    @property
    def ignore_merges(self) -> bool: ...
    @property
    def newline_fix(self) -> bool: ...
    @property
    def check_space(self) -> bool: ...
    @property
    def pre_name(self) -> str: ...
    @property
    def t2i(self) -> PieceIndex: ...
    @property
    def splitter(self) -> Splitter: ...
    def encode_fragment(self, text: str, after_special: bool) -> FragmentResult: ...
    def units(self, text: str) -> list[str]: ...
    def word(self, word: str) -> WordResult: ...
    def rank_table(self) -> RankTable: ...


def trace_bpe(tok: BpeTokenizer, text: str, after_special: bool, glyphs: Sequence[str],
              by_merges: bool) -> FragmentTrace:
    """``tok.encode_fragment(text, after_special)`` replayed. ``glyphs``:
    GPT-2's glyph of each byte; ``by_merges``: the model cuts by regexes
    and merges (not a DNA or whitespace model).

    (Both passed in by the tokenizer: this module does not import ``bpe``.)"""
    normalized = None
    if tok.escape:
        normalized = NormalizedFragment(0, len(text), text, text.replace(" ", ESCAPED_SPACE),
                                        tuple((i, i + 1) for i in range(len(text))), ("spaces become ▁",))
    if not by_merges:
        # DNA and whitespace models cut by hand-written rules, not merges:
        # their tokens, without steps
        ids = tuple(tok.encode_fragment(text, after_special).ids)
        return FragmentTrace("bpe", normalized, None, (Word(text, 0, len(text), ids),) if text else ())
    words: list[Word] = []
    to_byte = {g: b for b, g in enumerate(glyphs)}
    at = 0
    for unit in tok.units(text):
        res = tok.word(unit)
        steps = merge_steps(tok, unit, res.ids, glyphs, to_byte)
        words.append(Word(_model_text(tok, unit), at, at + len(unit), tuple(res.ids), tuple(steps)))
        at += len(unit)
    return FragmentTrace("bpe", normalized, pre_tokenized(tok, text), tuple(words))


def pre_tokenized(tok: BpeTokenizer, text: str) -> PreTokenized:
    """The chunks after each regex rule of the splitter, in order: each
    rule splits the chunks the rules before it left (empty ones dropped)."""
    splitter = tok.splitter
    # escaped vocabularies split the text with spaces as ▁ (the same length)
    seen = text.replace(" ", ESCAPED_SPACE) if tok.escape else text
    ctext = (collapse_text(splitter.tab.collapse_bytes(), seen)
             if splitter.collapses and not seen.isascii() else seen)
    chunks = [(0, len(text))] if text else []
    rules: list[RuleChunks] = []
    for st in splitter.stages:
        nxt: list[tuple[int, int]] = []
        for a, b in chunks:
            ends: list[int] = [a]
            splitter.split_piece(st, ctext if st.collapsed else seen, a, b, ends)
            nxt.extend((ends[k], ends[k + 1]) for k in range(len(ends) - 1) if ends[k + 1] > ends[k])
        chunks = nxt
        rules.append(RuleChunks(st.source, tuple(chunks)))
    return PreTokenized(0, len(text), tok.pre_name, tuple(rules))


def _model_text(tok: BpeTokenizer, unit: str) -> str:
    return unit.replace(" ", ESCAPED_SPACE) if tok.escape else unit


def merge_steps(tok: BpeTokenizer, unit: str, ids: list[int], glyphs: Sequence[str],
                to_byte: Mapping[str, int]) -> list[Step]:
    """The first symbols of the word ``unit`` (byte-level glyphs, or
    characters), each merge in order with its rank, then the bytes of each
    final symbol that is no token (their tokens taken from ``ids``).
    ``to_byte``: the byte of each glyph."""
    t2i = tok.t2i
    if tok.byte_encode:
        raw = unit.encode("utf-8", "surrogatepass")
        syms = [glyphs[b] for b in raw]
    else:
        syms = list(_model_text(tok, unit))
    if not syms:
        return []
    whole = "".join(syms)
    if tok.ignore_merges or (not tok.byte_encode and tok.newline_fix and whole.strip("\n") == ""):
        tid = t2i.find(whole)
        if tid >= 0:
            # a word that is a token is not merged (llama.cpp's ignore_merges)
            return [Symbols((whole,), (tid,), (_symbol_bytes(tok, whole, to_byte),))]
    steps: list[Step] = [Symbols(tuple(syms), tuple(t2i.find(s) for s in syms),
                                 tuple(_symbol_bytes(tok, s, to_byte) for s in syms))]
    table = tok.rank_table()

    def priority(left: str, right: str) -> int | None:
        if tok.check_space and (" " in left or " " in right):
            return None
        r = rank_of(table, table.ranks, left + " " + right)
        return None if r < 0 else r

    for pos, left, right, rank in merge_order(syms, priority):
        steps.append(Merge(left, right, left + right, t2i.find(left + right), pos, rank=rank))
    at = 0
    for s in syms:
        if t2i.find(s) >= 0:
            at += 1
            continue
        data = _symbol_bytes(tok, s, to_byte)
        n = sum(1 for t in _fallback_texts(tok, s) if t2i.find(t) >= 0)
        steps.append(ByteFallback(s, data, tuple(ids[at:at + n])))
        at += n
    return steps


def _symbol_bytes(tok: BpeTokenizer, s: str, to_byte: Mapping[str, int]) -> tuple[int, ...]:
    """The bytes a symbol stands for: its glyphs' bytes (byte-level), else
    its UTF-8 (an escaped ▁ standing for a space)."""
    if tok.byte_encode:
        return tuple(to_byte[c] for c in s)
    return tuple(s.replace(ESCAPED_SPACE, " ").encode("utf-8", "surrogatepass") if tok.escape
                 else s.encode("utf-8", "surrogatepass"))


def _fallback_texts(tok: BpeTokenizer, s: str) -> list[str]:
    """The pieces llama.cpp looks up, one per byte, for a final symbol no
    token spells (a missing one is dropped): byte-level, each UTF-8 byte of
    the glyphs as a raw byte piece; else ``<0xNN>``."""
    if tok.byte_encode:
        return [chr(b) if b < 0x80 else chr(0xDC00 + b) for b in s.encode("utf-8", "surrogateescape")]
    return [f"<0x{b:02X}>" for b in s.encode("utf-8", "surrogatepass")]
