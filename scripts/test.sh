#!/usr/bin/env bash
# Runs every test: builds (scripts/setup.sh), then the unit tests under ASan/UBSan, the libFuzzer
# targets briefly, and ctest over the main build — unit, integration, packaging, hostile input
# and the namespace lab scenarios. Not the benchmarks (scripts/bench.sh). Needs root
# (namespaces, tc). Usage: scripts/test.sh
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh --test-tools

echo "== ASan/UBSan build: unit tests, and the hostile-input and TLS tests against the sanitized daemon =="
cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=Debug -DBM_WERROR=ON -DBM_SANITIZE=ON -DBM_LAB_TESTS=OFF > /dev/null
cmake --build build-asan -j"$(nproc)"
ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
	ctest --test-dir build-asan -R '^(unit_|hostile_|tls_daemon)' --no-tests=error --output-on-failure

echo "== libFuzzer targets (brief) =="
CC=clang cmake -S . -B build-fuzz -DCMAKE_BUILD_TYPE=Debug -DBM_WERROR=ON -DBM_FUZZ=ON -DBM_LAB_TESTS=OFF > /dev/null
cmake --build build-fuzz -j"$(nproc)"
ctest --test-dir build-fuzz -L fuzz --no-tests=error --output-on-failure

echo "== all tests =="
# -V: the lab and output figures land in the CI log; -LE bench: never the benchmarks, even in
# a build/ configured with -DBM_BENCH=ON.
ctest --test-dir build --output-on-failure -V -LE bench
