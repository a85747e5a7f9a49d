#!/usr/bin/env bash
# The proxy benchmark: paddock's domain-filtering proxy side by side with direct loopback and
# Anthropic's sandbox-runtime (srt), in one run. Prints markdown (tables + the targets) on stdout.
#   1. 1 GiB through a CONNECT tunnel: direct loopback, paddock, two reference relays (not
#      paddock), srt's Node HTTP proxy alone, and a client inside `srt` via $HTTPS_PROXY;
#      interleaved round robin, median GB/s.
#   2. 5,000 tunnels open at once through paddock: RSS per idle tunnel, time to open, a byte
#      through each at the end.
#   3. CONNECT -> 200 -> close per second through paddock, 64 clients at once: HTTP CONNECT
#      (a name and an IP literal) and SOCKS5, rounds interleaved; median rate, median and p99
#      of the handshake.
# Installs what srt needs if missing (socat, bubblewrap, ripgrep from Debian; srt from npm into
# BUILD_DIR/isolation-tools, shared with compare_isolation.sh, never into the repo).
# Usage: bench/compare_proxy.sh [--quick] [BUILD_DIR]   (default build-bench-io_uring)
set -euo pipefail
cd "$(dirname "$0")/.."
quick=false
if [ "${1:-}" = "--quick" ]; then
  quick=true
  shift
fi
build="${1:-build-bench-io_uring}"
bytes=$((1024 * 1024 * 1024)); runs=7; rate_seconds=2; rate_rounds=5; concurrency=64
tunnels=5000
if $quick; then
  bytes=$((256 * 1024 * 1024)); runs=3; rate_seconds=1; rate_rounds=3; tunnels=1000
fi
log() { echo "compare_proxy: $*" >&2; }

# --- tools ---------------------------------------------------------------------------------
# shellcheck source=bench/comparison_tools.sh
source bench/comparison_tools.sh  # (we are in the repo root)

# --- build ---------------------------------------------------------------------------------
if [ ! -f "$build/CMakeCache.txt" ]; then
  cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DPADDOCK_BUILD_TESTS=OFF \
    -DPADDOCK_BUILD_EXAMPLES=OFF >/dev/null
fi
if ! out=$(cmake --build "$build" --target paddock_proxy_bench 2>&1); then
  echo "$out" >&2
  exit 1
fi
bench="$build/bench/paddock_proxy_bench"
backend=$(sed -n 's/^PADDOCK_IO_BACKEND:STRING=//p' "$build/CMakeCache.txt")

tsv=$(mktemp)
node_out=$(mktemp)
node_pid=""
cleanup() {
  [ -n "$node_pid" ] && kill "$node_pid" 2>/dev/null
  rm -f "$tsv" "$node_out"
}
trap cleanup EXIT

# srt: the policy allows loopback by name, like paddock's rules in proxy_bench (`localhost`),
# nothing else; no filesystem rules beyond srt's defaults.
srt_args=()
srt_node_args=()
if [ -z "$srt_problem" ]; then
  srt_settings="$tools/srt-proxy-settings.json"
  cat >"$srt_settings" <<'EOF'
{"network": {"allowedDomains": ["localhost"], "deniedDomains": []},
 "filesystem": {"denyRead": [], "allowWrite": [], "denyWrite": []}}
EOF
  srt_args=(--srt "$srt" "$srt_settings")
  # srt's HTTP proxy module alone, on 127.0.0.1, with a proxy token as srt uses.
  token=$(od -An -tx1 -N16 /dev/urandom | tr -d ' \n')
  node bench/srt_http_proxy.mjs "$srt_pkg" "$token" localhost >"$node_out" &
  node_pid=$!
  for _ in $(seq 100); do
    [ -s "$node_out" ] && break
    sleep 0.1
  done
  if [ -s "$node_out" ]; then
    srt_node_args=(--srt-node "127.0.0.1:$(head -1 "$node_out")" "srt.bench:$token" "$node_pid")
  else
    log "srt's HTTP proxy module did not start; its row is left out"
  fi
fi

# The machine is shared: say how busy it was with other work just before we start.
busy() { awk '/^cpu /{ print $2+$3+$4+$7+$8+$9, $2+$3+$4+$5+$6+$7+$8+$9 }' /proc/stat; }
read -r b0 t0 < <(busy)
sleep 1
read -r b1 t1 < <(busy)
other=$(awk -v b=$((b1 - b0)) -v t=$((t1 - t0)) -v n="$(nproc)" \
  'BEGIN { printf "%.1f", (t > 0) ? n * b / t : 0 }')
load_start=$(cut -d' ' -f1-3 /proc/loadavg)

gib=$(awk -v b="$bytes" 'BEGIN { printf "%g", b / 1073741824 }')
log "throughput: $gib GiB x $runs rounds"
echo "| $gib GiB sink -> client, $runs rounds interleaved ($backend build) | median | min – max" \
  "| runs | / direct (median) | CPU s per GB, all processes on the path (median) | |"
echo "|---|---|---|---|---|---|---|"
"$bench" throughput "$bytes" "$runs" "${srt_args[@]}" "${srt_node_args[@]}" --tsv "$tsv"
[ -n "$srt_problem" ] && echo "| srt rows | not run | | | | | $srt_problem |"
echo
echo "The same client program in every row (a process of its own; for the last row inside \`srt\`)," \
  "the same sink, 256 KiB buffers everywhere, kernel-tuned socket buffers; the clock runs from" \
  "the request to the last byte, the tunnel already up. CPU: every process on the path (the" \
  "srt row includes srt's start-up, once per run)."
