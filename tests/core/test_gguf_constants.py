"""The GGUF numbers and key names that core repeats as plain constants (the
compiled reader switches on ints) must equal the gguf package's."""

from __future__ import annotations

import gguf

from tokenprism.core import gguf_file as gf
from tokenprism.core import vocab as vc


def test_value_types_equal_gguf_value_type() -> None:
    ours = {name[2:]: value for name, value in vars(gf).items() if name.startswith("T_")}
    theirs = {t.name: int(t) for t in gguf.GGUFValueType}
    assert ours == theirs
    assert {gf.TYPE_NAMES[int(t)] for t in gguf.GGUFValueType} == {t.name.lower() for t in gguf.GGUFValueType}


def test_header_constants_equal_gguf() -> None:
    assert int.from_bytes(gf.GGUF_MAGIC, "little") == gguf.GGUF_MAGIC
    assert gf.DEFAULT_ALIGNMENT == gguf.GGUF_DEFAULT_ALIGNMENT
    assert gguf.GGUF_VERSION in gf.SUPPORTED_VERSIONS


def test_token_types_equal_gguf_token_type() -> None:
    theirs = {t.name: int(t) for t in gguf.TokenType}
    ours = {t.name: int(t) for t in vc.TokenType}
    # older gguf releases have no UNDEFINED (0); every name they have must agree
    assert theirs and all(ours[name] == value for name, value in theirs.items())
    assert ours.get("UNDEFINED", 0) == 0 and set(ours) - set(theirs) <= {"UNDEFINED"}


def test_tokenizer_key_names_equal_gguf_keys() -> None:
    k = gguf.Keys.Tokenizer
    assert (vc.KEY_MODEL, vc.KEY_PRE, vc.KEY_TOKENS, vc.KEY_SCORES, vc.KEY_TYPES, vc.KEY_MERGES,
            vc.KEY_CHARSMAP) == (k.MODEL, k.PRE, k.LIST, k.SCORES, k.TOKEN_TYPE, k.MERGES,
                                 k.PRECOMPILED_CHARSMAP)
    special = dict((key, name) for name, key in vc.SPECIAL_KEYS)
    expected = {k.BOS_ID: "bos", k.EOS_ID: "eos", k.EOT_ID: "eot", k.EOM_ID: "eom", k.UNK_ID: "unk",
                k.SEP_ID: "sep", k.PAD_ID: "pad", k.MASK_ID: "mask", k.FIM_PRE_ID: "fim_pre",
                k.FIM_SUF_ID: "fim_suf", k.FIM_MID_ID: "fim_mid", k.FIM_PAD_ID: "fim_pad",
                k.FIM_REP_ID: "fim_rep", k.FIM_SEP_ID: "fim_sep", k.PREFIX_ID: "fim_pre",
                k.SUFFIX_ID: "fim_suf", k.MIDDLE_ID: "fim_mid"}
    assert special == expected
    flags = vc.FLAG_KEYS
    assert (flags["add_bos"], flags["add_eos"], flags["add_sep"], flags["add_space_prefix"],
            flags["remove_extra_whitespaces"]) == (k.ADD_BOS, k.ADD_EOS, k.ADD_SEP, k.ADD_PREFIX,
                                                   k.REMOVE_EXTRA_WS)
    assert gguf.Keys.General.ALIGNMENT == "general.alignment"
    assert gguf.Keys.General.ARCHITECTURE == "general.architecture" and gguf.Keys.General.NAME == "general.name"
