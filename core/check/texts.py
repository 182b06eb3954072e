"""The texts a check runs: a built-in varied set, seeded random text, and
the user's own."""

from __future__ import annotations

import random
from pathlib import Path

__all__ = ["BUILTIN_TEXTS", "random_texts", "read_texts"]

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


def read_texts(path: str) -> list[str]:
    """The non-empty lines of a UTF-8 file (``\\n`` inside a line can be
    written as the two characters backslash-n)."""
    data = Path(path).read_bytes().decode("utf-8", "replace")
    return [line.replace("\\n", "\n").replace("\\t", "\t") for line in data.splitlines() if line]
