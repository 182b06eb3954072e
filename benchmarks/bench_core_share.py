"""How much of ``Model.encode`` and ``open_model`` is the core's own work.

    python benchmarks/bench_core_share.py [--vocabs gpt-2,llama-spm,bert-bge]
        [--repeat 3] [--baseline-python PY]

encode: per vocab and benchmark text, the time in ``Model.encode``, the
part spent in the plugin (``tokenizer.encode_fragment``), the rest (core:
special-token split, char spans, groups, the Encoding's tuples) and the
time to free the result. load: ``open_model`` split into reading the
header, ``vocab_from_gguf`` and the rest (plugin build, trim, freeze).

With ``--baseline-python`` every measurement also runs in that
interpreter (another TokenPrism build), interleaved round by round, so
that before and after come from one run. Each figure is the best of
``--repeat`` rounds, CPU time of a fresh worker process.
"""

from __future__ import annotations

import argparse
import gc
import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

_HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(_HERE))


def worker(vocab: str) -> dict[str, Any]:
    import benchtexts
    from benchpaths import vocab_file

    from tokenprism.core import model as model_mod
    from tokenprism.core.gguf_file import read_gguf
    from tokenprism.core.model import open_model
    from tokenprism.core.vocab import vocab_from_gguf

    path = str(vocab_file(vocab))
    out: dict[str, Any] = {}
    open_model(path)  # imports and plugin discovery happen once per process
    gc.collect()
    t0 = time.process_time()
    gf = read_gguf(path)
    t1 = time.process_time()
    vocab_from_gguf(gf)
    t2 = time.process_time()
    del gf
    gc.collect()
    t3 = time.process_time()
    open_model(path)
    t4 = time.process_time()
    out["load"] = {"read": t1 - t0, "vocab": t2 - t1, "open": t4 - t3}
    texts = {"english": benchtexts.english_text(), "mixed": benchtexts.mixed_text(), "code": benchtexts.code_text()}
    for name, text in texts.items():
        m = model_mod.open_model(path)
        m.encode("warm up")
        m.prepare()
        spent = [0.0]

        class Timed:
            """The plugin, with its encode_fragment timed."""

            def __init__(self, inner: Any) -> None:
                self.inner = inner

            def __getattr__(self, name: str) -> Any:
                return getattr(self.inner, name)

            def encode_fragment(self, t: str, after_special: bool) -> Any:
                a = time.process_time()
                r = self.inner.encode_fragment(t, after_special)
                spent[0] += time.process_time() - a
                return r

        m.tokenizer = Timed(m.tokenizer)  # type: ignore[assignment]
        a = time.process_time()
        enc = m.encode(text)
        b = time.process_time()
        n = len(enc)
        del enc
        c = time.process_time()
        out[name] = {"total": b - a, "plugin": spent[0], "core": b - a - spent[0], "free": c - b, "tokens": n}
    return out


def _run(python: str, vocab: str) -> dict[str, Any]:
    res = subprocess.run([python, str(Path(__file__).resolve()), "--worker", vocab], capture_output=True, text=True,
                         env={"PYTHONHASHSEED": "0", **__import__("os").environ})
    if res.returncode != 0:
        raise RuntimeError(res.stderr)
    return json.loads(res.stdout)  # type: ignore[no-any-return]


def _best(a: dict[str, Any] | None, b: dict[str, Any]) -> dict[str, Any]:
    if a is None:
        return b
    return {k: _best(a[k], v) if isinstance(v, dict) else min(a[k], v) for k, v in b.items()}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--worker", default="")
    ap.add_argument("--vocabs", default="gpt-2,llama-spm,bert-bge")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--baseline-python", default="")
    args = ap.parse_args()
    if args.worker:
        print(json.dumps(worker(args.worker)))
        return
    builds = {"new": sys.executable}
    if args.baseline_python:
        builds = {"base": args.baseline_python, **builds}
    for vocab in args.vocabs.split(","):
        best: dict[str, dict[str, Any] | None] = {k: None for k in builds}
        for _ in range(args.repeat):
            for k, py in builds.items():
                best[k] = _best(best[k], _run(py, vocab))
        print(f"== {vocab} (ms, best of {args.repeat})")
        for k, r in best.items():
            assert r is not None
            ld = r["load"]
            print(f"  {k:4} load: open {ld['open'] * 1e3:6.1f}  read {ld['read'] * 1e3:5.1f}  "
                  f"vocab {ld['vocab'] * 1e3:5.1f}")
            for name in ("english", "mixed", "code"):
                e = r[name]
                print(f"  {k:4} {name:7} total {e['total'] * 1e3:7.1f}  plugin {e['plugin'] * 1e3:7.1f}  "
                      f"core {e['core'] * 1e3:6.1f}  free {e['free'] * 1e3:5.1f}  ({e['tokens']} tokens)")


if __name__ == "__main__":
    main()
