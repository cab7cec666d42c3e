#!/usr/bin/env bash
# The README's first command: installs what is missing, builds mcpage
# (release), then runs the main job on the bundled sample archive.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
cmake --preset release >/dev/null
cmake --build --preset release -j "$(nproc)"
bin=build/release/bin/mcpage
echo
echo "built: $bin ($($bin version))"
exec scripts/demo.sh "$bin"
