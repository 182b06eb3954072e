"""Finding the GGUF models already on this computer.

Looks where the common tools keep their downloads: the Hugging Face hub
cache, llama.cpp's cache, LM Studio's and GPT4All's model folders, ollama's
blob store, the reference vocabularies ``tokenprism samples`` downloads,
any folder the user adds, and the folders of models the user opened (their
own files only, not the folders below). Every other tool's location follows
that tool's documented default for Linux, macOS and Windows and honours its
environment variable, and every function takes ``home``, ``env`` and
``platform`` so tests (and other machines' rules) can be checked with a fake
home. These rules are written out here, not asked of platformdirs: each tool
picks its folders itself, and platformdirs' answer differs from several of
them (see :func:`llama_cpp_cache` and :func:`gpt4all_folders`). tokenprism's
own data folder, where the reference vocabularies go, is platformdirs'
(:func:`~tokenprism.core.library.samples.user_data_dir`) unless ``data_dir``
names another.

Each file is described from its header alone (:func:`peek_gguf`): the
token array's *length* is read, never its strings, so a 40 GB model costs a
few page reads. Results are streamed so a window can show them as they come.

>>> home = Path("home")  # a fake home, with one model where LM Studio keeps them
>>> folder = home / ".lmstudio" / "models" / "demo"
>>> folder.mkdir(parents=True)
>>> _ = (folder / "demo-spm.gguf").write_bytes(demo("spm").read_bytes())
>>> for m in discover(home, env={}, platform="linux", include_system=False, data_dir=home / "data"):
...     print(m.name, m.source, m.tokenizer, m.vocab_size)
demo/demo-spm.gguf LM Studio llama 1500
"""

from __future__ import annotations

import json
import mmap
import os
import struct
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterable, Iterator, Mapping

from .samples import default_samples_dir

# sources, in the order they are scanned and shown
HUGGING_FACE = "Hugging Face"
LLAMA_CPP = "llama.cpp"
LM_STUDIO = "LM Studio"
GPT4ALL = "GPT4All"
OLLAMA = "ollama"
REFERENCE = "Reference vocab"
FOLDER = "Folder"
OPENED = "Opened before"
"""Source of a model found beside one the user opened (the app's recent files)."""

GGUF_MAGIC = b"GGUF"
MAX_DEPTH = 8  # plenty for every tool's layout; a user folder such as ~ is not crawled forever
_SKIP_SUFFIXES = (".incomplete", ".part", ".partial", ".downloadinprogress", ".tmp")

Progress = Callable[[str], None]


@dataclass(frozen=True)
class Location:
    """A folder to scan: ``layout`` is "hf" (hub cache), "ollama" (blob
    store) or "tree" (any folder of ``*.gguf`` files)."""

    source: str
    path: Path
    layout: str = "tree"
    depth: int = MAX_DEPTH
    """How many folder levels below ``path`` a "tree" scan goes (0: its own files)."""


@dataclass(frozen=True)
class GGUFPeek:
    """What the header says, read without decoding any large array."""

    tokenizer: str  # tokenizer.ggml.model, "" when the file has no tokenizer
    vocab_size: int  # length of tokenizer.ggml.tokens, 0 when absent
    name: str  # general.name
    architecture: str
    split_no: int  # split.no: 0 for a whole file or the first shard


@dataclass(frozen=True)
class FoundModel:
    """One GGUF file found on this computer."""

    name: str
    source: str
    path: str  # the path to open (symlinks resolved, so it is the real file)
    size: int
    tokenizer: str
    vocab_size: int
    model_name: str = ""  # general.name from the file

    def as_dict(self) -> dict[str, object]:
        return {"name": self.name, "source": self.source, "path": self.path, "size": self.size,
                "tokenizer": self.tokenizer, "vocab_size": self.vocab_size, "model_name": self.model_name}


# ---- where to look --------------------------------------------------------------------------

def _env_path(env: Mapping[str, str], key: str) -> Path | None:
    v = env.get(key, "")
    return Path(os.path.expanduser(v)) if v else None


