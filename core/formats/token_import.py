"""Reading token lists back: JSON exports (:func:`load_json`) and pasted
token ids (:func:`scan_ids`). Everything read is checked, and a problem is
reported as :class:`TokenFileError` naming the place (``tokens[12].start``)
and what is wrong; nothing is allocated from a size a file claims.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass
from typing import Sequence

from ..errors import TokenPrismError
from ..model import sanitize_text
from .token_list import ModelRef, TokenList, utf8_size

FORMAT_TOKENS = "tokenprism-tokens"
FORMAT_COMPARE = "tokenprism-compare"
FORMAT_VERSION = 1
MAX_IMPORT_BYTES = 1 << 30
"""Larger files are refused before reading: a JSON export of a 10 MB text is
about 0.4 GB, and parsing takes several times the file's size in memory."""


class TokenFileError(TokenPrismError):
    """A file is not a token list TokenPrism can import; the message says
    where and what is wrong."""


# ---- reading ----------------------------------------------------------------------------------

def load_json(source: str | bytes | os.PathLike[str]) -> list[TokenList]:
    """The token lists of a JSON export: a file path, or the JSON text itself
    (a string starting with ``{``). Raises :class:`TokenFileError` with a
    readable reason for anything that is not a valid export.
    """
    where = "the text"
    if isinstance(source, bytes):
        raw = source
    elif isinstance(source, str) and source.lstrip()[:1] == "{":
        raw = source.encode("utf-8", "surrogatepass")
    else:
        p = os.fspath(source)
        where = os.path.basename(p) or p
        try:
            with open(p, "rb") as f:
                size = os.fstat(f.fileno()).st_size
                if size > MAX_IMPORT_BYTES:
                    raise TokenFileError(f"“{where}” is {size:,} bytes; token files up to "
                                         f"{MAX_IMPORT_BYTES:,} bytes can be imported.")
                raw = f.read(MAX_IMPORT_BYTES + 1)
        except OSError as e:
            raise TokenFileError(f"Cannot read “{where}”: {e.strerror or e}.") from None
    if len(raw) > MAX_IMPORT_BYTES:
        raise TokenFileError(f"{where} is larger than {MAX_IMPORT_BYTES:,} bytes.")
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        raise TokenFileError(f"“{where}” is not UTF-8 text (byte {e.start:,}).") from None
    try:
        doc = json.loads(text, parse_constant=_reject_constant)
    except json.JSONDecodeError as e:
        raise TokenFileError(f"“{where}” is not valid JSON: {e.msg} (line {e.lineno}, column {e.colno}).") \
            from None
    except RecursionError:
        raise TokenFileError(f"“{where}” is nested too deeply to be a token list.") from None
    except ValueError as e:  # NaN/Infinity literals, over-long integers
        raise TokenFileError(f"“{where}” is not valid JSON: {e}.") from None
    try:
        return _read_doc(doc)
    except _Bad as e:
        raise TokenFileError(f"“{where}” is not a TokenPrism token list: {e}.") from None


def _reject_constant(name: str) -> object:
    raise ValueError(f"{name} is not standard JSON")


class _Bad(Exception):
    def __init__(self, path: str, reason: str) -> None:
        super().__init__(f"{path}: {reason}" if path else reason)
        self.path = path
        self.reason = reason


def _at(path: str, key: str | int) -> str:
    if isinstance(key, int):
        return f"{path}[{key}]"
    return f"{path}.{key}" if path else key


def _describe(v: object) -> str:
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "a boolean"
    if isinstance(v, (int, float)):
        return f"the number {v!r}"
    if isinstance(v, str):
        return f"the text {v[:30]!r}" + ("…" if len(v) > 30 else "")
    if isinstance(v, list):
        return "a list"
    return "an object"


def _obj(v: object, path: str) -> dict[str, object]:
    if not isinstance(v, dict):
        raise _Bad(path, f"expected an object, found {_describe(v)}")
    return v


def _get(d: dict[str, object], key: str, path: str) -> object:
    if key not in d:
        raise _Bad(path, f"missing “{key}”")
    return d[key]


def _int(d: dict[str, object], key: str, path: str, lo: int, hi: int) -> int:
    v = _get(d, key, path)
    if not isinstance(v, int) or isinstance(v, bool):
        raise _Bad(_at(path, key), f"expected an integer, found {_describe(v)}")
    if not lo <= v <= hi:
        raise _Bad(_at(path, key), f"{v} is outside {lo}..{hi}")
    return v


