"""The plugin host: finds tokenizer plugins and picks one for a vocabulary.

Plugins register under the entry-point group ``tokenprism.plugins``. Asking
``importlib.metadata`` for them reads every installed distribution's
metadata: ~10-15 ms, plus ~20 ms to import ``importlib.metadata`` itself,
more than opening a small vocabulary takes. So opening a file does not ask
every time: the host keeps a small table on disk of each entry point and
the ``tokenizer.ggml.model`` values its plugin handled, valid while no
folder on ``sys.path`` has changed (installing, upgrading or removing a
distribution changes its folder's mtime), and imports only the plugins
that handle the file's model. Listing the plugins, a model type no cached
plugin handles, or a stale table load every entry point as before (and
write the table again).
"""

from __future__ import annotations

import importlib
import os
import sys
import threading
import zlib
from typing import cast

import pluggy

from . import hookspecs
from .errors import UnsupportedTokenizerError
from .plugin_types import TokenizerSpec
from .vocab import Vocab

_lock = threading.Lock()
_manager: pluggy.PluginManager | None = None
# the manager every entry point was loaded into; while _manager is another
# one (or None) only some were, by spec_for_model's quick path
_complete: pluggy.PluginManager | None = None
# entry-point names the quick path has tried on _loaded_into
_loaded_into: pluggy.PluginManager | None = None
_loaded: set[str] = set()
_failed: dict[str, str] = {}

TABLE_VERSION = "tokenprism-plugins 1"
# a row: entry-point name, its "module:attr" value, the model types its
# plugin handled ("-" when unknown: the plugin failed to load)
Row = tuple[str, str, tuple[str, ...] | None]


def plugin_manager() -> pluggy.PluginManager:
    """The process-wide plugin manager, with entry-point plugins loaded.

    A plugin that fails to import is skipped and reported by
    :func:`failed_plugins` instead of taking the whole app down.
    """
    global _manager, _complete
    with _lock:
        if _manager is None or _manager is not _complete:
            pm = _manager if _manager is not None else _new_manager()
            rows = _load_all(pm)
            _manager = _complete = pm
            _write_table(rows)
        return _manager


def _new_manager() -> pluggy.PluginManager:
    pm = pluggy.PluginManager(hookspecs.PROJECT)
    pm.add_hookspecs(hookspecs)
    return pm


def _load_all(pm: pluggy.PluginManager) -> list[Row]:
    """Register every entry point's plugin (in the order importlib.metadata
    lists them, as the quick path does) and return the table rows."""
    import importlib.metadata

    rows: list[Row] = []
    tried = _loaded if _loaded_into is pm else set()
    for ep in importlib.metadata.entry_points(group=hookspecs.ENTRY_POINT_GROUP):
        if any(r[0] == ep.name for r in rows):
            continue  # a name found twice on sys.path: the first one counts, as below
        if ep.name not in tried and pm.get_plugin(ep.name) is None and not pm.is_blocked(ep.name):
            try:
                pm.register(ep.load(), name=ep.name)
            except Exception as e:  # a broken third-party plugin must not stop the app
                _failed[ep.name] = f"{type(e).__name__}: {e}"
        rows.append((ep.name, ep.value, _model_types(pm, ep.name)))
    return rows


def _model_types(pm: pluggy.PluginManager, name: str) -> tuple[str, ...] | None:
    """The model types the plugin registered as ``name`` offers; None when
    it is not registered (it failed) or its answer cannot be asked alone."""
    if pm.get_plugin(name) is None:
        return None
    types: list[str] = []
    for impl in pm.hook.tokenprism_tokenizers.get_hookimpls():
        if impl.plugin_name == name:
            try:
                offered = impl.function()
                for spec in cast("list[TokenizerSpec]", offered):
                    types.extend(spec.model_types)
            except Exception:  # e.g. a hook that wants arguments; never cached
                return None
    return tuple(types)


def failed_plugins() -> dict[str, str]:
    """Entry points that could not be loaded, with the reason."""
    plugin_manager()
    return dict(_failed)


def tokenizer_specs() -> list[TokenizerSpec]:
    """Every tokenizer offered by every registered plugin (later-registered
    plugins first, so a third-party plugin can take over a model type)."""
    return _specs(plugin_manager())


def _specs(pm: pluggy.PluginManager) -> list[TokenizerSpec]:
    specs: list[TokenizerSpec] = []
    for result in pm.hook.tokenprism_tokenizers():
        specs.extend(result)
    return specs


def spec_for_model(model: str, specs: list[TokenizerSpec] | None = None) -> TokenizerSpec | None:
    """The spec that handles ``tokenizer.ggml.model`` = ``model``, or None.

    Without ``specs``, only the plugins the cached entry-point table names
    for ``model`` are imported (every plugin when the table is stale or
    names none); the answer is the one :func:`tokenizer_specs` would give."""
    complete = True
    if specs is None:
        specs, complete = _quick_specs(model)
    for spec in specs:
        if model in spec.model_types:
            return spec
    return None if complete else spec_for_model(model, tokenizer_specs())


