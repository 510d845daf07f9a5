#!/usr/bin/env bash
# The queue verdict (queue.download/upload, client/analysis/queueverdict.c) on each userspace
# bottleneck the lab emulates (--qdisc on TUN devices, 20 Mbit/s each way):
#   fifo:    100 ms tail-drop FIFO  → fifo both ways, its buffer (top_ms) within 10 % of 100 ms;
#   codel:   CoDel, 200 ms limit    → aqm both ways, the standing queue under 20 ms (CoDel's
#            target is 5 ms, RFC 8289) — far below the limit — and within 1 ms of the median
#            sojourn the forwarder itself logged (lab.truth.sojourn); with 8 flows and no path
#            delay it stands near 12 ms, not 5 (lab_codel.sh, docs/lab.md);
#   fqcodel: FQ-CoDel, 200 ms limit → fq both ways: the probes' standing queue under 3 ms;
#   pie:     PIE, 200 ms limit      → aqm both ways, the standing queue within 15 ± 8 ms (PIE's
#            target delay, RFC 8033);
#   ecn:     CoDel with --ecn-mark, the client's --ecn → every load flow negotiates ECN, the
#            path marks: CE marks both ways, almost no retransmissions (at most 20, or 1 % of
#            the marks), aqm both ways;
#   ecn-drops: CoDel without marking, the client's --ecn → the flows negotiate ECN but the
#            path drops: no CE mark, retransmissions;
#   policer: the kernel's tbf with a queue of two full frames (1.5 ms at 20 Mbit/s) and its
#            4 ms burst: a token bucket that drops what exceeds its rate and burst instead of
#            queueing it, as a policer does (this kernel has no police action) → policer both
#            ways: losses (retransmissions) with a queueing p95 under 5 ms;
#   codel-delay: CoDel, 200 ms limit, --delay 50 (100 ms of path RTT) → never fifo (aqm, or
#            unknown: with CoDel's interval as RTT it drops near its sawtooth's peaks, above the
#            standing queue), and the verdict's queue before loss no higher than 1.2 × its top:
#            slow start overshoots to the byte limit (CoDel drops at dequeue, one per interval at
#            first, so the tail drops) and those losses at ~200 ms must not count against the
#            steady window's top (they read "tail-drop FIFO, 9 ms" in CI). Label unreliable:
#            about 1 direction in 8 still reads fifo here, its steady-window losses at 90 % of
#            the top (design.md, branch wt-verdict).
# The metrics, the HTML queue section and the text and HTML truth lines must agree (qdisc, ECN
# marking). Each case demands its own verdict, so a classifier that said aqm for the FIFO, or fifo for
# CoDel, fails here. The verdicts are classification checks (CPU steal does not void them); the
# figures are accuracy checks (steal.sh).
#   lab_queue.sh BINDIR fifo|codel|fqcodel|pie|ecn|ecn-drops|codel-delay|policer
set -euo pipefail
bindir=$1 kind=$2
. "$(dirname "$0")/tunlab.sh"
# between V LO HI: V is a number within [LO, HI] (null is not).
between() { awk -v v="$1" -v l="$2" -v h="$3" 'BEGIN { exit !(v != "null" && v != "" && v >= l && v <= h) }'; }

qdisc=$kind extra=()
case $kind in
fifo) buf=100 want=fifo ;;
codel | pie) buf=200 want=aqm ;;
fqcodel) buf=200 want=fq ;;
ecn) buf=200 want=aqm qdisc=codel extra=(--ecn-mark --ecn) ;;
ecn-drops) buf=200 want=aqm qdisc=codel extra=(--ecn) ;;
codel-delay) buf=200 want=aqm qdisc=codel extra=(--delay 50) ;;
policer) buf=1.5 want=policer qdisc=tbf ;;
*) echo "usage: lab_queue.sh BINDIR fifo|codel|fqcodel|pie|ecn|ecn-drops|codel-delay|policer"; exit 2 ;;
esac
steal0=$(steal_read)
rc=0
"$bindir/bloatmeter" lab --down-rate 20mbit --up-rate 20mbit --qdisc "$qdisc" "${extra[@]}" \
	--down-buffer $buf --up-buffer $buf --phases idle,download,upload --json "$r" -v \
	--prometheus "$out/m.prom" --html "$out/r.html" > "$out/report.txt" &
pid=$!
wait $pid || rc=$?
steal=$(steal_pct "$steal0" "$(steal_read)")
cat "$out/report.txt"
[ $rc -eq 0 ] || { echo "FAIL queue $kind: bloatmeter lab exited $rc"; exit 1; }
/usr/bin/python3 -m jsonschema -i "$r" "$(dirname "$0")/../../docs/report.schema.json" ||
	{ echo "FAIL queue $kind: report does not match docs/report.schema.json"; fail=1; }
