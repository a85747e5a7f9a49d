#!/usr/bin/env bash
# The installed library works for an embedder: `cmake --install` paddock's build tree into a
# scratch prefix, then (1) a separate CMake project does find_package(paddock) and links
# paddock::paddock, (2) the same source builds with `pkg-config --cflags --libs paddock`,
# (3) a translation unit that includes paddock's headers with other Asio backend macros than
# the library's fails to compile, naming the macros. Each program runs a sandboxed command.
# Usage: run.sh BUILD_DIR
set -euo pipefail
build="$(cd "$1" && pwd)"
here="$(cd "$(dirname "$0")" && pwd)"
scratch="$(mktemp -d "${TMPDIR:-/tmp}/paddock-consumer.XXXXXX")"
trap 'rm -rf "$scratch"' EXIT
prefix="$scratch/prefix"

cmake --install "$build" --prefix "$prefix" >/dev/null
# Only the public headers are shipped.
test -f "$prefix/include/paddock/manager.hpp"
test -f "$prefix/include/paddock/build_config.hpp"
if find "$prefix/include" -path '*/runtime/*' -o -path '*/sandbox/*' | grep -q .; then
  echo "internal headers were installed" >&2; exit 1
fi

echo "--- find_package(paddock)"
cmake -S "$here" -B "$scratch/cmake-build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_PREFIX_PATH="$prefix" >/dev/null
cmake --build "$scratch/cmake-build" >/dev/null
"$scratch/cmake-build/consumer"

echo "--- pkg-config paddock"
export PKG_CONFIG_PATH="$prefix/lib/pkgconfig:$prefix/lib/$(gcc -print-multiarch 2>/dev/null)/pkgconfig"
flags=$(pkg-config --cflags --libs paddock)
# shellcheck disable=SC2086
c++ -O1 -o "$scratch/consumer-pc" "$here/consumer.cpp" $flags
"$scratch/consumer-pc"

echo "--- other Asio backend macros are refused at compile time"
cflags=$(pkg-config --cflags paddock)
if grep -q 'PADDOCK_BUILT_WITH_IO_URING 1' "$prefix/include/paddock/build_config.hpp"; then
  wrong=$(echo "$cflags" | sed 's/-DASIO_HAS_IO_URING//; s/-DASIO_DISABLE_EPOLL//')
  expect="io_uring backend"
else
  wrong="$cflags -DASIO_HAS_IO_URING -DASIO_DISABLE_EPOLL"
  expect="epoll backend"
fi
# shellcheck disable=SC2086
if c++ -fsyntax-only $wrong "$here/consumer.cpp" 2>"$scratch/err"; then
  echo "compiled with mismatched Asio macros" >&2; exit 1
fi
grep -q "$expect" "$scratch/err" || { cat "$scratch/err" >&2; exit 1; }
echo "refused: $(grep -m1 -o 'error: .*' "$scratch/err" | cut -c1-100)"