def hf_hub_cache(home: Path, env: Mapping[str, str]) -> Path:
    """huggingface_hub's rule: HF_HUB_CACHE (or the older
    HUGGINGFACE_HUB_CACHE), else HF_HOME/hub, else
    $XDG_CACHE_HOME/huggingface/hub, else ~/.cache/huggingface/hub (the same
    on every platform: huggingface_hub does not use the OS's cache folder,
    so platformdirs' user_cache_dir would be wrong on macOS and Windows)."""
    for key in ("HF_HUB_CACHE", "HUGGINGFACE_HUB_CACHE"):
        p = _env_path(env, key)
        if p is not None:
            return p
    hf_home = _env_path(env, "HF_HOME")
    if hf_home is not None:
        return hf_home / "hub"
    xdg = _env_path(env, "XDG_CACHE_HOME")
    return (xdg if xdg is not None else home / ".cache") / "huggingface" / "hub"


def llama_cpp_cache(home: Path, env: Mapping[str, str], platform: str) -> Path:
    """llama.cpp's ``fs_get_cache_directory``: LLAMA_CACHE, else
    %LOCALAPPDATA%, ~/Library/Caches or $XDG_CACHE_HOME (~/.cache), plus
    ``llama.cpp``. Written out rather than platformdirs'
    ``user_cache_dir("llama.cpp")``: on Windows that adds a ``Cache`` folder
    llama.cpp does not use, and llama.cpp takes $XDG_CACHE_HOME as it is
    where platformdirs ignores a relative one."""
    p = _env_path(env, "LLAMA_CACHE")
    if p is not None:
        return p
    if platform == "win32":
        return (_env_path(env, "LOCALAPPDATA") or home / "AppData" / "Local") / "llama.cpp"
    if platform == "darwin":
        return home / "Library" / "Caches" / "llama.cpp"
    return (_env_path(env, "XDG_CACHE_HOME") or home / ".cache") / "llama.cpp"


def lm_studio_folders(home: Path) -> list[Path]:
    """LM Studio ≥ 0.3 keeps models in ~/.lmstudio/models (also on Windows,
    under %USERPROFILE%); older versions used ~/.cache/lm-studio/models. A
    download folder moved in LM Studio's settings is named in
    ~/.lmstudio/settings.json."""
    folders = [home / ".lmstudio" / "models", home / ".cache" / "lm-studio" / "models"]
    try:
        with open(home / ".lmstudio" / "settings.json", encoding="utf-8") as f:
            moved = json.load(f).get("downloadsFolder")
        if isinstance(moved, str) and moved:
            folders.insert(0, Path(os.path.expanduser(moved)))
    except (OSError, ValueError, AttributeError):
        pass  # no settings, or not the shape we know: the defaults stand
    return folders


def gpt4all_folders(home: Path, env: Mapping[str, str], platform: str) -> list[Path]:
    """The GPT4All app's download path (its documented default per
    platform: Qt's AppLocalDataLocation for organisation "nomic.ai", app
    "GPT4All") and the Python bindings' ~/.cache/gpt4all. Not platformdirs'
    ``user_data_dir("GPT4All", "nomic.ai")``: on Linux and macOS that leaves
    out the ``nomic.ai`` folder Qt puts in."""
    if platform == "win32":
        app = (_env_path(env, "LOCALAPPDATA") or home / "AppData" / "Local") / "nomic.ai" / "GPT4All"
    elif platform == "darwin":
        app = home / "Library" / "Application Support" / "nomic.ai" / "GPT4All"
    else:
        app = (_env_path(env, "XDG_DATA_HOME") or home / ".local" / "share") / "nomic.ai" / "GPT4All"
    return [app, home / ".cache" / "gpt4all"]


