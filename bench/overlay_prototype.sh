#!/bin/sh
# Prototype for docs/change-sets.md: can an unprivileged user put a copy-on-write layer over
# a workspace, and what does the mount cost? Run as an unprivileged user (as root it also
# works). 200 rounds of a user+mount namespace, an overlay over a 50-file workspace and one
# write, against the same rounds without the overlay. Prints microseconds per round.
set -eu
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
mkdir -p "$dir/lower" "$dir/merged"
for i in $(seq 1 50); do echo "$i" > "$dir/lower/f$i"; done
round() {  # $1: with the overlay (1) or without (0)
  rm -rf "$dir/upper" "$dir/work"; mkdir -p "$dir/upper" "$dir/work"
  if [ "$1" = 1 ]; then
    unshare -Urm sh -c "mount -t overlay overlay -o lowerdir=$dir/lower,upperdir=$dir/upper,workdir=$dir/work $dir/merged && echo x > $dir/merged/new"
  else
    unshare -Urm sh -c "echo x > $dir/lower/new"
  fi
}
round 1
[ -f "$dir/upper/new" ] && [ ! -e "$dir/lower/new" ] || { echo "the write did not land in the upper layer"; exit 1; }
for mode in 1 0; do
  start=$(date +%s%N)
  i=0; while [ $i -lt 200 ]; do round $mode; i=$((i + 1)); done
  end=$(date +%s%N)
  echo "$([ $mode = 1 ] && echo overlay || echo without): $(( (end - start) / 200000 )) us/round"
done
