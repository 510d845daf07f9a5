#!/usr/bin/env bash
# Runs the benchmarks (tests/bench: printed figures, no asserts; root, for namespaces): installs
# what they use (scripts/setup.sh --test-tools), builds with -DBM_BENCH=ON into build-bench/
# and runs `ctest -L bench -V`, so the figures land in the output (about 13 minutes, with the
# scale bench of docs/scale.md: N = 100..1000 probe sessions from tests/bench/loadgen). Not
# part of scripts/test.sh. Run as another user, it re-runs itself through sudo (scripts/as-root)
# and at the end gives the build trees back to that user. Usage: scripts/bench.sh
set -euo pipefail
[ "$(id -u)" -eq 0 ] || exec "$(dirname "$0")/as-root" "$0" "$@"
cd "$(dirname "$0")/.."
if [ -n "${SUDO_UID:-}" ] && [ "$SUDO_UID" != 0 ]; then
	trap 'chown -R "$SUDO_UID:$SUDO_GID" build build-bench 2> /dev/null || true' EXIT
fi
export PYTHONDONTWRITEBYTECODE=1
scripts/setup.sh --test-tools
cmake -S . -B build-bench -DCMAKE_BUILD_TYPE=RelWithDebInfo -DBM_WERROR=ON -DBM_BENCH=ON > /dev/null
cmake --build build-bench -j"$(nproc)"
ctest --test-dir build-bench -L bench -V