def ollama_folders(home: Path, env: Mapping[str, str], platform: str, include_system: bool) -> list[Path]:
    """OLLAMA_MODELS, else ~/.ollama/models; on Linux the service install
    keeps its store in /usr/share/ollama/.ollama/models."""
    p = _env_path(env, "OLLAMA_MODELS")
    if p is not None:
        return [p]
    folders = [home / ".ollama" / "models"]
    if include_system and platform.startswith("linux"):
        folders.append(Path("/usr/share/ollama/.ollama/models"))
    return folders


def opened_folders(files: Iterable[str | os.PathLike[str]]) -> list[Path]:
    """The folders of ``files`` (models the user opened), each once, in order."""
    out: list[Path] = []
    for f in files:
        folder = Path(os.path.abspath(os.path.expanduser(os.fspath(f)))).parent
        if folder not in out:
            out.append(folder)
    return out


def default_locations(home: Path, env: Mapping[str, str], platform: str = sys.platform,
                      extra_folders: Iterable[str | os.PathLike[str]] = (),
                      include_system: bool = True,
                      opened: Iterable[str | os.PathLike[str]] = (),
                      data_dir: str | os.PathLike[str] | None = None) -> list[Location]:
    """Every place to look, in scan order; missing folders are kept (the
    scan skips them) so a caller can show where it looked. ``opened`` are
    model files the user opened: their folders are looked at last (their
    own files only), so a model there that another place also holds keeps
    that place's name. ``data_dir`` is tokenprism's own data folder, whose
    reference vocabularies are listed (default: platformdirs' user data
    folder, which depends on the real user, not on ``home``)."""
    locs = [Location(HUGGING_FACE, hf_hub_cache(home, env), "hf"),
            Location(LLAMA_CPP, llama_cpp_cache(home, env, platform))]
    locs += [Location(LM_STUDIO, p) for p in lm_studio_folders(home)]
    locs += [Location(GPT4ALL, p) for p in gpt4all_folders(home, env, platform)]
    locs += [Location(OLLAMA, p, "ollama") for p in ollama_folders(home, env, platform, include_system)]
    locs.append(Location(REFERENCE, default_samples_dir(data_dir)))
    locs += [Location(FOLDER, Path(os.path.expanduser(os.fspath(p)))) for p in extra_folders]
    known = {loc.path for loc in locs}
    locs += [Location(OPENED, folder, depth=0) for folder in opened_folders(opened) if folder not in known]
    return locs


# ---- reading a header cheaply -----------------------------------------------------------------

_SCALAR_SIZE = {0: 1, 1: 1, 2: 2, 3: 2, 4: 4, 5: 4, 6: 4, 7: 1, 10: 8, 11: 8, 12: 8}
_STRING, _ARRAY = 8, 9
# split.no is not waited for: later shards of a split model carry no tokenizer
# keys, so their (short) metadata is read to the end and split.no is found
_ENOUGH = ("tokenizer.ggml.model", "tokenizer.ggml.tokens", "general.name", "general.architecture")


