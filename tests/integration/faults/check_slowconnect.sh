#!/usr/bin/env bash
# A load flow whose SYN is lost (nftables in a client namespace drops the first SYN that the
# download phase sends; the kernel resends it after its 1 s initial RTO). The other flows must
# not wait for it: bytes arrive within 0.5 s of the phase start, the late flow joins, and the
# run completes. A client that connects the phase's flows one poll at a time, with its loop
# stopped, starts no flow before the lost SYN's retransmission.
# Usage: check_slowconnect.sh BINDIR SCHEMA
set -uo pipefail
. "$(dirname "$0")/netns_drill.sh"
drill_out_dir || exit 1 # the client writes as nobody (-Z)
c=bmsc-c$$
s=bmsc-s$$

netns_veth "$c" "$s" 10.77.3.1/24 10.77.3.2/24 ||
	{ echo "FAIL slowconnect: cannot set up the namespaces"; exit 1; }
netns_start_daemon "$s" 10.77.3.2 4752
# Only the UDP probe: the TCP connect probe would send SYNs to the same port.
ip netns exec "$c" "$bindir/bloatmeter" -p 4752 --idle 2 -t 4 --gap 0 -P 4 --phases idle,download \
	--probes udp --json "$work/out/r.json" 10.77.3.2 > "$work/out.txt" 2> "$work/err.txt" &
client=$!
pids+=("$client")
sleep 1 # the control connection is up: the next SYN is a load flow's
ip netns exec "$c" nft -f - << 'NFT' || { echo "FAIL slowconnect: cannot load the nftables rule"; exit 1; }
table inet slowconnect {
	chain out {
		type filter hook output priority 0;
		tcp dport 4752 tcp flags & (syn | ack) == syn numgen inc mod 1000 == 0 counter drop
	}
}
NFT
wait "$client"
rc=$?
cat "$work/err.txt"
r=$work/out/r.json
dropped=$(ip netns exec "$c" nft list table inet slowconnect | grep -o 'packets [0-9]*' | head -1)
start=$(jq '.phases[] | select(.name == "download") | .start_s' "$r")
first=$(jq --argjson s "$start" '[.samples.throughput.down[] | select(.[0] >= $s and .[1] > 0) | .[0]] | first - $s' "$r")
jq -c '{status, error, download: [.phases[] | select(.name == "download") | {start_s, flows}]}' "$r"
echo "SYNs dropped: $dropped; first download bytes $first s after the phase start"
check "slowconnect: exactly one SYN was dropped" [ "$dropped" = "packets 1" ]
check "slowconnect: exit 0, status complete" \
	eval '[ "$rc" = 0 ] && jq -e ".status == \"complete\"" "$r" > /dev/null'
check "slowconnect: bytes within 0.5 s of the phase start, not after the lost SYN's 1 s RTO" \
	awk -v f="$first" 'BEGIN { exit !(f != "null" && f < 0.5) }'
check "slowconnect: the late flow joined: 4 download flows" \
	jq -e '.phases[] | select(.name == "download") | .flows.down == 4' "$r"
check "slowconnect: the report matches the schema" \
	eval 'out=$($py -m jsonschema -i "$r" "$schema" 2>&1) && [ -z "$out" ]'
[ $fail -eq 0 ] && echo "PASS slowconnect"
exit $fail
