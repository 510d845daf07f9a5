#!/usr/bin/env bash
# Runs the benchmarks (tests/bench: printed figures, no asserts; root, for namespaces): installs
# what they use (scripts/setup.sh --test-tools), builds with -DBM_BENCH=ON into build-bench/
# and runs `ctest -L bench -V`, so the figures land in the output (about 10 minutes). Not part
# of scripts/test.sh. Run as root; otherwise it re-runs itself through sudo.
# Usage: scripts/bench.sh
set -euo pipefail
[ "$(id -u)" -eq 0 ] || exec "$(dirname "$0")/as-root" "$0" "$@"
cd "$(dirname "$0")/.."
export PYTHONDONTWRITEBYTECODE=1
scripts/setup.sh --test-tools
cmake -S . -B build-bench -DCMAKE_BUILD_TYPE=RelWithDebInfo -DBM_WERROR=ON -DBM_BENCH=ON > /dev/null
cmake --build build-bench -j"$(nproc)"
ctest --test-dir build-bench -L bench -V