check "truth names the qdisc $qdisc" "jq -e '.lab.truth.qdisc == \"$qdisc\"' '$r' > /dev/null"
jq -c '.queue, .ecn' "$r"
for dir in download upload; do
	v=$(jq -r ".queue.$dir.verdict" "$r")
	standing=$(jq ".queue.$dir.standing_ms" "$r") top=$(jq ".queue.$dir.top_ms" "$r")
	if [ "$kind" = codel-delay ]; then
		qb=$(jq ".queue.$dir.q_before_loss_ms" "$r")
		check "$dir queue verdict '$v' is not fifo ($(jq -r ".queue.$dir.evidence" "$r"))" \
			"[ '$v' = aqm ] || [ '$v' = unknown ]"
		check "$dir verdict's queue before loss $qb ms ≤ 1.2 × its top $top ms (no slow start)" \
			"[ '$qb' = null ] || awk -v q='$qb' -v t='$top' 'BEGIN { exit !(t != \"null\" && q <= 1.2 * t) }'"
	else
		check "$dir queue verdict '$v' is '$want' ($(jq -r ".queue.$dir.evidence" "$r"))" \
			"[ '$v' = '$want' ]"
	fi
	case $kind in
	fifo) accuracy "$dir FIFO buffer $top ms within 10 % of 100 ms" "between '$top' 90 110" ;;
	codel)
		accuracy "$dir CoDel standing queue $standing ms under 20 ms (limit 200 ms)" \
			"between '$standing' 0 20"
		d=$([ $dir = download ] && echo down || echo up)
		fwd=$(jq "[.lab.truth.sojourn[]? | select(.phase == \"$dir\") | .$d.p50_ms][0]" "$r")
		accuracy "$dir standing queue $standing ms within 1 ms of the forwarder's median sojourn $fwd ms" \
			"near '$standing' '$fwd' 1"
		;;
	fqcodel) accuracy "$dir FQ-CoDel: the probes' standing queue $standing ms under 3 ms" \
		"between '$standing' 0 3" ;;
	pie) accuracy "$dir PIE standing queue $standing ms within 15 ± 8 ms" \
		"between '$standing' 7 23" ;;
	esac
done
case $kind in
ecn | ecn-drops)
	flows=$(jq '.ecn.flows' "$r") flows_ecn=$(jq '.ecn.flows_ecn' "$r") ev=$(jq -r '.ecn.verdict' "$r")
	ce_down=$(jq '.ecn.ce_down' "$r") ce_up=$(jq '.ecn.ce_up' "$r") rt=$(jq '.ecn.retransmissions' "$r")
	check "ECN enabled in the lab's client namespace ($(jq -r .ecn.how "$r"))" \
		"jq -e '.ecn.enabled == true' '$r' > /dev/null"
	check "all $flows load flows negotiated ECN ($flows_ecn)" "[ '$flows' != null ] && [ '$flows' -gt 0 ] && [ '$flows' = '$flows_ecn' ]"
	;;
esac
case $kind in
ecn)
	check "ECN verdict '$ev' is 'marks' ($(jq -r .ecn.evidence "$r"))" "[ '$ev' = marks ]"
	check "CE marks both ways: $ce_down down, $ce_up up" "[ '$ce_down' != null ] && [ '$ce_up' != null ] && [ '$ce_down' -gt 0 ] && [ '$ce_up' -gt 0 ]"
	check "near-zero retransmissions: $rt (at most 20 or 1 % of the marks)" \
		"awk -v r='$rt' -v d='$ce_down' -v u='$ce_up' 'BEGIN { exit !(r != \"null\" && (r <= 20 || r <= (d + u) / 100)) }'"
	check "the verdict block says the path marks" "grep -q '^ECN .*marks (CE) instead of dropping' '$out/report.txt'"
	;;
ecn-drops)
	check "ECN verdict '$ev' is 'drops' ($(jq -r .ecn.evidence "$r"))" "[ '$ev' = drops ]"
	check "no CE marks: $ce_down down, $ce_up up" "[ '$ce_down' = 0 ] && [ '$ce_up' = 0 ]"
	check "the verdict block says the path drops" "grep -q '^ECN .*drops instead of marking' '$out/report.txt'"
	;;
esac
check "the verdict block has the Queue line" "grep -q '^Queue ' '$out/report.txt'"
# The other outputs say the same: the metrics' queue verdict, the HTML queue section, and the
# truth lines of text and HTML name the emulated queue (not "one tbf per direction").
for d in down up; do
	w=$want
	[ "$kind" = codel-delay ] && w=$(jq -r ".queue.${d}load.verdict" "$r")
	check "metrics: queue verdict $d is $w" \
		"grep -q '^bloatmeter_queue_verdict{.*,direction=\"$d\",verdict=\"$w\"} 1\$' '$out/m.prom'"
	check "HTML: the queue section's ${d}link verdict is $w" \
		"grep -q '<tr data-direction=\"${d}link\"><td class=\"l\">${d}link</td><td class=\"l qverdict\">$w</td>' '$out/r.html'"
done
mark=off
[ "$kind" = ecn ] && mark=on
[ "$kind" = fifo ] || [ "$kind" = policer ] && mark=
phrase="$qdisc ("
[ "$kind" = fifo ] || [ "$kind" = policer ] && phrase="$qdisc per direction"
check "text: the Lab truth line names the queue '$phrase'${mark:+ and ECN marking $mark}" \
	"tr -s ' \n' ' ' < '$out/report.txt' | grep -qF 'Lab truth queue $phrase' &&
	 { [ -z '$mark' ] || tr -s ' \n' ' ' < '$out/report.txt' | grep -qF 'ECN marking $mark'; }"
if [ "$qdisc" = tbf ]; then
	check "text -v: the ground truth table names the tbf" \
		"tr -s ' \n' ' ' < '$out/report.txt' | grep -qF 'bottleneck $phrase'"
else
	check "text -v: the ground truth table names the queue, not a tbf" \
		"tr -s ' \n' ' ' < '$out/report.txt' | grep -qF 'bottleneck $phrase' && ! grep -q tbf '$out/report.txt'"
fi
check "HTML: the lab section names the queue" \
	"grep -qF '<p class=\"lab-queue\">Bottleneck: $phrase' '$out/r.html'"
leftover=$(ip netns list | grep -c "^bm$pid-" || true)
check "no lab namespaces left" "[ '$leftover' -eq 0 ]"
steal_verdict "queue $kind" "$fail" "$accuracy_fail" "$steal" || exit 1
echo "PASS queue $kind"