class _Header:
    """Walks the key/value section of a memory-mapped GGUF file."""

    def __init__(self, mm: mmap.mmap, size: int) -> None:
        self.mm = mm
        self.size = size
        self.pos = 0

    def take(self, n: int) -> int:
        if n < 0 or n > self.size - self.pos:
            raise ValueError("truncated header")
        start = self.pos
        self.pos += n
        return start

    def u32(self) -> int:
        v: int = struct.unpack_from("<I", self.mm, self.take(4))[0]
        return v

    def u64(self) -> int:
        v: int = struct.unpack_from("<Q", self.mm, self.take(8))[0]
        return v

    def string(self) -> str:
        n = self.u64()
        start = self.take(n)
        return self.mm[start:start + n].decode("utf-8", "replace")

    def skip(self, vtype: int, depth: int = 0) -> None:
        if vtype == _STRING:
            self.take(self.u64())
        elif vtype == _ARRAY:
            self.skip_array(depth)
        elif vtype in _SCALAR_SIZE:
            self.take(_SCALAR_SIZE[vtype])
        else:
            raise ValueError(f"unknown value type {vtype}")

    def array_head(self) -> tuple[int, int]:
        return self.u32(), self.u64()

    def skip_array(self, depth: int, head: tuple[int, int] | None = None) -> int:
        """Skip an array and return its length (strings are stepped over by
        their lengths, never decoded)."""
        if depth > 8:
            raise ValueError("arrays nested too deeply")
        elem, n = self.array_head() if head is None else head
        if elem in _SCALAR_SIZE:
            self.take(n * _SCALAR_SIZE[elem])
        elif elem == _STRING:
            if n > (self.size - self.pos) // 8:
                raise ValueError("array length beyond the file")
            for _ in range(n):
                self.take(self.u64())
        elif elem == _ARRAY:
            if n > (self.size - self.pos) // 12:
                raise ValueError("array length beyond the file")
            for _ in range(n):
                self.skip_array(depth + 1)
        else:
            raise ValueError(f"unknown array element type {elem}")
        return n

    def scalar_int(self, vtype: int) -> int:
        if vtype in (0, 2, 4, 10):
            fmt = {0: "<B", 2: "<H", 4: "<I", 10: "<Q"}[vtype]
        elif vtype in (1, 3, 5, 11):
            fmt = {1: "<b", 3: "<h", 5: "<i", 11: "<q"}[vtype]
        else:
            self.skip(vtype)
            return 0
        v: int = struct.unpack_from(fmt, self.mm, self.take(_SCALAR_SIZE[vtype]))[0]
        return v


def peek_gguf(path: str | os.PathLike[str]) -> GGUFPeek | None:
    """The tokenizer type, vocab size and name of a GGUF file, or ``None``
    when it is not a readable GGUF file. Stops reading as soon as it knows
    what it needs; the token strings are never decoded (only their array's
    length is read when the tokens come last)."""
    try:
        with open(path, "rb") as f:
            size = os.fstat(f.fileno()).st_size
            if size < 24 or f.read(4) != GGUF_MAGIC:
                return None
            with mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as mm:
                return _peek(mm, size)
    except (OSError, ValueError, struct.error, OverflowError):
        return None


def _peek(mm: mmap.mmap, size: int) -> GGUFPeek | None:
    h = _Header(mm, size)
    h.pos = 4
    if h.u32() not in (2, 3):
        return None
    h.u64()  # tensor count
    n_kv = h.u64()
    found: dict[str, object] = {}
    for _ in range(n_kv):
        key = h.string()
        vtype = h.u32()
        if key == "tokenizer.ggml.tokens" and vtype == _ARRAY:
            head = h.array_head()
            found[key] = head[1]
            if all(k in found for k in _ENOUGH):
                break  # the usual order: nothing needed after the tokens, so never walk them
            h.skip_array(0, head)
        elif key in ("tokenizer.ggml.model", "general.name", "general.architecture") and vtype == _STRING:
            found[key] = h.string()
        elif key == "split.no":
            found[key] = h.scalar_int(vtype)
        else:
            h.skip(vtype)
        if all(k in found for k in _ENOUGH):
            break

    def text(k: str) -> str:
        v = found.get(k)
        return v if isinstance(v, str) else ""

    def number(k: str) -> int:
        v = found.get(k)
        return v if isinstance(v, int) else 0

    return GGUFPeek(text("tokenizer.ggml.model"), number("tokenizer.ggml.tokens"), text("general.name"),
                    text("general.architecture"), number("split.no"))


def has_gguf_magic(path: str | os.PathLike[str]) -> bool:
    try:
        with open(path, "rb") as f:
            return f.read(4) == GGUF_MAGIC
    except OSError:
        return False


# ---- walking the layouts ----------------------------------------------------------------------

def _is_gguf_name(name: str) -> bool:
    low = name.lower()
    return low.endswith(".gguf") and not low.startswith(".")


