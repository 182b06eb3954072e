"""Metadata warnings: what in a GGUF's tokenizer metadata is likely stale
or wrong, judged from the file alone (no source tokenizer needed).

Each warning says what was seen and why it matters. The checks are chosen
to stay quiet on correct files: llama.cpp's reference vocabularies raise
only what is really there (the two converted before ``tokenizer.ggml.pre``
existed lack it, and aquila's ``<|endoftext|>`` is its BOS/EOS yet typed
NORMAL).
"""

from __future__ import annotations

from .. import Attr, Model
from .run import MetadataWarning

__all__ = ["metadata_warnings"]

# a BPE vocabulary trained behind a pre-tokenizer that cuts numbers into
# groups of at most three digits holds (nearly) all 1000 of them and none
# longer; one that cuts every digit apart holds no multi-digit piece; GPT-2's
# rule (llama.cpp's "default") keeps whole runs of digits, so long ones appear
_MIN_THREE_DIGIT = 500
_ID_KEYS = {"bos": "tokenizer.ggml.bos_token_id", "eos": "tokenizer.ggml.eos_token_id",
            "unk": "tokenizer.ggml.unknown_token_id", "sep": "tokenizer.ggml.seperator_token_id",
            "pad": "tokenizer.ggml.padding_token_id", "mask": "tokenizer.ggml.mask_token_id",
            "eot": "tokenizer.ggml.eot_token_id", "eom": "tokenizer.ggml.eom_token_id"}
_SPECIAL_NAMES = tuple(_ID_KEYS)
_SHOWN = 5


def _digit_rule(pieces: list[str]) -> str | None:
    """How the pieces say numbers were cut: ``"1-3"``, ``"1"``, or None
    (whole runs, or too few digits to tell)."""
    longest = 0
    three = singles = 0
    for p in pieces:
        core = p.lstrip("\u0120\u2581 ")
        if core.isascii() and core.isdigit():
            n = len(core)
            longest = max(longest, n)
            three += n == 3
            singles += n == 1
    if singles < 10:
        return None
    if longest == 3 and three >= _MIN_THREE_DIGIT:
        return "1-3"
    if longest == 1:
        return "1"
    return None


def _pre_warnings(model: Model) -> list[MetadataWarning]:
    vocab = model.vocab
    if vocab.model != "gpt2":
        return []
    pre = vocab.pre
    rule = _digit_rule(list(vocab.pieces))
    if pre and pre != "default":
        return []
    family = ""
    if "<|begin_of_text|>" in vocab.pieces:
        family = " (its <|begin_of_text|> token is llama-3's)"
    said = "missing" if not pre else "'default'"
    if rule == "1-3":
        return [MetadataWarning(
            "bpe_pre_stale",
            f"tokenizer.ggml.pre is {said}, but the vocabulary holds all three-digit numbers and no longer "
            f"ones, the mark of a pre-tokenizer that cuts numbers into groups of up to three as llama-3's "
            f"does{family}: llama.cpp falls back to GPT-2's rule and tokenizes numbers, spaces and "
            f"contractions differently from the original model (llama.cpp #7476); convert the model "
            f"again with a current converter (tokenizer.ggml.pre 'llama-bpe' for llama-3)")]
    if rule == "1":
        return [MetadataWarning(
            "bpe_pre_stale",
            f"tokenizer.ggml.pre is {said}, but the vocabulary has no multi-digit pieces, the mark of a "
            f"pre-tokenizer that splits every digit (qwen2, deepseek, starcoder...){family}: llama.cpp "
            f"falls back to GPT-2's rule, which keeps digit runs together, so numbers tokenize "
            f"differently from the original; convert the model again with a current converter")]
    if not pre:
        return [MetadataWarning(
            "bpe_pre_missing",
            "tokenizer.ggml.pre is missing (a conversion older than the key): llama.cpp uses GPT-2's "
            "pre-tokenizer and warns that generation quality may suffer; the vocabulary keeps digit runs "
            "like GPT-2, so this is probably right, but a current converter would record the rule")]
    return []


def _end_token_warnings(model: Model) -> list[MetadataWarning]:
    """add_bos/add_eos on, but the token they add is not named or named
    outside the vocabulary: llama.cpp then adds its built-in default id."""
    cfg, vocab = model.config, model.vocab
    meta = model.gguf.metadata
    out: list[MetadataWarning] = []
    n = len(vocab.pieces)
    for flag, name, on in (("add_bos", "bos", cfg.add_bos), ("add_eos", "eos", cfg.add_eos)):
        if not on or vocab.flags.get(flag) is not True:
            continue
        key = _ID_KEYS[name]
        entry = meta.get(key)
        used = cfg.special_ids.get(name)
        fallback = (f"llama.cpp adds its default id {used} ({vocab.pieces[used]!r}) instead, which may not be "
                    f"this model's {name.upper()}" if used is not None and 0 <= used < n
                    else "llama.cpp has no id to add")
        if entry is None:
            out.append(MetadataWarning(
                f"{flag}_without_token",
                f"tokenizer.ggml.{flag}_token is true but the file names no {name.upper()} token ({key} is "
                f"missing): {fallback}"))
        elif not isinstance(entry.value, int) or not 0 <= entry.value < n:
            out.append(MetadataWarning(
                f"{name}_token_out_of_range",
                f"tokenizer.ggml.{flag}_token is true but {key} is {entry.value!r}, outside the {n}-token "
                f"vocabulary: llama.cpp logs 'bad special token' and {fallback.removeprefix('llama.cpp ')}"))
    return out


