#!/usr/bin/env bash
# The isolation benchmark: what paddock's sandbox costs, side by side with bubblewrap and
# Anthropic's sandbox-runtime (srt), in one run. Prints markdown (tables + the targets) on stdout.
#   1. In process (paddock_sandbox_bench): Manager sandboxed vs unsandboxed vs posix_spawn, and
#      where the sandbox's time goes, step by step.
#   2. Whole programs (paddock_exec_timer, interleaved round robin): `paddock run` sandboxed
#      and --no-sandbox, `bwrap --unshare-all ...`, `srt true`, plain /bin/true.
# Installs what is missing first (bubblewrap, socat, ripgrep from Debian; srt from npm into
# BUILD_DIR/isolation-tools, never into the repo), idempotently and without prompting.
# Usage: bench/compare_isolation.sh [--quick] [--update] [BUILD_DIR]   (default build-bench-io_uring)
#   --update: the output becomes the isolation block of bench/results.md (with when, where and
#   at which commit it ran) and the README's summary (bench/update_results.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
quick=false
update=false
while [ $# -gt 0 ]; do
  case "$1" in
    --quick) quick=true ;;
    --update) update=true ;;
    --) shift; break ;;
    -*) echo "usage: bench/compare_isolation.sh [--quick] [--update] [BUILD_DIR]" >&2; exit 2 ;;
    *) break ;;
  esac
  shift
done
build="${1:-build-bench-io_uring}"
if $update; then
  body=$(mktemp)
  block=$(mktemp)
  trap 'rm -f "$body" "$block"' EXIT
  load_start=$(cut -d' ' -f1-3 /proc/loadavg)
  started=$(date -u '+%Y-%m-%d %H:%M')
  "$0" $($quick && echo --quick) "$build" >"$body"
  {
    echo "Isolation: \`bench/compare_isolation.sh$($quick && echo ' --quick') --update\`" \
      "($started UTC, commit $(git rev-parse --short HEAD 2>/dev/null || echo unknown)," \
      "$(nproc) cores, Linux $(uname -r); load average $load_start at the start," \
      "$(cut -d' ' -f1-3 /proc/loadavg) at the end). Compare ratios within this block only."
    echo
    cat "$body"
  } >"$block"
  bench/update_results.sh isolation "$block"
  exit 0
fi
# Absolute: the whole-program runs happen in the workspace below, where a relative path to srt
# (comparison_tools.sh: $build/isolation-tools) no longer resolves.
mkdir -p "$build"
build="$(cd "$build" && pwd)"
runs=2000
srt_runs=50
if $quick; then
  runs=300
  srt_runs=10
fi
log() { echo "compare_isolation: $*" >&2; }

# --- tools ---------------------------------------------------------------------------------
# shellcheck source=bench/comparison_tools.sh
source bench/comparison_tools.sh  # (we are in the repo root)

# An empty policy, so the user's ~/.srt-settings.json plays no part: no domains allowed (srt's
# network is then blocked, like paddock's default), no extra filesystem rules.
srt_settings="$tools/srt-settings.json"
if [ -z "$srt_problem" ]; then
  cat >"$srt_settings" <<'EOF'
{"network": {"allowedDomains": [], "deniedDomains": []},
 "filesystem": {"denyRead": [], "allowWrite": [], "denyWrite": []}}
EOF
fi

# --- build ---------------------------------------------------------------------------------
if [ ! -f "$build/CMakeCache.txt" ]; then
  cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DPADDOCK_BUILD_TESTS=OFF \
    -DPADDOCK_BUILD_EXAMPLES=OFF >/dev/null
fi
if ! log=$(cmake --build "$build" --target paddock_cli paddock_sandbox_bench paddock_exec_timer 2>&1)
then
  echo "$log" >&2
  exit 1
fi
paddock="$(cd "$build" && pwd)/paddock"
backend=$(sed -n 's/^PADDOCK_IO_BACKEND:STRING=//p' "$build/CMakeCache.txt")

