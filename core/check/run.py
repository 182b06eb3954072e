"""Running a check: both tokenizers on the same texts, each divergence
shrunk to a minimal string and put down to the stage at fault.

The stage is decided by running stages separately, never by looking at
the text: the BOS/EOS rule by encoding again without them, added and
special tokens by comparing where each side matched them, the normalizer
by feeding one side's normalized text to the other, the pre-tokenizer by
comparing the words each side cut, byte fallback by the kind of the
tokens that differ, and what is left (same words, different ids) is the
model's.
"""

from __future__ import annotations

import threading
from collections import Counter
from dataclasses import dataclass, field, replace
from typing import Any, Callable, Sequence, TypeVar

from .. import Attr, Model
from .reference import CheckError, Reference
from .shrink import shrink

__all__ = ["STAGES", "CheckResult", "Divergence", "MetadataWarning", "ReferenceFailure", "bounded_call",
           "check_texts", "shared_fraction"]

STAGES = ("normalizer", "pre_tokenizer", "special_tokens", "bos_eos", "added_tokens", "byte_fallback", "model",
          "unknown")
#: below this share of identical pieces the source is not the GGUF's
MIN_SHARED = 0.5

ADVICE = {
    "normalizer": "the source normalizes text differently (its normalizer was not carried into the GGUF, or "
                  "the GGUF applies one the source does not); convert again, or expect these characters to differ",
    "pre_tokenizer": "the text is cut into words differently: the GGUF's tokenizer.ggml.pre names another "
                     "split rule than the source's pre-tokenizer; convert again with the right pre-tokenizer",
    "special_tokens": "a special token is matched on one side only; check its token type (CONTROL) and the "
                      "source's added_tokens",
    "added_tokens": "an added token is matched on one side only; it is missing from the GGUF or typed NORMAL "
                    "instead of USER_DEFINED",
    "bos_eos": "the sides differ only in the BOS/EOS they add: the GGUF's add_bos_token/add_eos_token "
               "disagree with the source's post-processor or tokenizer_config.json",
    "byte_fallback": "characters outside the vocabulary become byte tokens on one side and something else "
                     "(<unk>, other bytes) on the other: a byte token is missing or byte_fallback differs",
    "model": "same words on both sides but different tokens: merges, scores or piece ids differ",
    "unknown": "no single stage explains it; compare the two tokenizations by hand",
}


@dataclass(frozen=True)
class Divergence:
    """One minimal diverging string."""

    text: str
    original_text: str
    gguf_ids: list[int]
    reference_ids: list[int]
    stage: str
    why: str = ""
    occurrences: int = 1
    #: the source's pieces of ``reference_ids``, as its vocabulary writes them
    reference_pieces: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {"text": self.text, "original_text": self.original_text, "gguf_ids": self.gguf_ids,
                "reference_ids": self.reference_ids, "stage": self.stage, "why": self.why,
                "occurrences": self.occurrences, "reference_pieces": self.reference_pieces}


@dataclass(frozen=True)
class MetadataWarning:
    code: str
    message: str

    def to_json(self) -> dict[str, str]:
        return {"code": self.code, "message": self.message}


@dataclass(frozen=True)
class ReferenceFailure:
    """A text the reference library raised on or did not finish in time."""

    text: str
    error: str

    def to_json(self) -> dict[str, str]:
        return {"text": self.text, "error": self.error}


@dataclass
class CheckResult:
    model_path: str
    source_path: str | None
    library: str | None
    texts_checked: int = 0
    divergences: list[Divergence] = field(default_factory=list)
    metadata_warnings: list[MetadataWarning] = field(default_factory=list)
    reference_failures: list[ReferenceFailure] = field(default_factory=list)
    shared: float | None = None
    #: how the source file was picked (a Hugging Face cache's snapshot), or ""
    source_note: str = ""

    def to_json(self) -> dict[str, Any]:
        return {"model": self.model_path, "source": self.source_path, "source_note": self.source_note,
                "library": self.library,
                "texts_checked": self.texts_checked, "shared_pieces": self.shared,
                "divergences": [d.to_json() for d in self.divergences],
                "metadata_warnings": [w.to_json() for w in self.metadata_warnings],
                "reference_failures": [f.to_json() for f in self.reference_failures]}


class _Failed(Exception):
    pass


T = TypeVar("T")


def bounded_call(fn: Callable[[], T], timeout: float, what: str) -> T:
    """``fn()``, given up after ``timeout`` seconds like every reference
    call of a check; a failure or a hang is a :class:`CheckError` naming
    ``what``."""
    try:
        return _bounded(fn, timeout)
    except _Failed as e:
        raise CheckError(f"{what}: {e}") from None


def _bounded(fn: Callable[[], T], timeout: float) -> T:
    """``fn()`` in a thread of its own, given up after ``timeout`` seconds
    (a library stuck in native code cannot be stopped, only left behind:
    the thread is a daemon and the check goes on)."""
    box: list[Any] = []

    def run() -> None:
        try:
            box.append(("ok", fn()))
        except BaseException as e:  # a library's own error types: reported, not raised
            box.append(("error", f"{type(e).__name__}: {e}"))

    t = threading.Thread(target=run, daemon=True, name="tokenprism-check-reference")
    t.start()
    t.join(timeout)
    if not box:
        raise _Failed(f"no answer within {timeout:g} s")
    kind, value = box[0]
    if kind == "error":
        raise _Failed(str(value))
    result: T = value
    return result


