#!/bin/sh
# Runs a test binary as nobody (uid/gid 65534, no supplementary groups, no capabilities).
# Exit 77 (skipped) when not root: then the ordinary run is already unprivileged.
# The attack suite needs a scratch tree outside /tmp (the sandbox's /tmp is private): one
# owned by nobody next to the test binary.
[ "$(id -u)" -eq 0 ] || exit 77
scratch="$(dirname "$1")/scratch-nobody"
mkdir -p "$scratch" && chown 65534:65534 "$scratch" || exit 1
export PADDOCK_TEST_SCRATCH="$scratch"
cd /tmp || exit 1
exec setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all --bounding-set=-all "$@"