# --- the workspace ---------------------------------------------------------------------------
# Commands run in a small git repository (200 files), the way an agent's task repo looks: the
# sandbox walks the writable roots for git state before and after each command, so the size
# of the working directory is part of the cost. One extra row below runs in this checkout
# (build trees and all) to show how that cost grows.
build="$(cd "$build" && pwd)"
checkout="$(pwd)"
checkout_entries=$(find "$checkout" -xdev 2>/dev/null | wc -l)
workspace="$build/bench-workspace"
if [ ! -d "$workspace/.git" ]; then
  rm -rf "$workspace"
  mkdir -p "$workspace/src"
  for i in $(seq 200); do echo "int f$i;" >"$workspace/src/f$i.c"; done
  git -C "$workspace" init -q
  git -C "$workspace" add -A
  git -C "$workspace" -c user.name=bench -c user.email=bench@localhost commit -qm bench
fi
cd "$workspace"

# --- 1. in process -------------------------------------------------------------------------
tsv_in=$(mktemp)
tsv_cli=$(mktemp)
trap 'rm -f "$tsv_in" "$tsv_cli"' EXIT
log "in process: $runs runs of each variant"
"$build/bench/paddock_sandbox_bench" "$runs" --tsv "$tsv_in"
echo

# --- 2. whole programs ---------------------------------------------------------------------
# --no-sandbox, or a settings file saying the same where the flag does not exist (yet).
if "$paddock" run --help 2>/dev/null | grep -q -- '--no-sandbox'; then
  unsandboxed="$paddock run --no-sandbox -- /bin/true"
else
  echo '{"sandbox": {"enabled": false}}' >"$build/no-sandbox.json"
  unsandboxed="$paddock run --settings $build/no-sandbox.json -- /bin/true"
fi
cli_label="\`paddock run -- /bin/true\` (sandboxed, default: through the user's helper, network filtered)"
# The daemon (paddock serve), started once: `paddock run --connect` pays only its own start-up
# and one round trip; the daemon's Manager pays the sandbox.
serve_dir=$(mktemp -d)
"$paddock" serve --listen "unix:$serve_dir/serve.sock" >/dev/null 2>"$serve_dir/log" &
serve_pid=$!
# `paddock run` (through the helper, the default): this run's own helper (a runtime directory
# of its own, so no helper of the user's is used or left behind), started by the warm-up runs.
# As nobody (the timer drops the variable): /tmp/paddock-UID, stopped here too.
mkdir -m 700 "$serve_dir/run"
export XDG_RUNTIME_DIR="$serve_dir/run"
unset PADDOCK_HELPER  # the default is measured, whatever this shell says
nobody_helpers="/tmp/paddock-$(id -u nobody 2>/dev/null)/helpers"
stop_helpers() {
  for info in "$serve_dir"/run/paddock/helpers/*.json "$nobody_helpers"/*.json; do
    [ -f "$info" ] && kill "$(sed 's/.*"pid":\([0-9]*\).*/\1/' "$info")" 2>/dev/null
  done
}
trap 'rm -f "$tsv_in" "$tsv_cli"; kill "$serve_pid" 2>/dev/null; stop_helpers; rm -rf "$serve_dir"' EXIT
for _ in $(seq 200); do [ -S "$serve_dir/serve.sock" ] && break; sleep 0.05; done
connect_label="\`paddock run --connect unix:... -- /bin/true\` (through paddock serve, sandboxed)"
no_helper_label="\`paddock run --no-helper -- /bin/true\` (sandboxed, set up in its own process)"
bwrap_line="bwrap --unshare-all --ro-bind / / --proc /proc --dev /dev true"
bwrap_label="\`$bwrap_line\`"
srt_label="\`srt true\` (empty settings: network blocked)"
cmds=(
  "plain \`/bin/true\`" "$runs" "/bin/true"
  "$cli_label" "$runs" "$paddock run -- /bin/true"
  "$connect_label" "$runs" "$paddock run --connect unix:$serve_dir/serve.sock -- /bin/true"
  "$no_helper_label" "$runs" "$paddock run --no-helper -- /bin/true"
  "\`paddock run --no-sandbox -- /bin/true\`" "$runs" "$unsandboxed"
  "\`paddock --version\` (its start-up alone: no loop, no command)" "$runs" "$paddock --version"
  "\`paddock run --cwd <this checkout> -- /bin/true\` ($checkout_entries entries to scan)"
  "$srt_runs" "$paddock run --cwd $checkout -- /bin/true"
)
if command -v bwrap >/dev/null; then
  cmds+=("$bwrap_label" "$runs" "$(command -v bwrap) ${bwrap_line#bwrap }")
