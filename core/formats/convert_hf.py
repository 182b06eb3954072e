"""Reading Hugging Face ``tokenizer.json`` files for :mod:`.convert`.

``model.type`` decides the GGUF tokenizer: byte-level ``BPE`` becomes
``gpt2`` (with its merges and a ``tokenizer.ggml.pre`` chosen by comparing
the pre-tokenizer regex with known ones), ``WordPiece`` becomes ``bert``
(pieces in llama.cpp's phantom-space form), ``Unigram`` becomes ``t5``.
Special tokens and BOS/EOS flags come from ``tokenizer_config.json`` beside
a file called ``tokenizer.json``, else from the post-processor template and
the conventional token texts. The JSON is never trusted: every value is
type-checked and a bad one raises :class:`~.convert.ConvertError` naming the
file and the JSON path.

>>> read_tokenizer_json(Path("gpt2/tokenizer.json"), None).pre
'gpt-2'
"""

from __future__ import annotations

import base64
import binascii
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Mapping, Sequence

from .source_vocab import (
    MAX_VOCAB, T_BYTE, T_CONTROL, T_NORMAL, T_UNKNOWN, T_UNUSED, T_USER_DEFINED, ConvertError,
    VocabData, load_json, sibling_config,
)

# Pre-tokenizer regexes of Hugging Face tokenizer.json files, mapped to the
# tokenizer.ggml.pre name llama.cpp knows them by. llama.cpp's own converter
# identifies a pre-tokenizer by hashing the token ids of a probe text, which
# needs the tokenizer library; comparing the regex identifies the common
# families without it.
GPT2_PATTERN = r"'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"
LLAMA3_PATTERN = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}|"
                  r" ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+")
QWEN2_PATTERN = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}|"
                 r" ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+")
KNOWN_PRE_PATTERNS: dict[str, str] = {
    GPT2_PATTERN: "gpt-2",
    LLAMA3_PATTERN: "llama-bpe",
    QWEN2_PATTERN: "qwen2",
}

_BYTE_PIECE = re.compile(r"<0x[0-9A-Fa-f]{2}>")


class _Json:
    """Typed access to a parsed JSON document; a wrong type raises
    :class:`ConvertError` naming the file and the JSON path."""

    def __init__(self, path: str) -> None:
        self.path = path

    def fail(self, where: str, message: str) -> ConvertError:
        return ConvertError(self.path, f"{where}: {message}")

    def obj(self, value: object, where: str) -> dict[str, object]:
        if not isinstance(value, dict):
            raise self.fail(where, f"expected an object, found {_json_type(value)}")
        return value

    def opt_obj(self, value: object, where: str) -> dict[str, object] | None:
        return None if value is None else self.obj(value, where)

    def arr(self, value: object, where: str) -> list[object]:
        if not isinstance(value, list):
            raise self.fail(where, f"expected an array, found {_json_type(value)}")
        return value

    def str_(self, value: object, where: str) -> str:
        if not isinstance(value, str):
            raise self.fail(where, f"expected a string, found {_json_type(value)}")
        return value

    def id_(self, value: object, where: str) -> int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise self.fail(where, f"expected a token id, found {_json_type(value)}")
        if not 0 <= value < MAX_VOCAB:
            raise self.fail(where, f"token id {value} out of range")
        return value

    def num(self, value: object, where: str) -> float:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise self.fail(where, f"expected a number, found {_json_type(value)}")
        return float(value)


def _json_type(value: object) -> str:
    return {dict: "an object", list: "an array", str: "a string", bool: "a boolean",
            int: "a number", float: "a number", type(None): "null"}.get(type(value), type(value).__name__)


@dataclass(frozen=True)
class _Added:
    id: int
    content: str
    special: bool


