"""``stats``: how several models tokenize a whole corpus (files, folders,
JSON Lines, Parquet), counted on all cores or a Dask cluster.

>>> report = profile(["texts/"], ["a.gguf", "b.gguf"])            # doctest: +SKIP
>>> print(to_text(report))                                         # doctest: +SKIP

Dask, matplotlib and pyarrow come with the ``corpus`` extra; this package
imports none of them until a run or a chart needs it.
"""

from .run import INSTALL_HINT, SYNCHRONOUS, CorpusReport, Missing, Progress, profile
from .sources import CorpusError
from .stats import CorpusStats, ModelStats, Skipped, Tally, WordCost, script_of

__all__ = ["INSTALL_HINT", "SYNCHRONOUS", "CorpusError", "CorpusReport", "CorpusStats", "Missing", "ModelStats",
           "Progress", "Skipped", "Tally", "WordCost", "profile", "script_of"]
