"""The ``tokenprism explain`` subcommand: every stage of the tokenizer,
replayed for one text (``Model.explain``).

    tokenprism explain model.gguf "naïve 12345"
    tokenprism explain model.gguf "<s>Hi" --add-special --parse-special --format json

The text format is a story read top to bottom: special tokens, normalizer,
pre-tokenizer, the model's steps per word, BOS/EOS and the final ids.
``--format json`` prints ``Explanation.to_json()``: ``{"ids": [...],
"stages": [{"name": ..., ...}, ...]}``.
"""

from __future__ import annotations

import argparse
import json
import os
from typing import TYPE_CHECKING, Any, Sequence

if TYPE_CHECKING:
    from tokenprism.core import Model
    from tokenprism.core.explain import (Explanation, ModelStage, NormalizeStage, PreTokenizeStage, SpecialStage,
                                         Word)

EXPLAIN_FORMATS = ("text", "json")
DEFAULT_MAX_CHARS = 20_000  # (core.model.EXPLAIN_MAX_CHARS; not imported: the parser is built for every command)
CEILING = 50_000  # core.model.EXPLAIN_CEILING: the most --max-chars allows (a trace's memory grows with the text)


def add_parser(subparsers: Any) -> None:
    """Add ``explain MODEL TEXT ...`` to an ``add_subparsers()`` object."""
    s = subparsers.add_parser(
        "explain", help="show why a text is cut into its tokens, stage by stage",
        description="Replay every stage of the tokenizer for TEXT: the special tokens matched (and why "
                    "others were not), the normalizer with each character's source, the pre-tokenizer's "
                    "regex rules and their chunks, per word the model's steps (BPE merges by rank, SPM "
                    "merges by score and byte fallback, the Unigram lattice with the best and next-best "
                    "segmentations, WordPiece's longest-match attempts), then BOS/EOS and the final ids, "
                    "which are exactly those of `tokenprism tokenize`.")
    s.add_argument("model", metavar="MODEL.gguf")
    s.add_argument("text")
    s.add_argument("--add-special", action="store_true", help="add BOS/EOS as the model asks")
    s.add_argument("--parse-special", action="store_true", help="turn special-token text into special tokens")
    s.add_argument("--format", choices=EXPLAIN_FORMATS, default="text", help="text (default) or json")
    s.add_argument("--max-chars", type=int, default=DEFAULT_MAX_CHARS, metavar="N",
                   help=f"refuse a text longer than N characters (default {DEFAULT_MAX_CHARS:,}, at most "
                        f"{CEILING:,}): a trace holds every step of every word")
    s.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    # imported here: the command line's parser is built for every command
    from tokenprism.core import open_model
    from tokenprism.core.errors import TokenPrismError

    if args.max_chars < 1:
        raise TokenPrismError(f"--max-chars must be 1 or more, not {args.max_chars}")
    if args.max_chars > CEILING:
        # refused before reading anything: ~9 KB of memory per character would be allowed otherwise
        raise TokenPrismError(f"--max-chars is at most {CEILING:,} (not {args.max_chars:,}): a trace's memory grows "
                              "with the text; explain a part of it")
    text = str(args.text)
    if len(text) > args.max_chars:
        # refused before the model is opened: nothing to wait for
        raise TokenPrismError(f"the text has {len(text):,} characters; explain takes at most {args.max_chars:,} "
                       "(--max-chars N allows more)")
    if not os.path.isfile(args.model):
        raise TokenPrismError(f"{args.model}: no such file")
    model = open_model(args.model)
    ex = model.explain(text, add_special=args.add_special, parse_special=args.parse_special,
                       max_chars=args.max_chars)
    if args.format == "json":
        print(json.dumps(ex.to_json(), ensure_ascii=False, indent=1))
    else:
        print("\n".join(render_text(model, ex)))
    return 0


# ---- the text story -----------------------------------------------------------------------------

def render_text(model: Model, ex: Explanation) -> list[str]:
    """The stages as lines a person reads top to bottom."""
    from tokenprism.core.explain import ModelStage, NormalizeStage, PreTokenizeStage, SpecialStage

    out = [f"model: {model.name} ({model.kind}, plugin {model.spec.name})",
           f"text:  {_q(ex.text)} ({len(ex.text)} characters; add_special={ex.add_special}, "
           f"parse_special={ex.parse_special})"]
    for stage in ex.stages:
        out.append("")
        if isinstance(stage, SpecialStage):
            out += _special(model, ex.text, stage)
        elif isinstance(stage, NormalizeStage):
            out += _normalize(stage)
        elif isinstance(stage, PreTokenizeStage):
            out += _pre_tokenize(ex.text, stage)
        elif isinstance(stage, ModelStage):
            out += _model(model, stage)
        else:
            out.append("5. post: special tokens around the text")
            out.append(f"   before: {_ids(model, stage.prefix)}")
            out.append(f"   after:  {_ids(model, stage.suffix)}")
            out.append(f"   ids:    {' '.join(map(str, stage.ids)) or '(none)'}")
    return out