def _str(d: dict[str, object], key: str, path: str) -> str:
    v = _get(d, key, path)
    if not isinstance(v, str):
        raise _Bad(_at(path, key), f"expected text, found {_describe(v)}")
    return v


def _bool(d: dict[str, object], key: str, path: str) -> bool:
    v = _get(d, key, path)
    if not isinstance(v, bool):
        raise _Bad(_at(path, key), f"expected true or false, found {_describe(v)}")
    return v


def _float(d: dict[str, object], key: str, path: str) -> float:
    v = _get(d, key, path)
    if isinstance(v, str) and v in ("inf", "-inf", "nan"):
        return float(v)
    if not isinstance(v, (int, float)) or isinstance(v, bool):
        raise _Bad(_at(path, key), f"expected a number, found {_describe(v)}")
    return float(v)


_BIG = (1 << 63) - 1


def _read_doc(doc: object) -> list[TokenList]:
    d = _obj(doc, "")
    fmt = d.get("format")
    if fmt not in (FORMAT_TOKENS, FORMAT_COMPARE):
        found = f"its “format” is {_describe(fmt)}" if "format" in d else "it has no “format”"
        raise _Bad("", f"{found}, expected “{FORMAT_TOKENS}” or “{FORMAT_COMPARE}”")
    version = _int(d, "version", "", 0, _BIG)
    if version > FORMAT_VERSION:
        raise _Bad("version", f"version {version} is newer than this TokenPrism reads ({FORMAT_VERSION})")
    if fmt == FORMAT_TOKENS:
        return [_read_list(d, "", None)]
    text = _str(d, "text", "") if "text" in d else None
    lists = _get(d, "lists", "")
    if not isinstance(lists, list) or not lists:
        raise _Bad("lists", f"expected a non-empty list, found {_describe(lists)}")
    return [_read_list(_obj(x, _at("lists", k)), _at("lists", k), text) for k, x in enumerate(lists)]


def _read_model(v: object, path: str) -> ModelRef:
    m = _obj(v, path)
    return ModelRef(
        path=_str(m, "path", path), name=_str(m, "name", path), kind=_str(m, "kind", path),
        tokenizer=_str(m, "tokenizer", path), pre=_str(m, "pre", path),
        vocab_size=_int(m, "vocab_size", path, 0, _BIG), file_size=_int(m, "file_size", path, 0, _BIG),
        unk_id=_int(m, "unk_id", path, -1, _BIG), tokenizer_sha256=_str(m, "tokenizer_sha256", path))


