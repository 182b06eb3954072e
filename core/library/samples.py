"""Downloading llama.cpp's reference vocabularies (``tokenprism samples``).

llama.cpp tests its tokenizers with vocab-only GGUF files,
``models/ggml-vocab-*.gguf``, each with a ``.inp`` file of texts and a
``.out`` file of the expected token ids. The ``llama-cpp-python`` source
release on PyPI vendors llama.cpp with those files, so one pinned download
(version *and* SHA-256) gives them all. The archive is streamed to a
temporary file while its hash is computed; only the vocab files are
extracted, each checked by name, type and size, into the user data folder,
where the app lists them and the parity tests find them.
:func:`fetch_samples` does it all, into the folder :func:`default_samples_dir`
names:

>>> default_samples_dir(Path("/data/tokenprism"))  # the user data folder by default
PosixPath('/data/tokenprism/llama-vocab')
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import tarfile
import tempfile
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Callable, Mapping

import platformdirs

from ..errors import TokenPrismError

SDIST_VERSION = "0.3.36"
SDIST_NAME = f"llama_cpp_python-{SDIST_VERSION}.tar.gz"
SDIST_URL = ("https://files.pythonhosted.org/packages/ec/e9/"
             "e7de2b0463ea3ffbf0ede6cb21b58c1258a8f6521aae45ca773a59fe7cf3/" + SDIST_NAME)
SDIST_SHA256 = "832db0699007f1be95a7e41ef12e88926b02ba836461e36a36372db2760c1a2e"
"""SHA-256 of the sdist, as PyPI's simple index lists it."""
SDIST_SIZE = 76_589_250

MEMBER_PATTERN = re.compile(r"[^/]+/vendor/llama\.cpp/models/(ggml-vocab-[A-Za-z0-9][A-Za-z0-9._-]*"
                            r"\.gguf(?:\.inp|\.out)?)")
MAX_DOWNLOAD = 4 * SDIST_SIZE  # a server sending more than this is not sending the release
MAX_FILE_SIZE = 64 << 20  # the largest reference vocab is ~16 MB
MAX_TOTAL_SIZE = 512 << 20
MANIFEST = ".tokenprism-samples.json"
CHUNK = 1 << 20
TIMEOUT_S = 30

Opener = Callable[..., IO[bytes]]
DownloadProgress = Callable[[int, int], None]  # (bytes done, bytes expected or 0)


class SamplesError(TokenPrismError):
    """Downloading or unpacking the reference vocabularies failed."""


@dataclass(frozen=True)
class SamplesReport:
    dest: Path
    files: tuple[str, ...]
    downloaded: bool  # False: everything was already there

    def summary(self) -> str:
        vocabs = sum(f.endswith(".gguf") for f in self.files)
        what = "downloaded" if self.downloaded else "already present"
        return f"{vocabs} reference vocabs ({len(self.files)} files) {what} in {self.dest}"


APP_NAME = "tokenprism"


def user_data_dir() -> Path:
    """tokenprism's own per-user data folder, as platformdirs names it for
    this OS and user: $XDG_DATA_HOME/tokenprism, else
    ~/.local/share/tokenprism on Linux; ~/Library/Application
    Support/tokenprism on macOS ($XDG_DATA_HOME first there too);
    the Local AppData known folder + tokenprism on Windows.
    ``appauthor=False``: no vendor folder in between on Windows, so the
    folder is the one earlier versions wrote to."""
    return platformdirs.user_data_path(APP_NAME, appauthor=False)


def default_samples_dir(data_dir: str | os.PathLike[str] | None = None) -> Path:
    """Where ``tokenprism samples`` puts the files: llama-vocab in the user
    data folder (:func:`user_data_dir`), or in ``data_dir`` when given (a
    fake home's, in tests)."""
    return (user_data_dir() if data_dir is None else Path(data_dir)) / "llama-vocab"


def find_vocab_dir(*extra: Path, env: Mapping[str, str] | None = None,
                   data_dir: str | os.PathLike[str] | None = None) -> Path | None:
    """The first folder holding ``ggml-vocab-*.gguf`` files among
    ``$TOKENPRISM_VOCAB_DIR``, ``extra`` (in order) and the folder
    ``tokenprism samples`` downloads to (in ``data_dir``, by default the
    user data folder); None when none does. The parity tests and the
    benchmarks look here."""
    env = os.environ if env is None else env
    candidates = [Path(env["TOKENPRISM_VOCAB_DIR"])] if env.get("TOKENPRISM_VOCAB_DIR") else []
    candidates.extend(extra)
    candidates.append(default_samples_dir(data_dir))
    for c in candidates:
        if c.is_dir() and any(c.glob("ggml-vocab-*.gguf")):
            return c
    return None


# ---- checking what is there ----------------------------------------------------------------

def _sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(CHUNK), b""):
            h.update(chunk)
    return h.hexdigest()


def installed_files(dest: Path, sha256: str = SDIST_SHA256) -> tuple[str, ...] | None:
    """The files of a finished earlier run into ``dest`` from the same
    archive, when every one is still there unchanged; else ``None``."""
    try:
        with open(dest / MANIFEST, encoding="utf-8") as f:
            manifest = json.load(f)
        if manifest.get("sdist_sha256") != sha256:
            return None
        files: dict[str, str] = manifest["files"]
        for name, digest in files.items():
            if not MEMBER_PATTERN.fullmatch(f"x/vendor/llama.cpp/models/{name}") or \
                    _sha256_file(dest / name) != digest:
                return None
        return tuple(sorted(files))
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None


# ---- downloading -----------------------------------------------------------------------------

