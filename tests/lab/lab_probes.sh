#!/usr/bin/env bash
# Every probe kind under load in one lab run, on an asymmetric bottleneck with a small uplink
# buffer and a large downlink buffer:
#  - each kind (UDP, ICMP to the server and the first hop, DNS, new TCP connections, in-flow,
#    passive capture) has answers in every loaded phase where it applies;
#  - one-way delays attribute each configured buffer to its direction within 10 %, also in
#    the bidirectional phase, where RTT alone cannot separate the two queues;
#  - RPM is reported for each loaded phase; the ICMP first-hop check finds the queue at the
#    first hop (the lab's router holds it);
#  - `bloatmeter analyze` on the capture of that run reports TCP retransmissions (tail drop).
# CPU steal (steal.sh) may void only the buffer error bounds; every other check counts.
#   lab_probes.sh BINDIR
set -euo pipefail
bindir=$1
name=lab_probes
. "$(dirname "$0")/../lib/require.sh"
need_root "network namespaces, tc and packet capture for $name"
need_cmd jq jq ip iproute2 tc iproute2
need_py_module /usr/bin/python3 jsonschema python3-jsonschema
. "$(dirname "$0")/steal.sh"
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
fail=0
steal0=$(steal_read)
down_buf=100 up_buf=50
rc=0
"$bindir/bloatmeter" lab --down-rate 20mbit --up-rate 10mbit --down-buffer $down_buf \
	--up-buffer $up_buf --probes udp,icmp,dns,tcp,inflow,pcap --pcap-file "$out/run.pcap" \
	--json "$out/report.json" > "$out/report.txt" || rc=$?
steal=$(steal_pct "$steal0" "$(steal_read)")
cat "$out/report.txt"
if [ $rc -ne 0 ]; then
	echo "FAIL $name: bloatmeter lab exited $rc"
	exit 1
fi
r="$out/report.json"
bad() { echo "FAIL $name: $*"; fail=1; }

# check LABEL MEASURED TRUTH TOLERANCE_PCT: an accuracy check (a missing value is not one).
check() {
	local label=$1 got=$2 want=$3 tol=$4
	if [ "$got" = "null" ] || [ -z "$got" ]; then
		bad "$label: no value (truth $want)"
		return
	fi
	awk -v g="$got" -v w="$want" -v t="$tol" -v l="$label" 'BEGIN { e = (g - w) / w * 100;
		printf "%-40s measured %9.3f  truth %9.3f  error %+6.2f %% (bound %s %%)\n", l, g, w, e, t;
		exit !(e <= t && e >= -t) }' || accuracy_fail "$name: $label outside ±$tol %"
}

schema=$(dirname "$0")/../../docs/report.schema.json
/usr/bin/python3 -m jsonschema -i "$r" "$schema" || bad "report does not match the schema"

# answered KIND PHASE: the kind got answers in that phase.
answered() {
	local n
	n=$(jq --arg k "$1" --arg p "$2" \
		'[.probe_kinds[] | select(.kind == $k) | .phases[] | select(.name == $p) | .answered][0] // 0' "$r")
	printf '%-14s %-14s answered %s\n' "$1" "$2" "$n"
	[ "$n" -gt 0 ] || bad "$1 had no answers in the $2 phase"
}
for p in idle download upload bidirectional; do
	for k in icmp icmp_hop dns tcp_connect; do answered $k $p; done
done
for p in download bidirectional; do answered inflow_down $p; answered pcap_rtt_down $p; done
for p in upload bidirectional; do answered inflow_up $p; answered pcap_rtt_up $p; done

for d in download upload bidirectional; do
	jq -e --arg p $d '.phases[] | select(.name == $p) | .rpm.rpm > 0' "$r" > /dev/null ||
		bad "no RPM for the $d phase"
done
check "buffer download (ms, download phase)" "$(jq '.buffer.download.ms' "$r")" $down_buf 10
check "buffer upload (ms, upload phase)" "$(jq '.buffer.upload.ms' "$r")" $up_buf 10
check "buffer down (ms, bidirectional, OWD)" "$(jq '.buffer.bidirectional.down.ms' "$r")" $down_buf 10
check "buffer up (ms, bidirectional, OWD)" "$(jq '.buffer.bidirectional.up.ms' "$r")" $up_buf 10
verdict=$(jq -r '.icmp_checks.first_hop.verdict' "$r")
echo "ICMP first hop: $verdict"
[ "$verdict" = "queue at or before the first hop" ] || bad "first-hop check says: $verdict"

[ -s "$out/run.pcap" ] || bad "no capture file"
"$bindir/bloatmeter" analyze -J "$out/run.pcap" > "$out/analyze.json" || bad "bloatmeter analyze failed"
jq -c . "$out/analyze.json" | cut -c1-600
retrans=$(jq '[.. | objects | .retransmissions? // empty | numbers] | add // 0' "$out/analyze.json")
echo "retransmissions in the capture: $retrans"
[ "$retrans" -gt 0 ] || bad "analyze found no retransmissions under tail drop"
steal_verdict "$name" "$fail" "$accuracy_fail" "$steal" || exit 1
echo "PASS $name"