def read_tokenizer_json(path: Path, name: str | None) -> VocabData:
    """The :class:`~.convert.VocabData` of the ``tokenizer.json`` at ``path``."""
    p = str(path)
    js = _Json(p)
    doc = js.obj(load_json(path), "tokenizer.json")
    model = js.obj(doc.get("model"), "model")
    mtype = model.get("type")
    if mtype is None:  # files from old tokenizers versions omit the type
        mtype = ("BPE" if "merges" in model else "Unigram" if isinstance(model.get("vocab"), list)
                 else "WordPiece" if "continuing_subword_prefix" in model else None)
    config = sibling_config(path, ("tokenizer.json",))

    added: list[_Added] = []
    for i, item in enumerate(js.arr(doc.get("added_tokens", []), "added_tokens")):
        o = js.obj(item, f"added_tokens[{i}]")
        added.append(_Added(js.id_(o.get("id"), f"added_tokens[{i}].id"),
                            js.str_(o.get("content"), f"added_tokens[{i}].content"),
                            o.get("special") is True))
    if name is None:
        name = path.parent.name if path.name == "tokenizer.json" and path.parent.name else path.stem

    if mtype == "BPE":
        return _hf_bpe(js, doc, model, added, config, name)
    if mtype == "WordPiece":
        return _hf_wordpiece(js, doc, model, added, config, name)
    if mtype == "Unigram":
        return _hf_unigram(js, doc, model, added, config, name)
    raise ConvertError(p, f"tokenizer model type {mtype!r} cannot be converted "
                          "(supported: BPE with a ByteLevel pre-tokenizer, WordPiece, Unigram)")


def _layout(js: _Json, ids: Mapping[int, str], added: Sequence[_Added]) -> list[str | None]:
    """Token strings by id, with added tokens placed over the base vocabulary."""
    all_ids = dict(ids)
    for a in added:
        all_ids[a.id] = a.content
    if not all_ids:
        raise js.fail("model.vocab", "the vocabulary is empty")
    n = max(all_ids) + 1
    tokens: list[str | None] = [None] * n
    for tid, text in all_ids.items():
        tokens[tid] = text
    return tokens


def _vocab_dict(js: _Json, model: Mapping[str, object]) -> dict[int, str]:
    vocab = js.obj(model.get("vocab"), "model.vocab")
    out: dict[int, str] = {}
    for text, tid in vocab.items():
        i = js.id_(tid, f"model.vocab[{text!r}]")
        if i in out:
            raise js.fail("model.vocab", f"tokens {out[i]!r} and {text!r} share id {i}")
        out[i] = text
    return out


def _looks_special(text: str) -> bool:
    """llama.cpp's converter marks these added tokens CONTROL even when the
    tokenizer does not call them special (``does_token_look_special``)."""
    return (text in ("<pad>", "<mask>", "<2mass>", "[@BOS@]")
            or (text.startswith("<|") and text.endswith("|>"))
            or (text.startswith("<｜") and text.endswith("｜>"))
            or (text.startswith("<unused") and text.endswith(">")))


def _base_types(tokens: Sequence[str | None], added: Sequence[_Added]) -> tuple[list[str], list[int]]:
    """Token strings and types as ``get_vocab_base`` gives them: gaps become
    ``[PAD<i>]`` UNUSED, added tokens CONTROL or USER_DEFINED."""
    by_id = {a.id: a for a in added}
    out_tokens: list[str] = []
    types: list[int] = []
    for i, text in enumerate(tokens):
        if text is None:
            out_tokens.append(f"[PAD{i}]")
            types.append(T_UNUSED)
            continue
        a = by_id.get(i)
        if a is None:
            types.append(T_NORMAL)
        elif a.special or _looks_special(text):
            types.append(T_CONTROL)
        else:
            # llama.cpp matches user-defined tokens on the raw text
            text = text.replace("\u2581", " ")
            types.append(T_USER_DEFINED)
        out_tokens.append(text)
    return out_tokens, types


def _token_id(text: str, added: Sequence[_Added], tokens: Sequence[str | None]) -> int | None:
    for a in added:
        if a.content == text:
            return a.id
    for i, t in enumerate(tokens):
        if t == text:
            return i
    return None


def _config_token(config: Mapping[str, object], kind: str) -> str | None:
    entry = config.get(f"{kind}_token")
    if isinstance(entry, dict):
        entry = entry.get("content")
    return entry if isinstance(entry, str) else None


