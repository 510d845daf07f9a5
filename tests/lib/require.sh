# Sourced by the test scripts: what a test needs before it starts.
#
# A missing tool is an error that names its Debian package (scripts/setup.sh --test-tools
# installs them all), never a skip and never a later, misleading failure: a test that could
# not run has not passed. The one skip (exit 77) is need_root's: a test whose premise
# (network namespaces, tc, packet capture, privilege dropping) needs root does not apply to
# an unprivileged run, which leaves these tests out with `ctest -LE root`.

# need_root WHAT: exits 77 (ctest: skipped) unless root.
need_root() {
	[ "$(id -u)" -eq 0 ] && return 0
	echo "SKIP: needs root ($*); label root: ctest -LE root leaves these tests out"
	exit 77
}

# need_cmd COMMAND PACKAGE [COMMAND PACKAGE ...]: exits 1, naming the Debian package of each
# command that is not installed. COMMAND may be a path (/usr/bin/chromium).
need_cmd() {
	local miss=0
	while [ $# -ge 2 ]; do
		if ! command -v "$1" > /dev/null 2>&1; then
			echo "FAIL: $1 is not installed (Debian package $2; scripts/setup.sh --test-tools installs it)"
			miss=1
		fi
		shift 2
	done
	[ $miss -eq 0 ] || exit 1
}

# need_py_module PYTHON MODULE PACKAGE: exits 1 unless PYTHON imports MODULE, naming the
# Debian package that provides it.
need_py_module() {
	local err
	need_cmd "$1" python3
	if ! err=$("$1" -c "import $2" 2>&1); then
		if grep -q "No module named" <<< "$err"; then
			echo "FAIL: $3 is not installed ($1 has no module $2; scripts/setup.sh --test-tools installs it)"
		else
			echo "FAIL: $1 cannot import $2 (Debian package $3): $(tail -1 <<< "$err")"
		fi
		exit 1
	fi
}
