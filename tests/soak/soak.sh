#!/usr/bin/env bash
# Soak test: one bloatmeterd on loopback, BM_SOAK_CLIENTS (default 3) real `bloatmeter` clients
# running full tests back to back (idle, download, upload, bidirectional; short phases, load
# capped by the daemon's max-rate) for SECONDS, while the daemon's VmRSS and open descriptors
# are sampled every BM_SOAK_EVERY seconds. Then it asserts flatness (tests/soak/flatcheck.py):
# after the warm-up (a quarter of the run, at least 20 s) the RSS peak of the second half may
# exceed that of the first by at most BM_SOAK_RSS_TOL_KIB (default 1024 KiB) and the
# descriptor peak by at most 8, and once the last client has ended the daemon holds exactly as
# many descriptors as before the first. Every test must also complete (exit 0). Prints the
# samples' figures and the tests run. It also asserts the daemon's idle VmRSS, read before the
# first client, is at most BM_SOAK_IDLE_RSS_KIB (default 8192 KiB: issue 16's "≤ 8 MiB idle",
# docs/scale.md "Memory"; 0 turns it off, as sanitizer builds do, whose shadow memory is
# counted). As root it runs in a private network namespace.
# Usage: soak.sh BINDIR SECONDS   (scripts/soak.sh [MINUTES] builds and calls it)
# Environment: BM_SOAK_PRELOAD=LIB runs the daemon with LD_PRELOAD=LIB (tests/soak/leakshim.c:
# a daemon with an injected leak, to see the check fail).
set -euo pipefail
bindir=$(cd "$1" && pwd)
secs=${2:-120}
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../lib/require.sh"
. "$here/../lib/netns.sh"
need_cmd python3 python3 ss iproute2
netns_private BM_SOAK_NETNS "$0" "$bindir" "$secs"
nclients=${BM_SOAK_CLIENTS:-3}
every=${BM_SOAK_EVERY:-2}
rss_tol=${BM_SOAK_RSS_TOL_KIB:-1024}
idle_rss_max=${BM_SOAK_IDLE_RSS_KIB:-8192}
warmup=$((secs / 4 > 20 ? secs / 4 : 20))

tmp=$(mktemp -d)
dpid=
cpids=()
cleanup() {
	for p in "${cpids[@]}"; do kill "$p" 2> /dev/null || true; done
	[ -n "$dpid" ] && kill "$dpid" 2> /dev/null && wait "$dpid" 2> /dev/null
	[ -n "${BM_SOAK_KEEP:-}" ] && echo "kept $tmp" || rm -rf "$tmp"
}
trap cleanup EXIT
cat > "$tmp/bloatmeterd.conf" << CONF
port = $port
bind = 127.0.0.1
max-sessions = 16
max-sessions-per-client = 16
# Paced load: the soak is about the daemon's state over many tests, not about throughput,
# and unpaced loopback flows would take both CPUs.
max-rate = 100M
verbose = 1
CONF
dflags=(-c "$tmp/bloatmeterd.conf")
[ "$(id -u)" -eq 0 ] && dflags+=(--allow-root yes)
if [ -n "${BM_SOAK_PRELOAD:-}" ]; then
	LD_PRELOAD=$BM_SOAK_PRELOAD "$bindir/bloatmeterd" "${dflags[@]}" > "$tmp/daemon.log" 2>&1 &
else
	"$bindir/bloatmeterd" "${dflags[@]}" > "$tmp/daemon.log" 2>&1 &
fi
dpid=$!
wait_listen "$port" || true # (checked next)
kill -0 "$dpid" 2> /dev/null || { echo "FAIL: the daemon did not start"; cat "$tmp/daemon.log"; exit 1; }
sleep 0.5
rss() { awk '/^VmRSS:/ { print $2 }' "/proc/$dpid/status"; }
fds() { ls "/proc/$dpid/fd" | wc -l; }
idle_rss=$(rss)
idle_fds=$(fds)
echo "== soak: $nclients clients, full tests back to back for $secs s against one daemon" \
	"(pid $dpid${BM_SOAK_PRELOAD:+, LD_PRELOAD=$BM_SOAK_PRELOAD}); idle RSS $idle_rss KiB," \
	"$idle_fds fds; load average $(cut -d' ' -f1-3 /proc/loadavg) =="

