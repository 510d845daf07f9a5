#!/usr/bin/env bash
# One lab scenario: runs the real `bloatmeter lab` (which starts the real bloatmeterd) against
# tbf bottlenecks with a configured rate and buffer per direction, then checks the report
# against that configured ground truth — never against earlier output.
#   lab_case.sh BINDIR NAME DOWN_RATE UP_RATE DOWN_BUF_MS UP_BUF_MS [extra bloatmeter args...]
# Tolerances: buffer estimate within LAB_TOL % (default 10) of the configured buffer (ms and
# bytes); goodput within 5 % (LAB_GOODPUT_TOL) of the tbf rate less the probes' reported share
# of the link, after counting the per-packet headers the tbf also counts; the buffer's 95 %
# interval contains the configured buffer. LAB_PROBE_BUDGET=1 also asks every loaded
# direction's probes to stay within 2 % of the link, or the report to say their floor bound.
# What each direction's buffer must be (the accuracy suite in tests/lab/CMakeLists.txt sets it):
#   LAB_EXPECT_DOWN, LAB_EXPECT_UP = point (default): not a lower bound, within ±LAB_TOL %
#                                    (and its 95 % interval holds the truth, unless LAB_CI_CHECK=0);
#                                  = any: either of the two below, whichever the report gives;
#                                  = bound:REASON: a lower bound (lower_bound_reason REASON)
#                                    whose value does not exceed the truth by more than LAB_TOL %
#                                    (the real buffer is above it, as the report claims).
# Only the accuracy checks may be voided by CPU steal (steal.sh); the exit code, keys, schema,
# congestion control, lower-bound flag and reason, -P auto and namespace-leak checks always count.
set -euo pipefail
bindir=$1 name=$2 down_rate=$3 up_rate=$4 down_buf=$5 up_buf=$6
shift 6
. "$(dirname "$0")/../lib/require.sh"
need_root "network namespaces and tc for $name"
need_cmd jq jq ip iproute2 tc iproute2
# Every report must match the published schema.
need_py_module /usr/bin/python3 jsonschema python3-jsonschema
. "$(dirname "$0")/steal.sh"
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
fail=0
steal0=$(steal_read)
"$bindir/bloatmeter" lab --down-rate "$down_rate" --up-rate "$up_rate" \
	--down-buffer "$down_buf" --up-buffer "$up_buf" --json "$out/report.json" "$@" \
	> "$out/report.txt" &
pid=$!
rc=0
wait $pid || rc=$?
steal=$(steal_pct "$steal0" "$(steal_read)")
cat "$out/report.txt"
if [ $rc -ne 0 ]; then
	echo "FAIL $name: bloatmeter lab exited $rc"
	exit 1
fi
r="$out/report.json"

# check LABEL MEASURED TRUTH TOLERANCE_PCT: an accuracy check (a missing value is not one).
check() {
	local label=$1 got=$2 want=$3 tol=$4
	if [ "$got" = "null" ] || [ -z "$got" ]; then
		echo "FAIL $name: $label: no value (truth $want)"
		fail=1
		return
	fi
	if awk -v L="$name: $label" -v g="$got" -v w="$want" -v t="$tol" 'BEGIN { e = (g - w) / w * 100; printf "%-34s measured %12.3f  truth %12.3f  error %+6.2f %% (bound %s %%)\n", L, g, w, e, t; exit !(e <= t && e >= -t) }'; then
		:
	else
		accuracy_fail "$name: $label outside ±$tol %"
	fi
}

# contains LABEL CI_JSON TRUTH: the 95 % interval ({low, high}) must contain the configured
# truth (an accuracy check; a missing interval is not one). Not in the HTTP mode: its queue
# samples are fresh TCP handshakes timed in user space, whose own ~1-2 ms of processing the
# interval of the 1 s maxima does not cover (seen: +2.0 %, interval 100.9-104.1 ms for 100);
# the ±10 % bound on the estimate still holds there.
contains() {
	local label=$1 ci=$2 want=$3 lo hi
	if jq -e '.http != null' "$r" > /dev/null; then
		echo "$name: $label: not checked in the HTTP mode (handshake-timed samples)"
		return
	fi
	if [ "$ci" = "null" ] || [ -z "$ci" ]; then
		echo "FAIL $name: $label: no interval (truth $want)"
		fail=1
		return
	fi
	lo=$(jq '.low' <<< "$ci")
	hi=$(jq '.high' <<< "$ci")
	if ! awk -v L="$name: $label" -v l="$lo" -v h="$hi" -v w="$want" 'BEGIN { c = l <= w && w <= h; printf "%-44s interval %9.3f .. %9.3f  truth %9.3f  %s\n", L, l, h, w, c ? "contains it" : "MISSES it"; exit !c }'; then
		accuracy_fail "$name: $label does not contain the truth"
	fi
}