def _stage(js: _Json, doc: Mapping[str, object], key: str, seq_key: str) -> list[dict[str, object]]:
    """The steps of one tokenizer.json stage (``doc[key]``): none when it is
    null, the members of a ``Sequence`` (listed under ``seq_key``), else itself."""
    st = js.opt_obj(doc.get(key), key)
    if st is None:
        return []
    if st.get("type") == "Sequence":
        return [js.obj(x, f"{key}.{seq_key}[]") for x in js.arr(st.get(seq_key), f"{key}.{seq_key}")]
    return [st]


@dataclass
class _Template:
    """Special tokens a post-processor puts around a single sequence."""

    first: str | None = None
    last: str | None = None
    present: bool = False


def _template(js: _Json, doc: Mapping[str, object]) -> _Template:
    out = _Template()
    for proc in _stage(js, doc, "post_processor", "processors"):
        ptype = proc.get("type")
        if ptype in ("BertProcessing", "RobertaProcessing"):
            cls = js.arr(proc.get("cls"), f"post_processor.{ptype}.cls")
            sep = js.arr(proc.get("sep"), f"post_processor.{ptype}.sep")
            out = _Template(js.str_(cls[0] if cls else None, "post_processor.cls[0]"),
                            js.str_(sep[0] if sep else None, "post_processor.sep[0]"), True)
        elif ptype == "TemplateProcessing":
            single = js.arr(proc.get("single"), "post_processor.single")
            out.present = True
            specials: list[str | None] = []
            for piece in single:
                st = js.obj(piece, "post_processor.single[]").get("SpecialToken")
                specials.append(js.str_(js.obj(st, "SpecialToken").get("id"), "SpecialToken.id")
                                if st is not None else None)
            if len(specials) > 1 or (specials and specials[0] is not None):
                out.first = specials[0] if specials else None
                out.last = specials[-1] if len(specials) > 1 else None
    return out


def _resolve_specials(kinds: Sequence[str], config: Mapping[str, object], added: Sequence[_Added],
                      tokens: Sequence[str | None], fallbacks: Mapping[str, Sequence[str]]
                      ) -> dict[str, int]:
    """Special ids from ``tokenizer_config.json`` (``<kind>_token``), else
    from the conventional texts in ``fallbacks``."""
    out: dict[str, int] = {}
    for kind in kinds:
        texts: list[str] = []
        cfg_text = _config_token(config, kind)
        if cfg_text is not None:
            texts.append(cfg_text)
        texts.extend(fallbacks.get(kind, ()))
        for text in texts:
            tid = _token_id(text, added, tokens)
            if tid is not None:
                out[kind] = tid
                break
    return out


def _pre_tokenizers(js: _Json, doc: Mapping[str, object]) -> list[dict[str, object]]:
    return _stage(js, doc, "pre_tokenizer", "pretokenizers")


def _split_regex(js: _Json, step: Mapping[str, object]) -> str | None:
    pattern = step.get("pattern")
    if isinstance(pattern, dict) and isinstance(pattern.get("Regex"), str):
        return js.str_(pattern.get("Regex"), "pre_tokenizer.pattern.Regex")
    return None


def _identify_bpe_pre(js: _Json, doc: Mapping[str, object], warnings: list[str]) -> str:
    """The tokenizer.ggml.pre name for a byte-level BPE pre-tokenizer."""
    steps = _pre_tokenizers(js, doc)
    byte_level = [s for s in steps if s.get("type") == "ByteLevel"]
    if not byte_level:
        raise ConvertError(js.path, "BPE without a ByteLevel pre-tokenizer (a SentencePiece-style "
                                    "BPE) cannot be converted from tokenizer.json; convert its "
                                    "tokenizer.model instead")
    bl = byte_level[-1]
    if bl.get("add_prefix_space") is True:
        warnings.append("ByteLevel add_prefix_space is on, but llama.cpp's BPE adds no prefix space")
    others = [s for s in steps if s is not bl]
    if not others and bl.get("use_regex", True) is not False:
        return "gpt-2"
    if len(others) == 1 and others[0].get("type") == "Split" and bl.get("use_regex") is False:
        regex = _split_regex(js, others[0])
        if regex is not None and regex in KNOWN_PRE_PATTERNS:
            return KNOWN_PRE_PATTERNS[regex]
    kinds = "+".join(str(s.get("type")) for s in steps)
    warnings.append(f"pre-tokenizer {kinds} not identified; wrote 'default' (llama.cpp's generic "
                    "BPE pre-tokenizer), so ids can differ")
    return "default"


