# shellcheck shell=bash
# Sourced by the package tests: build_deb BUILD VERSION CPACK DIR runs cpack -G DEB on the build
# tree BUILD with DIR as its output directory and sets deb to the package it built; on failure
# it prints cpack's log (or DIR's listing) and one FAIL line, and returns 1.
# With BM_DEB_DIR set (ctest's packaging_deb_build fixture built it there once for all the
# package tests of a run) it takes the package from there instead.
build_deb() {
	local build=$1 version=$2 cpack=$3 dir=$4
	if [ -n "${BM_DEB_DIR:-}" ]; then
		deb=$(ls "$BM_DEB_DIR"/bloatmeter_"$version"_*.deb 2> /dev/null | head -1)
		[ -n "$deb" ] && return 0
		echo "FAIL no bloatmeter_${version}_*.deb in $BM_DEB_DIR (the packaging_deb_build fixture)"
		return 1
	fi
	if ! (cd "$build" && "$cpack" -G DEB -B "$dir") > "$dir.log" 2>&1; then
		tail -20 "$dir.log"
		echo "FAIL cpack -G DEB"
		return 1
	fi
	deb=$(ls "$dir"/bloatmeter_"$version"_*.deb 2> /dev/null | head -1)
	if [ -z "$deb" ]; then
		ls -R "$dir"
		echo "FAIL no bloatmeter_${version}_*.deb was built"
		return 1
	fi
}