for key in version server start_time config phases buffer lab; do
	jq -e "has(\"$key\")" "$r" > /dev/null || { echo "FAIL $name: report lacks key $key"; fail=1; }
done
jq -e '.phases | all(has("name") and has("throughput_mbps") and has("rtt_ms") and has("loss_pct"))' "$r" > /dev/null ||
	{ echo "FAIL $name: a phase lacks required keys"; fail=1; }
schema=$(dirname "$0")/../../docs/report.schema.json
/usr/bin/python3 -m jsonschema -i "$r" "$schema" || { echo "FAIL $name: report does not match docs/report.schema.json"; fail=1; }
jq -e '.cc.client.ok and .cc.server.ok' "$r" > /dev/null ||
	{ echo "FAIL $name: congestion control was not set as requested"; fail=1; }

tol=${LAB_TOL:-10}
# buffer_case DIR(download|upload) TRUTH_PREFIX(down|up) EXPECT: the buffer checks of one direction.
buffer_case() {
	local dir=$1 t=$2 expect=$3 lb reason want_ms want_b
	lb=$(jq ".buffer.$dir.lower_bound" "$r")
	reason=$(jq -r ".buffer.$dir.lower_bound_reason" "$r")
	want_ms=$(jq ".lab.truth.${t}_buffer_ms" "$r")
	# The report counts IP bytes; tbf's limit counts each packet with its 14-byte Ethernet header.
	want_b=$(jq ".lab.truth.${t}_limit_bytes * (.mss * .ip_overhead) / (.mss * .ip_overhead + 14)" "$r")
	if [ "$expect" = any ]; then # either outcome the issue allows: a point or an honest bound
		if [ "$lb" = true ]; then expect='bound:*'; else expect=point; fi
	fi
	if [ "$expect" = point ]; then
		if [ "$lb" = true ]; then
			echo "FAIL $name: buffer $dir is a lower bound ($reason) where the queue's top should be reached"
			fail=1
		fi
		check "buffer $dir (ms)" "$(jq ".buffer.$dir.ms" "$r")" "$want_ms" "$tol"
		check "buffer $dir (bytes)" "$(jq ".buffer.$dir.bytes" "$r")" "$want_b" "$tol"
		if [ "${LAB_CI_CHECK:-1}" = 1 ]; then
			contains "buffer $dir 95 % interval (ms)" "$(jq -c ".buffer.$dir.ci95_ms" "$r")" "$want_ms"
		else
			echo "$name: buffer $dir 95 % interval $(jq -c ".buffer.$dir.ci95_ms" "$r"): not checked here (LAB_CI_CHECK=0)"
		fi
		return
	fi
	# bound:* takes any reason (random loss is classified from the loss pattern, which may read
	# "mixed"; the estimate is then a bound for "unstable" or another cause, still with its reason).
	if [ "$lb" != true ] || [ "$reason" = null ] ||
		{ [ "${expect#bound:}" != "*" ] && [ "$reason" != "${expect#bound:}" ]; }; then
		echo "FAIL $name: buffer $dir: expected a lower bound for '${expect#bound:}', got lower_bound=$lb reason=$reason"
		fail=1
	else
		echo "$name: buffer $dir is a lower bound ($reason)"
	fi
	at_most "buffer $dir lower bound (ms)" "$(jq ".buffer.$dir.ms" "$r")" "$want_ms"
	at_most "buffer $dir lower bound (bytes)" "$(jq ".buffer.$dir.bytes" "$r")" "$want_b"
}

# at_most LABEL MEASURED TRUTH: a lower bound may not claim more than the truth (+ LAB_TOL %).
at_most() {
	local label=$1 got=$2 want=$3
	if [ "$got" = "null" ] || [ -z "$got" ]; then
		echo "FAIL $name: $label: no value (truth $want)"
		fail=1
		return
	fi
	if ! awk -v L="$name: $label" -v g="$got" -v w="$want" -v t="$tol" 'BEGIN { e = (g - w) / w * 100; printf "%-34s measured %12.3f  truth %12.3f  error %+6.2f %% (a bound: at most %s %%)\n", L, g, w, e, t; exit !(e <= t) }'; then
		accuracy_fail "$name: $label claims more than the truth"
	fi
}

