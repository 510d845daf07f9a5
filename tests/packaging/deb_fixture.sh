#!/usr/bin/env bash
# ctest fixture packaging_deb_build: builds the .deb once (cpack -G DEB on this build tree) into
# DIR for the package tests that follow, which find it through BM_DEB_DIR (build_deb.sh).
#   deb_fixture.sh BUILD VERSION CPACK DIR
set -euo pipefail
. "$(dirname "$0")/build_deb.sh"
rm -rf "$4"
mkdir -p "$4"
unset BM_DEB_DIR
build_deb "$1" "$2" "$3" "$4"
echo "built $deb"
