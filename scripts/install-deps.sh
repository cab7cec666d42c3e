#!/usr/bin/env bash
# Installs the Debian 12 packages that building and testing mcpage need.
# Idempotent: packages already present are left alone, and nothing is
# fetched when nothing is missing. Runs as root, or through sudo.
set -euo pipefail

packages=(
  gcc make cmake ninja-build pkg-config git
  clang-14 libclang-rt-14-dev clang-format clang-tidy
  libjansson-dev libssl-dev libsqlite3-dev sqlite3 libmicrohttpd-dev
  libcmocka-dev gcovr libcurl4-openssl-dev  # libcurl: the HTTP transport of mcpage check
  libpq-dev postgresql nginx-light
  libzstd-dev  # Zed's thread rows are zstd-compressed JSON
  python3  # free loopback ports in tests/integration/multi_instance.sh
  chromium  # headless, for the browser view's test (tests/integration/ui_browser.mjs)
)

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done
# Node.js runs the test tooling (the official MCP SDK client, the tokenizer
# used for calibration, the conformance suite). Any node >= 18 will do.
if ! command -v node >/dev/null 2>&1; then missing+=(nodejs); fi
if ! command -v npm >/dev/null 2>&1; then missing+=(npm); fi

if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#packages[@]} packages present"
  exit 0
fi

if [ "$(id -u)" -eq 0 ]; then
  sudo=()
elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
  sudo=(sudo -n)
else
  echo "install-deps: missing packages: ${missing[*]}" >&2
  echo "install-deps: run this script as root (or with passwordless sudo) to install them" >&2
  exit 1
fi

echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
"${sudo[@]}" apt-get update -qq
"${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
