#!/usr/bin/env bash
# Runs every test: installs what is missing, builds the debug and the
# ASan+UBSan configurations, runs CTest on both, runs the unit tests in the
# release configuration (NDEBUG: what a user who builds release runs), and
# gives each libFuzzer target a short run. Usage: scripts/test.sh [--quick]
# (debug build only).
set -euo pipefail
cd "$(dirname "$0")/.."

quick=0
[ "${1:-}" = "--quick" ] && quick=1
werror=OFF
[ "${CI:-}" = "true" ] && werror=ON
jobs=$(nproc)

scripts/install-deps.sh
scripts/install-test-tools.sh

# A throwaway PostgreSQL on loopback: the store and sync tests then run on
# both backends (MCPAGE_TEST_PG). Set MCPAGE_TEST_PG yourself to use
# another server, or MCPAGE_TEST_PG=off to skip PostgreSQL.
if [ -z "${MCPAGE_TEST_PG:-}" ]; then
  eval "$(scripts/pg-test-server.sh start)"
  trap 'scripts/pg-test-server.sh stop' EXIT
fi
[ "${MCPAGE_TEST_PG:-}" = "off" ] && unset MCPAGE_TEST_PG
export MCPAGE_TEST_PG

step() { printf '\n== %s\n' "$*"; }

step "debug build (gcc, -Werror=$werror)"
cmake --preset debug -DMCPAGE_WERROR=$werror >/dev/null
cmake --build --preset debug -j "$jobs"
step "debug tests"
ctest --preset debug -j "$jobs"

[ $quick -eq 1 ] && exit 0

step "ASan+UBSan build (clang-14)"
cmake --preset asan -DMCPAGE_WERROR=$werror >/dev/null
cmake --build --preset asan -j "$jobs"
step "ASan+UBSan tests"
ctest --preset asan -j "$jobs"

step "release build (gcc -O2, NDEBUG)"
cmake --preset release -DMCPAGE_WERROR=$werror >/dev/null
cmake --build --preset release -j "$jobs"
step "release unit tests"
ctest --preset release-unit -j "$jobs"

if compgen -G "fuzz/fuzz_*.c" >/dev/null; then
  step "libFuzzer smoke runs"
  cmake --preset fuzz >/dev/null
  cmake --build --preset fuzz -j "$jobs"
  scripts/fuzz.sh --smoke
fi
echo
echo "all tests passed"
