"""The pre-tokenizers llama.cpp 0.3.36 knows, as data.

Two tables, copied from ``src/llama-vocab.cpp``:

* ``PRE_TYPES``: llama.cpp's pre-tokenizer type (``LLAMA_VOCAB_PRE_TYPE_*``
  without the prefix) -> the regexes ``llm_tokenizer_bpe`` splits text with,
  applied one after the other (each one splits the pieces the previous one
  produced), and whether words are GPT-2 byte-encoded before BPE.
  The regexes are llama.cpp's own strings: ``pretokenize`` recognises the
  ones llama.cpp runs through a hand-written splitter and reproduces the
  rest the way ``unicode_regex_split`` runs them through ``std::regex``.
* ``PRE_NAMES``: the value of ``tokenizer.ggml.pre`` -> its type and the
  options llama.cpp sets for it (``ignore_merges``, ``clean_spaces``, the
  ``add_bos`` default, ``escape_whitespaces``, and ``bos_none`` where the
  default BOS id is dropped). A missing ``tokenizer.ggml.pre`` means
  ``"default"``; a ``gemma4`` model always uses ``"gemma4"``.

This module is plain data and is not compiled.
"""

from __future__ import annotations

from tokenprism.core.plugin_api import Record


class PreType(Record):
    """How one llama.cpp pre-tokenizer type splits text."""

    regexes: tuple[str, ...]
    byte_encode: bool
    """GPT-2 byte-to-unicode encoding of words (False: raw UTF-8 symbols,
    with ``<0xNN>`` byte-fallback tokens)."""
    _FIELDS = ("regexes", "byte_encode")

    def __init__(self, regexes: tuple[str, ...], byte_encode: bool = True) -> None:
        self.__dict__.update(regexes=regexes, byte_encode=byte_encode)


class PreTokenizer(Record):
    """What a ``tokenizer.ggml.pre`` name selects."""

    pre_type: str
    ignore_merges: bool
    """A word that is itself a token is not merged (``llama3`` and others)."""
    clean_spaces: bool
    """Detokenizing removes spaces before punctuation (BPE's default)."""
    add_bos: bool
    """Default of ``add_bos`` when the file does not set it."""
    escape_whitespaces: bool
    """Spaces become ``\u2581`` before splitting (SPM-style BPE)."""
    bos_none: bool
    """The default BOS id (11) is dropped (ChatGLM)."""
    _FIELDS = ("pre_type", "ignore_merges", "clean_spaces", "add_bos", "escape_whitespaces", "bos_none")

    def __init__(self, pre_type: str, ignore_merges: bool = False, clean_spaces: bool = True,
                 add_bos: bool = False, escape_whitespaces: bool = False, bos_none: bool = False) -> None:
        self.__dict__.update(pre_type=pre_type, ignore_merges=ignore_merges, clean_spaces=clean_spaces,
                             add_bos=add_bos, escape_whitespaces=escape_whitespaces, bos_none=bos_none)


