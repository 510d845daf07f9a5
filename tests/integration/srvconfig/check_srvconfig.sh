#!/usr/bin/env bash
# bloatmeterd's configuration file and signals on the host's 127.0.0.1 with a free port:
# -n accepts a good file and names the line of a bad one; a daemon started from a file serves a
# real client; SIGHUP applies a lowered max-sessions (a second concurrent client gets "busy")
# and survives a broken file; SIGTERM ends a running session with "server shutting down" and
# the daemon exits 0 within 5 s. Usage: check_srvconfig.sh BINDIR EXAMPLE_CONF
set -uo pipefail
bindir=$1
example=$2
d=$bindir/bloatmeterd
b=$bindir/bloatmeter
. "$(dirname "$0")/../../lib/harness.sh"
conf() { # PORT MAX_SESSIONS [EXTRA LINE]: writes the live configuration file
	{
		echo "# written by check_srvconfig.sh"
		echo "port = $1   # a free port"
		echo "bind = 127.0.0.1"
		echo "dns-port = 0"
		echo "max-sessions = $2"
		echo "max-duration = 60"
		echo "verbose = 1"
		[ $# -ge 3 ] && echo "$3"
	} > "$work/live.conf"
}
sessions() { grep -Ec "session [0-9]+ from .*: cc" "$work/daemon.log"; }
wait_session() { # N: waits up to 5 s for the N-th session to start
	for _ in $(seq 50); do
		[ "$(sessions)" -ge "$1" ] && return 0
		sleep 0.1
	done
	return 1
}
client() { # IDLE_SECONDS OUTFILE: a short idle-only run; its exit code
	"$b" -p "$port" --phases idle --idle "$1" -q 127.0.0.1 > "$2" 2>&1
}

# -n: the check alone, never binding anything.
conf 4750 4
out=$("$d" -n -c "$work/live.conf" 2>&1)
check "-n good file: exit 0, OK line" \
	test "$?:$out" = "0:bloatmeterd: configuration OK ($work/live.conf)"
out=$("$d" -n -c "$example" 2>&1)
check "-n shipped example: exit 0" test "$?:$out" = "0:bloatmeterd: configuration OK ($example)"
printf 'port = 4750\n\nmax-session = 3\n' > "$work/bad.conf"
out=$("$d" -n -c "$work/bad.conf" 2>&1)
check "-n bad file: exit 2, names the line" \
	test "$?:$out" = "2:bloatmeterd: $work/bad.conf:3: unknown key \"max-session\""
out=$("$d" -n -c "$work/missing.conf" 2>&1)
check "-n missing file: exit 2" test "$?:$out" = \
	"2:bloatmeterd: $work/missing.conf: cannot open: No such file or directory"
out=$("$d" -n -c "$work/live.conf" --max-flows 0 2>&1)
rc=$?
check "-n bad flag over a good file: exit 2" eval '[ $rc = 2 ] && grep -q "invalid max-flows" <<< "$out"'

# Start from a file; a random port may be taken, so try a few.
for try in 1 2 3 4 5; do
	port=$((20000 + RANDOM % 40000))
	conf "$port" 4
	"$d" -c "$work/live.conf" --allow-root yes > "$work/daemon.log" 2>&1 &
	dpid=$!
	if wait_log "listening on 127.0.0.1 port $port"; then break; fi
	kill "$dpid" 2> /dev/null || true
	wait "$dpid" 2> /dev/null || true
	dpid=
done
if [ -z "$dpid" ]; then
	cat "$work/daemon.log"
	echo "FAIL srvconfig_daemon: the daemon did not start"
	exit 1
fi
check "started from the file" grep -q "configuration from $work/live.conf" "$work/daemon.log"
check "a client run against it" client 1 "$work/c1.out"

# SIGHUP: max-sessions 1 is applied; a second concurrent client is refused as busy.
conf "$port" 1
kill -HUP "$dpid"
check "SIGHUP reloads max-sessions 1" wait_log "configuration reloaded from .*max-sessions 1,"
n=$(sessions)
client 4 "$work/a.out" &
apid=$!
wait_session $((n + 1))
sleep 0.5
client 1 "$work/b.out"
brc=$?
check "second concurrent client is busy" eval '[ $brc != 0 ] && grep -q "busy" "$work/b.out"'
wait "$apid"
check "the first client's run is unharmed" test $? = 0

# The per-client limit: plenty of sessions, but one per client address; a second concurrent
# client from 127.0.0.1 is refused as busy.
conf "$port" 5 "max-sessions-per-client = 1"
kill -HUP "$dpid"
check "SIGHUP reloads max-sessions-per-client 1" \
	wait_log "configuration reloaded from .*max-sessions 5,.*max-sessions-per-client 1"
n=$(sessions)
client 4 "$work/pa.out" &
apid=$!
wait_session $((n + 1))
sleep 0.5
client 1 "$work/pb.out"
brc=$?
check "second client from the same address is busy" eval '[ $brc != 0 ] && grep -q "busy" "$work/pb.out"'
wait "$apid"
check "the first client's run is unharmed" test $? = 0

# A broken file on reload keeps the daemon and its configuration.
conf "$port" 1 "max-sessions = 5"
kill -HUP "$dpid"
check "SIGHUP with a broken file logs the line" \
	wait_log "reload failed, keeping the running configuration: $work/live.conf:8: repeated key \"max-sessions\""
check "the daemon is still up" kill -0 "$dpid"
check "and still serves" client 1 "$work/c2.out"
# Settings fixed at start-up are reported, not applied.
conf $((port + 1)) 2
kill -HUP "$dpid"
check "SIGHUP with a new port says it needs a restart" \
	wait_log "reload: port changed; not applied, that needs a restart"
check "still on the old port" client 1 "$work/c3.out"

# SIGTERM during a session: the client is told, the daemon exits 0 within 5 s.
n=$(sessions)
client 10 "$work/t.out" &
tpid=$!
wait_session $((n + 1))
sleep 1
t0=$(date +%s.%N)
kill -TERM "$dpid"
wait "$dpid"
drc=$?
t1=$(date +%s.%N)
dpid=
wait "$tpid"
check "SIGTERM: exit 0" test "$drc" = 0
check "SIGTERM: within 5 s" awk -v a="$t0" -v b="$t1" 'BEGIN { printf "     (%.2f s)\n", b - a; exit !(b - a < 5) }'
check "the running client is told the server is shutting down" grep -q "server shutting down" "$work/t.out"
check "the daemon logged its stop" grep -q "stopped" "$work/daemon.log"
if [ "$fail" != 0 ]; then
	echo "--- daemon log"
	cat "$work/daemon.log"
	for f in "$work"/*.out; do echo "--- $f"; cat "$f"; done
fi
exit "$fail"