def _quick_specs(model: str) -> tuple[list[TokenizerSpec], bool]:
    """The specs of a manager holding at least every plugin that may handle
    ``model``, and whether it holds every plugin: the complete manager once
    built, else the entry points the table lists for ``model`` (none when
    it lists none: the caller loads all)."""
    global _manager, _loaded_into
    with _lock:
        pm = _manager
        complete = pm is not None and pm is _complete
        if pm is None or not complete:
            rows = _read_table()
            wanted = [r for r in rows or () if r[2] is not None and model in r[2]]
            if not wanted:
                return [], False
            if pm is None:
                pm = _manager = _new_manager()
            if _loaded_into is not pm:
                _loaded_into = pm
                _loaded.clear()
            for name, value, _types in wanted:
                if name in _loaded or pm.get_plugin(name) is not None or pm.is_blocked(name):
                    continue
                _loaded.add(name)
                try:
                    pm.register(_load_entry_point(value), name=name)
                except Exception as e:  # as in _load_all; failed_plugins() reports it
                    _failed[name] = f"{type(e).__name__}: {e}"
    return _specs(pm), complete


def _load_entry_point(value: str) -> object:
    """What ``importlib.metadata.EntryPoint(..., value, ...).load()`` gives:
    ``module`` or ``module:attr.attr`` (extras in brackets ignored, as
    there), without importing importlib.metadata."""
    module, _, attrs = value.partition("[")[0].partition(":")
    obj: object = importlib.import_module(module.strip())
    for attr in filter(None, attrs.strip().split(".")):
        obj = getattr(obj, attr)
    return obj


def find_spec(vocab: Vocab, path: str = "") -> TokenizerSpec:
    """The spec that handles ``vocab.model``; raises
    :class:`UnsupportedTokenizerError` naming the installed ones otherwise."""
    specs = tokenizer_specs()
    found = spec_for_model(vocab.model, specs)
    if found is not None:
        return found
    known = ", ".join(f"{s.name} ({'/'.join(s.model_types)})" for s in specs) or "none"
    raise UnsupportedTokenizerError(
        path, f"no installed plugin handles tokenizer type {vocab.model!r}; installed: {known}",
        None, "tokenizer.ggml.model")


# ---- the entry-point table on disk ---------------------------------------------


def cache_dir() -> str:
    """TokenPrism's cache folder: ``$TOKENPRISM_CACHE_DIR``, else the
    platform's (what ``platformdirs.user_cache_dir("tokenprism")`` says,
    written out: importing platformdirs costs more than the table saves)."""
    own = os.environ.get("TOKENPRISM_CACHE_DIR")
    if own:
        return own
    home = os.path.expanduser("~")
    if sys.platform == "win32":
        return os.path.join(os.environ.get("LOCALAPPDATA") or os.path.join(home, "AppData", "Local"),
                            "tokenprism", "Cache")
    if sys.platform == "darwin":
        return os.path.join(home, "Library", "Caches", "tokenprism")
    xdg = os.environ.get("XDG_CACHE_HOME", "")
    return os.path.join(xdg if os.path.isabs(xdg) else os.path.join(home, ".cache"), "tokenprism")


def _table_file_and_key() -> tuple[str, str]:
    """The table's file for this interpreter and ``sys.path``, and the key
    its contents are valid for: the mtime of every folder on ``sys.path``
    (installing, upgrading or removing a distribution there changes it; an
    entry-points file edited in place does not). The first folder, the
    script's (or the current one, ``''``, with ``python -c``), changes all
    the time, so there the names and mtimes of its metadata folders count
    instead."""
    where = "\n".join([sys.executable, *sys.path])
    stamps: list[str] = []
    for i, entry in enumerate(sys.path):
        try:
            if i == 0 or entry in ("", "."):
                with os.scandir(entry or ".") as it:
                    stamps += [f"{e.name}:{e.stat().st_mtime_ns}" for e in it
                               if e.name.endswith((".dist-info", ".egg-info"))]
            else:
                stamps.append(str(os.stat(entry).st_mtime_ns))
        except OSError:
            stamps.append("-")
    name = f"plugins-{zlib.crc32(where.encode('utf-8', 'surrogateescape')):08x}.txt"
    return os.path.join(cache_dir(), name), where.replace("\n", "\t") + "\t" + ",".join(stamps)


def _read_table() -> list[Row] | None:
    """The cached rows, or None when there are none for the current key."""
    try:
        path, key = _table_file_and_key()
        with open(path, encoding="utf-8", errors="surrogateescape") as f:
            lines = f.read().split("\n")
    except (OSError, ValueError):
        return None
    if len(lines) < 2 or lines[0] != TABLE_VERSION or lines[1] != key:
        return None
    rows: list[Row] = []
    for line in lines[2:]:
        parts = line.split("\t")
        if len(parts) == 3:
            rows.append((parts[0], parts[1], None if parts[2] == "-" else tuple(filter(None, parts[2].split(",")))))
    return rows


def _write_table(rows: list[Row]) -> None:
    """Write ``rows`` for the current key (best effort: a read-only or
    missing home only means every process loads every plugin)."""
    lines = [TABLE_VERSION]
    for name, value, types in rows:
        # a type that cannot be written unambiguously is not cached: its
        # files then take the path that loads every plugin
        ok = types is not None and all(t and not any(c in t for c in "\t\n,") for t in types)
        cells = (name, value, ",".join(types) if ok and types is not None else "-")
        if any("\t" in c or "\n" in c for c in cells):
            return
        lines.append("\t".join(cells))
    try:
        path, key = _table_file_and_key()
        lines.insert(1, key)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        tmp = f"{path}.{os.getpid()}.tmp"
        with open(tmp, "w", encoding="utf-8", errors="surrogateescape") as f:
            f.write("\n".join(lines) + "\n")
        os.replace(tmp, path)
    except OSError:
        pass
