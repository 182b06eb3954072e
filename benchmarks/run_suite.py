"""The benchmark suite: load time, memory and throughput of TokenPrism
(compiled and pure Python) next to llama.cpp, on every reference vocabulary,
in one run.

    python benchmarks/run_suite.py [--vocab-dir DIR] [--vocabs gpt-2,gemma-4]
        [--quick] [--repeat N] [--load-only]
        [--compiled-python PY] [--pure-python PY] [--llama-python PY]
        [--json out.json] [--compare old.json]

Every measurement runs in a fresh subprocess, one per implementation, vocab
and round; the rounds interleave the implementations (compiled, pure,
llama.cpp, compiled, ...) so that a machine busy with something else slows
all of them alike, and each figure is the best of ``--repeat`` rounds.
Times are CPU time of the measuring process. Every worker, llama.cpp's
too, runs with ``OPENBLAS_NUM_THREADS=1``: both import numpy, whose
OpenBLAS starts a thread per core that spins for ~50 ms of CPU after the
import, billed to whatever the process measures then (a small vocab's
load, the first encodes), and neither side calls BLAS.

- load: open the file until the tokenizer is built (``open_model`` /
  ``llama_model_load_from_file`` with ``vocab_only``). ready: load plus
  tokenizing one short sentence, which also builds whatever a plugin makes
  on first use (BPE merge ranks, ...): the time until the first tokens.
- MB/s: tokenizing each text with ``add_special`` and ``parse_special``
  off on both sides (``Model.encode`` / ``llama_tokenize``), on a model
  opened afresh for each text, so that no word cache filled by another
  text helps. The ids of both sides are compared by a hash; a ``!`` marks
  a mismatch.
- memory: growth of the resident set (RSS) from before the open until
  the model is ready, and, in one more compiled run per vocab, the bytes
  Python still holds after the open and the peak during it (tracemalloc).

Texts (made deterministically by ``benchtexts``, no files shipped):
0.5 MB English prose, 0.5 MB mixed scripts (CJK, Cyrillic, Arabic, Greek,
Devanagari, Hangul, emoji, code) and 100 KB of Python-like source;
``--quick`` uses a tenth of each and one round.

Interpreters: the compiled and pure builds need a TokenPrism install each.
By default this interpreter's install is used; when it is compiled, the
pure column runs the same install's ``.py`` sources (mypyc installs them
next to the extension modules; the worker imports those only), so one
compiled install gives both columns. Or name them:

    python3 -m venv /tmp/tp-compiled && /tmp/tp-compiled/bin/pip install '.[bench]'
    python3 -m venv /tmp/tp-pure && TOKENPRISM_PURE=1 /tmp/tp-pure/bin/pip install .
    /tmp/tp-compiled/bin/python benchmarks/run_suite.py --pure-python /tmp/tp-pure/bin/python

llama.cpp runs in ``--llama-python`` (default: this interpreter if it has
``llama-cpp-python``, the ``[bench]`` extra); without one its columns stay
empty.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import sys
import tempfile
import time
from array import array
from pathlib import Path
from typing import Any, Sequence

_HERE = Path(__file__).resolve().parent

VOCABS = ["aquila", "baichuan", "bert-bge", "command-r", "deepseek-coder", "deepseek-llm", "falcon",
          "gemma-4", "gpt-2", "gpt-neox", "llama-bpe", "llama-spm", "mpt", "nomic-bert-moe", "phi-3",
          "qwen2", "qwen35", "refact", "starcoder"]
TEXTS = ("english", "mixed", "code")
IMPLS = ("compiled", "pure", "llama.cpp")
WARM_UP = "Hello, world! Unrelated words warm nothing up."
MEMORY_TARGET = 150e6  # bytes of RSS growth of an open model (ready or full); "!" in the table where exceeded


# ---- worker side (runs in the measured interpreter) -----------------------------


def _rss() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def _digest(ids: Sequence[int]) -> str:
    return hashlib.sha1(array("i", ids).tobytes()).hexdigest()[:12]


def _force_pure_sources() -> None:
    """Make every ``tokenprism`` module load from its ``.py`` source even
    where a compiled extension sits next to it."""
    import importlib.machinery as im

    class PureFinder:
        @staticmethod
        def find_spec(name: str, path: Sequence[str] | None, target: object = None) -> Any:
            if not name.startswith("tokenprism.") or path is None:
                return None
            for entry in path:
                finder = im.FileFinder(entry, (im.SourceFileLoader, im.SOURCE_SUFFIXES))
                spec = finder.find_spec(name)
                if spec is not None and spec.loader is not None:
                    return spec
            return None

    sys.meta_path.insert(0, PureFinder())  # type: ignore[arg-type]


def _prepare(model: Any) -> None:
    # every table built, as llama.cpp builds them while loading, so that
    # MB/s compares tokenizing alone (builds without prepare() have none)
    prepare = getattr(model, "prepare", None)
    if prepare is not None:
        prepare()


def worker_tokenprism(path: str, text_dir: str, texts: list[str], trace: bool) -> dict[str, Any]:
    import gc

    t0 = time.process_time()
    from tokenprism.core import open_model
    from tokenprism.core.build_info import build_kind
    from tokenprism.core.plugins import tokenizer_specs

    # importing the plugins happens once per process, not once per file
    tokenizer_specs()
    out: dict[str, Any] = {"build": build_kind(), "import": time.process_time() - t0}
    gc.collect()
    if trace:
        import tracemalloc

        tracemalloc.start()
        m = open_model(path)
        m.encode(WARM_UP)
        cur, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        out["traced"] = cur
        out["traced_peak"] = peak
        return out
    rss0 = _rss()
    t0 = time.process_time()
    w0 = time.perf_counter()
    m = open_model(path)
    t1 = time.process_time()
    w1 = time.perf_counter()
    rss1 = _rss()
    m.encode(WARM_UP)
    t2 = time.process_time()
    rss2 = _rss()
    _prepare(m)
    t3 = time.process_time()
    out.update(load=t1 - t0, ready=t2 - t0, full=t3 - t0, load_wall=w1 - w0, rss_load=rss1 - rss0,
               rss_ready=rss2 - rss0, rss_full=_rss() - rss0, kind=m.kind, n_tokens=len(m))
    enc: dict[str, Any] = {}
    for name in texts:
        text = Path(text_dir, name + ".txt").read_text(encoding="utf-8")
        del m
        m = open_model(path)
        m.encode(WARM_UP)
        _prepare(m)
        t0 = time.process_time()
        result = m.encode(text)
        took = time.process_time() - t0
        # freed after the clock stops, as llama.cpp's id list is
        ids = result.token_ids
        enc[name] = [took, _digest(ids), len(ids)]
        del result
    out["encode"] = enc
    return out


def worker_llama(path: str, text_dir: str, texts: list[str]) -> dict[str, Any]:
    sys.path.insert(0, str(_HERE.parent / "tests"))
    from llama_oracle import load_vocab_only, quiet_llama

    lc = quiet_llama()

    def tokenize(vocab: Any, raw: bytes) -> list[int]:
        buf = (lc.llama_token * (len(raw) + 8))()
        n = lc.llama_tokenize(vocab, raw, len(raw), buf, len(raw) + 8, False, False)
        if n < 0:
            raise RuntimeError(f"llama_tokenize failed ({n})")
        return buf[:n]  # type: ignore[no-any-return]

    out: dict[str, Any] = {"build": "llama.cpp " + getattr(lc, "__version__", "?")}
    rss0 = _rss()
    t0 = time.process_time()
    w0 = time.perf_counter()
    model = load_vocab_only(lc, path)
    t1 = time.process_time()
    w1 = time.perf_counter()
    rss1 = _rss()
    vocab = lc.llama_model_get_vocab(model)
    tokenize(vocab, WARM_UP.encode())
    t2 = time.process_time()
    out.update(load=t1 - t0, ready=t2 - t0, load_wall=w1 - w0, rss_load=rss1 - rss0, rss_ready=_rss() - rss0,
               n_tokens=lc.llama_vocab_n_tokens(vocab))
    enc: dict[str, Any] = {}
    for name in texts:
        raw = Path(text_dir, name + ".txt").read_bytes()
        # the token buffer is made outside the clock, as Model.encode's
        # result tuples are made inside it: llama.cpp's side is its C call
        buf = (lc.llama_token * (len(raw) + 8))()
        t0 = time.process_time()
        n = lc.llama_tokenize(vocab, raw, len(raw), buf, len(raw) + 8, False, False)
        secs = time.process_time() - t0
        enc[name] = [secs, _digest(buf[:max(n, 0)]), n]
    out["encode"] = enc
    lc.llama_model_free(model)
    return out


# ---- driver side ----------------------------------------------------------------


def _probe_build(python: str, force_pure: bool) -> str:
    code = ("import sys; sys.argv=['x']; " + ("import run_suite; run_suite._force_pure_sources(); " if force_pure else "")
            + "from tokenprism.core.build_info import build_kind; print(build_kind())")
    env = dict(os.environ, PYTHONPATH=str(_HERE) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    try:
        res = subprocess.run([python, "-c", code], capture_output=True, text=True, timeout=120, env=env)
    except OSError:
        return "missing"
    return res.stdout.strip() if res.returncode == 0 else "missing"


def _has_llama(python: str) -> bool:
    try:
        res = subprocess.run([python, "-c", "import llama_cpp"], capture_output=True, timeout=120)
    except OSError:
        return False
    return res.returncode == 0


def resolve_interpreters(args: argparse.Namespace) -> dict[str, tuple[str, bool]]:
    """impl -> (python, force_pure); an impl without an interpreter is left out."""
    out: dict[str, tuple[str, bool]] = {}
    here = sys.executable
    here_kind = _probe_build(here, False)
    if args.compiled_python:
        out["compiled"] = (args.compiled_python, False)
    elif here_kind == "compiled":
        out["compiled"] = (here, False)
    if args.baseline_python:
        out["pure"] = (args.baseline_python, False)
    elif args.pure_python:
        out["pure"] = (args.pure_python, False)
    elif here_kind == "pure":
        out["pure"] = (here, False)
    elif here_kind in ("compiled", "mixed"):
        out["pure"] = (here, True)
    for impl, (py, pure) in list(out.items()):
        if impl == "pure" and args.baseline_python:
            print(f"note: the pure column measures {py}, a baseline build (A/B of two builds in one run)",
                  file=sys.stderr)
            continue
        kind = _probe_build(py, pure)
        want = "pure" if impl == "pure" else "compiled"
        if kind != want:
            print(f"note: {py} runs a {kind} TokenPrism build, not {want}; the {impl} column is left out",
                  file=sys.stderr)
            del out[impl]
    llama = args.llama_python or here
    if _has_llama(llama):
        out["llama.cpp"] = (llama, False)
    else:
        print(f"note: {llama} has no llama-cpp-python (pip install '.[bench]'); "
              "the llama.cpp column is left out", file=sys.stderr)
    for impl in IMPLS:
        if impl not in out:
            print(f"note: no {impl} interpreter", file=sys.stderr)
    return out


def _run_worker(python: str, force_pure: bool, impl: str, path: str, text_dir: str, texts: Sequence[str],
                trace: bool = False) -> dict[str, Any]:
    args = [python, str(Path(__file__).resolve()), "--worker", "llama" if impl == "llama.cpp" else "tokenprism",
            "--path", path, "--text-dir", text_dir, "--texts", ",".join(texts)]
    if force_pure:
        args.append("--force-pure")
    if trace:
        args.append("--trace")
    env = dict(os.environ, PYTHONHASHSEED="0", OPENBLAS_NUM_THREADS="1")
    res = subprocess.run(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    if res.returncode != 0:
        return {"error": (res.stderr.strip().splitlines() or ["?"])[-1]}
    return json.loads(res.stdout)  # type: ignore[no-any-return]


def _merge_best(best: dict[str, Any], new: dict[str, Any]) -> dict[str, Any]:
    if not best or "error" in best:
        return new
    if "error" in new:
        return best
    for k in ("load", "ready", "full", "load_wall", "rss_load", "rss_ready", "rss_full"):
        if k in best and k in new:
            best[k] = min(best[k], new[k])
    for t, v in new.get("encode", {}).items():
        if v[0] < best["encode"][t][0]:
            best["encode"][t] = v
    return best


def write_texts(folder: str, quick: bool) -> dict[str, int]:
    sys.path.insert(0, str(_HERE))
    import benchtexts

    scale = 10 if quick else 1
    tx = {"english": benchtexts.english_text(500_000 // scale), "mixed": benchtexts.mixed_text(500_000 // scale),
          "code": benchtexts.code_text(100_000 // scale)}
    sizes: dict[str, int] = {}
    for name, text in tx.items():
        raw = text.encode("utf-8")
        Path(folder, name + ".txt").write_bytes(raw)
        sizes[name] = len(raw)
    return sizes


def _ms(x: float | None) -> str:
    return "-" if x is None else f"{x * 1e3:.0f}" if x >= 0.1 else f"{x * 1e3:.1f}"


def _ratio(a: float | None, b: float | None) -> str:
    return "-" if not a or not b else f"{a / b:.1f}x"


def _mbs(x: float | None) -> str:
    return "-" if x is None else f"{x:.2f}"


def print_tables(res: dict[str, Any], sizes: dict[str, int], out: Any = sys.stdout) -> None:
    def get(vocab: str, impl: str, key: str) -> Any:
        r = res["results"].get(vocab, {}).get(impl, {})
        return r.get(key)

    print("\nLoad (ms, CPU; best of rounds). ready = load + first short encode; full = ready + every table "
          "a plugin would build later on demand (Model.prepare). Ratios: llama.cpp load / TokenPrism compiled "
          "load (target >= 4x), pure / compiled. MB c: RSS growth at load/ready/full.", file=out)
    head = (f"{'vocab':15s} {'type':4s} {'tokens':>7s} | {'compiled':>8s} {'ready':>6s} {'full':>6s} | "
            f"{'pure':>7s} {'ready':>7s} | "
            f"{'llama':>6s} {'ready':>6s} | {'llama/c':>7s} {'l/c rdy':>7s} {'pure/c':>6s} | "
            f"{'MB c':>13s} {'MB l':>5s}")
    print(head, file=out)
    print("-" * len(head), file=out)
    for vocab in res["vocabs"]:
        c_load, c_ready = get(vocab, "compiled", "load"), get(vocab, "compiled", "ready")
        c_full = get(vocab, "compiled", "full")
        p_load, p_ready = get(vocab, "pure", "load"), get(vocab, "pure", "ready")
        l_load, l_ready = get(vocab, "llama.cpp", "load"), get(vocab, "llama.cpp", "ready")
        kind = get(vocab, "compiled", "kind") or get(vocab, "pure", "kind") or "?"
        n = get(vocab, "compiled", "n_tokens") or get(vocab, "pure", "n_tokens") or get(vocab, "llama.cpp", "n_tokens")
        rss_c = (get(vocab, "compiled", "rss_load"), get(vocab, "compiled", "rss_ready"),
                 get(vocab, "compiled", "rss_full"))
        rss_l = get(vocab, "llama.cpp", "rss_ready")
        most = max([x for x in rss_c if x is not None], default=None)
        over = most is not None and most > MEMORY_TARGET
        mb_c = "-" if rss_c[0] is None else "/".join(f"{x / 1e6:.0f}" for x in rss_c if x is not None) + \
            ("!" if over else "")
        print(f"{vocab:15s} {kind:4s} {n or 0:7d} | {_ms(c_load):>8s} {_ms(c_ready):>6s} {_ms(c_full):>6s} | "
              f"{_ms(p_load):>7s} "
              f"{_ms(p_ready):>7s} | {_ms(l_load):>6s} {_ms(l_ready):>6s} | {_ratio(l_load, c_load):>7s} "
              f"{_ratio(l_ready, c_ready):>7s} {_ratio(p_load, c_load):>6s} | "
              f"{mb_c:>13s} {'-' if rss_l is None else f'{rss_l / 1e6:.0f}':>5s}",
              file=out)
    traced = [(v, get(v, "compiled", "traced"), get(v, "compiled", "traced_peak")) for v in res["vocabs"]]
    traced = [t for t in traced if t[1] is not None]
    if traced:
        print("\nMemory (MB): 'MB c' above is the RSS growth of the compiled build at load/ready/full (target <= 150), "
              "'!' over it, 'MB l' llama.cpp's at ready; Python heap at ready (tracemalloc, compiled):", file=out)
        print("  " + ", ".join(f"{v} {c / 1e6:.0f} (peak {p / 1e6:.0f})" for v, c, p in traced), file=out)
    if not any(get(v, i, "encode") for v in res["vocabs"] for i in IMPLS):
        return
    print("\nThroughput (MB/s, CPU; best of rounds). c = compiled, p = pure, l = llama.cpp; "
          "c/l target >= 1.0x; c/p target >= 3x. '!' = ids differ from llama.cpp.", file=out)
    head = f"{'vocab':15s} {'text':8s} | {'c':>7s} {'p':>7s} {'l':>7s} | {'c/l':>6s} {'p/l':>6s} {'c/p':>6s}"
    print(head, file=out)
    print("-" * len(head), file=out)
    for vocab in res["vocabs"]:
        for t in TEXTS:
            speeds: dict[str, float | None] = {}
            marks: dict[str, str] = {}
            ref = (get(vocab, "llama.cpp", "encode") or {}).get(t)
            for impl in IMPLS:
                e = (get(vocab, impl, "encode") or {}).get(t)
                speeds[impl] = sizes[t] / 1e6 / max(e[0], 1e-9) if e else None
                marks[impl] = "!" if e and ref and impl != "llama.cpp" and e[1] != ref[1] else " "
            c, p, l = speeds["compiled"], speeds["pure"], speeds["llama.cpp"]
            print(f"{vocab:15s} {t:8s} | {_mbs(c):>6s}{marks['compiled']} {_mbs(p):>6s}{marks['pure']} "
                  f"{_mbs(l):>7s} | {_ratio(c, l):>6s} {_ratio(p, l):>6s} {_ratio(c, p):>6s}", file=out)


def print_compare(res: dict[str, Any], old: dict[str, Any], out: Any = sys.stdout) -> None:
    """Load and throughput now against an earlier JSON run (new / old time)."""
    print(f"\nCompared with {old.get('when', '?')} (time now / time then; < 1 is faster):", file=out)
    print(f"{'vocab':15s} {'impl':9s} {'load':>6s} {'ready':>6s} " + " ".join(f"{t:>8s}" for t in TEXTS), file=out)
    for vocab in res["vocabs"]:
        for impl in IMPLS:
            a = res["results"].get(vocab, {}).get(impl)
            b = old.get("results", {}).get(vocab, {}).get(impl)
            if not a or not b or "error" in a or "error" in b:
                continue
            cells = [_ratio(a.get(k), b.get(k)) for k in ("load", "ready")]
            for t in TEXTS:
                ea, eb = (a.get("encode") or {}).get(t), (b.get("encode") or {}).get(t)
                cells.append(_ratio(ea[0], eb[0]) if ea and eb else "-")
            print(f"{vocab:15s} {impl:9s} " + " ".join(f"{c:>6s}" for c in cells[:2]) + " "
                  + " ".join(f"{c:>8s}" for c in cells[2:]), file=out)


def main(default_vocabs: Sequence[str] = VOCABS, title: str = "") -> None:
    ap = argparse.ArgumentParser(description=(title + "\n\n" if title else "") + (__doc__ or ""), formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--vocab-dir", default="",
                    help="default: $TOKENPRISM_VOCAB_DIR, ../shared/llama-vocab, or the `tokenprism samples` folder")
    ap.add_argument("--vocabs", default="", help="comma-separated names (default: all 19)")
    ap.add_argument("--quick", action="store_true", help="texts a tenth of the size, one round")
    ap.add_argument("--repeat", type=int, default=0, help="rounds (default 3, 1 with --quick)")
    ap.add_argument("--load-only", action="store_true", help="no throughput")
    ap.add_argument("--no-trace", action="store_true", help="skip the tracemalloc run")
    ap.add_argument("--compiled-python", default="")
    ap.add_argument("--pure-python", default="")
    ap.add_argument("--llama-python", default="")
    ap.add_argument("--baseline-python", default="",
                    help="another TokenPrism install measured in the pure column's place: before/after of a change "
                         "in one interleaved run (the compiled/pure ratios then read after/before)")
    ap.add_argument("--json", default="",
                    help="write the results here (default: build/bench/suite-<date>-<time>.json in the repo)")
    ap.add_argument("--compare", default="", help="an earlier --json file to compare with")
    ap.add_argument("--worker", choices=("tokenprism", "llama"), help=argparse.SUPPRESS)
    ap.add_argument("--path", help=argparse.SUPPRESS)
    ap.add_argument("--text-dir", help=argparse.SUPPRESS)
    ap.add_argument("--texts", default="", help=argparse.SUPPRESS)
    ap.add_argument("--force-pure", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--trace", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()

    if args.worker:
        texts = [t for t in args.texts.split(",") if t]
        if args.worker == "llama":
            r = worker_llama(args.path, args.text_dir, texts)
        else:
            if args.force_pure:
                _force_pure_sources()
            r = worker_tokenprism(args.path, args.text_dir, texts, args.trace)
        json.dump(r, sys.stdout)
        return

    if not args.vocab_dir:
        from benchpaths import vocab_dir

        args.vocab_dir = str(vocab_dir())
    vocabs = [v for v in args.vocabs.split(",") if v] or list(default_vocabs)
    missing = [v for v in vocabs if not os.path.exists(os.path.join(args.vocab_dir, f"ggml-vocab-{v}.gguf"))]
    if missing:
        sys.exit(f"not found in {args.vocab_dir}: {', '.join(missing)} (set --vocab-dir or TOKENPRISM_VOCAB_DIR)")
    repeat = args.repeat or (1 if args.quick else 3)
    interps = resolve_interpreters(args)
    if not interps:
        sys.exit("nothing to measure")
    print("measuring: " + ", ".join(f"{k} = {py}{' (.py sources)' if pure else ''}"
                                    for k, (py, pure) in interps.items()), file=sys.stderr)
    texts = [] if args.load_only else list(TEXTS)
    res: dict[str, Any] = {"when": time.strftime("%Y-%m-%d %H:%M:%S %Z"), "quick": args.quick, "repeat": repeat,
                           "interpreters": {k: [py, pure] for k, (py, pure) in interps.items()},
                           "vocabs": vocabs, "results": {}}
    with tempfile.TemporaryDirectory(prefix="tp-suite-") as td:
        sizes = write_texts(td, args.quick)
        res["text_bytes"] = sizes
        for vocab in vocabs:
            path = os.path.join(args.vocab_dir, f"ggml-vocab-{vocab}.gguf")
            best: dict[str, dict[str, Any]] = {}
            for rnd in range(repeat):
                for impl, (py, pure) in interps.items():
                    r = _run_worker(py, pure, impl, path, td, texts)
                    best[impl] = _merge_best(best.get(impl, {}), r)
                    print(f"  {vocab} round {rnd + 1}/{repeat} {impl}: "
                          + (r["error"] if "error" in r else f"load {_ms(r['load'])} ms"), file=sys.stderr, flush=True)
            if "compiled" in interps and not args.no_trace:
                py, pure = interps["compiled"]
                tr = _run_worker(py, pure, "compiled", path, td, [], trace=True)
                if "error" not in tr and "compiled" in best:
                    best["compiled"]["traced"] = tr["traced"]
                    best["compiled"]["traced_peak"] = tr["traced_peak"]
            res["results"][vocab] = best
    print_tables(res, sizes)
    if args.compare:
        with open(args.compare) as f:
            print_compare(res, json.load(f))
    out = Path(args.json) if args.json else _HERE.parent / "build" / "bench" / time.strftime("suite-%Y%m%d-%H%M%S.json")
    out.parent.mkdir(parents=True, exist_ok=True)
    with open(out, "w") as f:
        json.dump(res, f, indent=1)
    print(f"\nresults written to {out} (compare a later run with --compare {out})", file=sys.stderr)


if __name__ == "__main__":
    main()
