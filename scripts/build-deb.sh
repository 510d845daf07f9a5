#!/usr/bin/env bash
# Builds the Debian package as Debian builds its own: the compiler and linker flags come from
# dpkg-buildflags (hardening=+all unless DEB_BUILD_MAINT_OPTIONS says otherwise; the DEB_*_APPEND
# and DEB_*_SET variables work as in a package build), on top of the project's own hardening
# flags, which CMakeLists.txt adds after them (so _FORTIFY_SOURCE stays at 3). Build type None
# and no -Werror, as debhelper's cmake build: the optimisation is dpkg-buildflags' -O2, and a
# newer compiler's new warning does not fail a package build. No tests are built.
#   scripts/build-deb.sh [BUILDDIR]   (default build-deb; prints the .deb's path last)
set -euo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
build=$(realpath -m "${1:-$src/build-deb}")
for c in dpkg-buildflags:dpkg-dev cmake:cmake cpack:cmake; do
	command -v "${c%%:*}" > /dev/null ||
		{ echo "build-deb.sh: ${c%%:*} is not installed (Debian package ${c#*:})" >&2; exit 1; }
done
export DEB_BUILD_MAINT_OPTIONS=${DEB_BUILD_MAINT_OPTIONS:-hardening=+all}
# From the source directory: dpkg-buildflags maps it to "." in -ffile-prefix-map.
cd "$src"
cflags=$(dpkg-buildflags --get CFLAGS)
cppflags=$(dpkg-buildflags --get CPPFLAGS)
ldflags=$(dpkg-buildflags --get LDFLAGS)
# CMake takes CFLAGS and LDFLAGS from the environment at a tree's first configure and never
# reads CPPFLAGS: they go in front of CFLAGS, as debhelper does. Removing the cache makes an
# existing tree read them again.
export CFLAGS="$cppflags $cflags" LDFLAGS="$ldflags"
mkdir -p "$build"
rm -f "$build/CMakeCache.txt"
echo "build-deb.sh: CFLAGS=$CFLAGS" >&2
echo "build-deb.sh: LDFLAGS=$LDFLAGS" >&2
cmake -S "$src" -B "$build" -DCMAKE_BUILD_TYPE=None -DBM_WERROR=OFF -DBM_TESTS=OFF \
	-DBM_LAB_TESTS=OFF -DBM_SANITIZE=OFF -DBM_FUZZ=OFF -DCMAKE_EXPORT_COMPILE_COMMANDS=ON >&2
cmake --build "$build" -j"${JOBS:-$(nproc)}" >&2
(cd "$build" && cpack -G DEB) >&2
version=$(sed -n 's/^project(bloatmeter VERSION \([0-9.]*\).*/\1/p' "$src/CMakeLists.txt")
ls "$build"/bloatmeter_"$version"_*.deb
