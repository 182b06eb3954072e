"""The pure-Python build gives the same token ids as the compiled one.

CI installs the compiled build, so the rest of the suite exercises the mypyc
extensions. mypyc leaves every module's ``.py`` source beside its extension;
here a fresh interpreter is made to import those sources instead (the same
import hook the benchmark suite uses for its "pure" column), checks that it
really runs pure Python, and runs every llama.cpp parity case in it.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tokenprism.core.build_info import build_kind

ROOT = Path(__file__).resolve().parent.parent

BOOTSTRAP = """
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
sys.exit(pytest.main(["-q", "-p", "no:cacheprovider", "-k", "parity", "tests/plugins"]))
"""


@pytest.mark.skipif(build_kind() != "compiled", reason="this install is pure already: the whole suite ran pure")
def test_parity_cases_pass_on_the_pure_sources() -> None:
    env = dict(os.environ)
    env.pop("TOKENPRISM_EXPECT_COMPILED", None)
    code = BOOTSTRAP.format(bench=str(ROOT / "benchmarks"))
    proc = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=900)
    tail = "\n".join(proc.stdout.splitlines()[-15:])
    assert proc.returncode != 3, tail
    if proc.returncode == 5:
        pytest.skip("no parity cases collected (reference vocabs absent)")
    assert proc.returncode == 0, tail
    assert " passed" in tail and " failed" not in tail, tail
