#!/usr/bin/env bash
# The long soak (docs/scale.md): builds build/ (warnings as errors) and runs tests/soak/soak.sh
# for MINUTES (default 30) — 3 real clients running full tests back to back against one
# bloatmeterd on loopback, its RSS and open descriptors sampled every 5 s, then the flatness
# check (exit 1 when the daemon's memory or descriptors grew beyond the tolerance, or a test
# failed). ctest runs a 2-minute version (soak_daemon) in every scripts/test.sh run. Needs no
# root; as root it runs in a private network namespace.
# Usage: scripts/soak.sh [MINUTES]   Environment: see tests/soak/soak.sh (BM_SOAK_CLIENTS, ...).
set -euo pipefail
cd "$(dirname "$0")/.."
minutes=${1:-30}
case $minutes in '' | *[!0-9]*) echo "usage: scripts/soak.sh [MINUTES]" >&2; exit 2 ;; esac
cmake -S . -B build -DBM_WERROR=ON > /dev/null
cmake --build build -j"$(nproc)" --target bloatmeter bloatmeterd
BM_SOAK_EVERY=${BM_SOAK_EVERY:-5} exec tests/soak/soak.sh build/bin $((minutes * 60))