fi
[ -z "$srt_problem" ] && cmds+=("$srt_label" "$srt_runs" "$srt --settings $srt_settings true")
# As an unprivileged user too (issue 10: "as root and as an unprivileged user"), when this runs
# as root: the timer forks and drops to nobody itself (no setpriv in between), which costs more
# than its posix_spawn, so these rows compare with each other, their own plain row first.
nobody_plain="plain \`/bin/true\` as nobody (fork + setuid: compare these rows with each other)"
nobody_cli="\`paddock run -- /bin/true\` as nobody"
nobody_no_helper="\`paddock run --no-helper -- /bin/true\` as nobody"
nobody_bwrap="\`$bwrap_line\` as nobody"
if [ "$(id -u)" = 0 ] && getent passwd nobody >/dev/null; then
  cmds+=("$nobody_plain" "$runs" "as:nobody /bin/true"
    "$nobody_cli" "$runs" "as:nobody $paddock run -- /bin/true"
    "$nobody_no_helper" "$runs" "as:nobody $paddock run --no-helper -- /bin/true")
  command -v bwrap >/dev/null &&
    cmds+=("$nobody_bwrap" "$runs" "as:nobody $(command -v bwrap) ${bwrap_line#bwrap }")
fi
log "whole programs, interleaved: $runs runs each, srt $srt_runs"
echo "| whole program, /bin/true, interleaved round robin ($backend build) | runs | median | p99" \
  "| mean | / plain (median) |"
echo "|---|---|---|---|---|---|"
"$build/bench/paddock_exec_timer" --tsv "$tsv_cli" "${cmds[@]}" || true
command -v bwrap >/dev/null ||
  echo "| $bwrap_label | not run | | | | bwrap is not installed and could not be installed |"
[ -z "$srt_problem" ] || echo "| $srt_label | not run | | | | $srt_problem |"
echo
versions="$("$paddock" --version 2>/dev/null | head -1 || echo "paddock ?")"  # "paddock X.Y.Z (commit ...)"
command -v bwrap >/dev/null && versions+=", $(bwrap --version)"
if [ -z "$srt_problem" ]; then
  versions+=", srt $("$srt" --version 2>/dev/null || echo '?') on Node $(node --version)"
fi
echo "Versions: $versions."
echo

# --- targets -------------------------------------------------------------------------------
get() { awk -F'\t' -v k="$2" -v c="$3" '$1 == k { print $c }' "$1"; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }
# verdict VALUE <=|>= LIMIT
verdict() {
  awk -v x="$1" -v op="$2" -v t="$3" \
    'BEGIN { print ((op == "<=") ? x <= t : x >= t) ? "met" : "NOT met" }'
}
sandboxed=$(get "$tsv_in" sandboxed 2)
unsandboxed_us=$(get "$tsv_in" unsandboxed 2)
p99_alone=$(get "$tsv_in" sandboxed_consecutive 3)
cli=$(get "$tsv_cli" "$cli_label" 2)
cli_off=$(get "$tsv_cli" "\`paddock run --no-sandbox -- /bin/true\`" 2)
bwrap_us=$(get "$tsv_cli" "$bwrap_label" 2)
echo "Targets ($backend build):"
r=$(ratio "$sandboxed" "$unsandboxed_us")
echo "- sandboxed ≤ 2× unsandboxed (median, in process through the Manager, back to back): ${r}×:" \
  "$(verdict "$r" '<=' 2)."