# in SentencePiece-style vocabularies the share of word pieces (two or more
# characters, starting with a letter) that carry the U+2581 word marker:
# llama.cpp's reference vocabularies lie between 0.48 and 0.66 whatever
# their add_space_prefix; beyond these bounds the flag contradicts the pieces
_MARKED_MOST, _MARKED_FEW, _MIN_WORD_PIECES = 0.9, 0.1, 100


def _marked_share(model: Model) -> float | None:
    vocab = model.vocab
    words = marked = 0
    for piece, attr in zip(vocab.pieces, vocab.attrs):
        core = piece.lstrip("\u2581")
        if attr & Attr.NORMAL and len(core) >= 2 and core[0].isalpha():
            words += 1
            marked += piece != core
    return marked / words if words >= _MIN_WORD_PIECES else None


def _space_prefix_warnings(model: Model) -> list[MetadataWarning]:
    vocab = model.vocab
    if vocab.model in ("gpt2", "bert"):
        if vocab.flags.get("add_space_prefix") is True:
            return [MetadataWarning(
                "add_space_prefix_ignored",
                f"tokenizer.ggml.add_space_prefix is true on a {vocab.model} vocabulary, whose tokenizer never "
                f"adds a space prefix: the flag says the conversion expected SentencePiece-style pieces")]
        return []
    if vocab.model not in ("llama", "t5"):
        return []
    share = _marked_share(model)
    if share is None:
        return []
    if share >= _MARKED_MOST and vocab.flags.get("add_space_prefix") is False:
        return [MetadataWarning(
            "add_space_prefix_off",
            f"tokenizer.ggml.add_space_prefix is false, but {share:.0%} of the word pieces start with the "
            f"U+2581 word marker, as in a vocabulary trained with a space prefix: the first word of every "
            f"text then gets pieces without the marker and tokenizes differently from the original")]
    if share <= _MARKED_FEW and model.config.add_space_prefix:
        return [MetadataWarning(
            "add_space_prefix_unmarked",
            f"a space prefix is added (tokenizer.ggml.add_space_prefix is "
            f"{'true' if vocab.flags.get('add_space_prefix') else 'unset, true by default'}), but only "
            f"{share:.0%} of the word pieces start with the U+2581 word marker: the prefix makes the first "
            f"word's pieces ones the vocabulary hardly has")]
    return []


def _type_warnings(model: Model) -> list[MetadataWarning]:
    cfg, vocab = model.config, model.vocab
    attrs, pieces = vocab.attrs, vocab.pieces
    # only ids the file names: where it names none, llama.cpp's defaults
    # (11 for BPE) stand in, and those say nothing about the conversion
    meta = model.gguf.metadata
    wrong = sorted({(name, tid) for name, tid in cfg.special_ids.items()
                    if name in _SPECIAL_NAMES and _ID_KEYS[name] in meta
                    and 0 <= tid < len(attrs) and attrs[tid] & Attr.NORMAL},
                   key=lambda x: (x[1], x[0]))
    if not wrong:
        return []
    shown = ", ".join(f"{name} {tid} {pieces[tid]!r}" for name, tid in wrong)
    return [MetadataWarning(
        "control_typed_normal",
        f"special tokens typed NORMAL instead of CONTROL: {shown}. llama.cpp then treats their text as "
        f"ordinary text (tokenized piece by piece, printed when decoding) and may not stop generating at "
        f"them")]


def _unreachable_warnings(model: Model) -> list[MetadataWarning]:
    vocab = model.vocab
    if vocab.model != "gpt2":
        return []
    ranks = model.merge_ranks()
    if ranks is None:
        return []
    attrs = vocab.attrs
    special = {tid for name, tid in model.config.special_ids.items()
               if _ID_KEYS.get(name, "") in model.gguf.metadata}  # a typing problem, told by _type_warnings
    # llama.cpp's BPE starts from whole UTF-8 characters, so a
    # one-character piece is reachable without a merge; a longer one is
    # reachable only through the merge that forms it
    lost = [i for i, r in enumerate(ranks)
            if r < 0 and attrs[i] & Attr.NORMAL and i not in special and len(model.token_bytes(i).decode("utf-8", "replace")) > 1]
    if not lost:
        return []
    shown = ", ".join(f"{i} {vocab.pieces[i]!r}" for i in lost[:_SHOWN])
    more = f" and {len(lost) - _SHOWN} more" if len(lost) > _SHOWN else ""
    return [MetadataWarning(
        "unreachable_tokens",
        f"{len(lost)} NORMAL tokens are formed by no merge, so no text ever tokenizes to them: {shown}{more}. "
        f"Their pieces are not written in the byte-level alphabet, merges were lost in conversion, or they "
        f"should be typed USER_DEFINED/CONTROL")]


def metadata_warnings(model: Model) -> list[MetadataWarning]:
    """What looks stale or wrong in ``model``'s tokenizer metadata."""
    return (_pre_warnings(model) + _end_token_warnings(model) + _space_prefix_warnings(model)
            + _type_warnings(model) + _unreachable_warnings(model))
