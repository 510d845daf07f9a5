#!/usr/bin/env bash
# Checks that the commands a test needs are installed, then runs the test (for a test script
# that does not check them itself; tests/lib/require.sh):
#   with-tools.sh COMMAND=PACKAGE... -- TEST [ARGS...]
set -euo pipefail
. "$(dirname "$0")/require.sh"
need=()
while [ $# -gt 0 ] && [ "$1" != -- ]; do
	need+=("${1%%=*}" "${1#*=}")
	shift
done
[ $# -gt 1 ] || { echo "usage: with-tools.sh COMMAND=PACKAGE... -- TEST [ARGS...]" >&2; exit 2; }
shift
need_cmd "${need[@]}"
exec "$@"
