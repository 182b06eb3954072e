"""What :class:`Charsmap` learns from a charsmap when it is opened (its
native check and walk of the double array) against what the mapping it
was made from says: which characters are keys, start longer keys or follow
a first character, which ASCII bytes occur past a key's first byte, and
the longest replacement.

The oracle reads the keys as byte strings, so it shares nothing with the
double-array code; ``make_charsmap`` (tests/plugins/test_ugm.py) writes a
valid if not compact XCDA.
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from tests.plugins.test_ugm import make_charsmap
from tokenprism.plugins.ugm.xcda import Charsmap

# a few characters of each UTF-8 length, and bytes that are not UTF-8 by themselves
CHARS = ["a", "b", " ", "\x7f", "é", "ß", "▁", "ﬁ", "\U0001F600", "\U00010000"]
ODD_BYTES = [b"\x80", b"\xbf", b"\xc3", b"\xe2\x96", b"\xf0\x9f", b"\xc0\xaf", b"\xed\xa0\x80", b"\xff"]


def _chars(data: bytes) -> list[str] | None:
    try:
        return list(data.decode("utf-8"))
    except UnicodeDecodeError:
        return None


def _oracle(mapping: dict[bytes, bytes]) -> tuple[set[str], set[str], set[str], set[int]]:
    """(single, multi_first, second, inner_ascii) from the keys as bytes."""
    paths = {key[:k] for key in mapping for k in range(1, len(key) + 1)}
    single: set[str] = set()
    multi_first: set[str] = set()
    second: set[str] = set()
    for path in paths:
        # the shortest valid first character this path starts with
        for n in range(1, 5):
            first = _chars(path[:n])
            if first is not None and len(first) == 1 and len(path) >= n:
                if path == path[:n] and path in mapping:
                    single.add(first[0])
                if len(path) > n:
                    multi_first.add(first[0])
                    nxt = path[n:]
                    if nxt[0] < 0x80:
                        second.add(chr(nxt[0]))
                    else:
                        decoded = _chars(nxt)
                        if decoded is not None and len(decoded) == 1:
                            second.add(decoded[0])
                break
    inner = {b for key in mapping for b in key[1:] if b < 0x80}
    return single, multi_first, second, inner


_key = st.lists(st.one_of(st.sampled_from(CHARS).map(lambda c: c.encode()), st.sampled_from(ODD_BYTES)),
                min_size=1, max_size=4).map(b"".join)
_valid_key = st.lists(st.sampled_from(CHARS), min_size=1, max_size=4).map(lambda cs: "".join(cs).encode())
_repl = st.one_of(st.text(alphabet=CHARS, max_size=5).map(str.encode), st.sampled_from(ODD_BYTES))


@settings(max_examples=150, deadline=None)
@given(st.dictionaries(_key, _repl, min_size=1, max_size=12))
def test_charsmap_facts_match_the_mapping(mapping: dict[bytes, bytes]) -> None:
    cm = Charsmap(make_charsmap(mapping))
    single, multi_first, second, inner = _oracle(mapping)
    assert cm.single == single
    assert cm.multi_first == multi_first
    assert cm.second == second
    assert cm.inner_ascii == inner
    assert cm.space_in_keys == (0x20 in inner)
    texts = [t for t in (_chars(r) for r in mapping.values()) if t is not None]
    assert cm.longest == max([len(t) for t in texts] + [0])
    if len(texts) < len(mapping):
        assert not cm.utf8_ok  # some replacement is not UTF-8


@settings(max_examples=100, deadline=None)
@given(st.dictionaries(_valid_key, st.text(alphabet=CHARS, max_size=5).map(str.encode), min_size=1, max_size=12))
def test_valid_charsmap_is_utf8_and_strings_decode_on_demand(mapping: dict[bytes, bytes]) -> None:
    cm = Charsmap(make_charsmap(mapping))
    assert cm.utf8_ok
    assert cm.repl_str == {}  # nothing decoded before a lookup needs it
    for key, rep in mapping.items():
        length, value, _ = cm.walk(key, 0)
        assert length == len(key)
        assert cm.repl_text(value) == rep.decode()
    assert set(cm.repl_str.values()) == {r.decode() for r in mapping.values()}
