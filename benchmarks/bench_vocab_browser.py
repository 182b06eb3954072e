"""How fast the vocab browser's queries are on a big vocabulary.

Times building the :class:`~tokenprism.core.library.vocab_query.VocabIndex` (and
its lazily built parts: lower-cased texts, piece order, merge table), then
substring, regex, id-range and type filters and a sort by every column,
each the median of a few runs. No Qt: this is the work the browser's
worker thread does.

    python benchmarks/bench_vocab_browser.py [MODEL.gguf] [--repeat N] [--json]

Without a model it uses gemma-4 (262 144 tokens) from the reference
vocabularies.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Callable

from tokenprism.core import open_model
from tokenprism.core.library.vocab_query import COLUMNS, Query, VocabIndex, kind_code

ROOT = Path(__file__).resolve().parent.parent

QUERIES: tuple[tuple[str, Query], ...] = (
    ("substring ' the'", Query(" the")),
    ("substring 'e' (many hits)", Query("e")),
    ("substring 'The' case-sensitive", Query("The", case_sensitive=True)),
    ("regex 'ing'", Query("ing", mode="regex")),
    ("regex '^▁?un.*able$' (anchors)", Query("^▁?un.*able$", mode="regex")),
    ("regex '[0-9]{3}'", Query("[0-9]{3}", mode="regex")),
    ("regex '.' (every token)", Query(".", mode="regex")),
    ("regex '(?<=a)b' (lookbehind: hits checked alone)", Query("(?<=a)b", mode="regex")),
    ("regex '(?<=(a))b' (group in lookbehind: piece by piece)", Query("(?<=(a))b", mode="regex")),
    ("id range '1000-50000, 7'", Query("1000-50000, 7", mode="ids")),
    ("type filter: byte tokens", Query("", kind=kind_code("byte"))),
)


def timed(fn: Callable[[], object], repeat: int) -> float:
    runs = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        runs.append((time.perf_counter() - t0) * 1000.0)
    return statistics.median(runs)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("model", nargs="?", default="")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    if not args.model:
        from benchpaths import vocab_file

        args.model = str(vocab_file("gemma-4"))
    if not Path(args.model).exists():
        print(f"model not found: {args.model}", file=sys.stderr)
        return 1
    model = open_model(args.model)
    rows: list[tuple[str, float, int]] = []

    t0 = time.perf_counter()
    index = VocabIndex(model)
    rows.append(("build index", (time.perf_counter() - t0) * 1000.0, index.size))
    for name, fn in (("first substring (lower-cases all pieces)", lambda: index.run(Query("zq"))),
                     ("first regex (joins all pieces)", lambda: index.run(Query("zq", mode="regex"))),
                     ("score ranks", index.score_ranks), ("piece order (first sort by piece)", index.piece_order),
                     ("merge table", index.merge_ranks)):
        t0 = time.perf_counter()
        fn()
        rows.append((name, (time.perf_counter() - t0) * 1000.0, 0))
    for name, q in QUERIES:
        hits = len(index.run(q))
        rows.append((name, timed(lambda: index.run(q), args.repeat), hits))
    for col in COLUMNS:
        for desc in (False, True):
            q = Query("", sort=col, descending=desc)
            rows.append((f"sort all by {col}{' desc' if desc else ''}", timed(lambda: index.run(q), args.repeat),
                         index.size))
    if model.vocab.merges:
        piece = model.vocab.pieces[len(model) // 2]
        tid = len(model) // 2
        rows.append((f"merge tree of {piece!r}", timed(lambda: index.merge_tree(tid), args.repeat), 0))

    if args.json:
        print(json.dumps({"model": args.model, "tokens": index.size,
                          "timings_ms": [{"what": w, "ms": round(ms, 2), "rows": n} for w, ms, n in rows]}, indent=1))
        return 0
    print(f"{Path(args.model).name}: {index.size:,} tokens ({model.kind})")
    for what, ms, n in rows:
        print(f"  {what:<56} {ms:9.1f} ms" + (f"   {n:>8,} rows" if n else ""))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