# Wire bytes per goodput byte: the tbf counts IP packets plus the 14-byte Ethernet header.
wire=$(jq '((.mss * .ip_overhead) + 14) / .mss' "$r")
gtol=${LAB_GOODPUT_TOL:-5}
# share PHASE DIR: the probes' reported share of the link (0 where the report has none).
share() {
	jq --arg p "$1" --arg d "$2" '[.phases[] | select(.name == $p) | .probe_budget.share[$d] // 0][0] // 0' "$r"
}
# budget PHASE DIR: the probes within 2 % of the link, or their floor bound and a warning says so.
budget() {
	local got
	got=$(jq -c --arg p "$1" --arg d "$2" '[.phases[] | select(.name == $p) | .probe_budget] | .[0] | if . == null then null else {share: .share[$d], floor, udp_ms: .intervals_ms.udp} end' "$r")
	echo "$name: probes in the $1 phase ($2): $got"
	if [ "$got" = "null" ] || [ "$(jq '.share' <<< "$got")" = "null" ]; then
		echo "FAIL $name: the $1 phase reports no probe share"
		fail=1
	elif ! jq -e '.share <= 0.02' <<< "$got" > /dev/null &&
		! { jq -e '.floor' <<< "$got" > /dev/null && jq -e --arg p "$1" '.warnings | any(startswith($p + " phase: the probes used") and contains("at the floor"))' "$r" > /dev/null; }; then
		accuracy_fail "$name: the probes used more than 2 % of the link in the $1 phase without their floor"
	fi
}
phases=$(jq -r '[.phases[].name] | join(",")' "$r")
# direction_case DIR(download|upload) TRUTH_PREFIX(down|up) EXPECT: buffer, goodput and the
# probe budget. A direction expected to stay below its top (random loss, bbr) has no goodput
# truth to meet.
direction_case() {
	local dir=$1 t=$2 expect=$3
	buffer_case "$dir" "$t" "$expect"
	[ -z "${LAB_PROBE_BUDGET:-}" ] || budget "$dir" "$t"
	[ "$expect" = point ] || return 0
	check "$dir goodput as wire rate (bit/s)" \
		"$(jq --argjson w "$wire" --arg p "$dir" --arg d "$t" '.phases[] | select(.name == $p) | .throughput_mbps[$d] * 1e6 * $w' "$r")" \
		"$(jq --argjson s "$(share "$dir" "$t")" ".lab.truth.${t}_rate_bps * (1 - \$s)" "$r")" "$gtol"
}
if [[ $phases == *download* ]]; then direction_case download down "${LAB_EXPECT_DOWN:-point}"; fi
if [[ $phases == *upload* ]]; then direction_case upload up "${LAB_EXPECT_UP:-point}"; fi
# -P auto: every loaded phase ended with at least one flow per loaded direction and no more
# than the ramp's cap.
if jq -e '.config.flows_auto' "$r" > /dev/null; then
	jq -c '[.phases[] | {name, flows}]' "$r"
	jq -e '[.phases[] | select(.name != "idle") | .flows | (.down + .up)] | all(. >= 1 and . <= 32)' "$r" > /dev/null ||
		{ echo "FAIL $name: -P auto ended with no flows or too many"; fail=1; }
fi
leftover=$(ip netns list | grep -c "^bm$pid-" || true)
[ "$leftover" -eq 0 ] || { echo "FAIL $name: namespaces left behind"; fail=1; }
if [ "$fail" -ne 0 ] || [ "$accuracy_fail" -ne 0 ]; then # keep the report to look into
	cp "$r" "${LAB_KEEP_DIR:-/tmp}/lab-$name.json" && echo "report kept: ${LAB_KEEP_DIR:-/tmp}/lab-$name.json"
	# What each estimate rests on (CI shows only a part of the output; this is the part to see).
	jq -c '.buffer | to_entries[] | {dir: .key} + (.value | {ms, q_p99_ms, q_max_ms, samples,
		backoff_peaks, backoff_peak_ms, stall_held_probes, ci95_ms, lower_bound_reason})' "$r" || true
	# The clock fit the one-way figures rest on, and each loaded phase's 1 s maxima of the RTT
	# over its idle minimum (a queue above the truth in every second, or only in some?).
	jq -c '{clock_sync, warnings}' "$r" || true
	jq -c '. as $r | [$r.samples.udp.data[] | select(.[1] != null)] as $d |
		([$d[] | select(.[0] < $r.phases[0].end_s) | .[1]] | min) as $b |
		$r.phases[] | select(.name != "idle") | (.steady_start_s // .start_s) as $s | .end_s as $e |
		{phase: .name, steady_start_s: $s, rtt_1s_max_over_idle_ms: ([$d[] |
		select(.[0] >= $s and .[0] < $e)] | group_by((.[0] - $s) | floor) |
		map((map(.[1]) | max) - $b | . * 100 | round / 100))}' "$r" 2> /dev/null || true
fi
steal_verdict "$name" "$fail" "$accuracy_fail" "$steal" || exit 1
echo "PASS $name"
