#!/usr/bin/env bash
# Installs what bloatmeter needs on Debian 12 and builds it into build/ (warnings are errors).
# With --test-tools it also installs what the test suite uses (benchmark peers, output
# validators, clang for the fuzzers). Idempotent. Installing needs root: as another user it runs
# apt-get through sudo (scripts/as-root) and builds as that user, so build/ stays theirs.
# Usage: scripts/setup.sh [--test-tools]
set -euo pipefail
cd "$(dirname "$0")/.."
packages=(
	build-essential cmake pkg-config            # toolchain
	dpkg-dev                                    # cpack -G DEB: dpkg-shlibdeps computes Depends
	libevent-dev libjson-c-dev libssl-dev libpcap-dev libcmocka-dev zlib1g-dev   # libraries
	iproute2 nftables jq                        # the lab (namespaces, tbf, random loss)
	python3                                     # scripts/check-layers.py (the build's layer check)
	libcurl4-openssl-dev                        # the client's HTTP mode (client/run/curlloop.c)
)
if [ "${1:-}" = "--test-tools" ]; then
	packages+=(
		iperf3 irtt                                 # benchmark peers
		prometheus flent python3-matplotlib chromium python3-jsonschema  # output validators
		clang libclang-rt-14-dev                    # libFuzzer targets
		bind9-dnsutils                              # dig against the DNS responder
		curl openssl                                # the HTTP listener; test certificates (TLS)
		systemd                                     # systemd-analyze verify of the units
		adduser init-system-helpers                 # dpkg -i of the .deb (its Depends)
		man-db                                      # man --warnings on the manual pages (groff)
		devscripts                                  # hardening-check of both binaries
		logrotate                                   # the packaged logrotate file (tests/packaging)
	)
elif [ $# -gt 0 ]; then
	echo "usage: scripts/setup.sh [--test-tools]" >&2
	exit 2
fi
# The browser test page (cmake/webpage.cmake) is bundled with node/npm; a node already on PATH
# (not from Debian) is kept rather than replaced.
command -v node > /dev/null || packages+=(nodejs)
command -v npm > /dev/null || packages+=(npm)
missing=()
for p in "${packages[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2> /dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
	scripts/as-root env DEBIAN_FRONTEND=noninteractive apt-get update -q
	scripts/as-root env DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${missing[@]}"
fi
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo -DBM_WERROR=ON > /dev/null
cmake --build build -j"$(nproc)"
