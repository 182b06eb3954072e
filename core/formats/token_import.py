"""Reading token lists back: JSON exports (:func:`load_json`) and pasted
token ids (:func:`scan_ids`). Everything read is checked, and a problem is
reported as :class:`TokenFileError` naming the place (``tokens[12].start``)
and what is wrong; nothing is allocated from a size a file claims.
"""

from __future__ import annotations

import csv
import io
import json
import os
import re
from dataclasses import dataclass
from typing import Iterator, Sequence

from ..errors import TokenPrismError
from ..model import Model, sanitize_text
from .token_list import ModelRef, TokenList, utf8_size
from ..vocab import Attr

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

def _read_source(source: str | bytes | os.PathLike[str]) -> tuple[str, str]:
    """``(text, where)`` of a file path, or of the text itself (bytes, or a
    string starting with ``{``); ``where`` names it in messages."""
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
        return raw.decode("utf-8-sig"), where
    except UnicodeDecodeError as e:
        raise TokenFileError(f"“{where}” is not UTF-8 text (byte {e.start:,}).") from None


def load_json(source: str | bytes | os.PathLike[str]) -> list[TokenList]:
    """The token lists of a JSON export: a file path, or the JSON text itself
    (a string starting with ``{``). Raises :class:`TokenFileError` with a
    readable reason for anything that is not a valid export.
    """
    text, where = _read_source(source)
    return _load_json_text(text, where)


def _load_json_text(text: str, where: str) -> list[TokenList]:
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


# ---- JSON Lines, CSV and id lists ---------------------------------------------------------------

IMPORTABLE = "JSON (.json), JSON Lines (.jsonl), CSV (.csv) and token ids (.txt)"
"""The export formats that import back, in words for messages."""


@dataclass(frozen=True)
class TokenRows:
    """The tokens of a file that keeps neither the text nor the model: a
    JSON Lines or CSV export (ids, character spans and attributes of every
    token) or a list of ids (ids only: the spans and attributes are
    ``None``). A file comparing several models gives its first list.
    :func:`restore_text` makes the text again with a model."""

    fmt: str
    ids: tuple[int, ...]
    starts: tuple[int, ...] | None
    ends: tuple[int, ...] | None
    attrs: tuple[int, ...] | None
    model_name: str
    """The model the file names for the list (several lists only), or ``""``."""
    lists: int
    """How many lists the file holds."""

    def __len__(self) -> int:
        return len(self.ids)

    def first_difference(self, ids: Sequence[int], starts: Sequence[int], ends: Sequence[int]) -> int:
        """As :func:`first_difference`: the first token whose id (or span,
        when the file has spans) differs from the given tokens, else -1."""
        n = min(len(self.ids), len(ids))
        for i in range(n):
            if self.ids[i] != ids[i] or (self.starts is not None and self.ends is not None and (
                    self.starts[i] != starts[i] or self.ends[i] != ends[i])):
                return i
        return -1 if len(self.ids) == len(ids) else n


def load_token_file(source: str | bytes | os.PathLike[str]) -> list[TokenList] | TokenRows:
    """Whatever :func:`tokenprism.core.formats.export.write_export` wrote, read back:
    a JSON export gives its token lists (:func:`load_json`); JSON Lines,
    CSV and id files give :class:`TokenRows`. The format is told from the
    content, so a renamed file still reads."""
    text, where = _read_source(source)
    body = text.lstrip()
    first = body.split("\n", 1)[0].strip()
    if body[:1] == "{":
        try:
            line = json.loads(first, parse_constant=_reject_constant)
        except (ValueError, RecursionError):
            line = None
        if isinstance(line, dict) and "format" not in line and "id" in line:
            return _read_lines(text, where, _jsonl_rows(text), "jsonl")
        return _load_json_text(text, where)
    if where.lower().endswith(".json"):  # a damaged JSON export: say what is wrong with it
        return _load_json_text(text, where)
    if body[:1] == "[" or body[:1].isdigit() or not body:
        return _read_ids(text, where)
    header = next(csv.reader([first]), [])
    if "id" in header and "index" in header:
        return _read_lines(text, where, _csv_rows(text), "csv")
    raise TokenFileError(f"“{where}” is not a token file TokenPrism can import; it reads back its own "
                         f"exports: {IMPORTABLE}.")


