"""The benchmark texts, generated from fixed seeds so that every
interpreter (compiled, pure, llama.cpp) and every run sees the same bytes:
English prose, mixed scripts (CJK, Cyrillic, Arabic, Greek, Devanagari,
Hangul, emoji, code) and Python-like source. Nothing is shipped as a file."""

from __future__ import annotations

import random

_COMMON = (
    "the of and to a in is it you that he was for on are with as I his they be at one have this from or had "
    "by not but what some we can out other were all there when up use your how said an each she which do "
    "their time if will way about many then them write would like so these her long make thing see him two "
    "has look more day could go come did number sound no most people my over know water than call first who "
    "may down side been now find any new work part take get place made live where after back little only "
    "round man year came show every good me give our under name very through just form sentence great think "
    "say help low line differ turn cause much mean before move right boy old too same tell does set three "
    "want air well also play small end put home read hand port large spell add even land here must big high"
).split()
_RARE = (
    "language model tokenizer vocabulary paragraph understanding extraordinary international responsibility "
    "photosynthesis infrastructure quarterly Mediterranean archaeological thermodynamics nevertheless "
    "Wednesday Kilimanjaro cryptocurrency misunderstanding bureaucratic hippopotamus onomatopoeia don't "
    "it's we'll they're I've isn't O'Brien e-mail well-known state-of-the-art co-operate U.S.A. Ph.D."
).split()
_SYLLABLES = "ba ri con de ment tion al ex pro ter ing ly un re ous ver sta ble gra phi cal nu mo qua zel".split()


def _english_word(rng: random.Random) -> str:
    r = rng.random()
    if r < 0.70:
        return rng.choice(_COMMON)
    if r < 0.85:
        return rng.choice(_RARE)
    if r < 0.90:
        return str(rng.choice((rng.randint(0, 99), rng.randint(100, 99999), 1900 + rng.randint(0, 130))))
    # made-up words keep the text meeting new words, as real prose does
    w = "".join(rng.choice(_SYLLABLES) for _ in range(rng.randint(2, 5)))
    return w.capitalize() if rng.random() < 0.3 else w


def english_text(n_bytes: int = 500_000, seed: int = 11) -> str:
    rng = random.Random(seed)
    parts: list[str] = []
    size = 0
    while size < n_bytes:
        words = [_english_word(rng) for _ in range(rng.randint(5, 28))]
        for _ in range(rng.randint(0, 2)):
            k = rng.randrange(len(words))
            words[k] += rng.choice((",", ",", ";", ":"))
        if rng.random() < 0.1:
            k = rng.randrange(len(words))
            words[k] = f'"{words[k]}"' if rng.random() < 0.5 else f"({words[k]})"
        s = " ".join(words)
        s = s[0].upper() + s[1:] + rng.choice((".", ".", ".", "?", "!"))
        s += "\n\n" if rng.random() < 0.12 else " "
        parts.append(s)
        size += len(s)
    return "".join(parts)


_CYRILLIC = ("съешь же ещё этих мягких французских булок да выпей чаю привет мир как дела всё хорошо "
             "спасибо государство университет программирование").split()
_GREEK = "γαζέες καὶ μυρτιὲς δὲν θὰ βρῶ πιὰ στὸ χρυσαφὶ ξέφωτο γλώσσα κόσμε".split()
_ARABIC = "أنا قادر على أكل الزجاج و هذا لا يؤلمني مرحبا بالعالم كيف حالك اليوم".split()
_HINDI = "मैं काँच खा सकता हूँ और मुझे उससे कोई चोट नहीं पहुंचती नमस्ते दुनिया".split()
_LATIN_EXT = "découpe même accents Größe Straße Übermaß murciélago niño pingüino façade naïve crème".split()
_CJK = ("我能吞下玻璃而不伤身体这是一个用于测试分词器的中文句子你好世界我们正在测试速度"
        "私はガラスを食べられますそれは私を傷つけません日本語のテキストカタカナもあります")