def _bpe_merges(js: _Json, model: Mapping[str, object]) -> tuple[str, ...]:
    out: list[str] = []
    for i, m in enumerate(js.arr(model.get("merges", []), "model.merges")):
        where = f"model.merges[{i}]"
        if isinstance(m, str):
            first, sep, second = m.partition(" ")
            if not sep or not first or not second:
                raise js.fail(where, f"malformed merge {m!r}")
            out.append(m)
        else:
            pair = js.arr(m, where)
            if len(pair) != 2:
                raise js.fail(where, "a merge must be a pair")
            a, b = js.str_(pair[0], where), js.str_(pair[1], where)
            if not a or not b:
                raise js.fail(where, "empty merge part")
            # the pair form allows spaces; GGUF merges are space-separated, so
            # spaces are written as U+0120 as llama.cpp's converter does
            out.append(" ".join("".join(chr(ord(c) + 256) if c == " " else c for c in part)
                                for part in (a, b)))
    return tuple(out)


def _normalizers(js: _Json, doc: Mapping[str, object]) -> list[dict[str, object]]:
    return _stage(js, doc, "normalizer", "normalizers")


def _add_flags_from(config: Mapping[str, object], flags: dict[str, bool]) -> None:
    for flag in ("add_bos", "add_eos"):
        v = config.get(f"{flag}_token")
        if isinstance(v, bool):
            flags[flag] = v


def _hf_bpe(js: _Json, doc: Mapping[str, object], model: Mapping[str, object], added: Sequence[_Added],
            config: Mapping[str, object], name: str) -> VocabData:
    warnings: list[str] = []
    pre = _identify_bpe_pre(js, doc, warnings)
    for n in _normalizers(js, doc):
        warnings.append(f"normalizer {n.get('type')} is not applied by llama.cpp's BPE tokenizer")
    if model.get("ignore_merges") is True and pre != "llama-bpe":
        warnings.append("ignore_merges is on, but llama.cpp only honours it for llama-bpe-style "
                        "pre-tokenizers")
    raw = _layout(js, _vocab_dict(js, model), added)
    tokens, types = _base_types(raw, added)
    merges = _bpe_merges(js, model)
    tmpl = _template(js, doc)
    special = _resolve_specials(("bos", "eos", "unk", "sep", "pad", "mask"), config, added, raw, {})
    flags: dict[str, bool] = {}
    if tmpl.present:
        if tmpl.first is not None and "bos" not in special:
            tid = _token_id(tmpl.first, added, raw)
            if tid is not None:
                special["bos"] = tid
        if tmpl.last is not None and "eos" not in special:
            tid = _token_id(tmpl.last, added, raw)
            if tid is not None:
                special["eos"] = tid
        flags["add_bos"] = tmpl.first is not None
        flags["add_eos"] = tmpl.last is not None
    _add_flags_from(config, flags)
    return VocabData(model="gpt2", pre=pre, architecture="gpt2", name=name, tokens=tuple(tokens),
                     types=tuple(types), merges=merges, special_ids=special, flags=flags,
                     source="tokenizers", warnings=tuple(warnings))


