"""llama.cpp as an oracle: tokenize or detokenize with llama-cpp-python.

Runs in a Python that has ``llama_cpp`` (0.3.36 is the reference the
parity data was made with), not in the project's own environment, so it
imports nothing from tokenprism. Only the vocabulary is loaded
(``vocab_only``), through the same low-level calls
``benchmarks/run_suite.py`` times.

    python llama_oracle.py VOCAB.gguf [--add-special] [--parse-special]
        stdin: JSON list of texts      stdout: JSON list of id lists
    python llama_oracle.py VOCAB.gguf --decode [--remove-special] [--no-special]
        stdin: JSON list of id lists   stdout: JSON list of hex strings
        (the detokenized bytes; they may end inside a UTF-8 character)

A text llama.cpp refuses gives ``null`` in its place; a vocab it cannot
load exits with status 2.
"""

from __future__ import annotations

import argparse
import ctypes
import json
import sys
from typing import Any


def quiet_llama() -> Any:
    """llama_cpp, its log silenced and its backend started (also for the
    benchmarks' llama.cpp side)."""
    import llama_cpp as lc

    @lc.llama_log_callback  # type: ignore[misc]
    def quiet(level: int, text: bytes, user_data: ctypes.c_void_p) -> None:
        pass

    lc.llama_log_set(quiet, ctypes.c_void_p())
    lc.llama_backend_init()
    # the callback must outlive every call into llama.cpp
    quiet_llama.keep = quiet  # type: ignore[attr-defined]
    return lc


def load_vocab_only(lc: Any, path: str) -> Any:
    """The model of ``path`` with only its vocabulary loaded; RuntimeError
    when llama.cpp cannot load it."""
    params = lc.llama_model_default_params()
    params.vocab_only = True
    model = lc.llama_model_load_from_file(path.encode(), params)
    if not model:
        raise RuntimeError(f"llama.cpp cannot load {path}")
    return model


def tokenize(lc: Any, vocab: Any, text: str, add_special: bool, parse_special: bool) -> list[int] | None:
    raw = text.encode("utf-8", "surrogatepass")
    cap = len(raw) + 16
    buf = (lc.llama_token * cap)()
    n = lc.llama_tokenize(vocab, raw, len(raw), buf, cap, add_special, parse_special)
    if n < 0:  # the buffer was too small: -n is the size needed
        cap = -n
        buf = (lc.llama_token * cap)()
        n = lc.llama_tokenize(vocab, raw, len(raw), buf, cap, add_special, parse_special)
    return None if n < 0 else list(buf[:n])


def detokenize(lc: Any, vocab: Any, ids: list[int], remove_special: bool, special: bool) -> bytes | None:
    arr = (lc.llama_token * max(1, len(ids)))(*ids)
    cap = 64 + 16 * len(ids)
    for _ in range(2):
        out = ctypes.create_string_buffer(cap)
        n = lc.llama_detokenize(vocab, arr, len(ids), out, cap, remove_special, special)
        if n >= 0:
            return out.raw[:n]
        cap = -n
    return None


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("vocab")
    ap.add_argument("--add-special", action="store_true")
    ap.add_argument("--parse-special", action="store_true")
    ap.add_argument("--decode", action="store_true")
    ap.add_argument("--remove-special", action="store_true")
    ap.add_argument("--no-special", action="store_true", help="decode: control tokens give no text")
    args = ap.parse_args(argv)
    items = json.loads(sys.stdin.read())
    lc = quiet_llama()
    try:
        model = load_vocab_only(lc, args.vocab)
    except RuntimeError as e:
        print(e, file=sys.stderr)
        return 2
    vocab = lc.llama_model_get_vocab(model)
    out: list[Any] = []
    for item in items:
        if args.decode:
            raw = detokenize(lc, vocab, list(item), args.remove_special, not args.no_special)
            out.append(None if raw is None else raw.hex())
        else:
            out.append(tokenize(lc, vocab, item, args.add_special, args.parse_special))
    lc.llama_model_free(model)
    json.dump(out, sys.stdout)
    return 0


if __name__ == "__main__":
    sys.exit(main())