# One client: full tests back to back until the end time; one line per test: "exit seconds".
client() {
	local k=$1 end=$2 t0 rc
	while [ "$(date +%s)" -lt "$end" ]; do
		t0=$(date +%s.%N)
		rc=0
		"$bindir/bloatmeter" -Z root -p "$port" --idle 1 -t 2 --gap 0.5 -P 2 -q \
			--json-file "$tmp/last-$k.json" 127.0.0.1 > "$tmp/client-$k.out" 2>&1 || rc=$?
		echo "$rc $(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')" \
			>> "$tmp/tests-$k"
		[ $rc -eq 0 ] || cp "$tmp/client-$k.out" "$tmp/failed-$k-$(date +%s).out"
	done
}
start=$(date +%s)
end=$((start + secs))
for k in $(seq "$nclients"); do
	: > "$tmp/tests-$k"
	client "$k" "$end" &
	cpids+=($!)
	sleep 1 # staggered, so the tests overlap in every phase combination
done
: > "$tmp/samples"
while [ "$(date +%s)" -lt "$end" ]; do
	kill -0 "$dpid" 2> /dev/null || { echo "FAIL: the daemon died"; tail "$tmp/daemon.log"; exit 1; }
	echo "$(($(date +%s) - start)) $(rss) $(fds)" >> "$tmp/samples"
	sleep "$every"
done
for p in "${cpids[@]}"; do wait "$p" || true; done
cpids=()
# Sessions end at once when their client closes; give the daemon a moment to free them.
sleep 2
end_rss=$(rss)
end_fds=$(fds)
ntests=$(cat "$tmp"/tests-* | wc -l)
nfail=$(awk '$1 != 0' "$tmp"/tests-* | wc -l)
echo "tests: $ntests run by $nclients clients, $nfail failed; mean length" \
	"$(awk '{ s += $2 } END { printf "%.1f", NR ? s / NR : 0 }' "$tmp"/tests-*) s"
echo "daemon RSS: idle $idle_rss KiB before, $end_rss KiB after; samples every $every s:"
awk '{ printf "%s%s:%s/%s", (NR > 1 ? " " : "  "), $1, $2, $3 } END { print "" }' "$tmp/samples" |
	fold -s -w 100
echo "(seconds:RSS KiB/fds)"
kill "$dpid"
wait "$dpid" || true
dpid=
grep -h "counters:" "$tmp/daemon.log" || true
rc=0
python3 "$here/flatcheck.py" "$tmp/samples" --warmup "$warmup" --rss-tol-kib "$rss_tol" \
	--fd-tol 8 --idle-fds "$idle_fds" "$end_fds" || rc=1
if [ "$nfail" -ne 0 ]; then
	echo "FAIL: $nfail of $ntests tests failed; the first:"
	head -5 "$(ls "$tmp"/failed-* | head -1)"
	rc=1
fi
[ "$ntests" -gt 0 ] || { echo "FAIL: no test ran"; rc=1; }
if [ "$idle_rss_max" -gt 0 ] && [ "$idle_rss" -gt "$idle_rss_max" ]; then
	echo "FAIL: idle RSS $idle_rss KiB before the first client, over $idle_rss_max KiB"
	rc=1
elif [ "$idle_rss_max" -gt 0 ]; then
	echo "ok: idle RSS $idle_rss KiB before the first client, at most $idle_rss_max KiB"
fi
[ $rc -eq 0 ] && echo "PASS: flat" || echo "FAIL"
exit $rc
