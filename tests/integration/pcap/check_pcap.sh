#!/usr/bin/env bash
# Live capture end to end: bloatmeterd in namespace -a, the real client in namespace -b over
# a veth pair whose two ends each have a 20 Mbit/s tbf with a 40 kB limit (tail drops, so
# both directions retransmit). probes/pcap.c captures the client's interface through
# pcap_check and saves the file; `analyze` on that file must show the load flows, their data,
# retransmissions both ways and passive RTT samples with a latency increase from the queue.
# Before the load, 200 probe-format datagrams to an echo check that capture times of probes
# sit within 1 ms of their socket times (pa_probe_wire). Keeps BINDIR/pcap_live.pcap.
# Usage: check_pcap.sh BINDIR  (root; exit 77 = skipped when not root)
set -uo pipefail
bindir=$(cd "$1" && pwd) || exit 1
. "$(dirname "$0")/../../lib/require.sh"
need_root "network namespaces and packet capture for pcap_live"
need_cmd ip iproute2 tc iproute2 jq jq
a=bmt-pcap-$$-a b=bmt-pcap-$$-b
srv=198.18.200.1 cli=198.18.200.2
tmp=$(mktemp -d)
dpid= epid=
cleanup() {
	[ -n "$dpid" ] && kill "$dpid" 2> /dev/null
	[ -n "$epid" ] && kill "$epid" 2> /dev/null
	wait 2> /dev/null
	ip netns del $a 2> /dev/null
	ip netns del $b 2> /dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT
fail=0
ok() { echo "ok   $*"; }
bad() { echo "FAIL: $*"; fail=1; }

ip netns add $a && ip netns add $b || { echo "FAIL: cannot create network namespaces as root"; exit 1; }
ip -n $a link set lo up
ip -n $b link set lo up
ip -n $a link add va type veth peer name vb netns $b || exit 1
ip -n $a addr add $srv/24 dev va && ip -n $b addr add $cli/24 dev vb || exit 1
ip -n $a link set va up && ip -n $b link set vb up || exit 1
# The sender side of each direction: the server's end queues downloads, the client's uploads.
tc -n $a qdisc add dev va root tbf rate 20mbit burst 8kb limit 40kb || exit 1
tc -n $b qdisc add dev vb root tbf rate 20mbit burst 8kb limit 40kb || exit 1

# Probe wire times against socket times at idle: an echo in -a, 200 probes from -b.
ip netns exec $a "$bindir/pcap_check" echo 4760 &
epid=$!
sleep 0.3
if ip netns exec $b "$bindir/pcap_check" wire vb $srv 4760 200 > "$tmp/wire.txt"; then
	cat "$tmp/wire.txt"
	# send() to the wire and wire to the socket stamp take microseconds, not milliseconds
	if awk '{ for (i = 1; i <= NF; i++) if ($i == "p50" || $i == "p99") { v = $(i + 1) + 0; if (v < -1000 || v > 1000) bad = 1 } } END { exit bad }' "$tmp/wire.txt"; then
		ok "probe wire times within 1 ms of the socket times"
	else
		bad "probe wire times are off by more than 1 ms"
	fi
else
	bad "pcap_check wire failed"
fi
kill $epid 2> /dev/null
wait $epid 2> /dev/null
epid=

ip netns exec $a "$bindir/bloatmeterd" --allow-root yes -p 4750 2> "$tmp/daemon.log" &
dpid=$!
sleep 0.5

if ip netns exec $b "$bindir/pcap_check" capture vb $srv 4750 "$tmp/cap.pcap" -- \
	"$bindir/bloatmeter" -q --phases idle,download,upload -t 3 --idle 1 --gap 1 -P 4 $srv \
	> "$tmp/live.txt" 2> "$tmp/live.err"; then
	ok "live capture while bloatmeter ran (exit 0)"
else
	bad "pcap_check or bloatmeter failed: $(tail -3 "$tmp/live.err")"
	cat "$tmp/daemon.log"
	exit 1
fi
cat "$tmp/live.txt"
grep -v '^$' "$tmp/live.err" | sed 's/^/     /'

# `bloatmeter analyze` when the CLI dispatches it, else the same analyze_main in pcap_check.
if "$bindir/bloatmeter" analyze -h 2> /dev/null | grep -q "bloatmeter analyze"; then
	analyze=("$bindir/bloatmeter" analyze)
else
	analyze=("$bindir/pcap_check" analyze)
fi
cp "$tmp/cap.pcap" "$bindir/pcap_live.pcap" 2> /dev/null && echo "     kept $bindir/pcap_live.pcap"
"${analyze[@]}" "$tmp/cap.pcap" || bad "analyze (text) exited $?"
"${analyze[@]}" -J "$tmp/cap.pcap" > "$tmp/a.json" || bad "analyze -J exited $?"

check() { # check LABEL JQ-EXPRESSION
	if jq -e "$2" "$tmp/a.json" > /dev/null; then ok "$1"; else bad "$1 ($2)"; fi
}
jq -c '{packets, tcp_flows, up: {flows: .up.flows, mbit: .up.throughput_mbps, retrans: .up.retransmissions, rtt: .up.rtt_ms}, down: {flows: .down.flows, mbit: .down.throughput_mbps, retrans: .down.retransmissions, rtt: .down.rtt_ms}}' "$tmp/a.json"
check "link type EN10MB" '.link_type == "EN10MB"'
check "9 or more TCP flows (control + 4 down + 4 up)" '.tcp_flows >= 9'
check "4 download and 4 upload bulk flows" '.down.flows == 4 and .up.flows == 4'
check "more than 2 MB each way" '.down.bytes > 2e6 and .up.bytes > 2e6'
check "download retransmissions > 0 (tail drop)" '.down.retransmissions > 0'
check "upload retransmissions > 0 (tail drop)" '.up.retransmissions > 0'
check "passive RTT samples both ways" '.down.rtt_ms.n > 50 and .up.rtt_ms.n > 50'
# 40 kB at 20 Mbit/s is 16 ms of queue: the load must add several ms above the idle path.
check "latency under load > 4 ms both ways" '.down.rtt_ms.increase > 4 and .up.rtt_ms.increase > 4'
check "probe requests and replies seen" '.probe_requests > 100 and .probe_replies > 100'
check "nothing malformed" '.malformed_packets == 0'
grep -q "^series pcap_rtt_down: [1-9]" "$tmp/live.txt" && grep -q "^series pcap_rtt_up: [1-9]" "$tmp/live.txt" &&
	ok "live series pcap_rtt_down and pcap_rtt_up have samples" || bad "live series are empty"
[ $fail -eq 0 ] && echo "PASS pcap_live"
exit $fail
