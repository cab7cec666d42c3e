#!/usr/bin/env bash
# Installs the mcpage binary where a shell finds it: $MCPAGE_BIN_DIR, or
# ~/.local/bin (the XDG place for a user's programs). When that directory
# is not on PATH it prints the exact line to add, and the full path that
# works meanwhile. scripts/quickstart.sh runs it after the build.
#
#   scripts/install-bin.sh [BINARY]    (default build/release/bin/mcpage)
set -euo pipefail
cd "$(dirname "$0")/.."
src=${1:-build/release/bin/mcpage}
dir=${MCPAGE_BIN_DIR:-$HOME/.local/bin}
[ -x "$src" ] || { echo "install-bin: $src is not built" >&2; exit 1; }
mkdir -p "$dir"
install -m 755 "$src" "$dir/mcpage"
echo "installed: $dir/mcpage"
case ":$PATH:" in
  *":$dir:"*) ;;
  *)
    echo
    echo "$dir is not on your PATH, so 'mcpage' alone is not found yet. Add it:"
    echo
    echo "  echo 'export PATH=\"$dir:\$PATH\"' >> ~/.bashrc && export PATH=\"$dir:\$PATH\""
    echo
    echo "(or run $dir/mcpage by its full path; agents need it on their PATH too, or"
    echo " register the full path: claude mcp add mcpage -- $dir/mcpage serve)"
    ;;
esac