def _special(model: Model, text: str, st: SpecialStage) -> list[str]:
    out = ["1. special tokens (llama.cpp's order: longest text first, each left to right)"]
    for m in st.matched:
        swallowed = "".join(f", {side} swallowed {_q(s)}" for side, s in (("lstrip", m.lstrip), ("rstrip", m.rstrip))
                            if s)
        out.append(f"   matched {_q(m.text)} id {m.token} at [{m.match_start}:{m.match_end}){swallowed}")
    for u in st.unmatched:
        out.append(f"   not matched {_q(u.text)} id {u.token} at {u.start}: {u.reason}")
    if not st.matched and not st.unmatched:
        out.append("   none in this text")
    cut = " | ".join(f"{_q(text[a:b])}" + (f"=<{t}>" if t >= 0 else "") for a, b, t in st.fragments)
    out.append(f"   fragments: {cut or '(empty text)'}")
    return out


def _normalize(st: NormalizeStage) -> list[str]:
    out = ["2. normalizer"]
    if not st.fragments:
        out.append("   none: the model sees the text as it is")
    for f in st.fragments:
        out.append(f"   [{f.start}:{f.end}) {_q(f.text)} -> {_q(f.normalized)}")
        if f.notes:
            out.append(f"     ({'; '.join(f.notes)})")
        changed = [(c, (a, b)) for c, (a, b) in zip(f.normalized, f.sources) if f.text[a - f.start:b - f.start] != c]
        if changed:
            out.append("     not one for one: " + " ".join(f"{_q(c)}<-[{a}:{b})" for c, (a, b) in changed[:40])
                       + (" …" if len(changed) > 40 else ""))
    return out


def _pre_tokenize(text: str, st: PreTokenizeStage) -> list[str]:
    out = ["3. pre-tokenizer"]
    if not st.fragments:
        out.append("   none: the model splits its words itself")
    for f in st.fragments:
        out.append(f"   [{f.start}:{f.end}) pre-tokenizer {f.name!r}, {len(f.rules)} rule(s) in turn")
        for k, r in enumerate(f.rules, 1):
            out.append(f"   rule {k}: {_q(r.rule)}")
            out.append("     chunks: " + " ".join(_q(text[a:b]) for a, b in r.chunks))
    return out


def _model(model: Model, st: ModelStage) -> list[str]:
    out = [f"4. model ({st.algorithm}): {len(st.words)} word(s)"]
    for w in st.words:
        out.append(f"   word {_q(w.text)} [{w.start}:{w.end}) -> {_ids(model, w.tokens)}")
        out += _steps(model, w)
    return out


def _steps(model: Model, w: Word) -> list[str]:
    from tokenprism.core.explain import Attempt, ByteFallback, Lattice, Merge, Symbols, Unknown

    out: list[str] = []
    shown: list[bytes] = []  # each symbol's bytes, followed through the merges
    for s in w.steps:
        if isinstance(s, Symbols):
            shown = [bytes(b) for b in s.byte_values]
            whole = " (the word is a token as a whole: not merged)" if len(s.texts) == 1 and len(s.texts[0]) > 1 \
                else ""
            out.append("     symbols: " + " ".join(_q(t) for t in s.texts) + whole)
            if any(_as_text(b) != t for b, t in zip(shown, s.texts)):
                out.append("     as bytes: " + " ".join(_q(_as_text(b)) for b in shown))
        elif isinstance(s, Merge):
            how = f"rank {s.rank}" if s.score is None else f"score {s.score:g}"
            as_bytes = ""
            if s.position + 1 < len(shown):
                joined = shown[s.position] + shown[s.position + 1]
                shown[s.position:s.position + 2] = [joined]
                if _as_text(joined) != s.result:
                    as_bytes = f" (bytes {_q(_as_text(joined))})"
            out.append(f"     merge at {s.position}: {_q(s.left)} + {_q(s.right)} -> {_q(s.result)} "
                       f"id {s.result_id}, {how}{as_bytes}")
        elif isinstance(s, ByteFallback):
            out.append(f"     byte fallback: {_q(s.text)} is no piece -> bytes "
                       f"{' '.join(f'{b:02X}' for b in s.byte_values)} -> {_ids(model, s.tokens)}")
        elif isinstance(s, Lattice):
            out += _lattice(s)
        elif isinstance(s, Attempt):
            tried = ", ".join(f"{_q(c.text)}{'✓' if c.token >= 0 else '✗'}" for c in s.candidates)
            # llama.cpp's WPM marks word starts with ▁; BERT's files mark the rest with ##
            where = "word start" if s.position == 0 else "## continuation"
            out.append(f"     at {s.position} ({where}): {tried}")
        elif isinstance(s, Unknown):
            out.append(f"     unknown ({s.token}): {s.reason}")
    if w.alternatives:
        for k, a in enumerate(w.alternatives, 1):
            gap = "best" if k == 1 else f"gap {a.gap:.4g}"
            out.append(f"     {k}. {_ids(model, a.tokens)} score {a.score:.6g} ({gap})")
    return out


def _lattice(s: Any) -> list[str]:
    out = [f"     lattice of {_q(s.text)}: the pieces starting at each position (score)"]
    by_start: dict[int, list[str]] = {}
    for e in s.edges:
        by_start.setdefault(e.start, []).append(f"{_q(e.piece)}:{e.score:.4g}")
    for pos in sorted(by_start):
        out.append(f"       {pos}: " + " ".join(by_start[pos]))
    return out


def _ids(model: Model, ids: Sequence[int]) -> str:
    return " ".join(f"{t}:{_q(model.display_piece(t))}" for t in ids) or "(none)"


def _as_text(b: bytes) -> str:
    return b.decode("utf-8", "backslashreplace")


def _q(s: str) -> str:
    from tokenprism.core.errors import printable

    return "'" + printable(s) + "'" if s.isprintable() and "'" not in s else printable(repr(s))
