"""What runs on a worker: one partition counted for every model.

A worker process opens each model once (:func:`cached_model`, keyed by
path, size and modification time) and keeps it for every partition it is
given: opening a 250k-token vocabulary takes longer than counting a few MB
of text with it. Models are read by path, so on a cluster every worker
must see the model files at the same paths.
"""

from __future__ import annotations

import os
import sys
from typing import Sequence

from .. import gil
from ..model import Model, open_model
from .sources import JSONL, PARQUET, STDIN, Partition, jsonl_records, parquet_values, read_text
from .sources import invalid_count
from .stats import CorpusStats, Skipped, empty_stats
from .stream import count_document

_MODELS: dict[tuple[str, int, int], Model] = {}


def cached_model(path: str) -> Model:
    """``open_model(path)``, opened once per process."""
    st = os.stat(path)
    key = (os.path.abspath(path), st.st_size, st.st_mtime_ns)
    model = _MODELS.get(key)
    if model is None:
        model = open_model(path)
        model.prepare()  # build lazily made tables now, not inside the first count
        _MODELS[key] = model
    return model


def own_process() -> None:
    """This process only counts (a Dask worker, a benchmark): long loops
    need not offer the GIL every millisecond to a GUI thread that is not
    there (each offer sleeps; on a busy machine that gave the CPU away:
    measured 19 % of a worker's time). Every 0.1 s still lets the worker's
    own event-loop thread answer the scheduler's heartbeats."""
    gil.OFFER_NS = max(gil.OFFER_NS, 100_000_000)


def count_partition(part: Partition, model_paths: Sequence[str], field: str = "text",
                    add_special: bool = False, dedicated: bool = False) -> CorpusStats:
    """The counts of ``part`` for every model (the task each worker runs;
    ``dedicated``: in a process of its own, see :func:`own_process`)."""
    if dedicated:
        own_process()
    models = [cached_model(p) for p in model_paths]
    stats = empty_stats(models)
    stats.partitions.append(part.index)
    invalid_count()
    for piece in part.pieces:
        try:
            with open(piece.path, "rb") as f:
                if piece.kind == JSONL:
                    # (by_file: one entry per file, not per record)
                    for value in jsonl_records(f, piece.start, piece.end, field, piece.path, stats.skipped):
                        count_document(stats, models, [value], piece.path, add_special=add_special)
                        stats.documents += 1
                    stats.bytes_read += piece.end - piece.start
                elif piece.kind == PARQUET:
                    for value in parquet_values(piece.path, piece.start, field, stats.skipped):
                        count_document(stats, models, [value], piece.path, add_special=add_special)
                        stats.documents += 1
                    stats.bytes_read += piece.size
                else:
                    count_document(stats, models, read_text(f, piece.end), piece.path, add_special=add_special)
                    stats.documents += 1
                    stats.bytes_read += f.tell()
        except FileNotFoundError:
            stats.skipped.append(Skipped(piece.path, "vanished before it was read"))
            continue
        except OSError as e:
            stats.skipped.append(Skipped(piece.path, f"unreadable: {e.strerror or e}"))
            continue
        if piece.start == 0:
            stats.files += 1
    stats.invalid_utf8 += invalid_count()
    for ms in stats.models:
        ms.trim_words()
    return stats


def count_stdin(model_paths: Sequence[str], add_special: bool = False) -> CorpusStats:
    """Standard input counted as one document, here (it cannot be shipped)."""
    models = [cached_model(p) for p in model_paths]
    stats = empty_stats(models)
    invalid_count()
    stream = sys.stdin.buffer
    count_document(stats, models, read_text(stream), STDIN, add_special=add_special)
    stats.documents += 1
    stats.files += 1
    stats.invalid_utf8 += invalid_count()
    return stats

