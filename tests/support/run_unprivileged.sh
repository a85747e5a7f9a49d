#!/bin/sh
# Runs a test binary as nobody (uid/gid 65534, no supplementary groups, no capabilities).
# Exit 77 (skipped) when not root: then the ordinary run is already unprivileged.
# The attack suite needs a scratch tree outside /tmp (the sandbox's /tmp is private): one
# owned by nobody next to the test binary.
[ "$(id -u)" -eq 0 ] || exit 77
# Outside the directory ctest runs the tests in (tests/ of the build tree): a command started
# there has that directory as its writable root, and the audit after it judges what another
# test creates meanwhile below it as planted (and quarantines it).
build="$(cd "$(dirname "$1")/.." && pwd)"
scratch="$build/test-scratch-nobody"
# A build tree under /tmp or /var/tmp (the sandbox keeps writes there private) or in a home
# (the sandbox hides /root, /home and $HOME): somewhere nobody can reach that the sandbox does
# not hide.
case "$build/" in
  /tmp/* | /var/tmp/* | /root/* | /home/* | "$HOME"/*)
    scratch="/var/cache/paddock-test-scratch-nobody/$(printf %s "$build" | md5sum | cut -c1-16)"
    mkdir -p /var/cache/paddock-test-scratch-nobody || exit 1
    chmod 755 /var/cache/paddock-test-scratch-nobody ;;
esac
mkdir -p "$scratch/cwd" && chown 65534:65534 "$scratch" "$scratch/cwd" || exit 1
export PADDOCK_TEST_SCRATCH="$scratch"
# Held-back change sets of the tests: in the scratch tree, not nobody's shared default store.
export PADDOCK_CHANGE_STORE="$scratch/change-store"
as_nobody() {
  setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all --bounding-set=-all "$@"
}
# A build tree nobody cannot reach (a checkout under /root, mode 700): the highest ancestor it
# cannot search is covered, in a mount namespace of this run's own, by a tmpfs nobody can
# search, and the build tree is bound back at the same path, so every path compiled into the
# tests still holds and the host's directory modes stay as they are.
blocked=""
p="$build"
while [ "$p" != "/" ]; do
  p=$(dirname "$p")
  as_nobody test -x "$p" || blocked="$p"
done
if [ -n "$blocked" ]; then
  exec unshare --mount --propagation private /bin/sh -c '
    set -e
    build=$1 blocked=$2 scratch=$3
    shift 3
    stash=$(mktemp -d)
    mount --bind "$build" "$stash"
    mount -t tmpfs -o mode=755,size=64k paddock-unprivileged "$blocked"
    mkdir -p "$build"
    mount --bind "$stash" "$build"
    umount "$stash" && rmdir "$stash"
    cd "$scratch/cwd"
    exec setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all --bounding-set=-all "$@"
  ' sh "$build" "$blocked" "$scratch" "$@"
fi
# An empty working directory of its own: not /tmp, which would make the host's /tmp (and any
# checkout under it) the writable root of every command that names no cwd.
cd "$scratch/cwd" || exit 1
exec setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all --bounding-set=-all "$@"
