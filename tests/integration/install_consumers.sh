#!/usr/bin/env bash
# The library as a product: `cmake --install` into a temporary prefix, then
# build the three example servers (minimal, files, csv) against the INSTALLED library (never the build
# tree) the two ways a C project links a library: with pkg-config (shared,
# and static with --static) and with a CMake project that calls
# find_package(mcpage CONFIG REQUIRED) (mcpage::mcpage and
# mcpage::mcpage_static). Each build is then driven by the official SDK
# client (tests/integration/examples_sdk.mjs).
set -euo pipefail
src=${MCPAGE_SOURCE_DIR:?}
bin=${MCPAGE_BINARY_DIR:?}
cache=$bin/CMakeCache.txt
# Build consumers with the compiler and sanitizer flags of the library.
cc=$(sed -n 's/^CMAKE_C_COMPILER:[A-Z]*=//p' "$cache")
[ -n "$cc" ] || cc=cc
san=()
if grep -q '^MCPAGE_SANITIZE:BOOL=ON' "$cache"; then
  san=(-fsanitize=address,undefined -fno-omit-frame-pointer)
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
prefix=$tmp/prefix
step() { printf '== %s\n' "$*"; }
fail() {
  echo "FAIL: $*"
  exit 1
}

step "cmake --install $bin --prefix $prefix"
cmake --install "$bin" --prefix "$prefix" >"$tmp/install.log" || { cat "$tmp/install.log"; fail "install"; }
pc=$(find "$prefix" -name mcpage.pc)
[ -n "$pc" ] || fail "no mcpage.pc installed"
libdir=$(dirname "$(dirname "$pc")")
for f in include/mcpage.h include/mcpage/mcpage.h include/mcpage/page.h include/mcpage/server.h \
  include/mcpage/cursor.h include/mcpage/result.h include/mcpage/http.h; do
  [ -f "$prefix/$f" ] || fail "$f not installed"
done
for f in libmcpage.a libmcpage.so cmake/mcpage/mcpageConfig.cmake \
  cmake/mcpage/mcpageConfigVersion.cmake cmake/mcpage/mcpageTargets.cmake; do
  [ -e "$libdir/$f" ] || fail "$libdir/$f not installed"
