#!/usr/bin/env bash
# The package-built module in the QEMU testbed: boots the testbed (tests/testbed) with only the
# scenario tests/packaging/testbed/kmod-dkms-package.sh and the .ko that DKMS built from the
# irqloop-responder-dkms package (build/dkms/, left by test-dkms.sh), then checks the verdict
# and that the module the guest loaded is that file (sha256).
#   test-dkms-testbed.sh BUILD_DIR
set -uo pipefail
src=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:?usage: test-dkms-testbed.sh BUILD_DIR}
ko=$src/build/dkms/irqloop_responder.ko
[[ -f $ko ]] || { echo "FAIL: $ko is missing (the dkms-clean-root test leaves it)"; exit 1; }
results=$build/testbed-dkms-results
tb=("$src/tests/testbed/run-testbed.sh" --build "$build" --results "$results" --cache "$build/testbed-cache")
"${tb[@]}" --scenario-dir "$src/tests/packaging/testbed" --scenarios kmod-dkms-package \
  --ko "$ko" --guest-modules parport_pc --fixture || { echo "FAIL: the testbed did not boot or run"; exit 1; }
"${tb[@]}" --verdict kmod-dkms-package
rc=$?
want=$(sha256sum "$ko" | cut -d' ' -f1)
got=$(sed -n 's/^package-built module: sha256 //p' "$results/kmod-dkms-package/notes" 2>/dev/null)
echo "host build/dkms/irqloop_responder.ko sha256 $want; guest loaded $got"
[[ $rc -eq 0 ]] || { echo "FAIL: scenario kmod-dkms-package (exit $rc)"; exit 1; }
[[ -n $got && $got == "$want" ]] || { echo "FAIL: the guest did not load the package-built module"; exit 1; }
echo "1 passed, 0 failed"
