#!/usr/bin/env bash
# The main job on the bundled sample archive, as an agent would see it.
# Usage: scripts/demo.sh [path/to/mcpage]
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${1:-build/release/bin/mcpage}
"$bin" --help
