#!/usr/bin/env bash
# scripts/install-bin.sh (what the quickstart runs after the build): the
# binary lands in ~/.local/bin (or $MCPAGE_BIN_DIR) and runs from there;
# when that directory is not on PATH the exact line to add is printed, and
# nothing is printed about PATH when it is; the README says the same.
set -euo pipefail
: "${MCPAGE_BIN:?}" "${MCPAGE_SOURCE_DIR:?}"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "install_bin: FAIL: $*" >&2; exit 1; }
out=$(HOME=$tmp PATH=/usr/bin:/bin "$MCPAGE_SOURCE_DIR/scripts/install-bin.sh" "$MCPAGE_BIN")
[ -x "$tmp/.local/bin/mcpage" ] || fail "not installed in ~/.local/bin: $out"
"$tmp/.local/bin/mcpage" version >/dev/null || fail "the installed binary does not run"
grep -qF "export PATH=\"$tmp/.local/bin:\$PATH\"" <<<"$out" || fail "no PATH line: $out"
# The printed line, run, puts mcpage on PATH.
line=$(grep -o "export PATH=\"$tmp/.local/bin:\$PATH\"" <<<"$out" | head -1)
(PATH=/usr/bin:/bin; eval "$line"; command -v mcpage | grep -qx "$tmp/.local/bin/mcpage") ||
  fail "the printed line does not put mcpage on PATH"
out=$(HOME=$tmp PATH="$tmp/.local/bin:/usr/bin:/bin" "$MCPAGE_SOURCE_DIR/scripts/install-bin.sh" "$MCPAGE_BIN")
! grep -q "not on your PATH" <<<"$out" || fail "PATH advice although it is on PATH: $out"
out=$(MCPAGE_BIN_DIR=$tmp/elsewhere PATH=/usr/bin:/bin "$MCPAGE_SOURCE_DIR/scripts/install-bin.sh" "$MCPAGE_BIN")
[ -x "$tmp/elsewhere/mcpage" ] || fail "MCPAGE_BIN_DIR ignored: $out"
grep -q "scripts/install-bin.sh" "$MCPAGE_SOURCE_DIR/scripts/quickstart.sh" || fail "the quickstart does not install"
grep -q '~/.local/bin/mcpage' "$MCPAGE_SOURCE_DIR/README.md" &&
  grep -qF 'export PATH="$HOME/.local/bin:$PATH"' "$MCPAGE_SOURCE_DIR/README.md" ||
  fail "the README does not say where mcpage is installed and how to put it on PATH"
echo "install_bin: ok"
