#!/usr/bin/env bash
# The systemd units in packaging/ pass `systemd-analyze verify`: each unit is checked as
# shipped, with its ExecStart pointed at this build's binaries (verify needs them to exist).
#   check_units.sh SRCDIR BINDIR
set -euo pipefail
src=$1 bindir=$2
. "$(dirname "$0")/../lib/require.sh"
need_cmd systemd-analyze systemd man man-db
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
for u in bloatmeterd.service bloatmeter-measure.service bloatmeter-measure.timer; do
	sed -e "s|/usr/sbin/bloatmeterd|$bindir/bloatmeterd|; s|/usr/bin/bloatmeter |$bindir/bloatmeter |" \
		"$src/packaging/$u" > "$work/$u"
done
# The units' Documentation= names manual pages; verify runs man on each: point it at ours.
for page in "$src"/docs/man/*.[0-9]; do
	sec=${page##*.}
	mkdir -p "$work/man/man$sec"
	cp "$page" "$work/man/man$sec/"
done
export MANPATH=$work/man
cd "$work"
fail=0
for u in bloatmeterd.service bloatmeter-measure.service bloatmeter-measure.timer; do
	# verify also reports on unrelated units installed on this host: keep only ours.
	out=$(systemd-analyze verify "./$u" 2>&1 | grep -F "$u" || true)
	if [ -n "$out" ]; then
		echo "FAIL $u:"
		echo "$out"
		fail=1
	else
		echo "ok   $u passes systemd-analyze verify"
	fi
done
[ $fail -eq 0 ] && echo "PASS units"
exit $fail