PRE_TYPES: dict[str, PreType] = {
    'LLAMA3': PreType((
        "(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+",
    )),
    'JAIS2': PreType((
        "(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s{512}(?!\\S)|\\s{256}(?!\\S)|\\s{128}(?!\\S)|\\s{64}(?!\\S)|\\s{32}(?!\\S)|\\s{16}(?!\\S)|\\s{8}(?!\\S)|\\s{4}(?!\\S)|\\s{1,2}(?!\\S)|\\s{1}",
    )),
    'DBRX': PreType((
        "(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+",
    )),
    'SMAUG': PreType((
        "(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+",
    )),
    'DEEPSEEK_LLM': PreType((
        '[\r\n]',
        '\\s?[A-Za-zµÀ-ÖØ-öø-ƺƼ-ƿǄ-ʓʕ-ʯͰ-ͳͶͷͻ-ͽͿΆΈ-ΊΌΎ-ΡΣ-ϵϷ-ҁҊ-ԯԱ-ՖႠ-ჅᎠ-Ᏽᏸ-ᏽᲐ-ᲺᲽ-Ჿᴀ-ᴫᵫ-ᵷᵹ-ᶚḀ-ἕἘ-Ἕἠ-ὅὈ-Ὅὐ-ὗὙὛὝὟ-ώᾀ-ᾴᾶ-ᾼιῂ-ῄῆ-ῌῐ-ΐῖ-Ίῠ-Ῥῲ-ῴῶ-ῼℂℇℊ-ℓℕℙ-ℝℤΩℨK-ℭℯ-ℴℹℼ-ℿⅅ-ⅉⅎↃↄⰀ-ⱻⱾ-ⳤⳫ-ⳮⳲⳳꙀ-ꙭꚀ-ꚛꜢ-ꝯꝱ-ꞇꞋ-ꞎꭰ-ꮿﬀ-ﬆﬓ-ﬗＡ-Ｚａ-ｚ𐐀-𐑏𐒰-𐓓𐓘-𐓻𐲀-𐲲𐳀-𐳲𑢠-𑣟𞤀-𞥃]+',
        '\\s?[!-/:-~！-／：-～‘-‟\u3000-。]+',
        '\\s+$',
        '[一-龥ࠀ-一가-\ud7ff]+',
        '\\p{N}+',
    )),
    'DEEPSEEK3_LLM': PreType((
        '\\p{N}{1,3}',
        '[一-龥\u3040-ゟ゠-ヿ]+',
        '[!"#$%&\'()*+,\\-./:;<=>?@\\[\\\\\\]^_`{|}~][A-Za-z]+|[^\r\n\\p{L}\\p{P}\\p{S}]?[\\p{L}\\p{M}]+| ?[\\p{P}\\p{S}]+[\r\n]*|\\s*[\r\n]+|\\s+(?!\\S)|\\s+',
    )),
    'HUNYUAN_DENSE': PreType((
        '\\p{N}{1,3}',
        '[一-龥\u3040-ゟ゠-ヿ]+',
        '[!"#$%&\'()*+,\\-./:;<=>?@\\[\\\\\\]^_`{|}~][A-Za-z]+|[^\r\n\\p{L}\\p{P}\\p{S}]?[\\p{L}\\p{M}]+| ?[\\p{P}\\p{S}]+[\r\n]*|\\s*[\r\n]+|\\s+(?!\\S)|\\s+',
    )),
    'JOYAI_LLM': PreType((
        '\\p{N}{1,3}',
        '[一-龥\u3040-ゟ゠-ヿ]+',
        '[!"#$%&\'()*+,\\-./:;<=>?@\\[\\\\\\]^_`{|}~][A-Za-z]+|[^\r\n\\p{L}\\p{P}\\p{S}]?[\\p{L}\\p{M}]+| ?[\\p{P}\\p{S}]+[\r\n]*|\\s*[\r\n]+|\\s+(?!\\S)|\\s+',
    )),
    'HY_V4': PreType((
        '\\p{N}{1,3}',
        '[一-龥\u3040-ゟ゠-ヿ]+',
        '[!"#$%&\'()*+,\\-./:;<=>?@\\[\\\\\\]^_`{|}~][A-Za-z]+|[^\r\n\\p{L}\\p{P}\\p{S}]?[\\p{L}\\p{M}]+| ?[\\p{P}\\p{S}]+[\r\n]*|\\s*[\r\n]+|\\s+(?!\\S)|\\s+',
    )),
    'SPARK2_5': PreType((
        '\\p{N}{1,3}',
        '[一-龥\u3040-ゟ゠-ヿ]+',
        '[!"#$%&\'()*+,\\-./:;<=>?@\\[\\\\\\]^_`{|}~][A-Za-z]+|[^\r\n\\p{L}\\p{P}\\p{S}]?[\\p{L}\\p{M}]+| ?[\\p{P}\\p{S}]+|[\r\n]|\\s+(?!\\S)|\\s+',
        '\\p{N}',
    )),
    'YOUTU': PreType((
        '[가-힣ㄱ-ㆎ]+|[！…“”‘’—：；，、-〿︰-﹏]+|[ㄅ-ㄯ]+|[一-龥\u3040-ゟ゠-ヿ]+',
        "[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]*[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]+(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])?|[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]+[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]*(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])?|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n/]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+",
    )),
    'DEEPSEEK_CODER': PreType((
        '[\r\n]',
        '\\s?\\p{L}+',
        '\\s?\\p{P}+',
        '[一-龥ࠀ-一가-\ud7ff]+',
        '\\p{N}',
    )),
    'FALCON': PreType((
        '[\\p{P}\\$\\+<=>\\^~\\|`]+',
        "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)",
        '[0-9][0-9][0-9]',
    )),
    'STARCODER': PreType((
        '\\p{N}',
        "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)",
    )),
    'REFACT': PreType((
        '\\p{N}',
        "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)",
    )),
    'COMMAND_R': PreType((
        '\\p{N}',
        "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)",
    )),
    'SMOLLM': PreType((
        '\\p{N}',
        "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)",
    )),
    'CODESHELL': PreType((
        '\\p{N}',
        "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)",
    )),
    'EXAONE': PreType((
        '\\p{N}',
        "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)",
    )),
    'MINERVA': PreType((
        '\\p{N}',
        "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)",
    )),
    'MELLUM2': PreType((
        '\\p{N}',
        "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)",
    )),
    'GPT2': PreType((
        "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)",
    )),
    'MPT': PreType((
        "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)",
    )),
    'OLMO': PreType((
        "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)",
    )),
    'JAIS': PreType((
        "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)",
    )),
    'TRILLION': PreType((
        "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)",
    )),
    'GRANITE_DOCLING': PreType((
        "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)",
    )),
    'STABLELM2': PreType((
        "(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+",
    )),
    'QWEN2': PreType((
        "(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+",
    )),
    'HUNYUAN': PreType((
        "(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+",
    )),
    'SOLAR_OPEN': PreType((
        "(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+",
    )),
    'QWEN35': PreType((
        "(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\\r\\n\\p{L}\\p{N}]?[\\p{L}\\p{M}]+|\\p{N}| ?[^\\s\\p{L}\\p{M}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+",
    )),
    'PORO': PreType((
        ' ?[^(\\s|.,!?…。，、।۔،)]+',
    )),
    'BLOOM': PreType((
        ' ?[^(\\s|.,!?…。，、।۔،)]+',
    )),
    'GPT3_FINNISH': PreType((
        ' ?[^(\\s|.,!?…。，、।۔،)]+',
    )),
    'CHATGLM4': PreType((
        "(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+",
    )),
    'VIKING': PreType((
        ' ?[^(\\s|.,!?…。，、।۔،)]+',
        '\\p{N}',
    )),
    'TEKKEN': PreType((
        '[^\\r\\n\\p{L}\\p{N}]?((?=[\\p{L}])([^a-z]))*((?=[\\p{L}])([^A-Z]))+|[^\\r\\n\\p{L}\\p{N}]?((?=[\\p{L}])([^a-z]))+((?=[\\p{L}])([^A-Z]))*|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n/]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+',
    )),
    'CHAMELEON': PreType((
        '<sentinel:[0-9]+>',
        '(IMGIMG)((A|B|C|D|E|F|G|H|I){1,4})Z',
        '([\\t\\n]|    |  )',
        '\\p{N}',
        '[\\p{P}!-/:-@\\[-`{-~]',
        "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)",
    )),
    'GPT4O': PreType((
        "[^\\r\\n\\p{L}\\p{N}]?((?=[\\p{L}])([^a-z]))*((?=[\\p{L}])([^A-Z]))+(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])?|[^\\r\\n\\p{L}\\p{N}]?((?=[\\p{L}])([^a-z]))+((?=[\\p{L}])([^A-Z]))*(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])?|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n/]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+",
    )),
    'MINIMAX_M2': PreType((
        "[^\\r\\n\\p{L}\\p{N}]?((?=[\\p{L}])([^a-z]))*((?=[\\p{L}])([^A-Z]))+(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])?|[^\\r\\n\\p{L}\\p{N}]?((?=[\\p{L}])([^a-z]))+((?=[\\p{L}])([^A-Z]))*(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])?|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n/]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+",
    )),
    'GRANITE_EMB_MULTI': PreType((
        "[^\\r\\n\\p{L}\\p{N}]?((?=[\\p{L}\\p{M}])([^a-z]))*((?=[\\p{L}\\p{M}])([^A-Z]))+(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])?|[^\\r\\n\\p{L}\\p{N}]?((?=[\\p{L}\\p{M}])([^a-z]))+((?=[\\p{L}\\p{M}])([^A-Z]))*(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])?|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n/]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+",
    )),
    'TINY_AYA': PreType((
        '\\d{1,3}(?=(?:\\d{3})*\\b)',
        "[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]*[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]+(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])?|[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]+[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]*(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])?|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n/]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+",
    )),
    'KIMI_K2': PreType((
        '\\p{Han}+',
    )),
    'SUPERBPE': PreType((
        '\\p{N}+',
        '(?=(\\d{3})+(?!\\d))',
    )),
    'BAILINGMOE': PreType((
        "'(?:[sSdDmMtT]|[lL][lL]|[vV][eE]|[rR][eE])|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]|\\s+(?!\\S)|\\s+",
    )),
    'SEED_CODER': PreType((
        "(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1}| ?[^\\s\\p{L}\\p{N}\\r\\n]+|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+",
    )),
    'UFAKZEKA': PreType((
        '[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+',
    )),
    'GROK_2': PreType((
        "(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+",
    )),
    'AFMOE': PreType((
        '\\p{AFMoE_digits}',
        '[一-鿿㐀-䶿豈-\ufaff\u3040-ゟ゠-ヿ･-ﾟ⼀-\u2fdfเ-\u0e7f\u0e80-\u0effក-\u17ffက-႟ꩠ-ꩿꧠ-\ua9ff가-\ud7afᄀ-ᇿ]+',
        '[!"#$%&\'()*+,\\-./:;<=>?@\\[\\\\\\]^_`{|}~][A-Za-z]+|[^\\r\\n\\p{L}\\p{P}\\p{S}]?[\\p{L}\\p{M}]+| ?[\\p{P}\\p{S}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+',
    )),
    'LAGUNA': PreType((
        '[^\\n]+|[\\n]+',
        "(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+",
    )),
    'EXAONE_MOE': PreType((
        "(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\\r\\n\\p{L}\\p{N}]?(?:\\p{L}\\p{M}*(?: \\p{L}\\p{M}*)*)+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n/]?|\\s*[\\r\\n]|\\s+(?!\\S)|\\s+",
    )),
    'GEMMA4': PreType((
        '[^\\n]+|[\\n]+',
    ), byte_encode=False),
    'SARVAM_MOE': PreType((
        '[^\\n]+|[\\n]+',
    ), byte_encode=False),
    'MINICPM5': PreType((
        '\\p{N}{1,3}',
        "(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}+| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+",
    )),
    'WHITESPACE': PreType((
        '\\S+',
    ), byte_encode=False),
    'DEFAULT': PreType((
        '[\\p{P}\\$\\+<=>\\^~\\|]+',
        "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)",
        '\\p{N}+',
        '[0-9][0-9][0-9]',
    )),
}

