"""What the window's check (Tokenize ▸ Check Against Source…) and the
compare view's source lanes need, without Qt: a source tokenizer ready to
be drawn as a lane, its analysis of a text, one whole check run (meant for
a worker thread) and the words the window shows for its results.

A lane draws tokens the way every view does, from an :class:`Analysis`,
which reads piece, type and score from a model. The source's own library
gives ids and spans only, so its pieces and types come from the same
vocabulary converted (``tokenprism convert``, into a temporary folder,
never beside the source): the lane's ids are the source library's, its
tooltips the source vocabulary's.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import threading
import time
from dataclasses import dataclass, replace
from typing import Callable, Sequence

from tokenprism.core import Encoding, Model, open_model
from tokenprism.core.check import (BUILTIN_TEXTS, CheckError, CheckResult, Divergence, Reference, check_texts,
                                   load_reference, random_texts)
from tokenprism.core.check.metadata import metadata_warnings
from tokenprism.core.check.run import ADVICE, bounded_call
from tokenprism.core.errors import TokenPrismError, printable
from tokenprism.core.formats.convert import load_vocab, write_gguf
from tokenprism.core.vocab import TokenType

from .analysis import Analysis, ModelInfo, analyze

__all__ = ["CheckOutcome", "SourceModel", "divergence_cells", "open_source", "run_check", "source_analysis",
           "summary_text", "window_texts"]

RANDOM_CASES = 200
"""Random texts a window check adds to the built-in set (the command line's default)."""
EDITOR_LINES = 200
"""At most this many of the editor's lines are checked too, each cut to ``EDITOR_LINE_CHARS``."""
EDITOR_LINE_CHARS = 2000
LANE_TIMEOUT_S = 10.0
"""A source library that takes longer on one text is given up (its lane says so)."""
SHOWN_CHARS = 60
"""A minimal string longer than this is cut in the list (the lanes show all of it)."""


@dataclass(frozen=True)
class SourceModel:
    """A source tokenizer (run by its own library) and its vocabulary as a
    model, for drawing its tokens."""

    ref: Reference
    info: ModelInfo

    @property
    def name(self) -> str:
        return os.path.basename(self.ref.path)


def _display_model(ref: Reference) -> Model:
    """The source's vocabulary converted to a GGUF in a temporary folder
    and opened; tokens the source knows beyond it (a folder's added tokens)
    are appended, so every id the library gives has a piece."""
    try:
        data = load_vocab(ref.path)
    except TokenPrismError as e:
        raise CheckError(f"{ref.path}: its tokens cannot be shown ({e})") from None
    pieces = ref.pieces()
    if len(pieces) > len(data.tokens):
        extra = tuple(p or f"<added {i}>" for i, p in enumerate(pieces[len(data.tokens):], len(data.tokens)))
        data = replace(data, tokens=data.tokens + extra,
                       types=data.types + (int(TokenType.USER_DEFINED),) * len(extra),
                       scores=None if data.scores is None else data.scores + (0.0,) * len(extra))
    folder = tempfile.mkdtemp(prefix="tokenprism-source-")
    try:
        path = os.path.join(folder, "source.gguf")
        write_gguf(data, path)
        return open_model(path)
    finally:
        # the opened model no longer needs its file (where the system keeps
        # an open file from being removed, the temporary folder stays)
        shutil.rmtree(folder, ignore_errors=True)


def open_source(path: str) -> SourceModel:
    """Load the source at ``path`` (a tokenizer.json, a .model, a folder or
    a Hugging Face cache folder) for drawing. Raises :class:`CheckError`."""
    ref = load_reference(path)
    return SourceModel(ref, ModelInfo(_display_model(ref)))


def source_analysis(source: SourceModel, text: str, add_special: bool, generation: int = 0) -> Analysis:
    """The source library's tokens of ``text`` as an :class:`Analysis` (for
    a worker thread)."""
    t0 = time.perf_counter()
    # a library stuck on a text must not hold the lane's thread (and the
    # window's closing) for good
    toks = bounded_call(lambda: source.ref.tokens(text, add_special), LANE_TIMEOUT_S,
                        f"{source.name} did not tokenize the text")
    n = len(source.info.attrs)
    bad = [i for i in toks.ids if not 0 <= i < n]
    if bad:
        raise CheckError(f"{source.ref.path}: token id {bad[0]} is outside its vocabulary of {n}")
    byte_starts, byte_ends = toks.byte_spans()
    enc = Encoding(text, source.info.model, tuple(toks.ids), tuple(toks.starts), tuple(toks.ends),
                   tuple(byte_starts), tuple(byte_ends), tuple(toks.groups), add_special=add_special,
                   parse_special=source.ref.parse_special)
    return analyze(enc, source.info, generation, (time.perf_counter() - t0) * 1000.0)


def window_texts(editor_text: str = "", cases: int = RANDOM_CASES, seed: int = 0) -> list[str]:
    """The texts a window check runs: the built-in set, seeded random
    text, and the editor's own lines (the user's text)."""
    own = [line[:EDITOR_LINE_CHARS] for line in editor_text.splitlines() if line.strip()][:EDITOR_LINES]
    return list(BUILTIN_TEXTS) + random_texts(cases, seed) + own


@dataclass(frozen=True)
class CheckOutcome:
    """One finished (or cancelled) check of the window."""

    result: CheckResult
    model: Model
    """The GGUF side."""
    source: SourceModel
    add_special: bool
    cancelled: bool


def run_check(model: Model, source_path: str, texts: Sequence[str], add_special: bool,
              progress: Callable[[int, int], None] | None = None, cancel: threading.Event | None = None,
              timeout: float = 5.0) -> CheckOutcome:
    """Load the source and check ``model`` against it (for a worker
    thread); ``cancel`` set stops between texts with what was found."""
    source = open_source(source_path)
    result = check_texts(model, source.ref, texts, add_special=add_special, timeout=timeout, progress=progress,
                         cancelled=cancel.is_set if cancel is not None else None)
    result.metadata_warnings = metadata_warnings(model)
    return CheckOutcome(result, model, source, add_special, cancel is not None and cancel.is_set())


def shown_text(text: str) -> str:
    """A minimal string as the list shows it: quoted, escapes visible, cut when long."""
    r = printable(repr(text))
    return r if len(r) <= SHOWN_CHARS else r[:SHOWN_CHARS - 1] + "…"


def tokens_text(ids: Sequence[int], model: Model) -> str:
    """``id 'piece'`` of each token, as a person reads the piece."""
    n = len(model)
    # display_piece already writes bytes and controls as visible escapes
    shown = [f"{i} '{printable(model.display_piece(i))}'" if 0 <= i < n else f"{i} ?" for i in ids]
    return "  ".join(shown) or "(none)"


def divergence_cells(d: Divergence, gguf: Model, source: SourceModel) -> tuple[str, str, str, str, str]:
    """(minimal string, stage, texts, GGUF tokens, source tokens) of one
    row; both sides' pieces read alike (the source's through its converted
    vocabulary), so a byte-level piece is not written Ġ on one side only."""
    return (shown_text(d.text), d.stage, f"{d.occurrences:,}", tokens_text(d.gguf_ids, gguf),
            tokens_text(d.reference_ids, source.info.model))


def divergence_tooltip(d: Divergence) -> str:
    """Why the check names this stage, what to do, and the text it came from."""
    return (f"stage: {d.stage}\nwhy: {printable(d.why)}\nto do: {ADVICE[d.stage]}\n"
            f"from: {shown_text(d.original_text)}")


def summary_text(outcome: CheckOutcome) -> str:
    """The line above the results."""
    r = outcome.result
    shared = f"{(r.shared or 0) * 100:.1f} % of pieces shared"
    note = f"; {r.source_note}" if r.source_note else ""
    head = f"{outcome.source.name} ({r.library}; {shared}{note}): "
    checked = f"{r.texts_checked:,} texts checked"
    if outcome.cancelled:
        checked += " before Cancel"
    n = len(r.divergences)
    if n == 0:
        found = "no divergence: the GGUF tokenizes them exactly like its source"
    else:
        found = f"{n} diverging minimal string{'s' if n != 1 else ''} (click one to see both tokenizations)"
    failed = f"; the source failed on {len(r.reference_failures)}" if r.reference_failures else ""
    return head + checked + ", " + found + failed
