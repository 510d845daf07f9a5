#!/usr/bin/env bash
# The userspace bottleneck (--qdisc on TUN devices) with the real binaries, checked against
# the configured truth and, for CoDel, against RFC 8289's expectation — never against earlier
# output:
#   fifo:  20 Mbit/s, 100 ms tail-drop FIFO each way: the buffer estimates (ms and bytes) within
#          3 % of the configured buffer, and the IP-level goodput within 3 % of the rate (the
#          TUN counts IP bytes, no link header);
#   codel: 20 Mbit/s, 200 ms limit, CoDel: under load the queue stands near CoDel's 5 ms target
#          (RFC 8289 section 4.4), not at the limit: the download's latency increase (RTT p50
#          over idle) under 30 ms;
#   delay: --delay 20 on a FIFO: the idle RTT (p50) is 2 × 20 ms within 1 ms.
# Only the accuracy checks may be voided by CPU steal (steal.sh).
#   lab_tun.sh BINDIR fifo|codel|delay
set -euo pipefail
bindir=$1 kind=$2
. "$(dirname "$0")/tunlab.sh"
# within GOT WANT TOL_PCT: whether GOT is within TOL_PCT % of WANT (a missing GOT is not).
within() { awk -v g="$1" -v w="$2" -v t="$3" 'BEGIN { if (g == "null" || g == "") exit 1; e = (g - w) / w * 100; exit !(e <= t && e >= -t) }'; }

case $kind in
fifo) args=(--qdisc fifo --down-buffer 100 --up-buffer 100 --phases idle,download,upload) ;;
codel) args=(--qdisc codel --down-buffer 200 --up-buffer 200 --phases idle,download) ;;
delay) args=(--qdisc fifo --delay 20 --phases idle --idle 5) ;;
*) echo "usage: lab_tun.sh BINDIR fifo|codel|delay"; exit 2 ;;
esac
steal0=$(steal_read)
rc=0
"$bindir/bloatmeter" lab --down-rate 20mbit --up-rate 20mbit "${args[@]}" --json "$r" \
	> "$out/report.txt" &
pid=$!
wait $pid || rc=$?
steal=$(steal_pct "$steal0" "$(steal_read)")
cat "$out/report.txt"
[ $rc -eq 0 ] || { echo "FAIL tun $kind: bloatmeter lab exited $rc"; exit 1; }
/usr/bin/python3 -m jsonschema -i "$r" "$(dirname "$0")/../../docs/report.schema.json" ||
	{ echo "FAIL tun $kind: report does not match docs/report.schema.json"; fail=1; }
jq -c '.lab.truth | {qdisc, hop, ecn_mark, delay_ms, qdisc_params}' "$r"
want_qdisc=$([ "$kind" = codel ] && echo codel || echo fifo)
check "truth names the qdisc $want_qdisc and the TUN hop" \
	"jq -e '.lab.truth.qdisc == \"$want_qdisc\" and (.lab.truth.hop | test(\"tun-down\"))' '$r' > /dev/null"

case $kind in
fifo)
	for d in down up; do
		dir=$([ $d = down ] && echo download || echo upload)
		ms=$(jq ".buffer.$dir.ms" "$r") bytes=$(jq ".buffer.$dir.bytes" "$r")
		truth_ms=$(jq ".lab.truth.${d}_buffer_ms" "$r") limit=$(jq ".lab.truth.${d}_limit_bytes" "$r")
		ipr=$(jq ".phases[] | select(.name == \"$dir\") | .throughput_mbps.$d * 1e6 * $(jq .ip_overhead "$r")" "$r")
		accuracy "$dir buffer $ms ms within 3 % of $truth_ms ms" "within '$ms' '$truth_ms' 3"
		accuracy "$dir buffer $bytes bytes within 3 % of $limit bytes" "within '$bytes' '$limit' 3"
		accuracy "$dir IP-level goodput $ipr bit/s within 3 % of 20 Mbit/s" "within '$ipr' 20000000 3"
	done
	;;
codel)
	inc=$(jq '.phases[] | select(.name == "download") | .latency_increase_ms' "$r")
	limit_ms=$(jq '.lab.truth.down_buffer_ms' "$r")
	accuracy "CoDel download latency increase $inc ms < 30 ms (target 5 ms; limit $limit_ms ms)" \
		"awk -v i='$inc' 'BEGIN { exit !(i != \"null\" && i < 30) }'"
	;;
delay)
	p50=$(jq '.phases[0].rtt_ms.p50' "$r")
	accuracy "idle RTT p50 $p50 ms is 2 × 20 ms within 1 ms" \
		"awk -v p='$p50' 'BEGIN { exit !(p != \"null\" && p >= 39 && p <= 41) }'"
	;;
esac
leftover=$(ip netns list | grep -c "^bm$pid-" || true)
check "no lab namespaces left" "[ '$leftover' -eq 0 ]"
steal_verdict "tun $kind" "$fail" "$accuracy_fail" "$steal" || exit 1
echo "PASS tun $kind"
