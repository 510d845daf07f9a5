#!/usr/bin/env bash
# The soak against a daemon with an injected leak (leakshim.c through LD_PRELOAD: heap and a
# descriptor per accepted connection) must fail its flatness check, naming the growth.
# Usage: check_leak.sh BINDIR LEAKSHIM.so [SECONDS]
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=$(BM_SOAK_PRELOAD=$2 "$here/soak.sh" "$1" "${3:-45}" 2>&1)
rc=$?
echo "$out"
if [ $rc -eq 1 ] && grep -q "^NOT FLAT: RSS grew .*; open fds grew" <<< "$out"; then
	echo "ok: the leaking daemon failed the flatness check"
	exit 0
fi
echo "FAIL: the soak of a leaking daemon exited $rc without \"NOT FLAT: RSS grew ...; open fds grew ...\""
exit 1
