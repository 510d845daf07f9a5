#!/usr/bin/env bash
# Benchmarks (printed figures, no asserts), all in one run on one unshaped veth between two
# private namespaces, so the tools share the same path and the same two CPUs:
#  1. bulk goodput and CPU time: bloatmeter download with -P 8 vs iperf3 -P 8 -R
#  2. UDP probe RTT p50/p99 under that full load: bloatmeter's own probes vs irtt (10 ms)
# Usage: bench.sh BINDIR [SECONDS]
set -euo pipefail
bindir=$1
secs=${2:-10}
. "$(dirname "$0")/../lib/require.sh"
need_root "network namespaces for the benchmarks"
need_cmd iperf3 iperf3 irtt irtt jq jq ip iproute2
c=bmbc$$ s=bmbs$$
tmp=$(mktemp -d)
pids=()
cleanup() {
	for p in "${pids[@]}"; do kill "$p" 2> /dev/null || true; done
	wait 2> /dev/null || true
	ip netns del $c 2> /dev/null || true
	ip netns del $s 2> /dev/null || true
	rm -rf "$tmp"
}
trap cleanup EXIT
ip netns add $c
ip netns add $s
ip link add bmb$$c netns $c type veth peer name bmb$$s netns $s
ip -n $c addr add 198.18.9.1/24 dev bmb$$c
ip -n $s addr add 198.18.9.2/24 dev bmb$$s
for n in $c $s; do ip -n $n link set lo up; done
ip -n $c link set bmb$$c up
ip -n $s link set bmb$$s up
srv=198.18.9.2

# CPU seconds (user+system) a process has used so far.
cpu_of() { awk -v hz="$(getconf CLK_TCK)" '{ printf "%.2f", ($14 + $15) / hz }' "/proc/$1/stat"; }
# Runs a client command; prints its own CPU seconds (user+system) to the file in $1.
timed() {
	local f=$1
	shift
	local t0 t1
	t0=$(awk '{print $14+$15+$16+$17}' /proc/$$/stat)
	"$@"
	t1=$(awk '{print $14+$15+$16+$17}' /proc/$$/stat)
	awk -v a="$t0" -v b="$t1" -v hz="$(getconf CLK_TCK)" 'BEGIN { printf "%.2f", (b - a) / hz }' > "$f"
}

# Root in a test namespace: the daemon would otherwise refuse to keep running as root.
dflags=()
"$bindir/bloatmeterd" -n --allow-root yes > /dev/null 2>&1 && dflags+=(--allow-root yes)
ip netns exec $s "$bindir/bloatmeterd" "${dflags[@]}" -p 4750 &
pids+=($!)
dpid=$!
ip netns exec $s iperf3 -s -p 5201 > /dev/null &
pids+=($!)
ipid=$!
ip netns exec $s irtt server -b "$srv:2112" -i 0 > /dev/null 2>&1 &
pids+=($!)
sleep 1

echo "== 1. bulk download goodput and CPU, ${secs} s, 8 flows, unshaped veth =="
d0=$(cpu_of $dpid)
timed "$tmp/bm.cpu" ip netns exec $c "$bindir/bloatmeter" --phases download -t "$secs" --gap 0 -P 8 \
	-J "$srv" > "$tmp/bm.json"
d1=$(cpu_of $dpid)
bm_gbps=$(jq '.phases[] | select(.name == "download") | .throughput_mbps.down / 1000' "$tmp/bm.json")
i0=$(cpu_of $ipid)
timed "$tmp/ip.cpu" ip netns exec $c iperf3 -c "$srv" -p 5201 -P 8 -R -t "$secs" -O 2 -J > "$tmp/ip.json"
i1=$(cpu_of $ipid)
ip_gbps=$(jq '.end.sum_received.bits_per_second / 1e9' "$tmp/ip.json")
bm_srv=$(awk -v a="$d1" -v b="$d0" 'BEGIN { printf "%.2f", a - b }')
ip_srv=$(awk -v a="$i1" -v b="$i0" 'BEGIN { printf "%.2f", a - b }')
# CPU seconds (both ends) per gigabit moved: iperf3 sends for secs + 2 (its -O 2 warm-up).
per_gbit() { awk -v c="$1" -v s="$2" -v g="$3" -v t="$4" 'BEGIN { printf "%.3f", (c + s) / (g * t) }'; }
printf "%-12s %10s %14s %14s %18s\n" tool "Gbit/s" "client CPU s" "server CPU s" "CPU s per Gbit"
printf "%-12s %10.2f %14s %14s %18s\n" bloatmeter "$bm_gbps" "$(cat "$tmp/bm.cpu")" "$bm_srv" \
	"$(per_gbit "$(cat "$tmp/bm.cpu")" "$bm_srv" "$bm_gbps" "$secs")"
printf "%-12s %10.2f %14s %14s %18s\n" iperf3 "$ip_gbps" "$(cat "$tmp/ip.cpu")" "$ip_srv" \
	"$(per_gbit "$(cat "$tmp/ip.cpu")" "$ip_srv" "$ip_gbps" "$((secs + 2))")"
awk -v a="$bm_gbps" -v b="$ip_gbps" 'BEGIN { printf "goodput ratio bloatmeter/iperf3: %.3f\n", a / b }'
echo "(bloatmeter: goodput over its steady window, with its 100/s UDP probes running; iperf3: -O 2 omits its first 2 s)"
echo
echo "== 2. UDP probe RTT under full download load, 10 ms interval, same path =="
# irtt runs inside bloatmeter's download phase, starting 2 s in, for secs-3 s.
ip netns exec $c "$bindir/bloatmeter" --phases download -t "$secs" --gap 0 -P 8 -J "$srv" \
	> "$tmp/bm2.json" &
bmpid=$!
sleep 2.5
ip netns exec $c irtt client -i 10ms -d "$((secs - 3))s" -l 100 -Q -o "$tmp/irtt.json" "$srv:2112"
wait $bmpid
gunzip -f "$tmp/irtt.json.gz" 2> /dev/null || true
irtt_json=$tmp/irtt.json
[ -f "$irtt_json" ] || irtt_json=$(ls "$tmp"/irtt*.json | head -1)
jq '[.round_trips[] | select(.lost == "false") | .delay.rtt / 1e6] | sort' "$irtt_json" > "$tmp/irtt_rtt.json"
pct() { jq --argjson p "$2" '. as $a | ($a | length) as $n | if $n == 0 then null else $a[(($n - 1) * $p / 100 | floor)] end' "$1"; }
jq '[.samples.udp.data[] | select(.[2] == 0) | .[1]] | sort' "$tmp/bm2.json" > "$tmp/bm_rtt.json"
printf "%-12s %8s %10s %10s\n" tool samples "p50 ms" "p99 ms"
printf "%-12s %8s %10.3f %10.3f\n" bloatmeter "$(jq length "$tmp/bm_rtt.json")" "$(pct "$tmp/bm_rtt.json" 50)" "$(pct "$tmp/bm_rtt.json" 99)"
printf "%-12s %8s %10.3f %10.3f\n" irtt "$(jq length "$tmp/irtt_rtt.json")" "$(pct "$tmp/irtt_rtt.json" 50)" "$(pct "$tmp/irtt_rtt.json" 99)"
echo "(both probe the same loaded, unshaped path: the figures are the CPU-induced latency floor of this host)"