PRE_NAMES: dict[str, PreTokenizer] = {
    'default': PreTokenizer('DEFAULT'),
    'minicpm5': PreTokenizer('MINICPM5', ignore_merges=True),
    'llama3': PreTokenizer('LLAMA3', ignore_merges=True, add_bos=True),
    'llama-v3': PreTokenizer('LLAMA3', ignore_merges=True, add_bos=True),
    'llama-bpe': PreTokenizer('LLAMA3', ignore_merges=True, add_bos=True),
    'falcon3': PreTokenizer('LLAMA3', ignore_merges=True, add_bos=True),
    'falcon-h1': PreTokenizer('LLAMA3', ignore_merges=True, add_bos=True),
    'pixtral': PreTokenizer('LLAMA3', ignore_merges=True, add_bos=True),
    'midm-2.0': PreTokenizer('LLAMA3', ignore_merges=True, add_bos=True),
    'lfm2': PreTokenizer('LLAMA3', ignore_merges=True, add_bos=True),
    'jina-v5-nano': PreTokenizer('LLAMA3', ignore_merges=True, add_bos=True),
    'deepseek-llm': PreTokenizer('DEEPSEEK_LLM', clean_spaces=False),
    'deepseek-coder': PreTokenizer('DEEPSEEK_CODER', clean_spaces=False),
    'deepseek-v3': PreTokenizer('DEEPSEEK3_LLM', clean_spaces=False),
    'spark2_5': PreTokenizer('SPARK2_5', clean_spaces=False),
    'youtu': PreTokenizer('YOUTU', ignore_merges=True, clean_spaces=False),
    'falcon': PreTokenizer('FALCON'),
    'mpt': PreTokenizer('MPT'),
    'starcoder': PreTokenizer('STARCODER'),
    'gpt-2': PreTokenizer('GPT2'),
    'phi-2': PreTokenizer('GPT2'),
    'jina-es': PreTokenizer('GPT2'),
    'jina-de': PreTokenizer('GPT2'),
    'gigachat': PreTokenizer('GPT2'),
    'jina-v2-es': PreTokenizer('GPT2'),
    'jina-v2-de': PreTokenizer('GPT2'),
    'a.x-4.0': PreTokenizer('GPT2'),
    'mellum': PreTokenizer('GPT2'),
    'modern-bert': PreTokenizer('GPT2'),
    'jais-2': PreTokenizer('JAIS2'),
    'gemma4': PreTokenizer('GEMMA4', escape_whitespaces=True),
    'granite-embed-multi-311m': PreTokenizer('GEMMA4', escape_whitespaces=True),
    'sarvam-moe': PreTokenizer('SARVAM_MOE', clean_spaces=False, escape_whitespaces=True),
    'jina-v1-en': PreTokenizer('GPT2'),
    'jina-v2-code': PreTokenizer('GPT2'),
    'roberta-bpe': PreTokenizer('GPT2'),
    'whitespace': PreTokenizer('WHITESPACE'),
    'refact': PreTokenizer('REFACT'),
    'command-r': PreTokenizer('COMMAND_R', clean_spaces=False),
    'qwen2': PreTokenizer('QWEN2', clean_spaces=False),
    'deepseek-r1-qwen': PreTokenizer('QWEN2', clean_spaces=False),
    'kormo': PreTokenizer('QWEN2', clean_spaces=False),
    'f2llmv2': PreTokenizer('QWEN2', clean_spaces=False),
    'qwen35': PreTokenizer('QWEN35', clean_spaces=False),
    'stablelm2': PreTokenizer('STABLELM2'),
    'olmo': PreTokenizer('OLMO'),
    'dbrx': PreTokenizer('DBRX'),
    'smaug-bpe': PreTokenizer('SMAUG'),
    'poro-chat': PreTokenizer('PORO', clean_spaces=False),
    'chatglm-bpe': PreTokenizer('CHATGLM4', bos_none=True),
    'glm4': PreTokenizer('CHATGLM4', ignore_merges=True, bos_none=True),
    'glm5': PreTokenizer('CHATGLM4', ignore_merges=True, bos_none=True),
    'viking': PreTokenizer('VIKING', clean_spaces=False),
    'jais': PreTokenizer('JAIS'),
    'tekken': PreTokenizer('TEKKEN', ignore_merges=True, clean_spaces=False, add_bos=True),
    'smollm': PreTokenizer('SMOLLM', clean_spaces=False),
    'codeshell': PreTokenizer('CODESHELL'),
    'bloom': PreTokenizer('BLOOM'),
    'gpt3-finnish': PreTokenizer('GPT3_FINNISH'),
    'exaone': PreTokenizer('EXAONE'),
    'exaone4': PreTokenizer('GPT2'),
    'exaone-moe': PreTokenizer('EXAONE_MOE'),
    'chameleon': PreTokenizer('CHAMELEON', clean_spaces=False, add_bos=True),
    'minerva-7b': PreTokenizer('MINERVA'),
    'megrez': PreTokenizer('QWEN2'),
    'gpt-4o': PreTokenizer('GPT4O', clean_spaces=False),
    'llama4': PreTokenizer('GPT4O', clean_spaces=False),
    'kanana2': PreTokenizer('GPT4O', clean_spaces=False),
    'talkie': PreTokenizer('GPT4O', clean_spaces=False),
    'granite-embed-multi-97m': PreTokenizer('GRANITE_EMB_MULTI', ignore_merges=True, clean_spaces=False),
    'tiny_aya': PreTokenizer('TINY_AYA', clean_spaces=False),
    'cohere2moe': PreTokenizer('TINY_AYA', clean_spaces=False),
    'superbpe': PreTokenizer('SUPERBPE', clean_spaces=False),
    'trillion': PreTokenizer('TRILLION', clean_spaces=False),
    'granite-docling': PreTokenizer('GRANITE_DOCLING', clean_spaces=False),
    'bailingmoe': PreTokenizer('BAILINGMOE', clean_spaces=False),
    'bailingmoe2': PreTokenizer('BAILINGMOE', clean_spaces=False),
    'llada-moe': PreTokenizer('BAILINGMOE', clean_spaces=False),
    'seed-coder': PreTokenizer('SEED_CODER', clean_spaces=False),
    'hunyuan': PreTokenizer('HUNYUAN', clean_spaces=False),
    'hunyuan-dense': PreTokenizer('HUNYUAN_DENSE', clean_spaces=False),
    'hy_v4': PreTokenizer('HY_V4', clean_spaces=False),
    'joyai-llm': PreTokenizer('JOYAI_LLM', clean_spaces=False),
    'kimi-k2': PreTokenizer('KIMI_K2', clean_spaces=False),
    'ufakzeka': PreTokenizer('UFAKZEKA', clean_spaces=False),
    'grok-2': PreTokenizer('GROK_2', clean_spaces=False),
    'afmoe': PreTokenizer('AFMOE', clean_spaces=False),
    'laguna': PreTokenizer('LAGUNA', clean_spaces=False),
    'minimax-m2': PreTokenizer('MINIMAX_M2', clean_spaces=False),
    'solar-open': PreTokenizer('SOLAR_OPEN', clean_spaces=False),
    'mellum2': PreTokenizer('MELLUM2'),
}

# tokenizer.ggml.model values of the BPE family and the pre-tokenizer name
# llama.cpp forces for them ("" = take tokenizer.ggml.pre)
MODEL_FORCED_PRE: dict[str, str] = {"gpt2": "", "hybriddna": "", "whitespace": "", "gemma4": "gemma4"}

# default special ids per tokenizer.ggml.model (before the file's keys)
MODEL_DEFAULT_SPECIAL: dict[str, dict[str, int]] = {
    "gpt2": {"bos": 11, "eos": 11},
    "hybriddna": {"bos": 11, "eos": 11},
    "whitespace": {"bos": 11, "eos": 11},
    "gemma4": {},
}

# pre-tokenizer types whose add_bos llama.cpp forces on whatever the file says
FORCE_ADD_BOS_TYPES: frozenset[str] = frozenset({"GEMMA4"})