_ROW_FIELDS = ("index", "id", "attr", "start", "end")


def _jsonl_rows(text: str) -> Iterator[tuple[str, dict[str, object]]]:
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        where = f"line {n}"
        try:
            row = json.loads(line, parse_constant=_reject_constant)
        except json.JSONDecodeError as e:
            raise _Bad(where, f"not valid JSON: {e.msg} (column {e.colno})") from None
        except (ValueError, RecursionError) as e:
            raise _Bad(where, f"not valid JSON: {e}") from None
        yield where, _obj(row, where)


def _csv_rows(text: str) -> Iterator[tuple[str, dict[str, object]]]:
    reader = csv.reader(io.StringIO(text, newline=""))
    header = next(reader)
    for name in _ROW_FIELDS:
        if name not in header:
            raise _Bad("line 1", f"the header has no “{name}” column")
    for row in reader:
        where = f"line {reader.line_num}"
        if not row:
            continue
        if len(row) != len(header):
            raise _Bad(where, f"has {len(row)} cells, the header {len(header)}")
        cells: dict[str, object] = {}
        for name, cell in zip(header, row):
            if name == "model":
                # a name a spreadsheet would run as a formula was written with a ' in front
                cells["model"] = cell[1:] if cell[:1] == "'" and cell[1:2] in _TRIGGERS else cell
            elif name in _ROW_FIELDS:
                if not _CSV_INT.fullmatch(cell):
                    raise _Bad(f"{where}, {name}", f"expected an integer, found {_describe(cell)}")
                cells[name] = int(cell)
        yield where, cells


_CSV_INT = re.compile(r"-?[0-9]{1,19}")
_TRIGGERS = frozenset("=+-@\t\r\n\0\uff1d\uff0b\uff0d\uff20")


def _read_lines(text: str, where: str, rows: Iterator[tuple[str, dict[str, object]]], fmt: str) -> TokenRows:
    """The first list of a JSON Lines or CSV export (rows of several lists
    carry the list's model name; its tokens come first)."""
    ids: list[int] = []
    starts: list[int] = []
    ends: list[int] = []
    attrs: list[int] = []
    names: list[str] = []
    try:
        for at, r in rows:
            name = r.get("model", "")
            if not isinstance(name, str):
                raise _Bad(_at(at, "model"), f"expected text, found {_describe(name)}")
            if not names or name != names[-1]:
                names.append(name)
            if len(names) > 1:
                continue  # a later list
            _int(r, "index", at, len(ids), len(ids))
            ids.append(_int(r, "id", at, 0, _BIG))
            attrs.append(_int(r, "attr", at, 0, _BIG))
            s, e = _int(r, "start", at, 0, _BIG), _int(r, "end", at, 0, _BIG)
            if e < s:
                raise _Bad(_at(at, "end"), f"{e} is before start {s}")
            starts.append(s)
            ends.append(e)
    except _Bad as e:
        kind = "JSON Lines" if fmt == "jsonl" else "CSV"
        raise TokenFileError(f"“{where}” is not a TokenPrism {kind} token export: {e}.") from None
    return TokenRows(fmt, tuple(ids), tuple(starts), tuple(ends), tuple(attrs), names[0] if names else "",
                     max(len(names), 1))


def _read_ids(text: str, where: str) -> TokenRows:
    lines = [ln for ln in text.splitlines() if ln.strip()]
    items = scan_ids(lines[0]) if lines else ()
    bad = [it for it in items if it.value is None or it.value < 0]
    if bad:
        raise TokenFileError(f"“{where}” is not a list of token ids: {bad[0].text[:20]!r} on line 1 is not an id. "
                             f"TokenPrism imports its own exports: {IMPORTABLE}.")
    return TokenRows("ids", tuple(it.value for it in items if it.value is not None), None, None, None, "",
                     max(len(lines), 1))


