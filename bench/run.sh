#!/usr/bin/env bash
# Builds paddock twice (io_uring and epoll backends, Release) and runs every comparison in
# one go, so all figures in the table come from the same machine in the same minutes.
# Prints a markdown table and writes it to bench/results.md. Usage: bench/run.sh [--quick]
set -euo pipefail
cd "$(dirname "$0")/.."
.ci/setup >/dev/null
quick=false
[ "${1:-}" = "--quick" ] && quick=true
latency_n=2000; throughput_n=5000; capture_bytes=$((1024 * 1024 * 1024)); many_n=6000; discard_n=10000
if $quick; then latency_n=300; throughput_n=1000; capture_bytes=$((256 * 1024 * 1024)); many_n=1000; discard_n=1000; fi

for backend in io_uring epoll; do
  dir="build-bench-$backend"
  cmake -S . -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=Release -DPADDOCK_IO_BACKEND=$backend \
    -DPADDOCK_BUILD_TESTS=OFF -DPADDOCK_BUILD_EXAMPLES=OFF >/dev/null
  cmake --build "$dir" --target paddock_bench >/dev/null
done

out=bench/results.md
{
  echo "Machine: $(nproc) cores, $(uname -r), $(date -u +%Y-%m-%d). Command: \`bench/run.sh\`."
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
} | tee "$out"
