#!/usr/bin/env bash
# The soak's flatness check on synthetic samples, so that it is seen to fail: a flat series with
# noise (peaks that come and go) passes; a slow RSS leak, a descriptor leak and descriptors
# left open when idle each fail, with the reason named. Usage: check_flatcheck.sh
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../lib/require.sh"
need_cmd python3 python3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
# series NAME AWK-STATEMENTS: 60 samples 2 s apart over 120 s; the statements set rss and
# fds from t (a fixed seed: the same series every run).
series() {
	awk "BEGIN { srand(7); for (t = 0; t < 120; t += 2) { $2; print t, rss, fds } }" > "$tmp/$1"
}
# expect NAME WANT-EXIT PATTERN [flatcheck options]
expect() {
	local name=$1 want=$2 pat=$3 rc=0
	shift 3
	out=$(python3 "$here/flatcheck.py" "$tmp/$name" --warmup 30 --rss-tol-kib 1024 --fd-tol 8 "$@") || rc=$?
	if [ $rc -eq "$want" ] && grep -q "$pat" <<< "$out"; then
		echo "ok   $name: exit $rc ($(tail -1 <<< "$out"))"
	else
		echo "FAIL $name: exit $rc, want $want and \"$pat\":"
		echo "$out"
		fail=1
	fi
}
# Noise: RSS 9000-9800 KiB and 25-40 fds at random, as tests start and end.
series flat 'rss = 9000 + int(rand() * 800); fds = 25 + int(rand() * 15)'
expect flat 0 '^flat$' --idle-fds 22 22
# 40 KiB/s more (about 200 bytes per probe at 200 probes/s): +2.4 MiB a minute, beyond the
# noise and the tolerance between the halves' peaks (~44 s apart here).
series rssleak 'rss = 9000 + int(rand() * 800) + 40 * t; fds = 25 + int(rand() * 15)'
expect rssleak 1 'NOT FLAT: RSS grew'
# One descriptor more every 4 s.
series fdleak 'rss = 9000 + int(rand() * 800); fds = 25 + int(rand() * 15) + int(t / 4)'
expect fdleak 1 'NOT FLAT: open fds grew'
# Flat while running, but two descriptors left behind at the end.
expect flat 1 'fds left open when idle' --idle-fds 22 24
# Too few samples after the warm-up: not a verdict.
head -16 "$tmp/flat" > "$tmp/short"
expect short 2 'need at least 4'
exit $fail