def restore_text(rows: TokenRows, model: Model) -> tuple[str, bool, bool]:
    """``(text, add_special, parse_special)`` that ``rows`` were most likely
    made from, by ``model``: the ids that stand for text are decoded (a
    model that normalizes or lowercases gives its normalized text, so a
    re-encoding should be compared with ``rows``); special tokens that
    cover no text were added (BOS/EOS), those that do were parsed."""
    n = len(model)
    for i, t in enumerate(rows.ids):
        if t >= n:
            raise TokenFileError(f"Token #{i} has id {t}, outside {model.name}'s vocabulary (0..{n - 1}): "
                                 "the tokens were made with another model.")
    vocab_attrs = model.vocab.attrs
    attrs = rows.attrs if rows.attrs is not None else tuple(vocab_attrs[t] for t in rows.ids)
    empty: set[int] = set()
    added: set[int]
    if rows.starts is not None and rows.ends is not None:
        # a token covering no text is not decoded: an added BOS/EOS, or the
        # space a SentencePiece model puts before the text after a special token
        empty = {i for i in range(len(attrs)) if rows.starts[i] == rows.ends[i]}
        added = {i for i in empty if attrs[i] & Attr.CONTROL}
    else:
        # ids alone: the model's own prefix (BOS) and suffix (EOS, SEP) at the ends were added
        cfg = model.config
        ids, pre, suf = rows.ids, cfg.special_prefix, cfg.special_suffix
        added = set()
        if (pre or suf) and len(ids) >= len(pre) + len(suf) and tuple(ids[:len(pre)]) == pre \
                and tuple(ids[len(ids) - len(suf):]) == suf:
            added = set(range(len(pre))) | set(range(len(ids) - len(suf), len(ids)))
    parse = any(attrs[i] & Attr.CONTROL for i in range(len(attrs)) if i not in added)
    if rows.starts is None or rows.ends is None:
        return _decode_text(rows.ids, added, attrs, model), bool(added), parse
    return _place_text(rows.ids, rows.starts, rows.ends, model), bool(added), parse


def _decode_text(ids: Sequence[int], added: set[int], attrs: Sequence[int], model: Model) -> str:
    """Ids alone decoded as llama.cpp does, except that a model which puts a
    space in front of the text also puts one after each parsed special token
    (the text itself had none), so that space is dropped there as well."""
    prefix = model.config.add_space_prefix
    drop = prefix
    parts: list[bytes] = []
    for i, t in enumerate(ids):
        if i in added:
            continue
        piece = model.token_bytes(t, special=True)
        if drop and piece.startswith(b" "):
            piece = piece[1:]
        drop = prefix and bool(attrs[i] & Attr.CONTROL)
        parts.append(piece)
    return b"".join(parts).decode("utf-8", "replace")


def _place_text(ids: Sequence[int], starts: Sequence[int], ends: Sequence[int], model: Model) -> str:
    """The text the spans describe, each span holding what its tokens decode
    to. Decoding the whole list at once would not do: WordPiece puts a space
    before every word and drops the text's own spaces, SentencePiece adds a
    space in front of the text. So each span takes its tokens' text, less
    the leading spaces that do not fit, and text no token covers (spaces a
    WordPiece model skipped) is a space."""
    out = [" "] * (max(ends) if ends else 0)
    i, n = 0, len(ids)
    while i < n:
        s, e = starts[i], ends[i]
        j = i
        while j < n and starts[j] == s and ends[j] == e:  # a byte-fallback group shares one span
            j += 1
        if e > s:
            piece = b"".join(model.token_bytes(t, special=True) for t in ids[i:j]).decode("utf-8", "replace")
            if len(piece) > e - s:
                piece = piece.lstrip(" ")
            piece = piece[:e - s].ljust(e - s)
            out[s:e] = piece
        i = j
    return "".join(out)


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