def _hf_wordpiece(js: _Json, doc: Mapping[str, object], model: Mapping[str, object],
                  added: Sequence[_Added], config: Mapping[str, object], name: str) -> VocabData:
    warnings: list[str] = []
    prefix = model.get("continuing_subword_prefix", "##")
    prefix = js.str_(prefix, "model.continuing_subword_prefix") if prefix is not None else ""
    if not prefix:
        raise js.fail("model.continuing_subword_prefix", "WordPiece without a continuation prefix "
                                                         "cannot be converted")
    raw = _layout(js, _vocab_dict(js, model), added)
    tokens, types = _base_types(raw, added)
    # llama.cpp's WPM matches "▁word" against the vocabulary: word-start
    # pieces get the "▁" (phantom space), continuations lose their prefix
    tokens = [t if ty == T_CONTROL else t[len(prefix):] if t.startswith(prefix) else "\u2581" + t
              for t, ty in zip(tokens, types)]

    flags: dict[str, bool] = {"normalizer_lowercase": False}
    norms = _normalizers(js, doc)
    for n in norms:
        if n.get("type") == "BertNormalizer":
            flags["normalizer_lowercase"] = n.get("lowercase", True) is not False
            sa = n.get("strip_accents")
            if isinstance(sa, bool):
                flags["normalizer_strip_accents"] = sa
        elif n.get("type") == "Lowercase":
            flags["normalizer_lowercase"] = True
        elif n.get("type") == "StripAccents":
            flags["normalizer_strip_accents"] = True
        else:
            warnings.append(f"normalizer {n.get('type')} is not applied by llama.cpp's WPM tokenizer")
    if not norms:
        warnings.append("no BertNormalizer: llama.cpp's WPM still removes control characters and "
                        "splits CJK characters")
    steps = _pre_tokenizers(js, doc)
    if [s.get("type") for s in steps] not in (["BertPreTokenizer"], ["Whitespace"], ["WhitespaceSplit"]):
        warnings.append("pre-tokenizer is not BertPreTokenizer; llama.cpp's WPM splits like BERT")

    tmpl = _template(js, doc)
    unk_text = model.get("unk_token", "[UNK]")
    special = _resolve_specials(("unk", "cls", "sep", "pad", "mask"), config, added, raw, {
        "unk": (js.str_(unk_text, "model.unk_token"),), "cls": ("[CLS]",), "sep": ("[SEP]",),
        "pad": ("[PAD]",), "mask": ("[MASK]",)})
    # llama.cpp's WPM puts BOS in front and SEP behind; BERT's BOS is [CLS]
    if tmpl.first is not None:
        tid = _token_id(tmpl.first, added, raw)
        if tid is not None:
            special["cls"] = tid
    if "cls" in special:
        special["bos"] = special.pop("cls")
    flags["add_bos"] = tmpl.first is not None
    flags["add_sep"] = tmpl.last is not None
    flags["add_eos"] = False
    if "unk" not in special:
        warnings.append("no unknown token: llama.cpp uses id 100 for words it cannot split")
    return VocabData(model="bert", pre="default", architecture="bert", name=name, tokens=tuple(tokens),
                     types=tuple(types), special_ids=special, flags=flags, source="tokenizers",
                     warnings=tuple(warnings))