# What the isolation itself costs, before any per-command work of paddock's (no plan, no
# audit, nothing made ahead): process::spawn with namespaces, mounts, Landlock, seccomp and
# paddock-init, over the same spawn without them. When this alone is past 2x, the target above
# cannot be met by cutting paddock's own work, only by doing the isolation ahead of time.
floor_iso=$(get "$tsv_in" init 2)
floor_spawn=$(get "$tsv_in" spawn 2)
if [ -n "$floor_iso" ] && [ -n "$floor_spawn" ]; then
  echo "  - of which the isolation alone (namespaces, mounts, Landlock, seccomp, paddock-init;" \
    "no plan, no audit) over a plain spawn: $(ratio "$floor_iso" "$floor_spawn")×; with the" \
    "plan and the audit as the Manager makes them (the last step row):" \
    "$(ratio "$(get "$tsv_in" per_command_plan 2)" "$floor_spawn")×."
fi
# Issue 10: the Manager's sandboxed command against the same isolation done directly (the step
# row with every part: process::spawn, no plan, no audit, nothing made ahead), side by side in
# this run. Not a separate minimal C program: paddock's own child code, which is raw syscalls.
if [ -n "$floor_iso" ]; then
  r=$(ratio "$sandboxed" "$floor_iso")
  echo "- the Manager within 1.3× of the same isolation done directly (process::spawn, every" \
    "step, no plan or audit), back to back: ${r}×: $(verdict "$r" '<=' 1.3). (Nothing made" \
    "ahead: $(ratio "$(get "$tsv_in" sandboxed_fresh 2)" "$floor_iso")×.)"
fi
idle_sandboxed=$(get "$tsv_in" idle_sandboxed 2)
idle_unsandboxed=$(get "$tsv_in" idle_unsandboxed 2)
idle_fresh=$(get "$tsv_in" idle_sandboxed_fresh 2)
if [ -n "$idle_sandboxed" ] && [ -n "$idle_unsandboxed" ]; then
  r=$(ratio "$idle_sandboxed" "$idle_unsandboxed")
  echo "- the same with 5 ms idle before each command (a sandbox made ahead waits): ${r}×:" \
    "$(verdict "$r" '<=' 2). (Made at the command's start instead:" \
    "$(ratio "$idle_fresh" "$idle_unsandboxed")×.)"
fi
# Issue 25: a command inside a session (the sandbox made once, each command handed to its
# paddock-init) against a plain posix_spawn + waitpid of the same /bin/true, in this run.
session_us=$(get "$tsv_in" session 2)
plain_us=$(get "$tsv_in" plain 2)
if [ -n "$session_us" ] && [ -n "$plain_us" ]; then
  r=$(ratio "$session_us" "$plain_us")
  echo "- inside a session ≤ 1.3× a plain spawn (in process, back to back, network blocked):" \
    "${r}×: $(verdict "$r" '<=' 1.3). (Network filtered, the default:" \
    "$(ratio "$(get "$tsv_in" session_filtered 2)" "$plain_us")×.)"
fi
if [ -n "$cli" ] && [ "$cli" != failed ] && [ -n "$cli_off" ] && [ "$cli_off" != failed ]; then
  r=$(ratio "$cli" "$cli_off")
  echo "- the same, whole program (\`paddock run\` vs \`paddock run --no-sandbox\`): ${r}×:" \
    "$(verdict "$r" '<=' 2)."