def _walk_files(root: Path, depth: int = MAX_DEPTH) -> Iterator[Path]:
    """Files under ``root`` (symlinked folders followed once; hidden folders
    and unreadable ones skipped), in a stable order."""
    seen_dirs: set[tuple[int, int]] = set()
    stack: list[tuple[Path, int]] = [(root, 0)]
    while stack:
        folder, level = stack.pop()
        try:
            st = folder.stat()
            key = (st.st_dev, st.st_ino)
            if key in seen_dirs:
                continue
            seen_dirs.add(key)
            with os.scandir(folder) as it:
                entries = sorted(it, key=lambda e: e.name)
        except OSError:
            continue
        subdirs: list[Path] = []
        for e in entries:
            try:
                if e.is_dir():
                    if not e.name.startswith(".") and level < depth:
                        subdirs.append(Path(e.path))
                elif e.is_file():
                    yield Path(e.path)
            except OSError:
                continue  # dangling symlink or a racing delete
        stack.extend((d, level + 1) for d in reversed(subdirs))


def _tree(loc: Location) -> Iterator[tuple[str, Path]]:
    for p in _walk_files(loc.path, loc.depth):
        if _is_gguf_name(p.name) and not p.name.lower().endswith(_SKIP_SUFFIXES):
            yield p.relative_to(loc.path).as_posix(), p


def _hf_revisions(repo_dir: Path) -> list[Path]:
    """Snapshot folders, the revision ``refs/main`` names first, then the
    newest."""
    snapshots = repo_dir / "snapshots"
    try:
        revs = [d for d in snapshots.iterdir() if d.is_dir()]
    except OSError:
        return []
    try:
        main = (repo_dir / "refs" / "main").read_text(encoding="utf-8").strip()
    except (OSError, UnicodeError):
        main = ""

    def order(d: Path) -> tuple[bool, float, str]:
        try:
            mtime = d.stat().st_mtime
        except OSError:
            mtime = 0.0
        return (d.name != main, -mtime, d.name)

    return sorted(revs, key=order)


def _hf_cache(loc: Location) -> Iterator[tuple[str, Path]]:
    """``models--org--name/snapshots/<rev>/<file>``: named "org/name/file".
    Snapshot entries are symlinks into ``blobs/`` (plain copies on Windows
    without symlink rights); a file in several revisions is listed once, from
    the revision ``refs/main`` points to, else the newest."""
    try:
        repos = sorted(d for d in loc.path.iterdir() if d.name.startswith("models--") and d.is_dir())
    except OSError:
        return
    for repo_dir in repos:
        repo = "/".join(repo_dir.name.split("--")[1:])
        named: set[str] = set()
        for rev in _hf_revisions(repo_dir):
            for p in _walk_files(rev):
                name = f"{repo}/{p.relative_to(rev).as_posix()}"
                if _is_gguf_name(p.name) and name not in named:
                    named.add(name)
                    yield name, p


def _llama_cpp_cache(loc: Location) -> Iterator[tuple[str, Path]]:
    """Older llama.cpp builds store ``org_repo_file.gguf`` flat in the
    cache; newer ones may use the hub cache layout inside it."""
    yield from _hf_cache(loc)  # first, so the hub names win over the tree walk's paths
    yield from _tree(loc)


def _ollama_name(manifest: Path, manifests_root: Path) -> str:
    parts = manifest.relative_to(manifests_root).parts  # host/namespace/model/tag
    if len(parts) < 3:
        return "/".join(parts)
    host, *middle, model, tag = parts
    if host == "registry.ollama.ai" and middle == ["library"]:
        return f"{model}:{tag}"
    prefix = "/".join(middle + [model]) if host == "registry.ollama.ai" else "/".join([host, *middle, model])
    return f"{prefix}:{tag}"


def _blob_path(blobs: Path, digest: str) -> Path | None:
    if not isinstance(digest, str) or ":" not in digest:
        return None
    algo, _, hexpart = digest.partition(":")
    if not (algo.isalnum() and hexpart.isalnum()):
        return None  # a manifest is data: never let it point outside the blob folder
    for name in (f"{algo}-{hexpart}", f"{algo}:{hexpart}"):  # old ollama versions used ':'
        p = blobs / name
        if p.is_file():
            return p
    return None