def _hf_unigram(js: _Json, doc: Mapping[str, object], model: Mapping[str, object],
                added: Sequence[_Added], config: Mapping[str, object], name: str) -> VocabData:
    warnings: list[str] = []
    base: dict[int, str] = {}
    scores_by_id: dict[int, float] = {}
    for i, entry in enumerate(js.arr(model.get("vocab"), "model.vocab")):
        pair = js.arr(entry, f"model.vocab[{i}]")
        if len(pair) != 2:
            raise js.fail(f"model.vocab[{i}]", "expected [piece, score]")
        base[i] = js.str_(pair[0], f"model.vocab[{i}][0]")
        scores_by_id[i] = js.num(pair[1], f"model.vocab[{i}][1]")
    raw = _layout(js, base, added)
    tokens, types = _base_types(raw, added)
    unk_id = model.get("unk_id")
    if unk_id is not None:
        unk = js.id_(unk_id, "model.unk_id")
        if unk >= len(tokens):
            raise js.fail("model.unk_id", f"{unk} is outside the vocabulary")
        types[unk] = T_UNKNOWN
    byte_fallback = model.get("byte_fallback") is True
    if byte_fallback:
        warnings.append("llama.cpp's UGM tokenizer has no byte fallback: unknown characters become <unk>")
        for i, t in enumerate(tokens):
            if types[i] == T_NORMAL and _BYTE_PIECE.fullmatch(t):
                types[i] = T_BYTE
    # scores of added/missing ids as llama.cpp's converter writes them
    scores = [scores_by_id.get(i, -1000.0 if types[i] != T_UNUSED else -10000.0)
              for i in range(len(tokens))]
    for a in added:
        if a.id not in base:
            scores[a.id] = -1000.0

    flags: dict[str, bool] = {"add_space_prefix": False, "remove_extra_whitespaces": False}
    charsmap = _unigram_normalizer(js, doc, flags, warnings)
    _unigram_pre_tokenizer(js, doc, flags, warnings)

    tmpl = _template(js, doc)
    special = _resolve_specials(("bos", "eos", "pad"), config, added, raw,
                                {"eos": ("</s>",), "pad": ("<pad>",)})
    if unk_id is not None:
        special["unk"] = js.id_(unk_id, "model.unk_id")
    if tmpl.last is not None and "eos" not in special:
        tid = _token_id(tmpl.last, added, raw)
        if tid is not None:
            special["eos"] = tid
    flags["add_bos"] = tmpl.first is not None
    flags["add_eos"] = tmpl.last is not None
    _add_flags_from(config, flags)
    return VocabData(model="t5", pre="default", architecture="t5", name=name, tokens=tuple(tokens),
                     types=tuple(types), scores=tuple(scores), charsmap=charsmap,
                     special_ids=special, flags=flags, source="tokenizers", warnings=tuple(warnings))


def _unigram_normalizer(js: _Json, doc: Mapping[str, object], flags: dict[str, bool],
                        warnings: list[str]) -> bytes:
    """The precompiled character map of a Unigram tokenizer's normalizer
    (empty if none); sets ``remove_extra_whitespaces`` in ``flags`` and
    warns of the steps llama.cpp does not apply."""
    charsmap = b""
    for n in _normalizers(js, doc):
        ntype = n.get("type")
        if ntype == "Precompiled":
            encoded = n.get("precompiled_charsmap")
            if encoded is None:
                continue
            try:
                charsmap = base64.b64decode(js.str_(encoded, "normalizer.precompiled_charsmap"),
                                            validate=True)
            except (binascii.Error, ValueError):
                raise js.fail("normalizer.precompiled_charsmap", "invalid base64") from None
        elif ntype == "Replace" and _split_regex(js, n) == " {2,}" and n.get("content") == " ":
            flags["remove_extra_whitespaces"] = True
        elif ntype == "Strip":
            # llama.cpp's remove_extra_whitespaces also strips both ends
            flags["remove_extra_whitespaces"] = True
        else:
            warnings.append(f"normalizer {ntype} is not applied by llama.cpp's UGM tokenizer")
    return charsmap


def _unigram_pre_tokenizer(js: _Json, doc: Mapping[str, object], flags: dict[str, bool],
                           warnings: list[str]) -> None:
    """Sets ``add_space_prefix`` in ``flags`` from a Unigram tokenizer's
    Metaspace step, and warns of the steps llama.cpp does not apply."""
    for step in _pre_tokenizers(js, doc):
        stype = step.get("type")
        if stype == "Metaspace":
            repl = step.get("replacement", "\u2581")
            if repl != "\u2581":
                warnings.append(f"Metaspace replacement {repl!r}: llama.cpp always uses U+2581")
            scheme = step.get("prepend_scheme")
            if scheme is None:  # tokenizers < 0.14
                flags["add_space_prefix"] = step.get("add_prefix_space", True) is not False
            else:
                flags["add_space_prefix"] = scheme in ("always", "first")
        elif stype not in ("WhitespaceSplit",):
            warnings.append(f"pre-tokenizer {stype} is not applied by llama.cpp's UGM tokenizer")
