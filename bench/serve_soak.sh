#!/usr/bin/env bash
# The daemon's soak: N commands through one `paddock serve` (the Python farm driver, streaming),
# then 1,000 concurrent streams over 50 connections, then kill -9 of the daemon. Prints the
# daemon's RSS and open descriptors before and after, zombies, and any sandboxed process left.
# Stops by itself. Usage: bench/serve_soak.sh [BUILD_DIR] [COMMANDS]   (default build2, 100000)
set -euo pipefail
cd "$(dirname "$0")/.."
build="${1:-build2}"
n="${2:-100000}"
paddock="$build/paddock"
dir=$(mktemp -d)
trap 'kill -9 $daemon 2>/dev/null; rm -rf "$dir"' EXIT
"$paddock" serve --listen "unix:$dir/s.sock" --max-commands 2048 --max-per-connection 1024 \
  >/dev/null 2>"$dir/log" &
daemon=$!
for _ in $(seq 200); do [ -S "$dir/s.sock" ] && break; sleep 0.05; done
rss() { awk '/VmRSS/ { print $2 }' "/proc/$daemon/status"; }
fds() { ls "/proc/$daemon/fd" | wc -l; }
farm() { python3 examples/python/farm.py --connect "unix:$dir/s.sock" "$@"; }

# Warm-up (the first commands grow pools and caches), then the baseline.
farm --commands 500 --connections 4 --concurrency 32 -- /bin/true >/dev/null
rss0=$(rss); fds0=$(fds)
echo "| step | result | daemon RSS (KiB) | daemon fds |"
echo "|---|---|---|---|"
echo "| after warm-up | | $rss0 | $fds0 |"
line=$(farm --commands "$n" --connections 8 --concurrency 64 -- /bin/echo soak)
echo "| $n commands, 8 connections, concurrency 64 | $line | $(rss) | $(fds) |"
line=$(farm --commands 1000 --connections 50 --concurrency 1000 -- \
  /bin/sh -c 'i=0; while [ $i -lt 100 ]; do echo line $i; i=$((i+1)); done')
echo "| 1,000 concurrent streams over 50 connections | $line | $(rss) | $(fds) |"
zombies=$(ps -o stat= --ppid "$daemon" | grep -c Z || true)
echo "| zombies of the daemon | $zombies | | |"
# kill -9 with commands running: nothing of theirs may stay.
farm --commands 50 --connections 2 --concurrency 50 -- /bin/sh -c 'sleep 987699' >/dev/null 2>&1 &
for _ in $(seq 200); do [ "$(pgrep -fc '^sleep 987699' || true)" -ge 50 ] && break; sleep 0.05; done
running=$(pgrep -fc '^sleep 987699' || true)
kill -9 "$daemon"
for _ in $(seq 200); do pgrep -f '^sleep 987699' >/dev/null || break; sleep 0.05; done
left=$(pgrep -fc '^sleep 987699' || true)
echo "| kill -9 of the daemon with $running sandboxed commands running | $left left | | |"
wait 2>/dev/null || true