def _piece_key(piece: str) -> str:
    # the GGUF's WordPiece layout marks word starts with U+2581 where the
    # source marks continuations with ##; byte-level and SentencePiece
    # pieces are written alike on both sides
    return piece.removeprefix("##").replace("\u2581", "")


def shared_fraction(model: Model, ref: Reference) -> float:
    """The share of the GGUF's ids whose piece the source has under the
    same id."""
    ours, theirs = model.vocab.pieces, ref.pieces()
    n = len(ours)
    if n == 0:
        return 0.0
    same = sum(1 for i in range(min(n, len(theirs))) if _piece_key(ours[i]) == _piece_key(theirs[i]))
    return same / n


class _Sides:
    """Both tokenizers, with the reference's calls bounded and cached."""

    def __init__(self, model: Model, ref: Reference, timeout: float) -> None:
        self.model, self.ref, self.timeout = model, ref, timeout
        self._cache: dict[tuple[str, bool], list[int] | None] = {}
        self.failures: list[ReferenceFailure] = []

    def gguf(self, text: str, add_special: bool) -> list[int]:
        return self.model.encode(text, add_special=add_special, parse_special=self.ref.parse_special).ids

    def reference(self, text: str, add_special: bool, report: bool = False) -> list[int] | None:
        key = (text, add_special)
        if key not in self._cache:
            try:
                self._cache[key] = _bounded(lambda: self.ref.encode(text, add_special), self.timeout)
            except _Failed as e:
                self._cache[key] = None
                if report:
                    self.failures.append(ReferenceFailure(text, str(e)))
        return self._cache[key]

    def diverges(self, text: str, add_special: bool) -> bool:
        theirs = self.reference(text, add_special)
        return theirs is not None and theirs != self.gguf(text, add_special)

    # ---- the GGUF side's stages --------------------------------------------

    def gguf_normalized(self, text: str) -> str:
        """The GGUF's normalizer output as text (U+2581 back to spaces,
        without the space prefix SPM/UGM add)."""
        model = self.model
        out = model.normalized(text)
        if model.kind in ("SPM", "UGM") or "\u2581" in out and "\u2581" not in text:
            out = out.replace("\u2581", " ")
            if model.config.add_space_prefix and out.startswith(" ") and not text.startswith(" "):
                out = out[1:]
        return out

    def gguf_words(self, text: str) -> list[str] | None:
        """The words the GGUF's pre-tokenizer cuts, or None when its
        tokenizer does not show them (SPM and UGM have no such stage)."""
        tok: Any = self.model.tokenizer
        words: list[str] = []
        splitter = getattr(tok, "splitter", None)
        split = getattr(splitter, "split", None) or getattr(tok, "words", None)
        if split is None:
            return None
        for frag in self.model.fragments(text, self.ref.parse_special):
            if frag.token < 0:
                words.extend(w for w in split(text[frag.start:frag.end]) if w)
        return words

    def reference_words(self, text: str) -> list[str] | None:
        words: list[str] = []
        for frag in self.model.fragments(text, self.ref.parse_special):
            if frag.token < 0:
                part = self.ref.words(text[frag.start:frag.end])
                if part is None:
                    return None
                words.extend(w for w in part if w)
        return words


def _special_ids(sides: _Sides, text: str) -> tuple[list[int], list[int]]:
    """The added/special tokens each side matched in ``text``, in order."""
    # an added token's id counts where its text is in the text: <unk> and
    # the like also come out of the model itself
    ref_added = {t.id for t in sides.ref.added_tokens() if t.content and t.content in text}
    ours = [f.token for f in sides.model.fragments(text, sides.ref.parse_special) if f.token >= 0]
    theirs = [i for i in (sides.reference(text, False) or []) if i in ref_added]
    return ours, theirs


def _byte_piece_missing(model: Model, ref: Reference, token_id: int) -> bool:
    """Whether ``token_id`` is one of a byte-level vocabulary's 256 byte
    tokens (a piece of one byte: its byte fallback) that the source lacks."""
    if model.vocab.model != "gpt2" or not 0 <= token_id < len(model.vocab.pieces):
        return False
    if len(model.token_bytes(token_id)) != 1:
        return False
    theirs = ref.pieces()
    return not (token_id < len(theirs) and _piece_key(theirs[token_id]) == _piece_key(model.vocab.pieces[token_id]))


