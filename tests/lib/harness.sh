# Sourced by the test scripts that run the real daemon: a work directory removed on exit,
# together with the daemon ($dpid) and any other processes ($pids) still running; check(),
# which reports one named check and remembers a failure in $fail; and wait_log().
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
