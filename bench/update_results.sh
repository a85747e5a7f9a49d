#!/usr/bin/env bash
# Writes one block of bench/results.md (between its `<!-- NAME:begin -->` and
# `<!-- NAME:end -->` markers) from a file a bench script printed, then the README's results
# summary from the isolation block. Nothing in either is copied by hand.
#   bench/update_results.sh BLOCK FILE     BLOCK: supervision|isolation|change-sets|proxy|classifier
#   bench/update_results.sh --summary      only the README's summary, from bench/results.md
set -euo pipefail
cd "$(dirname "$0")/.."
results=bench/results.md
readme=README.md

replace_block() {  # file name content-file
  local file=$1 name=$2 content=$3
  grep -q "^<!-- $name:begin -->\$" "$file" || { echo "update_results: no '$name' block in $file" >&2; exit 2; }
  grep -q "^<!-- $name:end -->\$" "$file" || { echo "update_results: '$name' block of $file has no end" >&2; exit 2; }
  local tmp
  tmp=$(mktemp "$file.XXXXXX")
  awk -v name="$name" -v content="$content" '
    $0 == "<!-- " name ":begin -->" { print; while ((getline line < content) > 0) print line; skip = 1; next }
    $0 == "<!-- " name ":end -->" { skip = 0 }
    !skip { print }' "$file" >"$tmp"
  mv "$tmp" "$file"
}

if [ "${1:-}" != --summary ]; then
  [ $# -eq 2 ] || { echo "usage: bench/update_results.sh BLOCK FILE | --summary" >&2; exit 2; }
  [ -s "$2" ] || { echo "update_results: $2 is empty: nothing written" >&2; exit 2; }
  replace_block "$results" "$1" "$2"
fi

# The README's summary: the rows an agent-farm user compares, from the isolation block.
summary=$(mktemp)
trap 'rm -f "$summary"' EXIT
awk '
  function us(v,   n, u) {  # "4.79 ms" / "584 µs" / "1.2 s" -> microseconds
    n = v; u = v; sub(/ .*/, "", n); sub(/^[^ ]* /, "", u)
    return u == "ms" ? n * 1000 : u == "s" ? n * 1e6 : n + 0
  }
  function cell(i) { return f[i] }
  /^<!-- isolation:begin -->$/ { inside = 1; next }
  /^<!-- isolation:end -->$/ { inside = 0 }
  !inside { next }
  /^\| / {
    n = split($0, f, / *\| */)
    label = f[2]
    if (label ~ /^whole program/) table = "whole"
    else if (label ~ /^in process, \/bin\/true/) table = "inproc"
    else if (label ~ /^the same with|^where the time goes|^through `paddock serve`/) table = ""
    if (table == "whole") {
      if (label == "plain `/bin/true`") { w["plain"] = f[4]; p["plain"] = f[5] }
      else if (label ~ /^`paddock run -- \/bin\/true` \(sandboxed/) { w["run"] = f[4]; p["run"] = f[5] }
      else if (label ~ /^`paddock run --no-helper -- \/bin\/true` \(sandboxed/) { w["nohelper"] = f[4]; p["nohelper"] = f[5] }
      else if (label ~ /^`paddock run --connect/) { w["connect"] = f[4]; p["connect"] = f[5] }
      else if (label ~ /^`bwrap .*true`$/) { w["bwrap"] = f[4]; p["bwrap"] = f[5] }
      else if (label ~ /^`srt true`/) { w["srt"] = f[4]; p["srt"] = f[5] }
    } else if (table == "inproc") {
      if (label == "plain posix_spawn + waitpid" && !("plain" in m)) { m["plain"] = f[3]; q["plain"] = f[4] }
      else if (label ~ /^paddock, sandboxed \(Manager, DefaultConfig: network filtered/ && !("sandboxed" in m)) { m["sandboxed"] = f[3]; q["sandboxed"] = f[4] }
      else if (label ~ /^paddock, in a session \(DefaultConfig/ && !("session" in m)) { m["session"] = f[3]; q["session"] = f[4] }
    }
  }
  END {
    if (!("bwrap" in w) || !("run" in w) || !("plain" in m) || !("sandboxed" in m)) {
      print "update_results: the isolation block lacks the rows the summary needs" > "/dev/stderr"
      exit 2
    }
    print "| `/bin/true`, whole program | median | p99 | speed against bwrap (higher: faster) |"
    print "|---|---|---|---|"
    split("run nohelper connect bwrap srt plain", order, " ")
    names["run"] = "`paddock run` (through your helper)"; names["nohelper"] = "`paddock run --no-helper`"
    names["connect"] = "`paddock run --connect` (daemon)"; names["bwrap"] = "`bwrap --unshare-all ...`"
    names["srt"] = "`srt` (network blocked)"; names["plain"] = "plain `/bin/true` (no isolation)"
    for (i = 1; i <= 6; i++) {
      k = order[i]
      if (!(k in w)) continue
      printf "| %s | %s | %s | %.2f× |\n", names[k], w[k], p[k], us(w["bwrap"]) / us(w[k])
    }
    print ""
    print "| `/bin/true` in process (the library) | median | p99 | time over a plain spawn (lower: faster) |"
    print "|---|---|---|---|"
    printf "| plain `posix_spawn` + `waitpid` | %s | %s | 1.00× |\n", m["plain"], q["plain"]
    printf "| `Manager::async_exec`, sandboxed (default policy) | %s | %s | %.2f× |\n", m["sandboxed"], q["sandboxed"], us(m["sandboxed"]) / us(m["plain"])
    if ("session" in m)
      printf "| the same in a session (`Manager::open_session`) | %s | %s | %.2f× |\n", m["session"], q["session"], us(m["session"]) / us(m["plain"])
    print ""
    print "From the isolation block of [bench/results.md](bench/results.md), where the machine, its load and the commit are given; every other measurement is there too."
  }' "$results" >"$summary"
replace_block "$readme" results-summary "$summary"
echo "update_results: $results and the summary in $readme written" >&2
