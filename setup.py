"""Build script: maps the top-level folders onto the ``tokenprism`` namespace
and compiles the hot modules with mypyc.

mypyc names a compiled module after its path on disk, so the sources are
compiled from a staged copy under ``build/mypyc-src/tokenprism/...`` that
has the installed layout. ``TOKENPRISM_PURE=1``, no working mypyc, or
no working C compiler gives a pure-Python build that behaves identically;
``TOKENPRISM_REQUIRE_COMPILED=1`` turns those fallbacks into errors.
"""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

from setuptools import setup
from setuptools.command.build_ext import build_ext

ROOT = Path(__file__).resolve().parent
FOLDERS = {"core": "tokenprism.core", "app": "tokenprism.app", "plugins": "tokenprism.plugins",
           "resources": "tokenprism.resources"}

# Hot modules compiled by mypyc. Left out on purpose: hookspecs/plugins/
# plugin_types (pluggy glue, run once), plugin_api (names only: mypyc
# resolves a name imported through it to the compiled original, so the
# plugins' calls stay native), unicode_data (data), model (thin facade), convert,
# convert_hf, spm_proto and resources (run once per file, I/O bound), corpus
# (Dask glue and numpy counts around the compiled tokenizers), the
# plugins' tiny @hookimpl modules, and everything in app/ (Qt, I/O).
COMPILED = [
    "core/gguf_file.py",
    "core/vocab.py",
    "core/undecoded.py",
    "core/spans.py",
    "core/special.py",
    "core/pair_cache.py",
    "core/columns.py",
    "core/piece_codes.py",
    "core/bytes_index.py",
    "core/unicode_ranges.py",
    "core/record.py",  # NativeRecord: the base of the compiled frozen types above
    "core/hash_slots.py",
    "plugins/spm/spm.py",
    "plugins/bpe/bpe.py",
    "plugins/bpe/ranks.py",
    "plugins/bpe/pretokenize.py",
    "plugins/bpe/custom_split.py",
    "plugins/bpe/word_cache.py",
    "plugins/ugm/ugm.py",
    "plugins/ugm/charsmap.py",
    "plugins/ugm/trie.py",
    "plugins/ugm/xcda.py",
    "plugins/wpm/wpm.py",
    "plugins/wpm/chunks.py",
]


def _require_compiled() -> bool:
    return os.environ.get("TOKENPRISM_REQUIRE_COMPILED", "") not in ("", "0")


class OptionalBuildExt(build_ext):
    """Compile mypyc's C when a compiler works, else install pure Python.

    mypycify only writes C; the compiler first runs here, so a machine
    without a working one must be caught here as well.
    """

    def run(self) -> None:
        from distutils.errors import CCompilerError, DistutilsExecError, DistutilsPlatformError

        try:
            super().run()
        except (CCompilerError, DistutilsExecError, DistutilsPlatformError, OSError) as e:
            if _require_compiled():
                raise
            print(f"tokenprism: compiling the mypyc modules failed ({type(e).__name__}: {e}); "
                  "installing pure Python, which behaves identically but slower. "
                  "Set TOKENPRISM_REQUIRE_COMPILED=1 to make this an error.", file=sys.stderr)
            # a shim built before the failure would import a shared library
            # that was never built: remove every extension output, and an
            # editable install's copies from an earlier build, which would
            # otherwise go on running instead of the sources beside them
            for out in [*self.get_outputs(), *map(str, stale_in_tree(ROOT))]:
                if os.path.exists(out):
                    os.remove(out)
            self.extensions = []
            self.distribution.ext_modules = []


def stale_in_tree(root: Path) -> list[Path]:
    """The compiled files an editable install put beside the sources under
    ``root``: the group's shared library and each hot module's shim."""
    found = [*root.glob("tokenprism__mypyc.*.so"), *root.glob("tokenprism__mypyc.*.pyd")]
    for m in COMPILED:
        src = root / m
        found += [*src.parent.glob(src.stem + ".*.so"), *src.parent.glob(src.stem + ".*.pyd")]
    return found


def find_packages() -> tuple[list[str], dict[str, str]]:
    packages: list[str] = []
    package_dir: dict[str, str] = {}
    for folder, pkg in FOLDERS.items():
        for init in sorted((ROOT / folder).rglob("__init__.py")):
            rel = init.parent.relative_to(ROOT)
            name = pkg + "".join("." + part for part in rel.parts[1:])
            packages.append(name)
            package_dir[name] = rel.as_posix()
    return packages, package_dir


def mypyc_extensions() -> list[object]:
    if os.environ.get("TOKENPRISM_PURE", "") not in ("", "0"):
        print("TOKENPRISM_PURE set: building pure Python", file=sys.stderr)
        return []
    try:
        from mypyc.build import mypycify
    except ImportError:
        print("mypyc not available: building pure Python", file=sys.stderr)
        return []
    sources = [m for m in COMPILED if (ROOT / m).exists()]
    stage = ROOT / "build" / "mypyc-src"
    if stage.exists():
        shutil.rmtree(stage)
    (stage / "tokenprism").mkdir(parents=True)
    # only for mypy's module naming; the installed tokenprism stays a
    # namespace package
    (stage / "tokenprism" / "__init__.py").write_text("")
    for folder in ("core", "plugins"):
        shutil.copytree(ROOT / folder, stage / "tokenprism" / folder,
                        ignore=shutil.ignore_patterns("*.so", "*.pyd", "__pycache__"))
    staged = [str((stage / "tokenprism" / m).relative_to(ROOT)) for m in sources]
    # --follow-imports=silent: mypy still reads what the compiled modules
    # import (their types), but reports errors only in the compiled ones; the
    # rest is checked by .ci/typecheck with every dependency installed. The
    # isolated build environment has none of the services' libraries (jinja2
    # for core.chat, which Model.chat imports), so without it, strict mypy
    # stopped the build on their Any types.
    try:
        return list(mypycify(["--ignore-missing-imports", "--follow-imports=silent", *staged], opt_level="3",
                             group_name="tokenprism"))
    except Exception as e:  # a broken toolchain must not block installing
        if os.environ.get("TOKENPRISM_REQUIRE_COMPILED"):
            raise
        print(f"mypyc failed ({e}); building pure Python", file=sys.stderr)
        return []


packages, package_dir = find_packages()
setup(packages=packages, package_dir=package_dir, ext_modules=mypyc_extensions(),
      cmdclass={"build_ext": OptionalBuildExt})
