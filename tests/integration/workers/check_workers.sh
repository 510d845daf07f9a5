#!/usr/bin/env bash
# bloatmeterd's worker threads on the host's 127.0.0.1 with free ports: with --workers 2, four
# concurrent short real tests (control, load, UDP and connect probes) all exit 0 and their
# sessions are spread over both workers (bloatmeterd_worker_sessions_total in /metrics, which
# promtool accepts); a SIGTERM during two running sessions reaches each client ("server
# shutting down") and the daemon exits 0; with --workers 1 (the main thread runs the
# sessions) two concurrent tests still exit 0. With --reflector-priority 10 (and --user
# nobody: privileges dropped before any thread starts) the reflector thread alone runs
# SCHED_FIFO at priority 10. Usage: check_workers.sh BINDIR
set -uo pipefail
bindir=$(cd "$1" && pwd)
d=$bindir/bloatmeterd
b=$bindir/bloatmeter
. "$(dirname "$0")/../../lib/require.sh"
need_root "privileges dropped to nobody and SCHED_FIFO for the reflector"
need_cmd curl curl promtool prometheus chrt util-linux
. "$(dirname "$0")/../../lib/harness.sh"

start() { # WORKERS [FLAGS...]: the daemon on free ports ($port, $hport), log in daemon.log
	local n=$1
	shift
	harness_start_daemon --http --max-sessions-per-client 8 --workers "$n" "$@"
}
stop() { # SIGTERM; the daemon's exit code in $drc
	kill -TERM "$dpid"
	wait "$dpid"
	drc=$?
	dpid=
}
clients() { # N: N concurrent short tests; 0 when every one exits 0
	local i rc=0 cp=()
	for i in $(seq "$1"); do
		"$b" -p "$port" --phases idle,download,upload -t 2 --idle 1 --gap 0.5 -P 2 -q \
			127.0.0.1 > "$work/client$i.log" 2>&1 &
		cp+=($!)
	done
	for i in "${!cp[@]}"; do
		if ! wait "${cp[$i]}"; then
			echo "     client $((i + 1)) failed:"
			sed 's/^/     /' "$work/client$((i + 1)).log"
			rc=1
		fi
	done
	return $rc
}
metric() { # NAME{LABELS}: its value in m.txt
	awk -v k="$1" '$1 == k { print $2 }' "$work/m.txt"
}

start 2 --user nobody --reflector-priority 10
check "--workers 2: the log says two worker threads" grep -q "2 workers: one thread each" "$work/daemon.log"
threads() { # one line per thread of the daemon: name, uid, policy, priority
	local t
	for t in /proc/"$dpid"/task/*; do
		echo "$(cat "$t/comm") uid $(awk '/^Uid:/ { print $2 }' "$t/status")" \
			"$(chrt -p "${t##*/}" | awk -F': ' '{ printf "%s ", $2 }')"
	done
}
threads > "$work/threads.txt"
sed 's/^/     /' "$work/threads.txt"
check "--reflector-priority 10 as nobody: the reflector thread alone runs SCHED_FIFO 10" \
	eval 'grep -Eq "^bmd-reflector uid 65534 SCHED_FIFO 10 $" "$work/threads.txt" &&
	      [ "$(grep -c SCHED_FIFO "$work/threads.txt")" = 1 ] &&
	      [ "$(grep -vc "uid 65534 " "$work/threads.txt")" = 0 ]'
check "--workers 2: four concurrent real tests all exit 0" clients 4
curl -s --max-time 5 "http://127.0.0.1:$hport/metrics" > "$work/m.txt"
w0=$(metric 'bloatmeterd_worker_sessions_total{worker="0"}')
w1=$(metric 'bloatmeterd_worker_sessions_total{worker="1"}')
echo "     sessions per worker: ${w0:-none} and ${w1:-none}"
check "--workers 2: sessions on both workers, four in all" \
	eval '[ "${w0:-0}" -ge 1 ] && [ "${w1:-0}" -ge 1 ] && [ $((w0 + w1)) = 4 ] &&
	      [ "$(metric bloatmeterd_sessions_total)" = 4 ]'
check "--workers 2: promtool check metrics is silent" \
	eval 'promtool check metrics < "$work/m.txt" > "$work/p.txt" 2>&1 && [ ! -s "$work/p.txt" ]'
check "--workers 2: no data connection or connect probe refused" \
	eval '! grep -Eq "data bad [1-9]|connect probes [0-9]+, bad [1-9]" "$work/daemon.log"'

# SIGTERM with a session on each worker: every client hears of it, the daemon stops cleanly.
for i in 1 2; do
	"$b" -p "$port" --phases idle --idle 20 -q 127.0.0.1 > "$work/long$i.log" 2>&1 &
	pids+=($!)
done
for _ in $(seq 50); do
	[ "$(grep -c 'session [0-9]* from .*: cc' "$work/daemon.log")" -ge 6 ] && break
	sleep 0.1
done
t0=$(date +%s%N)
stop
t1=$(date +%s%N)
for p in "${pids[@]}"; do wait "$p" 2> /dev/null; done
pids=()
check "--workers 2: SIGTERM: exit 0 within 5 s" eval '[ "$drc" = 0 ] && [ $(((t1 - t0) / 1000000)) -lt 5000 ]'
check "--workers 2: SIGTERM reached the sessions of both workers" \
	eval 'grep -q "server shutting down" "$work/long1.log" && grep -q "server shutting down" "$work/long2.log"'

start 1
threads > "$work/threads.txt"
check "without --reflector-priority: no thread is real-time" \
	eval '! grep -q SCHED_FIFO "$work/threads.txt" && grep -q "^bmd-reflector .*SCHED_OTHER" "$work/threads.txt"'
check "--workers 1: the log says the main thread runs the sessions" \
	grep -q "1 worker: sessions run on the main thread" "$work/daemon.log"
check "--workers 1: two concurrent real tests exit 0" clients 2
curl -s --max-time 5 "http://127.0.0.1:$hport/metrics" > "$work/m.txt"
check "--workers 1: both sessions on worker 0" \
	test "$(metric 'bloatmeterd_worker_sessions_total{worker="0"}')" = 2
stop
check "--workers 1: SIGTERM: exit 0" test "$drc" = 0
if [ "$fail" != 0 ]; then
	echo "--- daemon log"
	tail -n 40 "$work/daemon.log"
fi
exit "$fail"