_OLLAMA_KIND = {"application/vnd.ollama.image.model": "",
                "application/vnd.ollama.image.projector": " (projector)",
                "application/vnd.ollama.image.adapter": " (adapter)"}


def _ollama(loc: Location) -> Iterator[tuple[str, Path]]:
    """Blobs named from the manifests that list them; blobs no manifest
    names are listed by digest when they start with the GGUF magic (the
    other blobs are templates, parameters and licences)."""
    blobs = loc.path / "blobs"
    manifests = loc.path / "manifests"
    named: set[str] = set()
    for mf in _walk_files(manifests):
        try:
            with open(mf, encoding="utf-8") as f:
                layers = json.load(f).get("layers", [])
        except (OSError, ValueError, AttributeError):
            continue
        if not isinstance(layers, list):
            continue
        for layer in layers:
            if not isinstance(layer, dict) or layer.get("mediaType") not in _OLLAMA_KIND:
                continue
            blob = _blob_path(blobs, layer.get("digest", ""))
            if blob is not None:
                named.add(blob.name)
                yield _ollama_name(mf, manifests) + _OLLAMA_KIND[str(layer["mediaType"])], blob
    try:
        others = sorted(p for p in blobs.iterdir() if p.name not in named)
    except OSError:
        return
    for p in others:
        if p.is_file() and has_gguf_magic(p):
            yield f"{p.name[:19]}… (unnamed blob)", p


_LAYOUTS: dict[str, Callable[[Location], Iterator[tuple[str, Path]]]] = {
    "tree": _tree, "hf": _hf_cache, "ollama": _ollama}


def _candidates(loc: Location) -> Iterator[tuple[str, Path]]:
    if loc.source == LLAMA_CPP:
        return _llama_cpp_cache(loc)
    return _LAYOUTS.get(loc.layout, _tree)(loc)


# ---- the scan ------------------------------------------------------------------------------------

def scan(locations: Iterable[Location], progress: Progress | None = None) -> Iterator[FoundModel]:
    """Yield every GGUF file in ``locations``, once each (the same file
    reached by two paths, a symlink or a hard link, is listed at its first
    place). Files that are not GGUF, cannot be read, are later shards of a
    split model, or are dangling links are skipped. ``progress`` is called
    with a short text before each location and every few files."""
    seen: set[tuple[int, int]] = set()
    checked = 0
    for loc in locations:
        if not loc.path.is_dir():
            continue
        if progress is not None:
            progress(f"Scanning {loc.source}: {loc.path}")
        for name, path in _candidates(loc):
            checked += 1
            if progress is not None and checked % 25 == 0:
                progress(f"Scanning {loc.source}: {checked} files checked")
            try:
                real = path.resolve(strict=True)
                st = real.stat()
            except (OSError, RuntimeError):
                continue  # dangling or looping symlink
            key = (st.st_dev, st.st_ino) if st.st_ino else (st.st_dev, hash(str(real)))
            if key in seen:
                continue
            info = peek_gguf(real)
            if info is None or info.split_no > 0:
                continue
            seen.add(key)
            yield FoundModel(name, loc.source, str(real), st.st_size, info.tokenizer, info.vocab_size, info.name)


def discover(home: Path | None = None, env: Mapping[str, str] | None = None, platform: str = sys.platform,
             extra_folders: Iterable[str | os.PathLike[str]] = (), include_system: bool = True,
             progress: Progress | None = None,
             opened: Iterable[str | os.PathLike[str]] = (),
             data_dir: str | os.PathLike[str] | None = None) -> Iterator[FoundModel]:
    """Scan every default location plus ``extra_folders`` and the folders
    of the ``opened`` model files (``data_dir``: see :func:`default_locations`).

    >>> home = Path("empty-home")
    >>> [m.name for m in discover(home, env={}, platform="linux", include_system=False, data_dir=home / "data")]
    []
    """
    home = Path.home() if home is None else home
    env = os.environ if env is None else env
    return scan(default_locations(home, env, platform, extra_folders, include_system, opened, data_dir),
                progress)
