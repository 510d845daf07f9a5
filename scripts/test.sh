#!/usr/bin/env bash
# Runs every test: builds (scripts/setup.sh), then the unit tests under ASan/UBSan, the libFuzzer
# targets briefly, and ctest over the main build — unit, integration, packaging, hostile input,
# the namespace lab scenarios and the 2-minute soak (tests/soak). Not the benchmarks
# (scripts/bench.sh) nor the long soak (scripts/soak.sh). Needs root
# (namespaces, tc): run as another user, it re-runs itself through sudo (scripts/as-root) and
# at the end gives the build trees back to that user. Usage: scripts/test.sh
set -euo pipefail
[ "$(id -u)" -eq 0 ] || exec "$(dirname "$0")/as-root" "$0" "$@"
cd "$(dirname "$0")/.."
if [ -n "${SUDO_UID:-}" ] && [ "$SUDO_UID" != 0 ]; then
	trap 'chown -R "$SUDO_UID:$SUDO_GID" build build-asan build-fuzz 2> /dev/null || true' EXIT
fi
export PYTHONDONTWRITEBYTECODE=1 # no __pycache__ in the tree from the tests' Python
scripts/setup.sh --test-tools

echo "== ASan/UBSan build: unit tests, and the hostile-input and TLS tests against the sanitized daemon =="
cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=Debug -DBM_WERROR=ON -DBM_SANITIZE=ON -DBM_LAB_TESTS=OFF > /dev/null
cmake --build build-asan -j"$(nproc)"
ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
	ctest --test-dir build-asan -R '^(unit_|hostile_|tls_daemon|labsmoke)' --no-tests=error --output-on-failure

echo "== libFuzzer targets (brief) =="
CC=clang cmake -S . -B build-fuzz -DCMAKE_BUILD_TYPE=Debug -DBM_WERROR=ON -DBM_FUZZ=ON -DBM_LAB_TESTS=OFF > /dev/null
cmake --build build-fuzz -j"$(nproc)"
ctest --test-dir build-fuzz -L fuzz --no-tests=error --output-on-failure

echo "== all tests =="
# -V: the lab and output figures land in the CI log; -LE: never the benchmarks, even in a
# build/ configured with -DBM_BENCH=ON, nor the tests labelled unreliable (each says why).
ctest --test-dir build --output-on-failure -V -LE 'bench|unreliable'
