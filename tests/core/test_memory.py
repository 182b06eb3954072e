"""core.memory: large blocks get mappings of their own, returned whole."""

from __future__ import annotations

import subprocess
import sys

import pytest

# A 20 MB block, freed, raises glibc's mapping threshold to 20 MB; a 2 MB
# block made after it then lands in the heap, unless the threshold is fixed.
_CODE = """
import sys
import numpy as np
from tokenprism.core.memory import map_large_blocks
if sys.argv[1] == "pin":
    assert map_large_blocks() and map_large_blocks()  # and again: nothing changes
a = np.ones(20 << 17); del a
b = np.ones(2 << 17)
p = b.ctypes.data
for line in open("/proc/self/maps"):
    if line.rstrip().endswith("[heap]"):
        lo, hi = (int(x, 16) for x in line.split()[0].split("-"))
        if lo <= p < hi:
            print("heap")
            break
else:
    print("mapped")
"""


def _where(mode: str) -> str:
    out = subprocess.run([sys.executable, "-c", _CODE, mode], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    return out.stdout.strip()


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's malloc")
def test_a_large_block_after_a_larger_one_is_freed_gets_its_own_mapping() -> None:
    assert _where("default") == "heap"  # glibc's moving threshold (the test's precondition)
    assert _where("pin") == "mapped"

