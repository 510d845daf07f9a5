#!/usr/bin/env bash
# Fault drills on 127.0.0.1 with the real binaries: a failure mid-run never loses what was
# measured, and every end has its own exit code (bloatmeter(1), EXIT STATUS).
#  - the daemon is killed (SIGKILL) during the download phase: exit 3, and --json, --log and
#    --prometheus hold the partial result (status "partial", the error, aborted.phase
#    "download", the idle phase's probes, the download phase up to the kill);
#  - Ctrl-C (SIGINT) during the upload phase, SIGTERM during the download phase: exit 3,
#    status "partial", error "interrupted", the phase up to the signal kept;
#  - nothing listens: exit 1, and -J prints {"status": "failed", "error": ...}, --log gets a
#    failed line;
#  - the server is busy: exit 4.
# The partial report matches docs/report.schema.json.
# Usage: check_faults.sh BINDIR SCHEMA
set -uo pipefail
bindir=$1
schema=$2
py=/usr/bin/python3 # Debian's, with python3-jsonschema (not a pyenv shim)
d=$bindir/bloatmeterd
b=$bindir/bloatmeter
. "$(dirname "$0")/../../lib/require.sh"
need_cmd jq jq
need_py_module $py jsonschema python3-jsonschema
. "$(dirname "$0")/../../lib/harness.sh"

stop_daemon() {
	kill -KILL "$dpid" 2> /dev/null || true
	wait "$dpid" 2> /dev/null || true
	dpid=
}
# -Z root: started as root, the client would write its files as nobody (-Z), which cannot
# enter this test's private directory.
# Runs a client in the background with its output files under $work/NAME.*; sets cpid.
client_bg() { # NAME ARGS...
	local name=$1
	shift
	"$b" -Z root -p "$port" --idle 2 -t 4 --gap 1 --probes udp --json "$work/$name.json" \
		--log "$work/$name.jsonl" --prometheus "$work/$name.prom" --html "$work/$name.html" \
		"$@" 127.0.0.1 \
		> "$work/$name.out" 2> "$work/$name.err" &
	cpid=$!
}

# 1. The daemon dies during the download phase (idle 2 s + 2 s into the 4 s download).
harness_start_daemon
client_bg kill
sleep 4
kill -KILL "$dpid"
wait "$cpid"
rc=$?
stop_daemon
j=$work/kill.json
check "server killed: exit 3 (partial)" test "$rc" = 3
check "server killed: one sentence says the results are partial" \
	grep -q "results measured until then are saved as partial" "$work/kill.err"
check "server killed: JSON status partial, aborted in download" \
	jq -e '.status == "partial" and .aborted.phase == "download" and (.error | length > 0)' "$j"
check "server killed: the partial report matches the schema" \
	eval 'out=$($py -m jsonschema -i "$j" "$schema" 2>&1) && [ -z "$out" ]'
check "server killed: the outage: direction down, replies stopped after the download began and by the abort" \
	jq -e '.aborted.direction == "down" and .aborted.last_reply_s > .phases[1].start_s and .aborted.last_reply_s <= .aborted.at_s' "$j"
check "server killed: the idle phase's probes are kept" \
	jq -e '.phases[0].name == "idle" and .phases[0].rtt_samples > 100' "$j"
check "server killed: the download phase up to the kill is kept" \
	jq -e '.phases[1].name == "download" and (.phases[1].end_s - .phases[1].start_s) > 1' "$j"
check "server killed: --log holds the partial line" \
	jq -e -s 'length == 1 and .[0].status == "partial"' "$work/kill.jsonl"
check "server killed: --prometheus says partial" \
	grep -q '^bloatmeter_run_partial{.*} 1$\|^bloatmeter_run_partial 1$' "$work/kill.prom"
check "server killed: the text opens with where it stopped" grep -q '^Stopped ' "$work/kill.out"
check "server killed: the text says when the last reply came and what was loaded" \
	grep -Eq '^Last reply   [0-9.]+ s in, [0-9.]+ s before the stop.*; load down$' "$work/kill.out"
check "server killed: the HTML verdict says it too" \
	grep -Eq '<td>Last reply</td><td>[0-9.]+ s in, [0-9.]+ s before the stop.*; load down</td>' "$work/kill.html"

# 2. Ctrl-C during the upload phase (idle 2 + download 4 + gap 1 + 1.5 s).
harness_start_daemon
client_bg int
sleep 8.5
kill -INT "$cpid"
wait "$cpid"
rc=$?
stop_daemon
check "Ctrl-C: exit 3 (partial)" test "$rc" = 3
check "Ctrl-C: status partial, error interrupted, in upload" \
	jq -e '.status == "partial" and .error == "interrupted" and .aborted.phase == "upload"' \
	"$work/int.json"
check "Ctrl-C: the download phase is complete in it" \
	jq -e '[.phases[] | .name] | index("download") != null' "$work/int.json"

# 2b. SIGTERM (a service manager stopping it) during the download phase (idle 2 + 2.5 s).
harness_start_daemon
client_bg term
sleep 4.5
kill -TERM "$cpid"
wait "$cpid"
rc=$?
stop_daemon
check "SIGTERM: exit 3 (partial)" test "$rc" = 3
check "SIGTERM: status partial, error interrupted, in download, direction down" \
	jq -e '.status == "partial" and .error == "interrupted" and .aborted.phase == "download" and .aborted.direction == "down"' \
	"$work/term.json"
check "SIGTERM: the download phase up to the signal is kept, with its probes" \
	jq -e '.phases[1].name == "download" and (.phases[1].end_s - .phases[1].start_s) > 2 and .phases[1].rtt_samples > 0' \
	"$work/term.json"
check "SIGTERM: --log holds the partial line" \
	jq -e -s 'length == 1 and .[0].status == "partial"' "$work/term.jsonl"

# 3. Nothing listens: -J still prints a document, --log gets a failed line.
port=$((20000 + RANDOM % 40000))
out=$("$b" -Z root -p "$port" -J --log "$work/none.jsonl" 127.0.0.1 2> "$work/none.err")
rc=$?
check "unreachable: exit 1" test "$rc" = 1
check "unreachable: -J prints status failed with the error" \
	eval '[ -n "$out" ] && jq -e ".status == \"failed\" and (.error | test(\"connect\"))" <<< "$out"'
check "unreachable: --log gets the failed line" \
	jq -e -s 'length == 1 and .[0].status == "failed"' "$work/none.jsonl"

# 4. Busy: a holder takes the only session; the next client exits 4.
harness_start_daemon --max-sessions 1
"$b" -p "$port" --phases idle --idle 6 -q 127.0.0.1 > /dev/null 2>&1 &
hpid=$!
pids+=("$hpid")
wait_log "session [0-9]+ from .*: cc" || true
"$b" -p "$port" --phases idle --idle 1 -q 127.0.0.1 > /dev/null 2> "$work/busy.err"
rc=$?
check "busy: exit 4" test "$rc" = 4
check "busy: says when to retry" grep -q "server busy, retry after" "$work/busy.err"
wait "$hpid" 2> /dev/null || true
stop_daemon

[ "$fail" = 0 ] && echo "PASS faults" || echo "FAIL faults"
exit "$fail"
