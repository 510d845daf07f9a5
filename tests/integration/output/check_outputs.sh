#!/usr/bin/env bash
# Machine-readable outputs of real runs: the JSON report (--json) and the JSONL history (--log)
# against docs/report.schema.json, and the Prometheus textfile (--prometheus) against promtool.
# An HTTP-mode report (the daemon's public listener as the target) validates too. A --per-hop
# --ecn run's queue verdicts, ECN verdict and per-hop RTTs appear in the report, its history
# line and the metrics alike.
# Also: the history grows by exactly one line per run, a line torn by a killed run does not
# corrupt later lines, and four concurrent runs appending to one file leave only whole lines.
# Runs the daemon and the clients in a private network namespace (root).
# Usage: check_outputs.sh BINDIR
set -uo pipefail
bindir=$(cd "$1" && pwd)
schema=$(cd "$(dirname "$0")/../../../docs" && pwd)/report.schema.json
py=/usr/bin/python3 # Debian's, with python3-jsonschema (not a pyenv shim)

. "$(dirname "$0")/../../lib/require.sh"
need_root "a private network namespace"
need_cmd promtool prometheus jq jq ip iproute2 ss iproute2
need_py_module $py jsonschema python3-jsonschema

ns=bmo$$
port=4750
tmp=$(mktemp -d /tmp/bm-output.XXXXXX)
dpid=
fail=0
cleanup() {
	[ -n "$dpid" ] && kill "$dpid" 2> /dev/null && wait "$dpid" 2> /dev/null
	ip netns del "$ns" 2> /dev/null
	if [ $fail -eq 0 ]; then rm -rf "$tmp"; else echo "files kept in $tmp"; fi
}
trap cleanup EXIT
trap 'exit 1' INT TERM

ip netns add "$ns" || exit 1
ip -n "$ns" link set lo up || exit 1
webport=8080
ip netns exec "$ns" "$bindir/bloatmeterd" --allow-root yes -p $port --web-port $webport &
dpid=$!
for _ in $(seq 50); do # until the daemon listens (at most 5 s)
	ip netns exec "$ns" ss -Hltn "sport = :$port" | grep -q . && break
	sleep 0.1
done

# -Z root: started as root, the client would write its files as nobody (-Z), which cannot
# enter this test's private directory.
run() { ip netns exec "$ns" "$bindir/bloatmeter" -Z root -q -p $port "$@" 127.0.0.1; }
check() { # check DESCRIPTION SHELL-CONDITION
	if eval "$2"; then echo "ok   $1"; else echo "FAIL $1"; fail=1; fi
}
# Validates one JSON file against the schema; prints the validator's complaints.
valid() {
	local out
	out=$($py -m jsonschema -i "$1" "$schema" 2>&1) && [ -z "$out" ] && return 0
	echo "$out" | head -20
	return 1
}
# Every line of a JSONL file parses and validates on its own (from line $2 on, default 1).
lines_valid() {
	local file=$1 from=${2:-1} n=0 line
	while IFS= read -r line; do
		n=$((n + 1))
		[ $n -lt "$from" ] && continue
		printf '%s\n' "$line" > "$tmp/line.json"
		jq -e 'type == "object"' "$tmp/line.json" > /dev/null 2>&1 ||
			{ echo "line $n of $file is not a JSON object"; return 1; }
		valid "$tmp/line.json" || { echo "line $n of $file fails the schema"; return 1; }
	done < "$file"
	[ $n -gt 0 ]
}

# 1. Two full runs: report, history, metrics.
full() { run -t 2 --idle 2 --gap 1 -P 2 --json "$tmp/r.json" --log "$tmp/h.jsonl" \
	--prometheus "$tmp/m.prom"; }
check "run 1 (all four phases) succeeds" 'full'
check "run 2 (all four phases) succeeds" 'full'

check "the --json report validates against docs/report.schema.json" 'valid "$tmp/r.json"'
four='["idle","download","upload","bidirectional"]'
check "the --json report has all four phases and samples" \
	'jq -e --argjson four "$four" "(.phases | map(.name)) == \$four and
		(.samples.udp.data | length > 100)" "$tmp/r.json" > /dev/null'
check "the history has exactly 2 lines" '[ "$(wc -l < "$tmp/h.jsonl")" -eq 2 ]'
check "each history line parses and validates against the schema" 'lines_valid "$tmp/h.jsonl"'
check "no history line carries samples" \
	'[ "$(jq -c "has(\"samples\")" "$tmp/h.jsonl" | sort -u)" = false ]'
