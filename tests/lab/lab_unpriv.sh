#!/usr/bin/env bash
# `bloatmeter lab` as an unprivileged user (nobody, by setpriv: no capability, no groups): it
# enters a user namespace of its own and runs the whole lab there. Checks: the run completes,
# measures the 100 ms tbf buffer within ±10 %, and its namespaces never appear in the host's
# /run/netns. Then the same user where the kernel refuses unprivileged user namespaces
# (user.max_user_namespaces = 0, set inside a user namespace of the test's, so the host's limit
# is untouched): one sentence that root is needed and why, exit 1.
#   lab_unpriv.sh BINDIR
set -uo pipefail
. "$(dirname "$0")/../lib/require.sh"
need_root "setpriv to an unprivileged user, and a user namespace with a lowered limit"
need_cmd setpriv util-linux unshare util-linux python3 python3
bindir=$(cd "$1" && pwd)
work=$(mktemp -d)
chmod 755 "$work"
lpid=
cleanup() {
	[ -n "$lpid" ] && kill "$lpid" 2> /dev/null && wait "$lpid" 2> /dev/null
	rm -rf "$work"
}
trap cleanup EXIT
fail=0
bad() { echo "FAIL $*"; fail=1; }
as_nobody=(setpriv --reuid=65534 --regid=65534 --clear-groups)

cd "$work" || exit 1
"${as_nobody[@]}" "$bindir/bloatmeter" lab --phases idle,download --idle 1 -t 4 -J -v \
	> "$work/r.json" 2> "$work/err" &
lpid=$!
seen=
while kill -0 $lpid 2> /dev/null; do
	# The lab names its namespaces bm<pid>-c/r/s: none may reach the host's directory.
	seen+=$(ls /run/netns 2> /dev/null | grep "^bm$lpid-" || true)
	sleep 0.2
done
wait $lpid
rc=$?
lpid=
[ $rc -eq 0 ] || bad "the unprivileged lab exits $rc: $(grep -v phase "$work/err" | tail -3)"
grep -q "running unprivileged, as root of a user namespace" "$work/err" ||
	bad "the lab did not say it runs in a user namespace"
[ -z "$seen" ] || bad "the host's /run/netns showed the lab's namespaces: $seen"
res=$(python3 -c "import json,sys
r = json.load(open(sys.argv[1]))
b, t = r['buffer']['download'], r['lab']['truth']
print(r['status'], b['ms'], t['down_buffer_ms'], t['qdisc'])" "$work/r.json" 2> /dev/null ||
	echo "unreadable")
read -r status ms truth qdisc <<< "$res"
echo "     unprivileged lab: status $status, download buffer $ms ms (truth $truth ms, $qdisc)"
[ "$status" = complete ] || bad "the run's status is not complete: $res"
python3 -c "import sys; sys.exit(not abs(float(sys.argv[1]) - 100) <= 10)" "${ms:-nan}" 2> /dev/null ||
	bad "the download buffer $ms ms is not within 10 % of 100 ms"
if [ $fail -ne 0 ]; then
	# What the estimate rests on, and the whole report for a later look (CI prints only a part).
	python3 -c "import json,sys; b = json.load(open(sys.argv[1]))['buffer']['download']
print('     estimate:', {k: b.get(k) for k in ('ms', 'q_p50_ms', 'q_p99_ms', 'q_max_ms', 'samples',
      'backoff_peaks', 'backoff_peak_ms', 'ci95_ms', 'lower_bound_reason')})" "$work/r.json" 2> /dev/null
	cp "$work/r.json" "${LAB_KEEP_DIR:-/tmp}/lab-unprivileged.json" 2> /dev/null &&
		echo "     report kept: ${LAB_KEEP_DIR:-/tmp}/lab-unprivileged.json"
	grep -v phase "$work/err" | tail -5
fi

# Refused: nobody in a user namespace of ours (ids 0-65535 mapped 1:1, written from outside as
# an unprivileged process cannot) whose limit on user namespaces below it is 0.
mkfifo "$work/go"
# The shell execs again once mapped: only an exec as (mapped) root grants the capabilities.
unshare -U sh -c 'read x < "$1"; exec sh -c "echo 0 > /proc/sys/user/max_user_namespaces &&
	exec setpriv --reuid=65534 --regid=65534 --clear-groups \"\$1/bloatmeter\" lab \
		--phases idle --idle 1" sh "$2"' sh "$work/go" "$bindir" > /dev/null 2> "$work/refused" &
upid=$!
sleep 0.2
echo "0 0 65536" > /proc/$upid/uid_map && echo "0 0 65536" > /proc/$upid/gid_map ||
	bad "cannot map the test's user namespace"
echo go > "$work/go"
wait $upid
rc=$?
echo "     refused: exit $rc: $(cat "$work/refused")"
[ $rc -eq 1 ] || bad "a refused user namespace exits $rc (want 1)"
[ "$(wc -l < "$work/refused")" -eq 1 ] &&
	grep -q "bloatmeter lab needs root here: this system does not let an unprivileged user create a user namespace" "$work/refused" ||
	bad "a refused user namespace does not give the one sentence that root is needed and why"
[ $fail -eq 0 ] && echo "PASS the lab runs unprivileged in a user namespace, and says when it cannot"
exit $fail
