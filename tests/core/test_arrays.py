"""core.arrays: np.unique's values without its first-call import."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from tokenprism.core.arrays import distinct_sorted


@given(st.lists(st.integers(-2**40, 2**40), max_size=60))
def test_distinct_sorted_is_np_unique_of_ints(values: list[int]) -> None:
    a = np.asarray(values, dtype=np.int64)
    assert distinct_sorted(a).tolist() == np.unique(a).tolist()


@given(st.lists(st.floats(allow_nan=False, width=32), max_size=60))
def test_distinct_sorted_is_np_unique_of_floats(values: list[float]) -> None:
    a = np.asarray(values, dtype=np.float64)
    assert distinct_sorted(a).tolist() == np.unique(a).tolist()


def test_opening_every_demo_model_leaves_numpy_ma_unimported() -> None:
    # np.unique imports numpy.ma (12-40 ms) on its first call: inside the
    # first model open of a process, where the loaders must not pay it
    code = (
        "import sys\n"
        "from tokenprism.core import open_model\n"
        "from tokenprism.core.library.resources import demo_models\n"
        "models = demo_models()\n"
        "assert len(models) == 4, models\n"
        "for path in models.values():\n"
        "    m = open_model(str(path)); m.prepare(); m.encode('héllo wörld 日本 🙂')\n"
        "print('numpy.ma' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120)
    assert out.stdout.strip() == "False", out.stderr