check "history line 2 equals the --json report of run 2 minus samples" \
	'[ "$(jq -S -c "del(.samples)" "$tmp/r.json")" = "$(sed -n 2p "$tmp/h.jsonl" | jq -S -c .)" ]'

out=$(promtool check metrics < "$tmp/m.prom" 2>&1)
prc=$?
check "promtool check metrics exits 0 and prints nothing" '[ $prc -eq 0 ] && [ -z "$out" ]'
[ -z "$out" ] || echo "$out" | sed 's/^/     promtool: /'
for m in last_run_timestamp_seconds rtt_seconds latency_increase_seconds \
	goodput_bytes_per_second probe_loss_ratio buffer_seconds buffer_bytes \
	buffer_lower_bound run_warnings; do
	check "metrics have bloatmeter_$m" \
		'grep -q "^bloatmeter_$m{server=\"127.0.0.1:$port\"" "$tmp/m.prom"'
done
if jq -e '.clock_sync != null' "$tmp/r.json" > /dev/null; then
	check "clock sync valid: metrics have queueing delay and sync error" \
		'grep -q "^bloatmeter_queueing_delay_seconds{" "$tmp/m.prom" &&
		 grep -q "^bloatmeter_clock_sync_error_seconds{" "$tmp/m.prom"'
fi
check "no metric value is NaN or Inf" '! grep -v "^#" "$tmp/m.prom" | grep -qiE " [+-]?(nan|inf)"'
rtt=$(jq -r '.phases[0].rtt_ms.p50' "$tmp/r.json")
want=$(awk -v v="$rtt" 'BEGIN { printf "%.6f", v / 1000 }')
got=$(awk '/^bloatmeter_rtt_seconds\{.*phase="idle",stat="p50"/ { printf "%.6f", $2 }' "$tmp/m.prom")
check "idle RTT p50 in metrics ($got s) = JSON ms / 1000 ($rtt ms)" '[ "$want" = "$got" ]'

# 1b. An HTTP-mode run against the daemon's public listener: its report names the target and
# has null where only a bloatmeterd can measure, and still validates.
check "an HTTP-mode run succeeds" 'ip netns exec "$ns" "$bindir/bloatmeter" -Z root -q -t 2 --idle 1 \
	--gap 1 -P 2 --json "$tmp/http.json" http://127.0.0.1:$webport'
check "the HTTP-mode report validates against docs/report.schema.json" 'valid "$tmp/http.json"'
check "the HTTP-mode report names its target and why fields are null" \
	'jq -e --arg u "http://127.0.0.1:$webport" ".server == \$u and .http.url == \$u and
		.http.target_source == \"command line\" and (.http.not_measured | length > 0) and
		.cc.server.used == \"cubic\" and .phases[1].lost.down == null" "$tmp/http.json" > /dev/null'

# 1c. The queue verdicts (queue.*), --ecn and --per-hop in every machine-readable output: the
# report and its history line carry them, and the metrics say the same (loopback: one hop).
check "a --per-hop udp --ecn run succeeds" 'run -t 2 --idle 2 --gap 1 -P 2 --phases \
	idle,download,upload --per-hop udp --ecn --json "$tmp/q.json" --log "$tmp/q.jsonl" \
	--prometheus "$tmp/q.prom"'
check "the --per-hop --ecn report validates against docs/report.schema.json" 'valid "$tmp/q.json"'
check "the report has both queue verdicts, ecn and hop 1 (127.0.0.1)" \
	'jq -e "(.queue.download.verdict | type) == \"string\" and (.queue.upload.verdict | type) ==
		\"string\" and (.ecn.verdict | type) == \"string\" and .hops[0].address == \"127.0.0.1\"
		and (.queue_location.verdict | type) == \"string\"" "$tmp/q.json" > /dev/null'
check "its history line validates and carries queue, ecn, hops and queue_location" \
	'lines_valid "$tmp/q.jsonl" && [ "$(jq -S -c "{queue, ecn, hops, queue_location}" "$tmp/q.json")" = \
		"$(jq -S -c "{queue, ecn, hops, queue_location}" "$tmp/q.jsonl")" ]'
