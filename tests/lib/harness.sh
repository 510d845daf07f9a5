# Sourced by the test scripts that run the real daemon: a work directory removed on exit,
# together with the daemon ($dpid) and any other processes ($pids) still running; check(),
# which reports one named check and remembers a failure in $fail; wait_log(); and
# harness_start_daemon(), which starts "$d" (the caller sets d) on free loopback ports.
# With tests/lib/netns.sh sourced too, the namespaces it made go on exit as well.
work=$(mktemp -d)
dpid=
pids=()
fail=0
harness_cleanup() {
	local p
	for p in $dpid "${pids[@]}"; do
		kill -KILL "$p" 2> /dev/null || true
		wait "$p" 2> /dev/null || true
	done
	if declare -F netns_cleanup > /dev/null; then netns_cleanup; fi
	rm -rf "$work"
}
trap harness_cleanup EXIT

check() { # NAME COMMAND...: runs the check, reports it, remembers a failure
	local name=$1
	shift
	if "$@"; then echo "ok   $name"; else echo "FAIL $name"; fail=1; fi
}

wait_log() { # PATTERN [FILE]: waits up to 5 s for a line matching PATTERN (default file: the daemon's log)
	local file=${2:-$work/daemon.log}
	for _ in $(seq 50); do
		grep -Eq -- "$1" "$file" && return 0
		sleep 0.1
	done
	return 1
}

harness_start_daemon() { # [--http] FLAGS...: bloatmeterd on 127.0.0.1, a free port in $port
	# (and, with --http, an HTTP listener on $hport), log in $work/daemon.log, pid in $dpid.
	# A random free port may be taken meanwhile: a few tries, then the test fails.
	local http=0
	if [ "${1:-}" = --http ]; then
		http=1
		shift
	fi
	for _ in 1 2 3 4 5; do
		port=$((20000 + RANDOM % 40000))
		hport=$((20000 + RANDOM % 40000))
		local extra=()
		[ $http = 1 ] && extra=(--http-port "$hport")
		"$d" -b 127.0.0.1 -p "$port" --dns-port 0 --allow-root yes -v "${extra[@]}" "$@" \
			> "$work/daemon.log" 2>&1 &
		dpid=$!
		if wait_log "listening on 127.0.0.1 port $port"; then return 0; fi
		kill "$dpid" 2> /dev/null || true
		wait "$dpid" 2> /dev/null || true
		dpid=
	done
	cat "$work/daemon.log"
	echo "FAIL $(basename "$0"): the daemon did not start"
	exit 1
}
