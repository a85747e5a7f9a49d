#!/usr/bin/env bash
# What change sets cost, side by side in one run (paddock_exec_timer: whole programs,
# interleaved round robin). "written through" is the mechanism change sets replaced: the
# command writes the workspace directly and an audit walks it afterwards
# (`sandbox.changeSets: false`); "change set" is the default: a copy-on-write layer over the
# workspace, applied after the command. Rows:
#   - `paddock run -- /bin/true` in a small git repository (200 files) and in this checkout
#     (the audit's walk grows with the workspace; a change set's cost does not);
#   - a command writing 10,000 new files (the apply moves each one into the workspace);
#   - the apply's cost per changed file, derived: (10k-file row - /bin/true row) of change sets
#     minus the same difference written through, over 10,000.
# Usage: bench/change_sets.sh [BUILD_DIR] [RUNS]   (default build, 100 runs of the short rows)
set -euo pipefail
cd "$(dirname "$0")/.."
build="$(cd "${1:-build}" && pwd)"
runs="${2:-100}"
checkout="$(pwd)"
timer="$build/bench/paddock_exec_timer"
paddock="$build/paddock"
[ -x "$timer" ] || cmake --build "$build" --target paddock_exec_timer paddock_cli >/dev/null

# The workspace outside /tmp (the sandbox's /tmp is private) and the store beside it.
work=$(mktemp -d /var/tmp/paddock-change-bench-XXXXXX)
trap 'chmod -R u+rwx "$work" 2>/dev/null; rm -rf "$work"' EXIT
ws="$work/ws"
mkdir -p "$ws" "$work/w10k-cs" "$work/w10k-wt"
git -C "$ws" init -q
for i in $(seq 1 200); do echo "$i" >"$ws/f$i"; done
git -C "$ws" add -A && git -C "$ws" -c user.name=b -c user.email=b@b commit -q -m init
echo '{"sandbox": {"changeSets": true, "changeStore": "'"$work"'/store"}}' >"$work/cs.json"
echo '{"sandbox": {"changeSets": false}}' >"$work/wt.json"
# 10,000 new files each run: the script empties its directory first (written through, a
# removal of the previous run's files; in a change set, whiteouts applied as deletions).
cat >"$work/write10k.sh" <<'SCRIPT'
rm -rf out; mkdir out; cd out; i=0
while [ $i -lt 10000 ]; do : > f$i; i=$((i + 1)); done
SCRIPT

slow=$(( runs / 10 > 5 ? runs / 10 : 5 ))
"$timer" --tsv "$work/rows.tsv" \
  "plain /bin/true" "$runs" "/bin/true" \
  "written through: paddock run -- /bin/true (200-file repo)" "$runs" \
    "$paddock run --settings $work/wt.json --cwd $ws -- /bin/true" \
  "change set: paddock run -- /bin/true (200-file repo)" "$runs" \
    "$paddock run --settings $work/cs.json --cwd $ws -- /bin/true" \
  "written through: paddock run -- /bin/true (this checkout)" "$slow" \
    "$paddock run --settings $work/wt.json --cwd $checkout -- /bin/true" \
  "change set: paddock run -- /bin/true (this checkout)" "$slow" \
    "$paddock run --settings $work/cs.json --cwd $checkout -- /bin/true" \
  "written through: a command writing 10,000 files" "$slow" \
    "$paddock run --settings $work/wt.json --cwd $work/w10k-wt -- sh $work/write10k.sh" \
  "change set: a command writing 10,000 files" "$slow" \
    "$paddock run --settings $work/cs.json --cwd $work/w10k-cs -- sh $work/write10k.sh"
median() { awk -F'\t' -v l="$1" '$1 == l { print $2 }' "$work/rows.tsv"; }
cs_true=$(median "change set: paddock run -- /bin/true (200-file repo)")
wt_true=$(median "written through: paddock run -- /bin/true (200-file repo)")
cs_10k=$(median "change set: a command writing 10,000 files")
wt_10k=$(median "written through: a command writing 10,000 files")
echo
awk -v a="$cs_true" -v b="$wt_true" -v c="$cs_10k" -v d="$wt_10k" 'BEGIN {
  printf "- /bin/true, change set / written through (200-file repo, medians): %.2fx\n", a / b
  printf "- apply cost per changed file (derived, medians): %.1f us\n", ((c - a) - (d - b)) / 10000
}'
[ -z "$(ls -A "$work/store" 2>/dev/null)" ] || echo "- WARNING: change sets left in the store"
