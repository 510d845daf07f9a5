#!/usr/bin/env bash
# `bloatmeter lab --hops 3 --bottleneck-hop 2`: a chain client — r1 — r2 — r3 — server with the
# tbf on r2, the real daemon and client, --per-hop. The truth JSON must name hop 2 of 3, and the
# per-hop verdict must place each direction's queue where the lab put it: the downlink queue
# (r2's port toward the client) between hop 1 and hop 2, the uplink queue (r2's port toward the
# server) between hop 2 and hop 3; hops before the queue stay near idle. Its buffer is within
# 10 % of the truth.
#   lab_chain.sh BINDIR download|upload icmp|udp
set -euo pipefail
bindir=$1 dir=$2 mode=$3
name="lab_chain_${dir}_$mode"
. "$(dirname "$0")/../lib/require.sh"
need_root "network namespaces and tc for $name"
need_cmd jq jq
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
fail=0
bad() { echo "FAIL $name: $*"; fail=1; }
if [ "$dir" = download ]; then
	rates=(--down-rate 10mbit --down-buffer 80) before=1 after=2 short=down
else
	rates=(--up-rate 10mbit --up-buffer 80) before=2 after=3 short=up
fi
rc=0
timeout 90 "$bindir/bloatmeter" lab --hops 3 --bottleneck-hop 2 "${rates[@]}" --idle 3 -t 8 \
	--phases "idle,$dir" --per-hop "$mode" --json "$out/r.json" > "$out/r.txt" 2>&1 || rc=$?
cat "$out/r.txt"
[ $rc -eq 0 ] || { echo "FAIL $name: bloatmeter lab exited $rc"; exit 1; }
r=$out/r.json
jq -c '.lab.truth | {hop, hops, bottleneck_hop}' "$r"
jq -c '.hops[] | {hop, address, idle_rtt_ms, inc: .phases["'"$dir"'"].increase_ms}' "$r"
jq -c '.queue_location' "$r"
[ "$(jq -r '.lab.truth.hops' "$r")" = 3 ] || bad "truth: hops is not 3"
[ "$(jq -r '.lab.truth.bottleneck_hop' "$r")" = 2 ] || bad "truth: bottleneck_hop is not 2"
jq -r '.lab.truth.hop' "$r" | grep -q "^router at hop 2 of 3:" || bad "truth.hop does not name hop 2 of 3"
[ "$(jq '.hops | length' "$r")" = 4 ] || bad "expected 4 hops (3 routers and the server)"
[ "$(jq -r '.hops[3].address' "$r")" = 198.18.4.2 ] || bad "hop 4 is not the server 198.18.4.2"
[ "$(jq -r '.queue_location.phase' "$r")" = "$dir" ] || bad "the verdict is not about the $dir phase"
[ "$(jq -r '.queue_location.after_hop' "$r")" = $before ] ||
	bad "the queue is not placed after hop $before"
jq -r '.queue_location.verdict' "$r" |
	grep -qF "between hop $before (198.18.$before.$([ $before = 1 ] && echo 1 || echo 2)) and hop $after (198.18.$after.2)" ||
	bad "the verdict sentence does not name the link between hop $before and hop $after"
inc_before=$(jq -r ".hops[$((before - 1))].phases[\"$dir\"].increase_ms" "$r")
inc_after=$(jq -r ".hops[$((after - 1))].phases[\"$dir\"].increase_ms" "$r")
awk -v a="$inc_after" 'BEGIN { exit !(a >= 50) }' || bad "hop $after rose only $inc_after ms (buffer 80 ms)"
awk -v a="$inc_before" 'BEGIN { exit !(a < 10) }' || bad "hop $before rose $inc_before ms: it is before the queue"
ms=$(jq -r ".buffer.$dir.ms" "$r") truth=$(jq -r ".lab.truth.${short}_buffer_ms" "$r")
awk -v m="$ms" -v t="$truth" 'BEGIN { e = (m - t) / t * 100; printf "buffer %s: %.2f ms for %.2f (%+.1f %%)\n", "'"$dir"'", m, t, e; exit !(e > -10 && e < 10) }' ||
	bad "the $dir buffer is not within 10 % of the truth"
[ $fail = 0 ] && echo "ok   $name"
exit $fail
