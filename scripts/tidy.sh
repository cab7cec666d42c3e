#!/usr/bin/env bash
# Runs clang-tidy over the project's C sources with the compile database of
# the build directory given as $1 (default build/debug).
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build/debug}
mapfile -t files < <(git ls-files 'src/*.c' 'examples/*.c')
[ ${#files[@]} -gt 0 ] || exit 0
exec clang-tidy -p "$build" --quiet "${files[@]}"
