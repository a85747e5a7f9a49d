#!/bin/sh
# Runs a test binary as nobody (uid/gid 65534, no supplementary groups, no capabilities).
# Exit 77 (skipped) when not root: then the ordinary run is already unprivileged.
[ "$(id -u)" -eq 0 ] || exit 77
cd /tmp || exit 1
exec setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all --bounding-set=-all "$@"