_HANGUL = "나는 유리를 먹을 수 있어요 그래도 아프지 않아요 한국어 문장입니다 안녕하세요".split()
_EMOJI = ["🦙", "🎉", "👍🏽", "😀", "🚀", "✅", "👨‍👩‍👧", "∑∫√∞", "≠ ≤ →", "ﬁne", "Ｆｕｌｌ", "①②③", "㎏", "x²"]
_CODE_LINES = ["def f(x):\n    return x ** 2  # squares\n", "for (int i = 0; i < n; ++i) { sum += a[i]; }\n",
               "\tprint(foo(3))\n", "const y = await fetch(`/api/${id}`);\n", "if x != None and y >= 0:\n"]


def mixed_text(n_bytes: int = 500_000, seed: int = 12) -> str:
    rng = random.Random(seed)
    parts: list[str] = []
    size = 0
    while size < n_bytes:
        kind = rng.randrange(9)
        n = rng.randint(3, 12)
        if kind == 0:
            s = " ".join(rng.choice(_CYRILLIC) for _ in range(n)).capitalize() + "."
        elif kind == 1:
            s = " ".join(rng.choice(_GREEK) for _ in range(n)) + "."
        elif kind == 2:
            s = " ".join(rng.choice(_ARABIC) for _ in range(n)) + "."
        elif kind == 3:
            s = " ".join(rng.choice(_HINDI) for _ in range(n)) + "।"
        elif kind == 4:
            k = rng.randrange(len(_CJK) - 20)
            s = _CJK[k:k + rng.randint(6, 20)] + "。"
        elif kind == 5:
            s = " ".join(rng.choice(_HANGUL) for _ in range(n)) + "."
        elif kind == 6:
            s = " ".join(rng.choice(_LATIN_EXT + _COMMON) for _ in range(n)).capitalize() + "."
        elif kind == 7:
            s = " ".join(rng.choice(_EMOJI + _COMMON) for _ in range(n))
        else:
            s = rng.choice(_CODE_LINES)
        s += rng.choice((" ", " ", "\n"))
        parts.append(s)
        size += len(s.encode("utf-8"))
    return "".join(parts)


_IDENT = "data value index count result buffer token piece offset length config parser item node cache".split()


def _ident(rng: random.Random) -> str:
    a = rng.choice(_IDENT)
    return a if rng.random() < 0.5 else a + rng.choice(("_", "")) + rng.choice(_IDENT).capitalize()


def code_text(n_bytes: int = 100_000, seed: int = 13) -> str:
    rng = random.Random(seed)
    out: list[str] = []
    size = 0
    while size < n_bytes:
        name = _ident(rng)
        args = ", ".join(f"{_ident(rng)}: {rng.choice(('int', 'str', 'list[int]', 'bytes'))}"
                         for _ in range(rng.randint(0, 3)))
        lines = [f"def {name}({args}) -> int:", f'    """Return the {rng.choice(_COMMON)} of {_ident(rng)}."""']
        for _ in range(rng.randint(2, 10)):
            a, b = _ident(rng), _ident(rng)
            lines.append(rng.choice((
                f"    {a} = {b}[{rng.randint(0, 64)}] + {rng.randint(0, 1 << 16)}",
                f"    if {a} >= {b} and not {a}.startswith('{rng.choice(_COMMON)}'):",
                f"        {a} += len({b})  # {rng.choice(_RARE)}",
                f"    for {a} in range({b}, 0x{rng.randint(0, 0xFFFF):04X}):",
                f"        {a}.append({{\"key\": {b}, 'n': {rng.random():.3f}}})",
                "    return " + a)))
        lines.append(f"    return {_ident(rng)}\n\n")
        s = "\n".join(lines) + "\n"
        out.append(s)
        size += len(s)
    return "".join(out)[:n_bytes]




def texts() -> dict[str, str]:
    return {"english": english_text(), "mixed": mixed_text(), "code": code_text()}
