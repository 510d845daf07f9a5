#!/usr/bin/env bash
# Concurrency benchmark (printed figures, no asserts): one bloatmeterd in its own network
# namespace, N concurrent clients in another, joined by one unshaped veth (no tbf), for each N
# in two modes:
#  probes  a probe-only run (--phases idle: UDP, ICMP, DNS and connect probes, no load)
#  full    idle, download, upload, bidirectional with load (-t SECONDS, BM_CC_FLOWS flows)
# A fresh daemon per row, so its peak RSS and its log belong to that row alone. Per row:
# sessions held at once (from the daemon's log), client exit codes, the reflector's hold time
# (server send − server receive stamps inside every UDP reply, the JSON's server_hold_us:
# median over clients of their p50 and p99, and the worst client's p99), the clients' RTT p50
# and p99 (median), the daemon's CPU (utime + stime over the row, % of one core) and VmHWM.
# In probes mode N irtt clients against `irtt server` give irtt's server processing time
# (its own send − receive stamps) and RTT the same way, at the same time (same contention).
# Usage: concurrency.sh BINDIR [SECONDS] [N ...]   (default 5 s; N = 1 8 32 64)
# Environment: BM_CC_MODES="probes full", BM_CC_FLOWS=2 (flows per loaded direction),
# BM_CC_DAEMON="--reflector-priority 10" (more daemon flags, split on blanks).
set -euo pipefail
bindir=$1
secs=${2:-5}
shift $(($# > 1 ? 2 : 1))
counts=("$@")
[ ${#counts[@]} -gt 0 ] || counts=(1 8 32 64)
modes=${BM_CC_MODES:-probes full}
flows=${BM_CC_FLOWS:-2}
. "$(dirname "$0")/../lib/require.sh"
need_root "network namespaces for the benchmarks"
need_cmd jq jq irtt irtt ip iproute2

c=bmqc$$ s=bmqs$$
srv=198.18.10.2
port=4760
tmp=$(mktemp -d)
dpid=
cleanup() {
	[ -n "$dpid" ] && kill "$dpid" 2> /dev/null && wait "$dpid" 2> /dev/null
	ip netns del $c 2> /dev/null || true
	ip netns del $s 2> /dev/null || true
	[ -n "${BM_CC_KEEP:-}" ] && echo "kept $tmp" || rm -rf "$tmp"
}
trap cleanup EXIT
ip netns add $c
ip netns add $s
ip link add bmq$$c netns $c type veth peer name bmq$$s netns $s
ip -n $c addr add 198.18.10.1/24 dev bmq$$c
ip -n $s addr add $srv/24 dev bmq$$s
for n in $c $s; do ip -n $n link set lo up; done
ip -n $c link set bmq$$c up
ip -n $s link set bmq$$s up

# Root in a test namespace: the daemon would otherwise refuse to keep running as root.
dflags=()
"$bindir/bloatmeterd" -n --allow-root yes > /dev/null 2>&1 && dflags+=(--allow-root yes)
read -r -a extra <<< "${BM_CC_DAEMON:-}"
dflags+=("${extra[@]}")
[ ${#extra[@]} -eq 0 ] || echo "daemon flags: ${extra[*]}"
maxn=0
for n in "${counts[@]}"; do [ "$n" -gt "$maxn" ] && maxn=$n; done
hz=$(getconf CLK_TCK)
# CPU ticks (user + system) of a process so far.
ticks_of() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }
# Peak resident set of a process, KiB.
hwm_of() { awk '/^VmHWM:/ { print $2 }' "/proc/$1/status"; }
now_s() { date +%s.%N; }
# The host's 1-minute load average: other work on these CPUs shows in every figure.
loadavg() { cut -d' ' -f1 /proc/loadavg; }
# Median and maximum of the numbers on stdin (one a line); "-" for none.
med() {
	sort -g | awk '{ v[NR] = $1 } END { if (NR == 0) print "-"; else print v[int((NR + 1) / 2)] }'
}
maxof() { sort -g | awk '{ m = $1 } END { print NR ? m : "-" }'; }
# Exit codes of a row as "count×code" pairs.
codes() { sort -n "$1" | uniq -c | awk '{ printf "%s%dx%d", (NR > 1 ? "," : ""), $1, $2 }'; }
# Sessions the daemon held at once: +1 at each session start line, −1 at each end.
held() {
	awk '/ session [0-9]+ from .*: cc / { n++; if (n > m) m = n }
	     / session [0-9]+ from .* ended after / { n-- } END { print m + 0 }' "$1"
}

# One row: a fresh daemon, N clients at once, the figures. In probes mode N irtt clients run
# against `irtt server` at the same time, so both see the same contention from this host.
run_row() {
	local mode=$1 n=$2 args t0 t1 k0 k1 pids=() ipids=() ipid='' ik0 ik1 ihwm dlog
	dlog=$tmp/d-$mode-$n.log
	if [ "$mode" = probes ]; then
		args=(--phases idle --idle "$secs")
	else
		args=(--phases idle,download,upload,bidirectional --idle 2 -t "$secs" --gap 1 -P "$flows")
	fi
	ip netns exec $s "$bindir/bloatmeterd" "${dflags[@]}" -p $port --max-sessions $((maxn + 4)) \
		--max-sessions-per-client $((maxn + 4)) -v > "$dlog" 2>&1 &
	dpid=$!
	if [ "$mode" = probes ]; then
		ip netns exec $s irtt server -b "$srv:2112" -i 0 > /dev/null 2>&1 &
		ipid=$!
	fi
	sleep 0.5
	: > "$tmp/rc"
	: > "$tmp/irc"
	k0=$(ticks_of $dpid)
	[ -z "$ipid" ] || ik0=$(ticks_of $ipid)
	t0=$(now_s)
	for i in $(seq "$n"); do
		ip netns exec $c "$bindir/bloatmeter" -p $port "${args[@]}" -J $srv \
			> "$tmp/$mode-$n-$i.json" 2> "$tmp/$mode-$n-$i.err" &
		pids+=($!)
		[ -z "$ipid" ] && continue
		ip netns exec $c irtt client -i 10ms -d "${secs}s" -l 100 -Q -o "$tmp/irtt-$n-$i.json" \
			"$srv:2112" > /dev/null 2>&1 &
		ipids+=($!)
	done
	for p in "${pids[@]}"; do
		rc=0
		wait "$p" || rc=$?
		echo $rc >> "$tmp/rc"
	done
	for p in "${ipids[@]}"; do
		rc=0
		wait "$p" || rc=$?
		echo $rc >> "$tmp/irc"
	done
	t1=$(now_s)
	k1=$(ticks_of $dpid)
	hwm=$(hwm_of $dpid)
	kill $dpid
	wait $dpid || true
	dpid=
	if [ -n "$ipid" ]; then
		ik1=$(ticks_of $ipid)
		ihwm=$(hwm_of $ipid)
		kill $ipid
		wait $ipid 2> /dev/null || true
	fi
	# Per client: the hold p50 and p99 of each phase (probes: idle; full: the loaded ones).
	local sel='.phases[] | select(.name != "idle") | .server_hold_us | select(. != null)'
	[ "$mode" = probes ] && sel='.phases[] | .server_hold_us | select(. != null)'
	# A failed client leaves no or half a report: what parses counts.
	jqall() { cat "$tmp/$mode-$n-"*.json | jq -r "$1" 2> /dev/null || true; }
	jqall "$sel | .p50" > "$tmp/h50"
	jqall "$sel | .p99" > "$tmp/h99"
	jqall '.phases[] | select(.name == "idle") | .rtt_ms.p50 | select(. != null)' > "$tmp/r50"
	jqall '.phases[] | select(.name == "idle") | .rtt_ms.p99 | select(. != null)' > "$tmp/r99"
	row "$mode" "$n" "$(held "$dlog")" "$(codes "$tmp/rc")" "$k0" "$k1" "$t0" "$t1" "$hwm"
	# Why clients failed, and what the daemon refused, when it did.
	for i in $(seq "$n"); do
		if [ -s "$tmp/$mode-$n-$i.err" ]; then head -1 "$tmp/$mode-$n-$i.err"; fi
	done | sort | uniq -c | sed "s/^ */        ($mode N=$n) clients: /"
	grep -h "rate-limited" "$dlog" | grep -v " 0 rate-limited" | sed "s/^/        ($mode N=$n) /" || true
	if grep -qv '^0$' "$tmp/rc"; then
		grep -h "counters" "$dlog" | sed "s/^/        ($mode N=$n) /" || true
	fi
	[ -z "$ipid" ] || irtt_row "$n" "$ik0" "$ik1" "$t0" "$t1" "$ihwm"
}

# Prints one table row from $tmp/h50, h99, r50, r99 (one figure per client and phase there).
row() {
	awk -v m="$1" -v n="$2" -v held="$3" -v rc="$4" -v k0="$5" -v k1="$6" -v t0="$7" -v t1="$8" \
		-v hwm="$9" -v hz="$hz" -v h50="$(med < "$tmp/h50")" -v h99="$(med < "$tmp/h99")" \
		-v h99m="$(maxof < "$tmp/h99")" -v r50="$(med < "$tmp/r50")" -v r99="$(med < "$tmp/r99")" \
		-v load="$(loadavg)" '
		function f(v, d) { return v == "-" ? v : sprintf("%." d "f", v) }
		BEGIN {
		printf "%-7s %4d %5s %-12s %9s %9s %9s %8s %8s %7.1f %8.1f %7.1f %5s\n", m, n, held, rc,
		       f(h50, 1), f(h99, 1), f(h99m, 1), f(r50, 3), f(r99, 3),
		       (k1 - k0) / hz / (t1 - t0) * 100, hwm / 1024, t1 - t0, load }'
}

# The irtt row: its server's processing time (send − receive stamps) and RTT per client.
irtt_row() {
	local f q='if length > 0 then .[((length - 1) * $p | floor)] else empty end'
	: > "$tmp/h50"
	: > "$tmp/h99"
	: > "$tmp/r50"
	: > "$tmp/r99"
	for f in "$tmp/irtt-$1-"*.json*; do
		zcat -f "$f" | jq '[.round_trips[] | select(.lost == "false")
			| (.timestamps.server.send.monotonic - .timestamps.server.receive.monotonic) / 1e3]
			| sort' > "$tmp/ih.json" 2> /dev/null || continue
		zcat -f "$f" | jq '[.round_trips[] | select(.lost == "false") | .delay.rtt / 1e6] | sort' \
			> "$tmp/ir.json" 2> /dev/null || continue
		jq -r --argjson p 0.5 "$q" "$tmp/ih.json" >> "$tmp/h50"
		jq -r --argjson p 0.99 "$q" "$tmp/ih.json" >> "$tmp/h99"
		jq -r --argjson p 0.5 "$q" "$tmp/ir.json" >> "$tmp/r50"
		jq -r --argjson p 0.99 "$q" "$tmp/ir.json" >> "$tmp/r99"
	done
	row irtt "$1" - "$(codes "$tmp/irc")" "$2" "$3" "$4" "$5" "$6"
}

echo "== concurrency: one bloatmeterd, N clients at once, unshaped veth, ${secs} s per run," \
	"$(nproc) CPUs =="
printf "%-7s %4s %5s %-12s %9s %9s %9s %8s %8s %7s %8s %7s %5s\n" mode N held "n x exit" "hold p50" \
	"hold p99" "p99 max" "rtt p50" "rtt p99" "CPU %" "HWM MiB" "wall s" load
printf "%-7s %4s %5s %-12s %9s %9s %9s %8s %8s %7s %8s %7s %5s\n" "" "" "" "" us us us ms ms \
	"1 core" "" "" "1 min"
for mode in $modes; do
	for n in "${counts[@]}"; do
		run_row "$mode" "$n"
	done
done
cat << 'EOF'
held: most sessions the daemon ran at once (its log). hold: the reflector's hold time, server
send − server receive stamps in each reply (bloatmeterd: the kernel's receive timestamp, so the
socket queue and the thread's wake-up count; irtt 0.9 takes both stamps in user space, after
the wake-up, so its figure is processing alone and reads lower); p50 and p99 are each
client's, then the median over clients, and "p99 max" the worst client. rtt p50, p99: the idle
phase's, median over clients. CPU %: the server process's utime + stime over the row's wall
time, as a share of one core. HWM: the server's peak resident set (fresh process per row).
load: the host's 1-minute load average at the row's end (other processes on these CPUs delay
the reflector's wake-up, which bloatmeterd's hold includes and irtt's does not).
irtt rows: N irtt clients (10 ms, 100 bytes, like bloatmeter's probes) against `irtt server`
in the same namespaces at the same time as the probes row above, so both see the same host.
full rows: the clients' load, the daemon's bulk flows and the reflector share the same CPUs
(both namespaces are on this host), so hold and CPU there measure CPU contention on this
machine as much as the daemon's own cost; the probes rows show that cost more directly.
EOF