def download(url: str, to: IO[bytes], sha256: str, opener: Opener | None = None,
             progress: DownloadProgress | None = None, max_bytes: int = MAX_DOWNLOAD) -> None:
    """Stream ``url`` into ``to`` and check its SHA-256 (``opener`` defaults
    to ``urllib.request.urlopen``)."""
    h = hashlib.sha256()
    done = 0
    open_url = urllib.request.urlopen if opener is None else opener
    try:
        with open_url(url, timeout=TIMEOUT_S) as resp:
            length = resp.headers.get("Content-Length") if hasattr(resp, "headers") else None
            total = int(length) if length and str(length).isdigit() else 0
            while True:
                chunk = resp.read(CHUNK)
                if not chunk:
                    break
                done += len(chunk)
                if done > max_bytes:
                    raise SamplesError(f"{url}: the download is larger than {max_bytes:,} bytes; stopped")
                h.update(chunk)
                to.write(chunk)
                if progress is not None:
                    progress(done, total)
    except urllib.error.HTTPError as e:
        raise SamplesError(f"cannot download {url}: HTTP {e.code} {e.reason}") from None
    except urllib.error.URLError as e:
        raise SamplesError(f"cannot download {url}: {e.reason} (are you offline? "
                           f"`tokenprism samples --sdist FILE` uses a copy you already have)") from None
    except (OSError, ValueError) as e:
        raise SamplesError(f"cannot download {url}: {e}") from None
    got = h.hexdigest()
    if got != sha256:
        raise SamplesError(f"{url}: SHA-256 is {got}, expected {sha256}; the file was not used")


# ---- extracting ------------------------------------------------------------------------------

def extract_vocabs(archive: Path, dest: Path) -> dict[str, str]:
    """Copy the ``ggml-vocab-*`` files out of the sdist into ``dest``;
    returns name → SHA-256. Only regular files whose whole path matches
    :data:`MEMBER_PATTERN` are read (so no name can climb out of ``dest``),
    each at most :data:`MAX_FILE_SIZE`; a ``.gguf`` must start with the GGUF
    magic. Files are written beside their final name and renamed into place."""
    written: dict[str, str] = {}
    total = 0
    try:
        with tarfile.open(archive, "r:gz") as tar:
            for member in tar:
                m = MEMBER_PATTERN.fullmatch(member.name)
                if m is None:
                    continue
                name = m.group(1)
                if not member.isfile():
                    continue  # links and devices are never followed
                if member.size > MAX_FILE_SIZE:
                    raise SamplesError(f"{member.name}: {member.size:,} bytes is too large for a vocab file")
                total += member.size
                if total > MAX_TOTAL_SIZE:
                    raise SamplesError(f"{archive.name}: the vocab files add up to more than "
                                       f"{MAX_TOTAL_SIZE:,} bytes")
                src = tar.extractfile(member)
                if src is None:
                    continue
                data = src.read(MAX_FILE_SIZE + 1)
                if len(data) != member.size:
                    raise SamplesError(f"{member.name}: truncated in the archive")
                if name.endswith(".gguf") and not data.startswith(b"GGUF"):
                    raise SamplesError(f"{member.name}: not a GGUF file")
                dest.mkdir(parents=True, exist_ok=True)
                tmp = dest / f".{name}.part"
                tmp.write_bytes(data)
                os.replace(tmp, dest / name)
                written[name] = hashlib.sha256(data).hexdigest()
    except (tarfile.TarError, EOFError, OSError) as e:
        raise SamplesError(f"{archive}: cannot unpack: {e}") from None
    if not any(n.endswith(".gguf") for n in written):
        raise SamplesError(f"{archive.name}: no ggml-vocab-*.gguf files in the archive")
    return written


def fetch_samples(dest: Path | None = None, *, url: str = SDIST_URL, sha256: str = SDIST_SHA256,
                  sdist: Path | None = None, force: bool = False, opener: Opener | None = None,
                  progress: DownloadProgress | None = None) -> SamplesReport:
    """Make sure ``dest`` (default :func:`default_samples_dir`) holds the
    reference vocabs: nothing is downloaded when a previous run left them
    all there unchanged (unless ``force``); ``sdist`` uses a local copy of
    the archive instead of the network (its hash is checked all the same)."""
    dest = default_samples_dir() if dest is None else Path(dest)
    if sdist is not None and not Path(sdist).is_file():
        raise SamplesError(f"{sdist}: no such file")
    if not force:
        present = installed_files(dest, sha256)
        if present is not None:
            return SamplesReport(dest, present, downloaded=False)
    try:
        dest.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise SamplesError(f"cannot create {dest}: {e.strerror or e}") from None
    fd, tmp_name = tempfile.mkstemp(prefix=".sdist-", suffix=".tar.gz", dir=dest)
    tmp = Path(tmp_name)
    try:
        with os.fdopen(fd, "wb") as out:
            if sdist is not None:
                download(Path(sdist).resolve().as_uri(), out, sha256, progress=progress)
            else:
                download(url, out, sha256, opener=opener, progress=progress)
        files = extract_vocabs(tmp, dest)
    finally:
        tmp.unlink(missing_ok=True)
    manifest = {"sdist": SDIST_NAME, "sdist_sha256": sha256, "files": files}
    part = dest / (MANIFEST + ".part")
    part.write_text(json.dumps(manifest, indent=1, sort_keys=True), encoding="utf-8")
    os.replace(part, dest / MANIFEST)  # written last: a half-finished run is never taken as done
    return SamplesReport(dest, tuple(sorted(files)), downloaded=True)

