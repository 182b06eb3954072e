"""The plugin API: plugins import nothing else from TokenPrism, and what it
offers (the config builder, the joined-pair lookup, the Unicode range
sets) does what its docstrings say."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tokenprism.core import pair_cache, plugin_api
from tokenprism.core.bytes_index import PieceFinder
from tokenprism.core.pair_cache import MISS, PairCache
from tokenprism.core.piece_codes import PieceIndex, codes_of
from tokenprism.core.tokenizer import config_from_vocab
from tokenprism.core.unicode_ranges import (RangeSet, complement, contains, intersect, merged, points,
                                            subtract)
from tokenprism.core.vocab import Vocab

ROOT = Path(__file__).resolve().parents[2]
API = "tokenprism.core.plugin_api"


def imports_outside_api(source: str, package: str) -> list[str]:
    """The TokenPrism modules ``source`` imports other than the plugin API,
    as ``line: module``; ``package`` is the dotted package the file sits in
    (``tokenprism.plugins.bpe``), against which relative imports resolve.
    A plugin's own package is fine (``from .ranks import ...``); any other
    ``tokenprism`` module, another plugin included, is not."""
    found: list[str] = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                parts = package.split(".")
                base = parts[:len(parts) - node.level + 1]
                names = [".".join(base + ([node.module] if node.module else []))]
            else:
                names = [node.module or ""]
        else:
            continue
        for name in names:
            own = name == package or name.startswith(package + ".")
            if name.split(".")[0] == "tokenprism" and name != API and not own:
                found.append(f"{node.lineno}: {name}")
    return found


def plugin_files() -> list[Path]:
    return sorted((ROOT / "plugins").rglob("*.py"))


def package_of(path: Path) -> str:
    rel = path.relative_to(ROOT).parent.parts  # ("plugins", "bpe")
    return ".".join(("tokenprism", *rel[:2]))


def test_plugins_import_only_the_plugin_api() -> None:
    files = plugin_files()
    assert len(files) >= 12
    bad = {str(p.relative_to(ROOT)): found for p in files
           if (found := imports_outside_api(p.read_text("utf-8"), package_of(p)))}
    assert bad == {}


@pytest.mark.parametrize("source", [
    "from tokenprism.core.gil import checkpoint",
    "import tokenprism.core.vocab",
    "from tokenprism.core import gil",
    "from ...core.pair_cache import PairCache",   # relative, out of the plugins
    "from ..wpm import wpm",                      # another plugin
    "def f():\n    from tokenprism.core.spans import utf8_width\n",
])
def test_the_check_sees_every_way_around_the_api(source: str) -> None:
    assert len(imports_outside_api(source, "tokenprism.plugins.bpe")) == 1


@pytest.mark.parametrize("source", [
    "from tokenprism.core.plugin_api import PairCache, unicode_data as ud",
    "from .ranks import rank_of",
    "from . import pretokenizers as pt",
    "import numpy as np\nfrom heapq import heappush",
])
def test_the_check_lets_the_api_and_the_plugins_own_modules_pass(source: str) -> None:
    assert imports_outside_api(source, "tokenprism.plugins.bpe") == []


def test_every_exported_name_is_the_cores_own_object() -> None:
    for name in plugin_api.__all__:
        assert hasattr(plugin_api, name), name
    # the same object, not a wrapper: compiled plugins call it natively
    assert plugin_api.PairCache is pair_cache.PairCache
    assert plugin_api.config_from_vocab is config_from_vocab


# ---- config_from_vocab ----------------------------------------------------


def vocab(n: int = 10, special: dict[str, int] | None = None, flags: dict[str, bool] | None = None) -> Vocab:
    return Vocab(model="x", pre="", pieces=tuple(f"p{i}" for i in range(n)), scores=(0.0,) * n,
                 types=(1,) * n, attrs=(0,) * n, merges=(), token_to_id={}, special_ids=special or {},
                 flags=flags or {}, precompiled_charsmap=b"", special_tokens=(), eog_ids=frozenset())


def test_config_defaults_and_file_flags() -> None:
    cfg = config_from_vocab(vocab(), "SPM", {"bos": 1, "eos": 2, "unk": 0}, add_bos=True, add_eos=False,
                            add_space_prefix=True, normalizes=True)
    assert (cfg.kind, cfg.special_prefix, cfg.special_suffix, cfg.add_bos, cfg.add_eos) == ("SPM", (1,), (), True, False)
    assert dict(cfg.special_ids) == {"bos": 1, "eos": 2, "unk": 0}
    assert cfg.add_space_prefix and cfg.normalizes and not cfg.clean_spaces and not cfg.byte_level
    # the file's flags and ids win over the algorithm's defaults
    cfg = config_from_vocab(vocab(special={"eos": 7}, flags={"add_bos": False, "add_eos": True}), "SPM",
                            {"bos": 1, "eos": 2}, add_bos=True, add_eos=False)
    assert (cfg.special_prefix, cfg.special_suffix, cfg.add_bos, cfg.add_eos) == ((), (7,), False, True)


def test_config_leaves_out_a_token_the_vocabulary_lacks() -> None:
    # a default outside the vocabulary is dropped, and so is its token
    cfg = config_from_vocab(vocab(n=2), "UGM", {"bos": 5, "eos": 1}, add_bos=True, add_eos=True)
    assert "bos" not in cfg.special_ids
    assert (cfg.special_prefix, cfg.special_suffix) == ((), (1,))


def test_config_force_bos_and_wrap_always() -> None:
    v = vocab(flags={"add_bos": False})
    forced = config_from_vocab(v, "BPE", {"bos": 3}, add_bos=False, add_eos=False, force_bos=True)
    assert forced.add_bos and forced.special_prefix == (3,)
    # WPM: CLS and SEP whatever the flags say, the flags still reported
    wpm = config_from_vocab(v, "WPM", {"bos": 3, "sep": 4, "eos": 5}, add_bos=True, add_eos=False,
                            suffix="sep", wrap_always=True)
    assert (wpm.special_prefix, wpm.special_suffix, wpm.add_bos, wpm.add_eos) == ((3,), (4,), False, False)


# ---- PairCache.joined -----------------------------------------------------


def test_joined_looks_a_pair_up_once_and_keeps_it() -> None:
    index = PieceFinder(None, PieceIndex(codes_of(("a", "b", "ab", "c"))))
    cache = PairCache(4, 4)
    assert cache.joined(index, "xab", 1, 3, 0, 1) == 2
    assert cache.get(0, 1) == 2
    # kept by the ids: the text is not looked at again (here it is wrong
    # on purpose, to show it)
    assert cache.joined(index, "cc", 0, 2, 0, 1) == 2
    # a pair that joins into no token is kept as such
    assert cache.joined(index, "bc", 0, 2, 1, 3) == -1
    assert cache.get(1, 3) == -1 and cache.get(3, 1) == MISS
    # a symbol without a token (-1): looked up by its text, nothing kept
    assert cache.joined(index, "ab", 0, 2, -1, 1) == 2
    assert cache.joined(index, "ac", 0, 2, 0, -1) == -1
    assert cache.get(0, 3) == MISS


# ---- Unicode range sets ---------------------------------------------------

TOP = 60
range_lists = st.lists(st.tuples(st.integers(0, TOP), st.integers(0, TOP)), max_size=8)


def as_set(ranges: list[tuple[int, int]]) -> set[int]:
    return {c for lo, hi in ranges for c in range(lo, hi + 1)}


def is_normalized(ranges: list[tuple[int, int]]) -> bool:
    return all(lo <= hi for lo, hi in ranges) and all(a[1] + 1 < b[0] for a, b in zip(ranges, ranges[1:]))


@settings(max_examples=300, deadline=None)
@given(range_lists, range_lists, st.integers(0, TOP))
def test_range_algebra_equals_set_algebra(a: list[tuple[int, int]], b: list[tuple[int, int]], cp: int) -> None:
    sa, sb = as_set(a), as_set(b)
    results = {
        "merged": (merged(a), sa),
        "intersect": (intersect(a, b), sa & sb),
        "subtract": (subtract(a, b), sa - sb),
        "complement": (complement(a, TOP), set(range(TOP + 1)) - sa),
        "points": (points(sorted(sb)), sb),
    }
    for name, (got, want) in results.items():
        assert is_normalized(got), name
        assert as_set(got) == want, name
    assert contains(a, cp) == (cp in sa)
    assert (cp in RangeSet(merged(a))) == (cp in sa)