fi
p=$(awk -v x="$p99_alone" 'BEGIN { printf "%.2f", x / 1000 }')
echo "- p99 ≤ 3 ms over $runs consecutive sandboxed runs (in process): $p ms: $(verdict "$p" '<=' 3)."
if [ -n "$bwrap_us" ] && [ "$bwrap_us" != failed ]; then
  r=$(ratio "$bwrap_us" "$sandboxed")
  echo "- ≥ 4× faster than bwrap, in process (Manager) vs \`bwrap ... true\`: ${r}×:" \
    "$(verdict "$r" '>=' 4)."
  if [ -n "$cli" ] && [ "$cli" != failed ]; then
    r=$(ratio "$bwrap_us" "$cli")
    echo "- ≥ 4× faster than bwrap, whole program \`paddock run\` vs \`bwrap ... true\`: ${r}×:" \
      "$(verdict "$r" '>=' 4)."
    echo "- ≥ 1.5× faster than bwrap, whole program \`paddock run\` vs \`bwrap ... true\`" \
      "(issue 10): ${r}×: $(verdict "$r" '>=' 1.5)."
    no_helper_us=$(get "$tsv_cli" "$no_helper_label" 2)
    if [ -n "$no_helper_us" ] && [ "$no_helper_us" != failed ]; then
      echo "  - beside it, \`paddock run --no-helper\` (set up in its own process) vs" \
        "\`bwrap ... true\`: $(ratio "$bwrap_us" "$no_helper_us")×."
    fi
  fi
  nobody_cli_us=$(get "$tsv_cli" "$nobody_cli" 2)
  nobody_bwrap_us=$(get "$tsv_cli" "$nobody_bwrap" 2)
  if [ -n "$nobody_cli_us" ] && [ "$nobody_cli_us" != failed ] && [ -n "$nobody_bwrap_us" ] &&
    [ "$nobody_bwrap_us" != failed ]; then
    r=$(ratio "$nobody_bwrap_us" "$nobody_cli_us")
    echo "- the same as nobody (both rows forked and dropped to nobody by the timer): ${r}×:" \
      "$(verdict "$r" '>=' 1.5)."
  fi
  connect_us=$(get "$tsv_cli" "$connect_label" 2)
  if [ -n "$connect_us" ] && [ "$connect_us" != failed ]; then
    r=$(ratio "$bwrap_us" "$connect_us")
    echo "- ≥ 3× faster than bwrap, whole program \`paddock run --connect\` (daemon) vs" \
      "\`bwrap ... true\`: ${r}×: $(verdict "$r" '>=' 3)."
  fi
else
  echo "- ≥ 4× faster than bwrap: not measured (bwrap did not run; see the table)."
fi
# Issue 25: no network namespace made per command, as root and unprivileged. Counted from the
# inside: the distinct namespaces 40 sandboxed commands find themselves in (network filtered,
# the default), each a whole `paddock run` through the user's helper.
namespaces_seen() {
  for _ in $(seq 40); do "$@" "$paddock" run -- readlink /proc/self/ns/net; done 2>/dev/null |
    sort -u | grep -c '^net:\[' || true
}
seen_verdict() {
  if [ "$1" -eq 0 ]; then echo "not measured (no command ran)"; elif [ "$1" -lt 40 ]; then
    echo met; else echo "NOT met"; fi
}
seen_root=$(namespaces_seen env)
echo "- no network namespace made per command: 40 \`paddock run\` see ${seen_root} as $(id -un)" \
  "(one per command would be 40): $(seen_verdict "$seen_root")."
if [ "$(id -u)" = 0 ] && getent passwd nobody >/dev/null && command -v setpriv >/dev/null; then
  seen_nobody=$(namespaces_seen env -u XDG_RUNTIME_DIR setpriv --reuid=65534 --regid=65534 \
    --clear-groups --inh-caps=-all --bounding-set=-all)
  echo "  - as nobody: ${seen_nobody}: $(seen_verdict "$seen_nobody")."
fi
# Through the daemon at concurrency 1/16/64, from the Python client (examples/python): its
# numbers include the client's own cost; the in-process row above is the Manager alone.
if command -v python3 >/dev/null; then
  echo
  echo "| through \`paddock serve\` (examples/python/farm.py, /bin/true) | result |"
  echo "|---|---|"
  farm_n=$($quick && echo 300 || echo 2000)
  for c in 1 16 64; do
    # (from the checkout's copy: we are in the workspace; the whole output, then its first
    # line: `| head -1` would end the driver with SIGPIPE under pipefail)
    line=$(python3 "$checkout/examples/python/farm.py" --connect "unix:$serve_dir/serve.sock" \
      --commands "$farm_n" --connections 4 --concurrency "$c" -- /bin/true 2>&1) || true
    line=${line%%$'\n'*}
    echo "| concurrency $c, 4 connections | $line |"
  done
fi
