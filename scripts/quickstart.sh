#!/usr/bin/env bash
# The README's first command: installs what is missing, builds mcpage
# (release), installs the binary to ~/.local/bin (scripts/install-bin.sh:
# it says what to add to PATH when that is not on it), then runs the main
# job on the bundled sample archive.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
cmake --preset release >/dev/null
cmake --build --preset release -j "$(nproc)"
bin=build/release/bin/mcpage
echo
echo "built: $bin ($($bin version))"
scripts/demo.sh "$bin"
echo
scripts/install-bin.sh "$bin"