def classify(sides: _Sides, text: str, add_special: bool) -> tuple[str, str]:
    """(stage, why) for a diverging ``text``."""
    model, ref = sides.model, sides.ref
    if add_special:
        plain_ref = sides.reference(text, False)
        if plain_ref is not None and plain_ref == sides.gguf(text, False):
            return "bos_eos", "the ids agree once BOS/EOS are left out"
    ours = sides.gguf(text, False)
    theirs = sides.reference(text, False)
    if theirs is None:
        return "unknown", "the reference failed on the text without BOS/EOS"
    if ours == theirs:
        return "bos_eos", "the ids agree once BOS/EOS are left out"

    matched_ours, matched_theirs = _special_ids(sides, text)
    if matched_ours != matched_theirs:
        specials = {t.id for t in ref.added_tokens() if t.special}
        odd = set(matched_ours) ^ set(matched_theirs)
        attrs = model.vocab.attrs
        special = any(i in specials or (0 <= i < len(attrs) and attrs[i] & Attr.CONTROL) for i in odd)
        return (("special_tokens" if special else "added_tokens"),
                f"matched as whole tokens: GGUF {matched_ours}, source {matched_theirs}")

    # both sides matched the same whole tokens: when the text between them
    # diverges on its own too, that piece of text tells the stage
    frags = model.fragments(text, ref.parse_special)
    if len(frags) > 1:
        for f in frags:
            part = text[f.start:f.end]
            if f.token < 0 and sides.diverges(part, False):
                stage, why = classify(sides, part, False)
                return stage, f"in {part!r}, next to the special tokens: {why}"

    ref_norm = ref.normalized(text)
    if ref_norm is not None and ref_norm != text and sides.gguf(ref_norm, False) == theirs:
        return "normalizer", f"the source normalizes it to {ref_norm!r}; the GGUF does not"
    ours_norm = sides.gguf_normalized(text)
    if ours_norm != text and ours_norm != ref_norm and sides.reference(ours_norm, False) == ours:
        return "normalizer", f"the GGUF normalizes it to {ours_norm!r}; the source does not"
    if ref_norm is not None and ours_norm != ref_norm and model.kind in ("SPM", "UGM"):
        return "normalizer", f"normalized: GGUF {ours_norm!r}, source {ref_norm!r}"

    our_words, their_words = sides.gguf_words(text), sides.reference_words(text)
    if our_words is not None and their_words is not None and our_words != their_words:
        why = f"words: GGUF {our_words}, source {their_words}"
        # the other way round: the source's model alone on the GGUF's words
        words = our_words
        try:
            confirmed = _bounded(lambda: ref.encode_words(words) or [], sides.timeout) == ours
        except _Failed:
            confirmed = False
        if confirmed:
            why += "; the source's model on the GGUF's words gives the GGUF's ids"
        return "pre_tokenizer", why

    attrs = model.vocab.attrs
    odd_ids = (Counter(ours) - Counter(theirs)) + (Counter(theirs) - Counter(ours))
    for i in odd_ids:
        gguf_byte = 0 <= i < len(attrs) and bool(attrs[i] & (Attr.BYTE | Attr.UNKNOWN))
        if gguf_byte or ref.is_byte(i) or ref.is_unknown(i):
            return "byte_fallback", "the differing tokens are byte or unknown tokens"
        if _byte_piece_missing(model, ref, i):
            return "byte_fallback", (f"the GGUF's byte token {i} {model.vocab.pieces[i]!r} is missing from the "
                                     f"source, whose model drops (or replaces) that byte")
    if our_words is not None and their_words is not None or model.kind in ("SPM", "UGM"):
        return "model", "the same words (normalized alike) become different tokens"
    return "unknown", "normalizer and special tokens agree; the words could not be compared"


def check_texts(model: Model, ref: Reference, texts: Sequence[str], add_special: bool = False,
                timeout: float = 5.0, progress: Callable[[int, int], None] | None = None,
                cancelled: Callable[[], bool] | None = None) -> CheckResult:
    """Run ``texts`` through both sides and return the shrunk, classified
    divergences (one per distinct minimal string and stage)."""
    result = CheckResult(model.path, ref.path, ref.library, source_note=ref.note)
    shared = shared_fraction(model, ref)
    result.shared = round(shared, 4)
    if shared < MIN_SHARED:
        raise CheckError(f"these are not the same vocabulary: {shared:.0%} of pieces shared "
                         f"between {model.path} and {ref.path}")
    sides = _Sides(model, ref, timeout)
    found: dict[tuple[str, str], Divergence] = {}
    for k, text in enumerate(texts):
        if progress is not None:
            progress(k, len(texts))
        # asked after the report: a cancel made while it was shown stops here
        if cancelled is not None and cancelled():
            break
        theirs = sides.reference(text, add_special, report=True)
        result.texts_checked += 1
        if theirs is None or theirs == sides.gguf(text, add_special):
            continue
        small = shrink(text, lambda s: sides.diverges(s, add_special))
        stage, why = classify(sides, small, add_special)
        key = (small, stage)
        if key in found:
            d = found[key]
            found[key] = replace(d, occurrences=d.occurrences + 1)
            continue
        theirs_small = sides.reference(small, add_special) or []
        pieces = ref.pieces()
        found[key] = Divergence(small, text, sides.gguf(small, add_special), theirs_small, stage, why,
                                reference_pieces=[pieces[i] if 0 <= i < len(pieces) else "?" for i in theirs_small])
    if progress is not None:
        progress(result.texts_checked, len(texts))
    result.divergences = list(found.values())
    result.reference_failures = sides.failures
    return result
