"""The pure-Python build gives the same token ids as the compiled one.

CI installs the compiled build, so the rest of the suite exercises the mypyc
extensions. mypyc leaves every module's ``.py`` source beside its extension;
here a fresh interpreter is made to import those sources instead (the same
import hook the benchmark suite uses for its "pure" column), checks that it
really runs pure Python, and runs every llama.cpp parity case in it, and
the explain-equals-encode tests (``Model.explain``'s ids are ``encode``'s
and llama.cpp's: tests/core/test_explain.py, ~20 s more in pure Python).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.core.test_explain import ALL as EXPLAIN_VOCABS
from tests.refdata import inp_out_cases, special_cases, vocab_source
from tokenprism.core.build_info import build_kind

ROOT = Path(__file__).resolve().parent.parent
PATHS = ("tests/plugins", "tests/core/test_explain.py")
"""Where the pure run selects the tests named ``*parity*``."""
EXPLAIN_PARITY_TESTS = len(EXPLAIN_VOCABS) + 1  # one per reference vocab, and the random-text property

BOOTSTRAP = """
import json
import sys
sys.path.insert(0, {bench!r})
from run_suite import _force_pure_sources
_force_pure_sources()
from tokenprism.core.build_info import module_status
status = module_status()
bad = {{m: s for m, s in status.items() if s != "pure"}}
if bad:
    print("not pure:", bad)
    sys.exit(3)
import pytest

class Outcomes:
    # each test's outcome by id (its worst phase), so the parent checks counts, not wording
    def __init__(self):
        self.seen = {{}}

    def pytest_runtest_logreport(self, report):
        rank = ["passed", "skipped", "failed"]
        if report.when == "call" or report.outcome != "passed":
            old = self.seen.get(report.nodeid, "passed")
            self.seen[report.nodeid] = max(old, report.outcome, key=rank.index)

outcomes = Outcomes()
code = pytest.main(["-q", "-p", "no:cacheprovider", "-k", "parity", *{paths!r}], plugins=[outcomes])
with open({report!r}, "w", encoding="utf-8") as f:
    json.dump(outcomes.seen, f)
sys.exit(code)
"""


def _expected_cases(vocab_dir: str) -> int:
    """Every case of every reference vocab (each is one parity test), and
    the explain-equals-encode tests."""
    names = [f[len("ggml-vocab-"):-len(".gguf")] for f in os.listdir(vocab_dir)
             if f.startswith("ggml-vocab-") and f.endswith(".gguf")]
    return sum(len(inp_out_cases(n)) + len(special_cases(n)) for n in names) + EXPLAIN_PARITY_TESTS


@pytest.mark.skipif(build_kind() != "compiled", reason="this install is pure already: the whole suite ran pure")
def test_parity_cases_pass_on_the_pure_sources(tmp_path: Path) -> None:
    source = vocab_source()  # found, or fetched now, exactly as the parity modules do
    if source.path is None:
        pytest.skip(source.skip_reason)
    env = dict(os.environ)
    env.pop("TOKENPRISM_EXPECT_COMPILED", None)
    env["TOKENPRISM_VOCAB_DIR"] = source.path  # the child reads the same vocabs, never fetches its own
    report = tmp_path / "outcomes.json"
    code = BOOTSTRAP.format(bench=str(ROOT / "benchmarks"), report=str(report), paths=list(PATHS))
    proc = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=900)
    tail = "\n".join(proc.stdout.splitlines()[-15:]) + proc.stderr[-2000:]
    assert proc.returncode != 3, tail
    assert proc.returncode == 0, tail
    outcomes: dict[str, str] = json.loads(report.read_text(encoding="utf-8"))
    by_outcome = {o: sorted(n for n, got in outcomes.items() if got == o) for o in set(outcomes.values())}
    # every parity case ran and passed in the pure build: none skipped, none missing
    assert set(by_outcome) == {"passed"}, {o: n[:5] for o, n in by_outcome.items() if o != "passed"}
    assert len(by_outcome["passed"]) == _expected_cases(source.path) > 0
    explained = [n for n in by_outcome["passed"] if n.startswith("tests/core/test_explain.py::")]
    assert len(explained) == EXPLAIN_PARITY_TESTS
