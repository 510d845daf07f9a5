#!/usr/bin/env bash
# A path that drops UDP only, in two network namespaces this test makes (a veth pair, nftables
# in the client's namespace dropping UDP both ways from the start; TCP passes). With only the
# UDP probe asked for (--probes udp), the client must notice in the idle phase that no probe
# came back while the control connection works, carry on with the in-flow TCP probes on the
# load flows for the loaded phases, and finish: exit 0, status complete, probes.udp_blocked
# true, the warning in the JSON and the text, in-flow latencies in the download and upload
# phases and as those phases' RTT, valid against the schema, and no end by the liveness rule.
# A second, shorter run adds the TCP connect probe: the idle phase's RTT, and so a latency
# increase, come from it. A third starts with UDP open and blocks it mid-download.
# Usage: check_udpblock.sh BINDIR SCHEMA
set -uo pipefail
. "$(dirname "$0")/netns_drill.sh"
drill_out_dir || exit 1 # the client writes as nobody (-Z)
c=bmub-c$$
s=bmub-s$$

netns_veth "$c" "$s" 10.77.2.1/24 10.77.2.2/24 ||
	{ echo "FAIL udpblock: cannot set up the namespaces"; exit 1; }
ip netns exec "$c" nft -f - << 'NFT' || { echo "FAIL udpblock: cannot load the nftables rules"; exit 1; }
table inet udpblock {
	chain in { type filter hook input priority 0; meta l4proto udp drop; }
	chain out { type filter hook output priority 0; meta l4proto udp drop; }
}
NFT
netns_start_daemon "$s" 10.77.2.2 4751
start=$(date +%s)
ip netns exec "$c" "$bindir/bloatmeter" -p 4751 --idle 3 -t 6 --gap 1 -P 2 --phases idle,download,upload \
	--probes udp --json "$work/out/r.json" 10.77.2.2 > "$work/out.txt" 2> "$work/err.txt"
rc=$?
took=$(($(date +%s) - start))
cat "$work/err.txt"
r=$work/out/r.json
jq -c '{status, error, udp_blocked: .probes.udp_blocked, warnings,
	kinds: [.probe_kinds[] | {kind, samples, answered: [.phases[] | {name, answered, p50: .rtt_ms.p50}]}]}' "$r"
check "udpblock: exit 0 (complete) after the whole schedule ($took s of 17)" \
	eval '[ "$rc" = 0 ] && [ "$took" -ge 16 ]'
check "udpblock: status complete, probes.udp_blocked true" \
	jq -e '.status == "complete" and .probes.udp_blocked == true and .probes.received == 0' "$r"
check "udpblock: the JSON warns that UDP looks blocked" \
	jq -e '[.warnings[] | select(test("UDP probes got no reply"))] | length == 1' "$r"
check "udpblock: the text says so" grep -q "UDP probes got no reply" "$work/out.txt"
# (the steady window of a phase can be short: the series' whole-run count is checked)
check "udpblock: in-flow probes ran on the download flows" \
	jq -e '[.probe_kinds[] | select(.kind == "inflow_down") | .samples] | add > 10' "$r"
check "udpblock: in-flow probes ran on the upload flows" \
	jq -e '[.probe_kinds[] | select(.kind == "inflow_up") | .samples] | add > 10' "$r"
check "udpblock: the download and upload phases' RTT comes from them" \
	jq -e '[.phases[] | select(.name == "download" or .name == "upload") | .rtt_ms.p50 | numbers] | length == 2' "$r"
check "udpblock: the report matches the schema" \
	eval 'out=$($py -m jsonschema -i "$r" "$schema" 2>&1) && [ -z "$out" ]'

# With the TCP connect probe too, the idle phase gets its RTT from it, and so the loaded
# phases a latency increase.
ip netns exec "$c" "$bindir/bloatmeter" -p 4751 --idle 2 -t 3 --gap 0 -P 2 --phases idle,download \
	--probes udp,tcp --json "$work/out/t.json" 10.77.2.2 > "$work/t.txt" 2> "$work/t.err"
rc=$?
t=$work/out/t.json
jq -c '{status, udp_blocked: .probes.udp_blocked, phases: [.phases[] | {name, p50: .rtt_ms.p50, inc: .latency_increase_ms}]}' "$t"
check "udpblock with --probes udp,tcp: exit 0, udp_blocked" \
	eval '[ "$rc" = 0 ] && jq -e ".status == \"complete\" and .probes.udp_blocked == true" "$t" > /dev/null'
check "udpblock with --probes udp,tcp: idle RTT from TCP connects, a latency increase under load" \
	jq -e '(.phases[0].rtt_ms.p50 | numbers) and (.phases[1].latency_increase_ms | numbers)' "$t"

# A path that starts dropping UDP mid-run: UDP answers through the idle phase and into the
# download phase, then the same rules go in (about 2 s into the download). The client must see
# UDP fall silent while TCP still works, say when and in which phase, and run the upload phase
# on in-flow probes: exit 0, complete, udp_blocked with its time, the upload phase's RTT.
ip netns exec "$c" nft delete table inet udpblock || { echo "FAIL udpblock: cannot lift the rules"; exit 1; }
ip netns exec "$c" "$bindir/bloatmeter" -p 4751 --idle 3 -t 6 --gap 1 -P 2 --phases idle,download,upload \
	--probes udp --json "$work/out/l.json" 10.77.2.2 > "$work/l.txt" 2> "$work/l.err" &
cpid=$!
sleep 6
ip netns exec "$c" nft -f - << 'NFT' || { echo "FAIL udpblock: cannot load the nftables rules"; exit 1; }
table inet udpblock {
	chain in { type filter hook input priority 0; meta l4proto udp drop; }
	chain out { type filter hook output priority 0; meta l4proto udp drop; }
}
NFT
wait "$cpid"
rc=$?
cat "$work/l.err"
l=$work/out/l.json
jq -c '{status, error, udp_blocked: .probes.udp_blocked, at: .probes.udp_blocked_at_s, received: .probes.received,
	warnings, phases: [.phases[] | {name, start_s, p50: .rtt_ms.p50}]}' "$l"
check "udpblock later: exit 0, status complete, probes.udp_blocked true" \
	eval '[ "$rc" = 0 ] && jq -e ".status == \"complete\" and .probes.udp_blocked == true and .probes.received > 100" "$l" > /dev/null'
check "udpblock later: udp_blocked_at_s is in the download phase, before the rules went in (~6 s)" \
	jq -e '. as $r | .probes.udp_blocked_at_s | numbers | . >= ($r.phases[] | select(.name == "download") | .start_s) and . <= 6.5' "$l"
check "udpblock later: the warning says UDP stopped in the download phase" \
	jq -e '[.warnings[] | select(test("UDP probes stopped getting replies .* \\(the download phase\\)"))] | length == 1' "$l"
check "udpblock later: the text says so" grep -q "UDP probes stopped getting replies" "$work/l.txt"
check "udpblock later: in-flow probes ran on the upload flows, and the upload phase's RTT comes from them" \
	jq -e '([.probe_kinds[] | select(.kind == "inflow_up") | .samples] | add > 10) and
		(.phases[] | select(.name == "upload") | .rtt_ms.p50 | numbers)' "$l"
check "udpblock later: the report matches the schema" \
	eval 'out=$($py -m jsonschema -i "$l" "$schema" 2>&1) && [ -z "$out" ]'
[ "$fail" = 0 ] && echo "PASS udpblock" || echo "FAIL udpblock"
exit "$fail"