out=$(promtool check metrics < "$tmp/q.prom" 2>&1)
prc=$?
check "promtool: the --per-hop --ecn metrics are clean" '[ $prc -eq 0 ] && [ -z "$out" ]'
[ -z "$out" ] || echo "$out" | sed 's/^/     promtool: /'
# One metric sample's value: prom_value FILE NAME LABELS-AFTER-SERVER
prom_value() { grep -F "$2{server=\"127.0.0.1:$port\"$3} " "$1" | awk '{ print $NF }'; }
# JSON ms (null: not measured) against a metric in s: equal to 1 µs, or both absent.
# same_s JQ-PATH NAME LABELS
same_s() {
	local want got
	want=$(jq -r "$1 | if . == null then \"\" else . / 1000 end" "$tmp/q.json")
	got=$(prom_value "$tmp/q.prom" "$2" "$3")
	echo "     $2$3: $got (JSON ${want:-null})"
	if [ -z "$want" ]; then [ -z "$got" ]; else
		awk -v a="$got" -v b="$want" 'BEGIN { exit !(a != "" && a - b < 1e-6 && b - a < 1e-6) }'
	fi
}
for d in download:down upload:up; do
	v=$(jq -r ".queue.${d%:*}.verdict" "$tmp/q.json")
	check "metrics: queue verdict ${d#*:} is '$v' (1) and the 4 others 0" \
		'[ "$(prom_value "$tmp/q.prom" bloatmeter_queue_verdict ",direction=\"${d#*:}\",verdict=\"$v\"")" = 1 ] &&
		 [ "$(grep -c "^bloatmeter_queue_verdict{.*direction=\"${d#*:}\".*} 0$" "$tmp/q.prom")" = 4 ]'
	check "metrics: ${d#*:} standing queue = JSON ms / 1000 (absent when null)" \
		'same_s ".queue.${d%:*}.standing_ms" bloatmeter_queue_standing_seconds ",direction=\"${d#*:}\""'
done
ev=$(jq -r .ecn.verdict "$tmp/q.json")
check "metrics: ECN verdict '$ev' is 1" \
	'[ "$(prom_value "$tmp/q.prom" bloatmeter_ecn_verdict ",verdict=\"$ev\"")" = 1 ]'
check "metrics: ECN flows add up to ecn.flows ($(jq .ecn.flows "$tmp/q.json"))" \
	'[ "$(grep "^bloatmeter_ecn_flows{" "$tmp/q.prom" | awk "{ s += \$2 } END { print s }")" = \
		"$(jq .ecn.flows "$tmp/q.json")" ]'
for ph in download upload; do
	l=",hop=\"1\",address=\"127.0.0.1\",phase=\"$ph\""
	check "metrics: hop 1 $ph RTT = JSON ms / 1000 (absent when null)" \
		'same_s ".hops[0].phases.$ph.rtt_ms" bloatmeter_hop_rtt_median_seconds "$l"'
	check "metrics: hop 1 $ph latency increase = JSON ms / 1000 (absent when null)" \
		'same_s ".hops[0].phases.$ph.increase_ms" bloatmeter_hop_latency_increase_seconds "$l"'
done

# 2. A run killed mid-write leaves a torn line; the next run must start on a fresh line.
printf '{"version": "0.1' >> "$tmp/h.jsonl"
check "a short run appends after a torn line" 'run --phases idle --idle 1 --log "$tmp/h.jsonl"'
check "the file now has 4 lines and ends with a newline" \
	'[ "$(wc -l < "$tmp/h.jsonl")" -eq 4 ] && [ -z "$(tail -c 1 "$tmp/h.jsonl")" ]'
check "the torn fragment stays alone on line 3" \
	'[ "$(sed -n 3p "$tmp/h.jsonl")" = "{\"version\": \"0.1" ]'
check "lines 1-2 are intact" 'head -n 2 "$tmp/h.jsonl" | jq -e .phases > /dev/null'
check "the new last line is complete JSON and validates" 'lines_valid "$tmp/h.jsonl" 4'

# 3. Four runs at once appending to one file: every line whole.
pids=()
for i in 1 2 3 4; do
	run --phases idle --idle 1 --log "$tmp/c.jsonl" &
	pids+=($!)
done
crc=0
for p in "${pids[@]}"; do wait "$p" || crc=1; done
check "four concurrent runs succeed" '[ $crc -eq 0 ]'
check "four concurrent runs leave exactly 4 lines" '[ "$(wc -l < "$tmp/c.jsonl")" -eq 4 ]'
check "every concurrent line parses and validates" 'lines_valid "$tmp/c.jsonl"'

if [ $fail -eq 0 ]; then
	echo "PASS outputs: report and history lines valid against the schema, promtool clean,"
	echo "     torn and concurrent appends leave whole lines"
fi
exit $fail
