#!/usr/bin/env bash
# Bounded libFuzzer run of the proxy's parsers, for ctest (tests/CMakeLists.txt) and by hand:
#   tests/fuzz/run.sh BUILD_DIR [SECONDS_PER_TARGET]     (default 20 s per target)
# Builds tests/fuzz with clang into BUILD_DIR/fuzz, fuzzes each target on a copy of its seed
# corpus (the repo is never written), and fails on any crash, sanitizer report or broken
# invariant. Exits 77, ctest's skip code, when clang or libFuzzer's runtime is missing.
set -euo pipefail

if [ $# -lt 1 ] || [ $# -gt 2 ]; then
  echo "usage: $0 BUILD_DIR [SECONDS_PER_TARGET]" >&2
  exit 2
fi
seconds=${2:-20}
case $seconds in
  '' | *[!0-9]* | 0) echo "fuzz: SECONDS_PER_TARGET must be a positive integer" >&2; exit 2 ;;
esac
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
mkdir -p "$1/fuzz"
out=$(cd "$1/fuzz" && pwd)

targets=(fuzz_http_head fuzz_socks5 fuzz_host fuzz_classifier fuzz_serve_request)
# Longest input per target: past the 16 KiB head limit; the largest SOCKS5 message (513
# bytes); a pattern and a host past the 1024-byte limit.
# The classifier: past its 64 KiB script bound.
declare -A max_len=([fuzz_http_head]=20000 [fuzz_socks5]=600 [fuzz_host]=2100
  [fuzz_classifier]=70000 [fuzz_serve_request]=8192)

skip() {
  echo "fuzz: SKIPPED: $*" >&2
  exit 77
}
install_hint="Debian: apt-get install clang libclang-rt-14-dev"
command -v clang++ >/dev/null || skip "clang++ not found ($install_hint)"
# Linking a trivial target is the real test for libFuzzer's runtime, whatever clang version.
probe=$(mktemp -d)
trap 'rm -rf "$probe"' EXIT
echo 'extern "C" int LLVMFuzzerTestOneInput(const char*, unsigned long) { return 0; }' \
  >"$probe/probe.cpp"
if ! clang++ -fsanitize=fuzzer,address,undefined "$probe/probe.cpp" -o "$probe/probe" \
  >"$probe/log" 2>&1; then
  why=$(grep -m1 -iE 'error|cannot find' "$probe/log" || tail -n 1 "$probe/log")
  skip "clang++ cannot link -fsanitize=fuzzer: ${why:-no output}; $install_hint"
fi

start=$SECONDS
if ! cmake -G Ninja -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ -S "$here" -B "$out" \
  >"$out/configure.log" 2>&1; then
  cat "$out/configure.log" >&2
  echo "fuzz: configure failed" >&2
  exit 1
fi
if ! ninja -C "$out" >"$out/build.log" 2>&1; then
  cat "$out/build.log" >&2
  echo "fuzz: build failed" >&2
  exit 1
fi
echo "fuzz: built ${#targets[@]} targets in $((SECONDS - start)) s; ${seconds} s each"

# A UBSan report aborts (-fno-sanitize-recover); its stack says where. libFuzzer exits 77 on
# a crash by default, which ctest would take for a skip: hence -error_exitcode=1 below.
export UBSAN_OPTIONS="print_stacktrace=1${UBSAN_OPTIONS:+:$UBSAN_OPTIONS}"
failed=()
for t in "${targets[@]}"; do
  work="$out/corpus-work/$t"
  artifacts="$out/artifacts/$t"
  log="$out/$t.log"
  rm -rf "$work" "$artifacts"
  mkdir -p "$work" "$artifacts"
  cp "$here/corpus/$t/"* "$work/"
  seeds=$(find "$work" -type f | wc -l)
  t0=$SECONDS
  rc=0
  "$out/$t" "$work" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
    -max_len="${max_len[$t]}" -artifact_prefix="$artifacts/" -error_exitcode=1 \
    -print_final_stats=1 >"$log" 2>&1 || rc=$?
  elapsed=$((SECONDS - t0))
  # A crash while loading the seeds leaves no stats: no match is not an error here.
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  cov=$( (grep -o 'cov: [0-9]*' "$log" || true) | tail -1 | cut -d' ' -f2)
  units=$(find "$work" -type f | wc -l)
  summary="${execs:-?} execs in ${elapsed} s, cov ${cov:-?}, corpus ${seeds} -> ${units}"
  report='ERROR: (libFuzzer|AddressSanitizer|LeakSanitizer)|runtime error:|invariant failed'
  if [ "$rc" -ne 0 ] || grep -qE "$report" "$log"; then
    failed+=("$t")
    echo "fuzz: $t: FAILED (exit $rc) after $summary"
    # The report itself, and the input that caused it.
    (grep -E 'invariant failed|runtime error:|ERROR: |SUMMARY: |^    #[0-9]' "$log" || true) |
      head -40 || true
    for f in "$artifacts"/*; do
      [ -f "$f" ] || continue
      echo "  input $f ($(wc -c <"$f") bytes):"
      od -An -c "$f" | head -8 || true
    done
    echo "  full log: $log"
  else
    echo "fuzz: $t: ok, $summary"
  fi
done

if [ ${#failed[@]} -ne 0 ]; then
  echo "fuzz: FAILED: ${failed[*]}"
  exit 1
fi
echo "fuzz: all ${#targets[@]} targets clean in $((SECONDS - start)) s"