echo
log "tunnels: $tunnels at once"
echo "| idle tunnels through paddock ($backend build) | proxy RSS per tunnel | time to open" \
  "| open | relayed a byte at the end | proxy RSS, threads |"
echo "|---|---|---|---|---|---|"
"$bench" tunnels "$tunnels" --tsv "$tsv"
echo
log "CONNECT rate: $rate_rounds rounds x 3 variants x $rate_seconds s, $concurrency clients"
echo "| CONNECT -> 200 -> close through paddock, $concurrency clients, $rate_rounds rounds of" \
  "$rate_seconds s interleaved ($backend build) | rate (median of rounds) | min – max |" \
  "latency median (TCP connect until the 200) | p99 | failed | proxy CPU |" \
  "clients + sink CPU (another process) |"
echo "|---|---|---|---|---|---|---|---|"
"$bench" rate "$rate_seconds" "$rate_rounds" "$concurrency" --tsv "$tsv"
echo
echo "A closed loop: each client waits for its answer, so latency ≈ $concurrency / rate. The rate" \
  "is bounded by the CPU this shared machine leaves us; CPU per CONNECT is the steadier figure" \
  "(though sharing inflates it too)."
echo
load_end=$(cut -d' ' -f1-3 /proc/loadavg)
versions="paddock proxy (this tree)"
[ -z "$srt_problem" ] &&
  versions+=", srt $("$srt" --version 2>/dev/null || echo '?') on Node $(node --version)"
echo "Machine: $(nproc) cores, shared: other work used $other cores in the second before the" \
  "run; load average $load_start at the start, $load_end at the end. Versions: $versions."
echo

# --- targets -------------------------------------------------------------------------------
get() { awk -F'\t' -v k="$1" '$1 == k { v = $2 } END { print v }' "$tsv"; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }
pct() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.0f", 100 * a / b }'; }
verdict() {
  awk -v x="$1" -v op="$2" -v t="$3" \
    'BEGIN { print ((op == "<=") ? x <= t : x >= t) ? "met" : "NOT met" }'
}
f2() { if [ -n "$1" ]; then printf '%.2f' "$1"; fi; }
direct=$(f2 "$(get tp_direct)")
paddock=$(f2 "$(get tp_paddock)")
echo "Targets ($backend build):"
if [ -n "$direct" ] && [ -n "$paddock" ]; then
  r=$(ratio "$paddock" "$direct")
  echo "- tunnel ≥ 80% of direct loopback: $paddock vs $direct GB/s = $(pct "$paddock" "$direct")%:" \
    "$(verdict "$r" '>=' 0.8)."
  copy=$(f2 "$(get tp_ref_copy)")
  [ -n "$copy" ] && echo "  (the minimal blocking recv/send relay, no paddock code, gets $copy GB/s" \
    "= $(pct "$copy" "$direct")% in the same run. CPU s per GB: direct $(f2 "$(get tp_direct_cpu)")," \
    "paddock $(f2 "$(get tp_paddock_cpu)"), minimal relay $(f2 "$(get tp_ref_copy_cpu)").)"
else
  echo "- tunnel ≥ 80% of direct loopback: not measured (see the table)."
fi
for k in tp_srt tp_srt_node; do
  s=$(f2 "$(get $k)")
  what="srt as a sandboxed command gets it (client inside \`srt\`)"
  [ $k = tp_srt_node ] && what="srt's Node HTTP proxy server alone"
  if [ -n "$s" ] && [ -n "$paddock" ]; then
    r=$(ratio "$paddock" "$s")
    echo "- tunnel ≥ 5× srt's proxy, vs $what: $paddock vs $s GB/s = ${r}×: $(verdict "$r" '>=' 5)."
  else
    echo "- tunnel ≥ 5× srt's proxy, vs $what: not measured (${srt_problem:-see the table})."
  fi
done
rate=$(get rate_http)
if [ -n "$rate" ]; then
  echo "- ≥ 10,000 CONNECTs/s (HTTP CONNECT localhost, as a sandboxed command names it):" \
    "$(printf '%.0f' "$rate")/s (median $(printf '%.0f' "$(get rate_http_median_us)") µs," \
    "p99 $(printf '%.0f' "$(get rate_http_p99_us)") µs; proxy CPU" \
    "$(printf '%.0f' "$(get rate_http_cpu_us)") µs per CONNECT): $(verdict "$rate" '>=' 10000)."
  ip=$(get rate_http_ip)
  [ -n "$ip" ] && echo "  (to an IP literal, no lookup: $(printf '%.0f' "$ip")/s, proxy CPU" \
    "$(printf '%.0f' "$(get rate_http_ip_cpu_us)") µs per CONNECT: $(verdict "$ip" '>=' 10000);" \
    "SOCKS5: $(printf '%.0f' "$(get rate_socks5)")/s.)"
else
  echo "- ≥ 10,000 CONNECTs/s: not measured (see the table)."
fi
rss=$(get tunnels_rss_kib)
if [ -n "$rss" ]; then
  ok=$(get tunnels_ok)
  n=$(get tunnels_n)
  echo "- ≤ 64 KiB proxy RSS per idle tunnel ($n open): $(printf '%.1f' "$rss") KiB:" \
    "$(verdict "$rss" '<=' 64); every tunnel still relays: $(printf '%.0f' "$ok") of" \
    "$(printf '%.0f' "$n"): $(verdict "$ok" '>=' "$n")."
else
  echo "- ≤ 64 KiB per idle tunnel: not measured (see the table)."
fi
