#!/usr/bin/env bash
# Scale benchmark (printed figures, no asserts): one bloatmeterd, and one load generator
# (tests/bench/loadgen.c) holding N probe-only sessions at 100 UDP probes/s each, for N = 100,
# 250, 500 and 1000 (a fresh daemon per row, so its RSS and CPU belong to that row alone).
# The daemon runs with a configuration that raises its session caps (max-sessions and
# max-sessions-per-client: every session comes from 127.0.0.1). Per row: sessions held, the
# reflector's hold time (server send − server receive stamps in every reply) p50/p99/max, loss,
# sessions lost, the daemon's CPU (utime + stime over the measured window, % of one core), its
# VmRSS idle (before the first session) and with the sessions, the RSS per session, and the
# generator's own CPU. As root it runs in a private network namespace (its own loopback);
# otherwise on the host's loopback, on a free port.
# Usage: scale.sh BINDIR [SECONDS] [N ...]   (default 20 s measured after 3 s of warm-up)
# Environment: BM_SCALE_RATE (probes/s per session, default 100), BM_SCALE_DAEMON (more
# daemon flags, split on blanks, e.g. "--workers 1" or "--reflector-priority 10").
set -euo pipefail
bindir=$(cd "$1" && pwd)
secs=${2:-20}
shift $(($# > 1 ? 2 : 1))
counts=("$@")
[ ${#counts[@]} -gt 0 ] || counts=(100 250 500 1000)
rate=${BM_SCALE_RATE:-100}
. "$(dirname "$0")/../lib/require.sh"
. "$(dirname "$0")/../lib/netns.sh"
need_cmd ss iproute2
netns_private BM_SCALE_NETNS "$0" "$bindir" "$secs" "${counts[@]}"
maxn=0
for n in "${counts[@]}"; do [ "$n" -gt "$maxn" ] && maxn=$n; done
# Descriptors: the daemon needs one per session (its control connection), the generator one
# per session plus its UDP socket.
ulimit -n $((maxn * 2 + 256)) 2> /dev/null || ulimit -n "$(ulimit -Hn)"

tmp=$(mktemp -d)
dpid=
cleanup() {
	[ -n "$dpid" ] && kill "$dpid" 2> /dev/null && wait "$dpid" 2> /dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT
cat > "$tmp/bloatmeterd.conf" << CONF
# The scale benchmark's daemon: caps raised above the largest N (all from one address).
port = $port
bind = 127.0.0.1
max-sessions = $((maxn + 16))
max-sessions-per-client = $((maxn + 16))
CONF
dflags=(-c "$tmp/bloatmeterd.conf")
"$bindir/bloatmeterd" -n --allow-root yes > /dev/null 2>&1 && [ "$(id -u)" -eq 0 ] &&
	dflags+=(--allow-root yes)
read -r -a extra <<< "${BM_SCALE_DAEMON:-}"
dflags+=("${extra[@]}")

echo "== scale: N probe-only sessions at $rate probes/s each, $secs s measured after 3 s," \
	"one load generator, one daemon ($(nproc) CPUs; ${extra[*]:-default flags}) =="
rows=()
header=-T
for n in "${counts[@]}"; do
	"$bindir/bloatmeterd" "${dflags[@]}" > "$tmp/daemon-$n.log" 2>&1 &
	dpid=$!
	wait_listen "$port" || true # (loadgen says so if it did not start)
	sleep 0.5 # settle: the idle RSS is read before the first session
	load=$(cut -d' ' -f1 /proc/loadavg)
	"$bindir/loadgen" -p "$port" -n "$n" -r "$rate" -w 3 -t "$secs" -P "$dpid" $header \
		> "$tmp/lg-$n.out" 2>&1 || echo "loadgen exited $? at N=$n"
	grep -v -E '^ *[0-9]|^ +N +held|^ +us ' "$tmp/lg-$n.out" | sed 's/^/  /' || true
	if [ -n "$header" ]; then
		rows+=("$(grep -E '^ +N +held' "$tmp/lg-$n.out")     load")
		rows+=("$(grep -A1 -E '^ +N +held' "$tmp/lg-$n.out" | tail -1)       1m")
	fi
	rows+=("$(tail -1 "$tmp/lg-$n.out")   $load")
	header=
	kill "$dpid" 2> /dev/null || true
	wait "$dpid" 2> /dev/null || true
	dpid=
done
echo
printf '%s\n' "${rows[@]}"
