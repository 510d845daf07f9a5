#!/usr/bin/env bash
# bloatmeterd's results-log on the host's 127.0.0.1 with free ports: a short real client test
# gives one line (valid JSON: source cli, the masked client network, bytes, the client's
# reported summary); a browser result posted to the public listener gives a second (source
# browser, its engine and figures); then, as logrotate does, the file is moved away and the
# daemon gets SIGHUP: the next test's line goes to a new file at the path, none to the moved
# one. A results-log that cannot be opened stops the start with one sentence.
# Usage: check_resultslog.sh BINDIR
set -uo pipefail
bindir=$(cd "$1" && pwd)
d=$bindir/bloatmeterd
b=$bindir/bloatmeter
. "$(dirname "$0")/../../lib/require.sh"
need_cmd curl curl python3 python3
. "$(dirname "$0")/../../lib/harness.sh"

log=$work/results.jsonl
wport=$((20000 + RANDOM % 40000))
harness_start_daemon --results-log "$log" --web-port "$wport" --web-bind 127.0.0.1
check "the log names the results-log" grep -q "results-log $log: one JSON line per finished test" "$work/daemon.log"
check "the file exists and is empty before any test" test -f "$log" -a ! -s "$log"

lines() { # FILE N: waits up to 5 s for FILE to have N lines
	for _ in $(seq 50); do
		[ "$(wc -l < "$1" 2> /dev/null || echo 0)" -ge "$2" ] && return 0
		sleep 0.1
	done
	return 1
}
client() {
	"$b" -p "$port" --phases idle,download -t 2 --idle 1 --gap 0 -P 2 -q 127.0.0.1 > /dev/null
}

check "a client test against the daemon" client
check "one line after it" lines "$log" 1
check "the line: valid JSON, source cli, masked client, bytes, the client's summary" \
	python3 - "$log" 1 << 'EOF2'
import json, sys
lines = open(sys.argv[1]).read().splitlines()
assert len(lines) == int(sys.argv[2]), lines
t = json.loads(lines[-1])
assert t["source"] == "cli" and t["id"] == 1, t
assert t["client"] == "127.0.0.0/24", t
assert t["bytes"]["download"] > 0 and t["flows"]["download"] == 2, t
assert t["start"].endswith("Z") and t["duration_s"] > 0, t
c = t["client_reported"]
assert c is not None and c["grade"] in ("A+", "A", "B", "C", "D", "F"), t
assert c["throughput_bps"]["download"] > 0, c
print("     %s" % lines[-1][:150])
EOF2

post='{"version":1,"grade":"B","idle_ms":12.5,"down":{"mbps":95.5,"loaded_ms":40,"increase_ms":27.5},"up":{"mbps":null,"loaded_ms":null,"increase_ms":null},"engine":"test-engine 1.0"}'
code=$(curl -s -o /dev/null -w '%{http_code}' --max-time 5 -H 'Content-Type: application/json' \
	--data-binary "$post" "http://127.0.0.1:$wport/api/v1/results")
check "a browser result post: 204 ($code)" test "$code" = 204
check "two lines after it" lines "$log" 2
check "the second line: source browser, engine, the posted figures, masked client" \
	python3 - "$log" 2 << 'EOF2'
import json, sys
lines = open(sys.argv[1]).read().splitlines()
assert len(lines) == int(sys.argv[2]), lines
t = json.loads(lines[-1])
assert t["source"] == "browser" and t["engine"] == "test-engine 1.0", t
assert t["client"] == "127.0.0.0/24" and t["id"] == 2, t
c = t["client_reported"]
assert c["grade"] == "B" and c["idle_latency_ms"] == 12.5, c
assert c["latency_increase_ms"] == {"download": 27.5, "upload": None}, c
assert c["throughput_bps"]["download"] == 95500000, c
EOF2

# logrotate's way: move the file, then SIGHUP; the daemon must open the path again.
mv "$log" "$work/results.jsonl.1"
kill -HUP "$dpid"
check "SIGHUP: the daemon says it opened the path again" wait_log "results-log $log opened"
check "SIGHUP: a new, empty file at the path" test -f "$log" -a ! -s "$log"
check "a second client test" client
check "its line goes to the new file" lines "$log" 1
check "the new file's line: valid JSON, source cli, id 3" python3 - "$log" << 'EOF2'
import json, sys
lines = open(sys.argv[1]).read().splitlines()
assert len(lines) == 1, lines
t = json.loads(lines[0])
assert t["source"] == "cli" and t["id"] == 3 and t["bytes"]["download"] > 0, t
EOF2
check "the moved file kept its two lines and got no more" test "$(wc -l < "$work/results.jsonl.1")" = 2
check "SIGTERM: exit 0" eval 'kill -TERM "$dpid"; wait "$dpid"'
dpid=

out=$("$d" -b 127.0.0.1 -p "$port" --dns-port 0 --allow-root yes \
	--results-log "$work/no/such/dir/r.jsonl" 2>&1)
rc=$?
check "an unopenable results-log: exit 1 with one sentence ($rc)" eval \
	'[ $rc = 1 ] && [ "$(grep -c "results-log $work/no/such/dir/r.jsonl: cannot open: No such file or directory" <<< "$out")" = 1 ]'
[ $fail = 0 ] && echo "PASS check_resultslog" || echo "FAIL check_resultslog"
exit $fail