done
soname=$(readelf -d "$libdir/libmcpage.so" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
major=$(sed -n 's/^#define MCPAGE_VERSION_MAJOR *\([0-9]*\)/\1/p' "$prefix/include/mcpage/mcpage.h")
minor=$(sed -n 's/^#define MCPAGE_VERSION_MINOR *\([0-9]*\)/\1/p' "$prefix/include/mcpage/mcpage.h")
want=libmcpage.so.$major # 0.x: a minor release may break the ABI, so it is in the SONAME
[ "$major" = 0 ] && want=libmcpage.so.0.$minor
[ "$soname" = "$want" ] || fail "SONAME is '$soname', expected $want"
[ ! -d "$prefix/include/page" ] && ! find "$prefix/include" -name 'alloc.h' | grep -q . ||
  fail "internal headers were installed"

export PKG_CONFIG_PATH=$libdir/pkgconfig
examples="minimal files csv"
version=$(pkg-config --modversion mcpage)
header_version=$(sed -n 's/^#define MCPAGE_VERSION_STRING *"\(.*\)"/\1/p' "$prefix/include/mcpage/mcpage.h")
[ "$version" = "$header_version" ] || fail "pkg-config says $version, mcpage.h says $header_version"
# The run path is the library directory, absolute and normalised (no
# lib/pkgconfig/../../lib in every program's RUNPATH).
rpath=$(pkg-config --libs mcpage | grep -o -- '-Wl,-rpath,[^ ]*' | sed 's/-Wl,-rpath,//')
[ "$rpath" = "$(readlink -f "$libdir")" ] || fail "mcpage.pc's run path is '$rpath', not $(readlink -f "$libdir")"
incdir=$(pkg-config --variable=includedir mcpage)
[ "$(readlink -f "$incdir")" = "$(readlink -f "$prefix/include")" ] ||
  fail "pkg-config's includedir $incdir is not $prefix/include"

step "each installed header compiles on its own (C17, -Wpedantic), <mcpage.h> also as C++17"
for h in "$prefix"/include/mcpage/*.h "$prefix/include/mcpage.h"; do
  name=${h#"$prefix/include/"}
  printf '#include <%s>\n' "$name" >"$tmp/one.c"
  # shellcheck disable=SC2046
  "$cc" -std=c17 -Wall -Wextra -Wpedantic -Werror -fsyntax-only $(pkg-config --cflags mcpage) \
    "$tmp/one.c" || fail "<$name> does not compile on its own"
done
if command -v c++ >/dev/null; then
  printf '#include <mcpage.h>\nint main() { return mcpage_version() ? 0 : 1; }\n' >"$tmp/one.cpp"
  # shellcheck disable=SC2046
  c++ -std=c++17 -Wall -Wextra -Werror -fsyntax-only $(pkg-config --cflags mcpage) "$tmp/one.cpp" ||
    fail "<mcpage.h> does not compile as C++"
fi

# Each binary must use the installed library: shared ones name
# libmcpage.so.N and carry the prefix in their run path; static ones have
# no libmcpage dependency at all.
check_shared() {
  readelf -d "$1" | grep -q "NEEDED.*\[$want\]" || fail "$1 does not link $want"
  [ "$(readlink -f "$(ldd "$1" | awk '/libmcpage/ {print $3}')")" = "$(readlink -f "$libdir/$want")" ] ||
    fail "$1 loads $(ldd "$1" | awk '/libmcpage/ {print $3}'), not the installed library"
}
# libmcpage.so names only what it links: libmicrohttpd, libcurl and
# libcrypto are opened when first used.
for l in libmicrohttpd libcurl libcrypto; do
  if readelf -d "$libdir/$want" | grep -q "NEEDED.*\[$l"; then fail "$want links $l"; fi
done
check_static() {
  if readelf -d "$1" | grep -q 'NEEDED.*libmcpage'; then fail "$1 should link libmcpage.a"; fi
}

# --cflags is the include directory and jansson's flags (a public
# dependency), nothing of the private ones (libmicrohttpd's would bring
# gnutls' p11-kit directory).
cflags=$(pkg-config --cflags mcpage)
[ "$(echo $cflags)" = "$(echo -I"$incdir" $(pkg-config --cflags jansson))" ] ||
  fail "pkg-config --cflags mcpage is '$cflags': only -I$incdir and jansson's flags belong there"

# The shared builds add no run path of their own: mcpage.pc's Libs carry
# it, so a prefix the dynamic linker does not search still works.
step "pkg-config, shared: cc \$(pkg-config --cflags --libs mcpage)"
mkdir -p "$tmp/pc-shared" "$tmp/pc-static"
for ex in $examples; do
  # shellcheck disable=SC2046
  "$cc" "${san[@]}" -std=c17 -Wall -Wextra -Werror -o "$tmp/pc-shared/${ex}_server" \
    "$src/examples/$ex/${ex}_server.c" $(pkg-config --cflags --libs mcpage)
  check_shared "$tmp/pc-shared/${ex}_server"
done

# libmcpage.a with its dependencies as shared libraries: `pkg-config
# --static --libs` (Libs.private names them directly, so no static closure
# of other packages is asked for), with libmcpage.a for -lmcpage.
step "pkg-config, static: cc ... libmcpage.a \$(pkg-config --static --libs mcpage)"
for l in -ldl; do
  pkg-config --static --libs mcpage | grep -q -- "$l" || fail "mcpage.pc's static libs lack $l"
done
# libmicrohttpd, libcurl and libcrypto are opened on first use, never linked.
for l in -lmicrohttpd -lcurl -lcrypto; do
  if pkg-config --static --libs mcpage | grep -q -- "$l"; then fail "mcpage.pc links $l"; fi
done
static_libs="$libdir/libmcpage.a $(pkg-config --static --libs mcpage | sed -e 's/-lmcpage//' -e 's/-Wl,-rpath,[^ ]*//')"
for ex in $examples; do
  # shellcheck disable=SC2086
  "$cc" "${san[@]}" -std=c17 -Wall -Wextra -Werror -o "$tmp/pc-static/${ex}_server" \
    "$src/examples/$ex/${ex}_server.c" $(pkg-config --cflags mcpage) $static_libs
  check_static "$tmp/pc-static/${ex}_server"
done

# A program whose own functions share names with mcpage internals links
# with the static library all the same: those internals are local there.
step "static library: a program's own b64_encode, jw_init and page_reject do not clash"
cat >"$tmp/clash.c" <<'C'
#include <stdio.h>
#include <string.h>
#include <mcpage.h>
int b64_encode(void);
int jw_init(void);
int page_reject(void);
int b64_encode(void) { return 1; }
int jw_init(void) { return 2; }
int page_reject(void) { return 3; }
int main(void)
{
    mcpage_result *r = mcpage_result_new();
    int ok = r && mcpage_result_add_image(r, "image/png", "abc", 3) == 0;
    mcpage_result_free(r);
    printf("%s %d\n", mcpage_version(), b64_encode() + jw_init() + page_reject());
    return ok && strcmp(mcpage_version(), MCPAGE_VERSION_STRING) == 0 ? 0 : 1;
}
C
# shellcheck disable=SC2086
"$cc" "${san[@]}" -std=c17 -Wall -Wextra -Werror -o "$tmp/clash" "$tmp/clash.c" \
  $(pkg-config --cflags mcpage) $static_libs || fail "a program's own b64_encode clashed with libmcpage.a"
[ "$("$tmp/clash")" = "$header_version 6" ] || fail "the clash program printed $("$tmp/clash")"

for target in mcpage::mcpage mcpage::mcpage_static; do
  dir=$tmp/cmake-${target#mcpage::}
  step "CMake: find_package(mcpage CONFIG REQUIRED), linking $target"
  cmake -S "$src/examples" -B "$dir" -G Ninja -DCMAKE_PREFIX_PATH="$prefix" \
    -DCMAKE_C_COMPILER="$cc" -DCMAKE_C_FLAGS="${san[*]}" -DCMAKE_EXE_LINKER_FLAGS="${san[*]}" \
    -DMCPAGE_EXAMPLES_LINK="$target" >"$tmp/cmake.log" 2>&1 || { cat "$tmp/cmake.log"; fail "configure"; }
  grep -q "mcpage_DIR:PATH=$libdir/cmake/mcpage" "$dir/CMakeCache.txt" ||
    fail "find_package did not find the installed package: $(grep mcpage_DIR "$dir/CMakeCache.txt")"
  if grep -q -- "-I$src/include" "$dir/build.ninja"; then fail "the consumer sees the source tree's headers"; fi
  cmake --build "$dir" >"$tmp/build.log" 2>&1 || { cat "$tmp/build.log"; fail "build"; }
  for ex in $examples; do
    if [ "$target" = mcpage::mcpage ]; then check_shared "$dir/${ex}_server"; else check_static "$dir/${ex}_server"; fi
  done
done

for d in pc-shared pc-static cmake-mcpage cmake-mcpage_static; do
  step "SDK client against the $d build"
  EXAMPLES_BIN_DIR=$tmp/$d node "$src/tests/integration/examples_sdk.mjs"
  EXAMPLES_BIN_DIR=$tmp/$d node "$src/tests/integration/minimal_sdk.mjs"
done
echo "ok: installed to a temporary prefix; the three examples built 4 ways and served the SDK clients"
