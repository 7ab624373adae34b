#!/bin/bash
# SPDX-License-Identifier: MIT
# The testbed runners' program lookup (runner_find_program, runner-lib.sh) on a build folder
# shaped like CI's when a packaging test runs beside the testbed boot: a Debian root under
# BUILD/clean-root with entries find cannot read (CI of stop 36: the root's mounted /proc), a
# nested cross build and CMake's own folders holding files of the same name. The lookup must
# exit 0 with the shallowest real program. Runs as an unprivileged user (setpriv when root), so
# an unreadable folder is unreadable.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
fail() { echo "FAIL: $*"; exit 1; }

tmp=$(mktemp -d)
trap 'chmod -R u+rwx "$tmp" 2>/dev/null; rm -rf "$tmp"' EXIT
chmod 755 "$tmp"
b=$tmp/build
mkdir -p "$b/logger" "$b/package-arm64/logger" "$b/CMakeFiles" "$b/clean-root/dkms-test/proc/1" \
    "$b/testbed-cache"
for f in logger/irqloop package-arm64/logger/irqloop CMakeFiles/irqloop clean-root/irqloop \
    testbed-cache/irqloop; do
    printf '#!/bin/sh\n' >"$b/$f"
    chmod 755 "$b/$f"
done
chmod -R a+rX "$tmp"
chmod 000 "$b/clean-root/dkms-test/proc/1"

as_user=()
if [[ $(id -u) == 0 ]]; then
    command -v setpriv >/dev/null || { echo "SKIPPED: running as root without setpriv (util-linux)"; exit 4; }
    as_user=(setpriv --reuid=65534 --regid=65534 --clear-groups)
fi
# The condition itself: a plain find over this folder fails for that user, or the test proves
# nothing.
if "${as_user[@]}" find "$b" >/dev/null 2>&1; then
    fail "find over $b succeeded: the unreadable folder is readable, so the test cannot show the fault"
fi

rc=0
got=$("${as_user[@]}" bash -c 'set -euo pipefail; . "$1"; build_dir=$2 cache=$3
    runner_find_program irqloop' find-program "$here/runner-lib.sh" "$b" "$b/testbed-cache" \
    2>"$tmp/err") || rc=$?
[[ $rc == 0 ]] || fail "runner_find_program exited $rc: $(head -3 "$tmp/err")"
[[ $got == "$b/logger/irqloop" ]] || fail "found '$got', not $b/logger/irqloop"
[[ ! -s $tmp/err ]] || fail "runner_find_program wrote to stderr: $(head -3 "$tmp/err")"

got=$("${as_user[@]}" bash -c 'set -euo pipefail; . "$1"; build_dir=$2 cache=$3
    runner_find_program irqloop-absent' find-program "$here/runner-lib.sh" "$b" \
    "$b/testbed-cache") || fail "an absent program made the lookup fail"
[[ -z $got ]] || fail "found '$got' for a program that is not built"
echo "PASS: the shallowest program found, the clean roots, the cache and CMakeFiles left out"
