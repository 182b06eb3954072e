"""The texts a check runs: a built-in varied set, seeded random text, and
the user's own."""

from __future__ import annotations

import random
import re

from .reference import CheckError

__all__ = ["BUILTIN_TEXTS", "MAX_TEXTS_BYTES", "TEXTS_MODES", "random_texts", "read_texts"]

#: scripts, digits, whitespace runs, code, emoji, special-token look-alikes
#: and contractions: where conversions usually go wrong
BUILTIN_TEXTS: tuple[str, ...] = (
    "Hello world",
    "hello World HELLO",
    "The quick brown fox jumps over the lazy dog.",
    "don't you're I'll we've she'd they're it's DON'T",
    "12345 3.14 $9.99 1,000,000 2024-11-27 007",
    "tabs\tand\nnew\nlines\r\n",
    "  two  spaces   three    four",
    " leading space",
    "trailing space ",
    "\n\nblank lines\n\n\n",
    "naïve café Zażółć gęślą jaźń",
    "Ελληνικά и русский текст",
    "日本語のテキスト 中文文本 한국어",
    "مرحبا بالعالم עברית",
    "हिन्दी বাংলা ภาษาไทย",
    "ÅÆØ ﬁ ＡＢＣ ① Ⅳ ½",
    "e\u0301 a\u0308 \u200d \u00a0nbsp",
    "🙂 👍🏽 🇩🇪 👨‍👩‍👧",
    "def f(x):\n    return x ** 2  # square",
    "if (a && b) { c[i] = d->e; }",
    "<s> </s> <unk> [CLS] [SEP] <|endoftext|> <pad>",
    "<|im_start|>user\nhi<|im_end|>",
    "supercalifragilisticexpialidocious",
    "http://example.com/a?b=c&d=e#f",
    "...!!!???---___",
    # quotes, brackets and apostrophes as code and prose write them:
    # llama.cpp's split rules treat punctuation after a space differently
    'x = "a"; y = \'b\'',
    'print("it\'s", d["key"], f(a[0]), {"k": [1, 2]})',
    'She said "hi" and \'bye\' (twice) [sic] {ok}',
    "the user's `code` <tag> «quoted» “curly” ‘single’",
    # numbers of 1 to 12 digits, alone and next to letters
    "7 42 314 2718 31415 271828 3141592 27182818 314159265 2718281828 31415926535 271828182845",
    "a1 b22 c333 d4444 v1.2.3 x86_64 3rd 10th 1e10 0x1F 12px 2024AD A4B8",
)

_ALPHABETS = (
    "abcdefghijklmnopqrstuvwxyz",
    "ABCDEFGHIJKLMNOPQRSTUVWXYZ",
    "0123456789",
    "     \t\n",
    ".,;:!?'\"()[]{}<>/\\|-_+=*&^%$#@~`",
    # code and prose punctuation after spaces and next to words
    ' "\'=',
    "()[]{},.:x1",
    "àéîõüñçßøåæœ",
    "αβγδεζηθабвгдежз",
    "日本語中文한국어",
    "🙂👍🏽🇩🇪",
)


def random_texts(n: int, seed: int) -> list[str]:
    """``n`` texts of up to 40 characters drawn from mixed alphabets; the
    same seed gives the same texts."""
    rng = random.Random(seed)
    out: list[str] = []
    for _ in range(n):
        length = rng.randint(1, 40)
        parts: list[str] = []
        while sum(map(len, parts)) < length:
            alphabet = rng.choice(_ALPHABETS)
            parts.append("".join(rng.choice(alphabet) for _ in range(rng.randint(1, 6))))
        out.append("".join(parts)[:length])
    return out


#: how ``--texts FILE`` is cut into texts
TEXTS_MODES = ("lines", "file", "escaped")
#: a texts file larger than this is refused (each text is tokenized by
#: both sides and a diverging one shrunk: more would not finish anyway)
MAX_TEXTS_BYTES = 16 << 20
_ESCAPE = re.compile(r"\\(.)", re.DOTALL)
_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "\\": "\\"}


def read_texts(path: str, mode: str = "lines") -> list[str]:
    """The texts of a UTF-8 file: ``"lines"`` (the default) each non-empty
    line exactly as written (cut at ``\\n`` only, a CRLF's ``\\r``
    dropped); ``"file"`` the whole file as one text; ``"escaped"`` lines in
    which ``\\n``, ``\\t``, ``\\r`` and ``\\\\`` stand for a line break,
    tab, carriage return and backslash. A file that is not UTF-8 or too
    large raises :class:`CheckError` (nothing is replaced silently)."""
    if mode not in TEXTS_MODES:
        raise CheckError(f"unknown texts mode {mode!r} (one of {', '.join(TEXTS_MODES)})")
    try:
        with open(path, "rb") as f:
            data = f.read(MAX_TEXTS_BYTES + 1)
    except OSError as e:
        raise CheckError(f"{path}: {e.strerror or e}") from None
    if len(data) > MAX_TEXTS_BYTES:
        raise CheckError(f"{path}: more than {MAX_TEXTS_BYTES >> 20} MiB of texts; check a part of it")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        line = data.count(b"\n", 0, e.start) + 1
        raise CheckError(f"{path}: not UTF-8 (byte 0x{data[e.start]:02X} at offset {e.start}, line {line}); "
                         f"save it as UTF-8") from None
    text = text.removeprefix("\ufeff")  # a UTF-8 byte order mark is not part of the first text
    if mode == "file":
        return [text] if text else []
    lines = [line.removesuffix("\r") for line in text.split("\n")]
    if mode == "escaped":
        lines = [_ESCAPE.sub(lambda m: _ESCAPES.get(m.group(1), m.group(0)), line) for line in lines]
    return [line for line in lines if line]
