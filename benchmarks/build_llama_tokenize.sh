#!/usr/bin/env bash
# Builds llama.cpp's own `llama-tokenize` command-line tool, the reference
# for benchmarks/cold_paths.py's whole-process CLI measure, from the same
# pinned source every llama.cpp comparison in this repo uses: the
# llama-cpp-python 0.3.36 sdist's vendor/llama.cpp.
#
#   benchmarks/build_llama_tokenize.sh            # fetches the sdist with pip
#   LLAMA_SDIST=/path/llama_cpp_python-0.3.36.tar.gz benchmarks/build_llama_tokenize.sh
#
# Result: build/llama-tokenize/bin/llama-tokenize (printed at the end).
# Only that target is built (Release, $JOBS parallel jobs, default 2), so
# it takes a few minutes rather than the whole library's ~12.
set -euo pipefail

cd "$(dirname "$0")/.."
PY=${PYTHON:-.venv/bin/python}
JOBS=${JOBS:-2}
out=build/llama-tokenize
sdist=${LLAMA_SDIST:-$out/llama_cpp_python-0.3.36.tar.gz}
mkdir -p "$out"

if [ ! -f "$sdist" ]; then
    # the same fetch .ci/run does: the sdist from PyPI, never a wheel
    "$PY" -m pip download -q --no-deps --no-binary :all: -d "$out" llama-cpp-python==0.3.36
    sdist=$out/llama_cpp_python-0.3.36.tar.gz
fi

src=$out/src
if [ ! -f "$src/CMakeLists.txt" ]; then
    rm -rf "$src"
    mkdir -p "$src"
    tar -xzf "$sdist" -C "$src" --strip-components=3 'llama_cpp_python-0.3.36/vendor/llama.cpp'
fi

# CPU only, static (one self-contained binary: no shared-library loading at
# start, the fastest way llama-tokenize can start), no network (curl,
# openssl), no tests/server: the tokenizer needs none of
# them, and each would add minutes or a dependency to the build
cmake -S "$src" -B "$out/cmake" -DCMAKE_BUILD_TYPE=Release \
    -DBUILD_SHARED_LIBS=OFF -DLLAMA_CURL=OFF -DLLAMA_BUILD_TESTS=OFF \
    -DLLAMA_BUILD_SERVER=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_TOOLS=ON \
    -DLLAMA_BUILD_APP=OFF -DLLAMA_OPENSSL=OFF \
    -DGGML_NATIVE=ON >"$out/configure.log"
cmake --build "$out/cmake" --config Release --target llama-tokenize -j "$JOBS" >"$out/build.log"

bin=$(find "$out/cmake" -type f -name llama-tokenize -perm -u+x | head -1)
mkdir -p "$out/bin"
cp "$bin" "$out/bin/llama-tokenize"
echo "$PWD/$out/bin/llama-tokenize"
