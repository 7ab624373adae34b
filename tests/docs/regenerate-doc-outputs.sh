#!/bin/sh
# SPDX-License-Identifier: MIT
# Regenerate the pasted outputs of README.md and docs/ that no longer match the tools: every
# example that fails its check is run again at its documented size (no cut to about 3 s) and
# its pasted output replaced by what the tools print. The sim board's latency models and the
# --jitter sequence are seeded (seed=N, --seed), so a rerun differs only by this machine's
# timing. Run it from a build tree's parent, under the RT lock when others share the machine:
#   flock /work/rt.lock tests/docs/regenerate-doc-outputs.sh [--only docs/commands/run.md]
# then review `git diff docs README.md` before committing.
set -eu
src=$(cd "$(dirname "$0")/../.." && pwd)
build=${IRQLOOP_BUILD_DIR:-$src/build}
exec python3 "$src/tests/docs/run-doc-examples.py" --source "$src" --bin "$build/logger" \
    --bin "$build/target-responder/user" --full --update "$@"
