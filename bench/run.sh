#!/usr/bin/env bash
# Builds paddock twice (io_uring and epoll backends, Release) and runs every comparison in
# one go, so all figures in the table come from the same machine in the same minutes.
# Writes the blocks of bench/results.md it measures (supervision, isolation:
# bench/compare_isolation.sh, the proxy: bench/compare_proxy.sh, the classifier) and the
# README's summary, through bench/update_results.sh. Usage: bench/run.sh [--quick]
set -euo pipefail
cd "$(dirname "$0")/.."
.ci/setup >/dev/null
quick=false
[ "${1:-}" = "--quick" ] && quick=true
latency_n=2000; throughput_n=5000; capture_bytes=$((1024 * 1024 * 1024)); many_n=6000; discard_n=10000
if $quick; then latency_n=300; throughput_n=1000; capture_bytes=$((256 * 1024 * 1024)); many_n=1000; discard_n=1000; fi

# Quiet builds, but a failing one shows why.
build() { local log; log=$(cmake --build "$@" 2>&1) || { echo "$log" >&2; exit 1; }; }
for backend in io_uring epoll; do
  dir="build-bench-$backend"
  cmake -S . -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=Release -DPADDOCK_IO_BACKEND=$backend \
    -DPADDOCK_BUILD_TESTS=OFF -DPADDOCK_BUILD_EXAMPLES=OFF >/dev/null
  build "$dir" --target paddock_bench
done
# The isolation comparison runs on the default (io_uring) build only.
build build-bench-io_uring --target paddock_cli paddock_sandbox_bench paddock_exec_timer \
  paddock_proxy_bench paddock_classifier_bench

# Isolation first: paddock_bench's many-children runs leave thousands of network namespaces
# for the kernel to tear down (asynchronously, serialised), which slows every new one for a while.
isolation=$(mktemp)
proxy=$(mktemp)
trap 'rm -f "$isolation" "$proxy"' EXIT
if $quick; then
  bench/compare_isolation.sh --quick build-bench-io_uring >"$isolation"
else
  bench/compare_isolation.sh build-bench-io_uring >"$isolation"
fi
# The proxy next, also before the many-children runs (their namespace teardown costs CPU).
if $quick; then
  bench/compare_proxy.sh --quick build-bench-io_uring >"$proxy"
else
  bench/compare_proxy.sh build-bench-io_uring >"$proxy"
fi

stamp="$(date -u '+%Y-%m-%d %H:%M') UTC, commit $(git rev-parse --short HEAD 2>/dev/null || echo unknown), $(nproc) cores, Linux $(uname -r)"
supervision=$(mktemp)
classifier=$(mktemp)
trap 'rm -f "$isolation" "$proxy" "$supervision" "$classifier"' EXIT
{
  echo "Supervision: \`bench/run.sh$($quick && echo ' --quick')\` ($stamp)."
  echo
  echo "| measurement | paddock (median) | paddock p99 | plain (median) | plain p99 | paddock / plain |"
  echo "|---|---|---|---|---|---|"
  for backend in io_uring epoll; do
    b="build-bench-$backend/bench/paddock_bench"
    "$b" latency "$latency_n"
    "$b" throughput "$throughput_n"
    "$b" capture "$capture_bytes"
  done
  echo
  echo "| supervision at scale | RSS per child | threads in process | start | teardown | |"
  echo "|---|---|---|---|---|---|"
  for backend in io_uring epoll; do
    b="build-bench-$backend/bench/paddock_bench"
    "$b" many "$many_n"
    "$b" many-discard "$discard_n"
  done
} | tee "$supervision"
# Deciding before running: the classifier per command (bench/classifier_bench.cpp).
{
  echo "Classifier: \`paddock_classifier_bench\` ($stamp; goal: a typical command well under 20 µs)."
  echo
  build-bench-io_uring/bench/paddock_classifier_bench "$($quick && echo 300 || echo 2000)"
} | tee "$classifier"
# Sandboxed vs unsandboxed vs bwrap vs srt (installs bwrap/socat/ripgrep and srt if missing),
# then paddock's proxy vs direct loopback vs srt's proxy.
prepend() {  # file line: the line and an empty one before the file's text
  local tmp
  tmp=$(mktemp)
  { printf '%s\n\n' "$2"; cat "$1"; } >"$tmp" && mv "$tmp" "$1"
}
prepend "$isolation" "Isolation: \`bench/compare_isolation.sh\` (io_uring build) from \`bench/run.sh\`, run first ($stamp)."
prepend "$proxy" "Proxy: \`bench/compare_proxy.sh\` (io_uring build) from \`bench/run.sh\`, run second ($stamp)."
cat "$isolation" "$proxy"
bench/update_results.sh supervision "$supervision"
bench/update_results.sh isolation "$isolation"
bench/update_results.sh proxy "$proxy"
bench/update_results.sh classifier "$classifier"
