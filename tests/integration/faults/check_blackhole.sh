#!/usr/bin/env bash
# A path that goes dark mid-run, in two network namespaces this test makes (a veth pair):
# 5 s into the run (3 s into the download phase of idle 2 s + download 10 s) nftables in the
# client's namespace drops everything both ways. The client must end within 8 s of that
# (LIVENESS_OUTAGE_NS, 5 s, plus slack) with exit 3 and a partial report: the idle phase, the
# download up to the outage, aborted in the download with last_reply_s where the replies
# stopped, valid against the schema, and the text's "Last reply" line.
# Usage: check_blackhole.sh BINDIR SCHEMA
set -uo pipefail
# shellcheck disable=SC2034 # read by netns_drill.sh
DRILL_NEED="bc bc"
. "$(dirname "$0")/netns_drill.sh"
c=bmbh-c$$
s=bmbh-s$$

netns_veth "$c" "$s" 10.77.0.1/24 10.77.0.2/24 ||
	{ echo "FAIL blackhole: cannot set up the namespaces"; exit 1; }
netns_start_daemon "$s" 10.77.0.2 4750
# -Z root: started as root, the client would write its files as nobody (-Z), which cannot
# enter this test's private directory.
ip netns exec "$c" "$bindir/bloatmeter" -Z root --idle 2 -t 10 --gap 1 --probes udp \
	--json "$work/r.json" 10.77.0.2 > "$work/out.txt" 2> "$work/err.txt" &
cpid=$!
sleep 5
ip netns exec "$c" nft -f - << 'NFT'
table inet blackhole {
	chain in { type filter hook input priority 0; policy drop; }
	chain out { type filter hook output priority 0; policy drop; }
}
NFT
dark=$(date +%s.%N)
wait "$cpid"
rc=$?
took=$(echo "$(date +%s.%N) - $dark" | bc)
cat "$work/err.txt"
head -4 "$work/out.txt"
r=$work/r.json
jq -c '{status, error, aborted, phases: [.phases[] | {name, start_s, end_s}]}' "$r"
check "blackhole: exit 3 (partial)" test "$rc" = 3
check "blackhole: the client ended ${took} s after the path went dark (≤ 8 s)" \
	awk -v t="$took" 'BEGIN { exit !(t <= 8) }'
check "blackhole: partial, aborted in the download, direction down" \
	jq -e '.status == "partial" and .aborted.phase == "download" and .aborted.direction == "down"' "$r"
check "blackhole: replies stopped about 5 s in, 5 s before the abort" \
	jq -e '.aborted.last_reply_s > 4 and .aborted.last_reply_s < 6.5 and (.aborted.at_s - .aborted.last_reply_s) >= 4.5 and (.aborted.at_s - .aborted.last_reply_s) < 6.5' "$r"
check "blackhole: the idle phase is kept, the download up to the outage" \
	jq -e '.phases[0].name == "idle" and .phases[0].rtt_samples > 100 and .phases[1].name == "download" and .phases[1].end_s <= .aborted.last_reply_s + 0.2 and .phases[1].end_s > .phases[1].start_s + 2' "$r"
check "blackhole: the partial report matches the schema" \
	eval 'out=$($py -m jsonschema -i "$r" "$schema" 2>&1) && [ -z "$out" ]'
check "blackhole: the text says when the replies stopped" \
	grep -Eq '^Last reply   [0-9.]+ s in, [0-9.]+ s before the stop \(replies stopped there\); load down$' "$work/out.txt"
[ "$fail" = 0 ] && echo "PASS blackhole" || echo "FAIL blackhole"
exit "$fail"