def _read_list(d: dict[str, object], path: str, shared_text: str | None) -> TokenList:
    model = _read_model(_get(d, "model", path), _at(path, "model"))
    text = _str(d, "text", path) if "text" in d or shared_text is None else shared_text
    text = sanitize_text(text)  # hand-written \\udxxx escapes; offsets unchanged
    n_chars = len(text)
    n_bytes = utf8_size(text)
    add_special = _bool(d, "add_special", path)
    parse_special = _bool(d, "parse_special", path)
    toks = _get(d, "tokens", path)
    if not isinstance(toks, list):
        raise _Bad(_at(path, "tokens"), f"expected a list, found {_describe(toks)}")
    ids: list[int] = []
    pieces: list[str] = []
    raws: list[str] = []
    scores: list[float] = []
    types: list[int] = []
    attrs: list[int] = []
    starts: list[int] = []
    ends: list[int] = []
    bstarts: list[int] = []
    bends: list[int] = []
    groups: list[int] = []
    # optional columns (rank, word): a token without one has -1; the list
    # has the column when its ``ranks``/``words`` array or any token says so
    ranks: list[int] = []
    words: list[int] = []
    any_rank = any_word = False
    vmax = model.vocab_size - 1
    for i, raw in enumerate(toks):
        tp = _at(_at(path, "tokens"), i)
        t = _obj(raw, tp)
        index = _int(t, "index", tp, 0, _BIG)
        if index != i:
            raise _Bad(_at(tp, "index"), f"is {index}, expected {i} (tokens are listed in order)")
        ids.append(_int(t, "id", tp, 0, vmax))
        pieces.append(_str(t, "piece", tp))
        raws.append(_str(t, "piece_raw", tp))
        scores.append(_float(t, "score", tp))
        types.append(_int(t, "type", tp, -(1 << 31), _BIG))
        attrs.append(_int(t, "attr", tp, 0, _BIG))
        s, e = _int(t, "start", tp, 0, n_chars), _int(t, "end", tp, 0, n_chars)
        if e < s:
            raise _Bad(_at(tp, "end"), f"{e} is before start {s}")
        bs, be = _int(t, "byte_start", tp, 0, n_bytes), _int(t, "byte_end", tp, 0, n_bytes)
        if be < bs:
            raise _Bad(_at(tp, "byte_end"), f"{be} is before byte_start {bs}")
        g = _int(t, "group", tp, -1, i)
        if 0 <= g < i and groups[g] != g:
            raise _Bad(_at(tp, "group"), f"token {g} does not start a group")
        starts.append(s)
        ends.append(e)
        bstarts.append(bs)
        bends.append(be)
        groups.append(g)
        if "rank" in t:
            any_rank = True
            ranks.append(_int(t, "rank", tp, -1, _BIG))
        else:
            ranks.append(-1)
        if "word" in t:
            any_word = True
            words.append(_int(t, "word", tp, -1, _BIG))
        else:
            words.append(-1)
    if "ids" in d and d["ids"] != ids:
        raise _Bad(_at(path, "ids"), "does not match the ids of the tokens")
    if "ranks" in d and d["ranks"] != ranks:
        raise _Bad(_at(path, "ranks"), "does not match the ranks of the tokens")
    if "words" in d and d["words"] != words:
        raise _Bad(_at(path, "words"), "does not match the words of the tokens")
    return TokenList(
        model=model, text=text, add_special=add_special, parse_special=parse_special, ids=tuple(ids),
        pieces=tuple(pieces), pieces_raw=tuple(raws), scores=tuple(scores), types=tuple(types),
        attrs=tuple(attrs), starts=tuple(starts), ends=tuple(ends), byte_starts=tuple(bstarts),
        byte_ends=tuple(bends), groups=tuple(groups),
        ranks=tuple(ranks) if any_rank or "ranks" in d else None,
        words=tuple(words) if any_word or "words" in d else None)


# ---- plain ids (decode) -----------------------------------------------------------------------

_ID_WORD = re.compile(r"[^\s,\[\]]+")
_INT = re.compile(r"[+-]?[0-9]{1,30}")


@dataclass(frozen=True)
class IdItem:
    """One word of pasted ids with its place in the input (``str`` offsets);
    ``value`` is ``None`` when the word is not an integer."""

    start: int
    end: int
    text: str
    value: int | None

    def problem(self, vocab_size: int) -> str:
        """Why this id cannot be decoded by a model with ``vocab_size``
        tokens, or ``""``."""
        if self.value is None:
            return "not a token id"
        if not 0 <= self.value < vocab_size:
            return f"outside the vocabulary (0..{vocab_size - 1})"
        return ""


def scan_ids(text: str) -> tuple[IdItem, ...]:
    """The words of ``text`` read as token ids: ``1 2 3``, ``1,2,3`` and
    ``[1, 2, 3]`` (a JSON list) all work; anything else becomes an item
    with ``value=None`` at its place, so a caller can point at it."""
    out: list[IdItem] = []
    for m in _ID_WORD.finditer(text):
        w = m.group()
        out.append(IdItem(m.start(), m.end(), w, int(w) if _INT.fullmatch(w) else None))
    return tuple(out)


def id_problems(items: Sequence[IdItem], vocab_size: int) -> list[tuple[IdItem, str]]:
    """The items a model with ``vocab_size`` tokens cannot decode, with why."""
    return [(it, p) for it in items if (p := it.problem(vocab_size))]


def describe_id_problems(problems: Sequence[tuple[IdItem, str]], limit: int = 5) -> str:
    """``'abc' is not a token id; 99999 is outside the vocabulary (0..31999)``."""
    parts = [f"{it.text[:20]!r} is {why}" if it.value is None else f"{it.text} is {why}"
             for it, why in problems[:limit]]
    if len(problems) > limit:
        parts.append(f"and {len(problems) - limit} more")
    return "; ".join(parts)
