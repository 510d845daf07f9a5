#!/usr/bin/env bash
# --per-hop through a chain of namespaces: client — r1 — r2 — server, with a tbf bottleneck on
# r2's link to the server (upload direction), so the queue builds between hop 2 (r2) and hop
# 3 (the server). The verdict must name that link (queue_location.after_hop 2, r2's address),
# hops 1 and 2 must stay near idle and hop 3 rise by most of the buffer. Case "ratelimit": r1
# rate-limits its ICMP errors (net.ipv4.icmp_ratelimit): the verdict still names hop 2 and
# hop 1 is reported as rate-limiting ICMP. The chain is made here, not by `bloatmeter lab
# --hops` (lab_chain.sh), because these cases set per-namespace sysctls the lab does not; the
# daemon and client are the real binaries.
# The Prometheus file, the HTML queue section and the flent hop series say the same.
# Case "unpriv": the client runs as nobody and no ping socket is allowed, so --per-hop icmp
# falls back to UDP and says so.
#   lab_per_hop.sh BINDIR udp|icmp 4|6 [ratelimit|unpriv]
set -euo pipefail
bindir=$1 mode=$2 fam=$3 variant=${4:-plain}
name="lab_per_hop_${mode}${fam}_$variant"
. "$(dirname "$0")/../lib/require.sh"
need_root "network namespaces and tc for $name"
need_cmd jq jq ip iproute2 tc iproute2
out=$(mktemp -d)
p=bmh$$
ns=("$p-c" "$p-r1" "$p-r2" "$p-s")
dpid=
cleanup() {
	[ -n "$dpid" ] && kill "$dpid" 2> /dev/null && wait "$dpid" 2> /dev/null
	for n in "${ns[@]}"; do ip netns del "$n" 2> /dev/null || true; done
	rm -rf "$out"
}
trap cleanup EXIT
fail=0
bad() { echo "FAIL $name: $*"; fail=1; }

# Addresses of link L (1: c–r1, 2: r1–r2, 3: r2–s), side A (the client's) or B.
addr() { if [ "$fam" = 6 ]; then echo "fd71:$1::$2"; else echo "10.71.$1.$2"; fi; }
plen() { if [ "$fam" = 6 ]; then echo 64; else echo 24; fi; }
for n in "${ns[@]}"; do
	ip netns add "$n"
	ip -n "$n" link set lo up
	ip netns exec "$n" sysctl -qw net.ipv4.icmp_ratelimit=0 net.ipv6.icmp.ratelimit=0 \
		net.ipv4.ip_forward=1 net.ipv6.conf.all.forwarding=1
done
# link L between namespaces A and B: A gets address .1, B .2
link() {
	local l=$1 a=$2 b=$3
	ip link add "$p-$l-a" netns "$a" type veth peer name "$p-$l-b" netns "$b"
	ip -n "$a" addr add "$(addr "$l" 1)/$(plen)" dev "$p-$l-a" nodad 2> /dev/null ||
		ip -n "$a" addr add "$(addr "$l" 1)/$(plen)" dev "$p-$l-a"
	ip -n "$b" addr add "$(addr "$l" 2)/$(plen)" dev "$p-$l-b" nodad 2> /dev/null ||
		ip -n "$b" addr add "$(addr "$l" 2)/$(plen)" dev "$p-$l-b"
	ip -n "$a" link set "$p-$l-a" up
	ip -n "$b" link set "$p-$l-b" up
}
# the client's side of each link is .1 and the far side .2, except c–r1 where r1 is .1
link 1 "$p-r1" "$p-c"
link 2 "$p-r1" "$p-r2"
link 3 "$p-r2" "$p-s"
ip -n "$p-c" route add default via "$(addr 1 1)"
ip -n "$p-r1" route add default via "$(addr 2 2)"
ip -n "$p-r2" route add default via "$(addr 2 1)"
ip -n "$p-s" route add default via "$(addr 3 1)"
# the bottleneck: 10 Mbit/s, about 80 ms of buffer, on r2's link to the server
tc -n "$p-r2" qdisc add dev "$p-3-a" root tbf rate 10mbit burst 16kb latency 80ms
if [ "$variant" = ratelimit ]; then
	# r1 sends at most one ICMP error per 500 ms to a peer (after a burst of a few)
	ip netns exec "$p-r1" sysctl -qw net.ipv4.icmp_ratelimit=500 net.ipv6.icmp.ratelimit=500
fi
runas=()
if [ "$variant" = unpriv ]; then
	# an unprivileged client whose group no ping socket is allowed: ICMP falls back to UDP
	ip netns exec "$p-c" sysctl -qw net.ipv4.ping_group_range="1 0"
	need_cmd setpriv util-linux
	runas=(setpriv --reuid=65534 --regid=65534 --clear-groups)
	chmod 1777 "$out"
elif [ "$mode" = icmp ] && [ "$fam" = 4 ]; then
	# the unprivileged path: a ping socket (IPv6 ICMP below stays on the raw socket)
	ip netns exec "$p-c" sysctl -qw net.ipv4.ping_group_range="0 2147483647"
fi
sleep 2 # IPv6 addresses leave tentative state
server=$(addr 3 2)
port=$((20000 + RANDOM % 40000))
ip netns exec "$p-s" "$bindir/bloatmeterd" -b "$server" -p "$port" --dns-port 0 \
	--allow-root yes > "$out/daemon.log" 2>&1 &
dpid=$!
sleep 0.5
rc=0
# -Z root: a root client keeps root (its files go to $out, 0700 but for the unpriv variant).
ip netns exec "$p-c" timeout 50 "${runas[@]}" "$bindir/bloatmeter" -Z root -p "$port" --idle 3 -t 8 \
	--phases idle,upload --per-hop "$mode" --json-file "$out/r.json" --prometheus "$out/r.prom" --html "$out/r.html" --flent "$out/r.flent.gz" \
	"$server" > "$out/r.txt" 2>&1 ||
	rc=$?
cat "$out/r.txt"
if [ $rc -ne 0 ]; then
	cat "$out/daemon.log"
	echo "FAIL $name: bloatmeter exited $rc"
	exit 1
fi
r=$out/r.json
jq -c '.hops[]? | {hop, address, idle_rtt_ms, upload: .phases.upload, icmp_rate_limited}' "$r"
jq -c '.queue_location' "$r"
[ "$(jq '.hops | length' "$r")" = 3 ] || bad "expected 3 hops"
[ "$(jq -r '.queue_location.hop_count' "$r")" = 3 ] || bad "hop count is not 3"
[ "$(jq -r '.queue_location.after_hop' "$r")" = 2 ] || bad "the queue is not placed after hop 2"
[ "$(jq -r '.queue_location.after_address' "$r")" = "$(addr 2 2)" ] ||
	bad "the verdict does not name r2 ($(addr 2 2))"
jq -r '.queue_location.verdict' "$r" | grep -qF "between hop 2 ($(addr 2 2)) and hop 3 ($server)" ||
	bad "the verdict sentence does not name the link after hop 2"
[ "$(jq -r '.hops[0].address' "$r")" = "$(addr 1 1)" ] || bad "hop 1 is not r1"
inc3=$(jq -r '.hops[2].phases.upload.increase_ms' "$r")
inc2=$(jq -r '.hops[1].phases.upload.increase_ms' "$r")
awk -v a="$inc3" 'BEGIN { exit !(a >= 30) }' || bad "hop 3 rose only $inc3 ms (buffer 80 ms)"
awk -v a="$inc2" 'BEGIN { exit !(a < 15) }' || bad "hop 2 rose $inc2 ms: its replies do not cross the bottleneck"
grep -q "queue: the queue builds between hop 2" "$out/r.txt" || bad "no per-hop section in the text"
grep -q "^bloatmeter_queue_hop{server=\"[^\"]*\",phase=\"upload\"} 3$" "$out/r.prom" ||
	bad "the Prometheus file does not place the queue at hop 3"
grep -q "^bloatmeter_hop_rtt_median_seconds{.*hop=\"2\",address=\"$(addr 2 2)\",phase=\"upload\"}" \
	"$out/r.prom" || bad "the Prometheus file has no upload RTT for hop 2"
awk -v v="$(grep "^bloatmeter_hop_latency_increase_seconds{.*hop=\"3\",address=\"$server\",phase=\"upload\"}" \
	"$out/r.prom" | awk '{ print $NF }')" 'BEGIN { exit !(v != "" && v >= 0.03) }' ||
	bad "the Prometheus file has no upload increase ≥ 30 ms for hop 3"
# The HTML queue section: three hop rows, hop 3 (the queue's) highlighted, with the verdict.
[ "$(grep -c '^<tr\( class="queue-hop"\)\?><td>[0-9]*</td><td class="l">' "$out/r.html")" = 3 ] ||
	bad "the HTML per-hop table has not 3 rows"
grep -qF "<tr class=\"queue-hop\"><td>3</td><td class=\"l\">$server</td>" "$out/r.html" ||
	bad "the HTML does not highlight hop 3 ($server)"
grep -qF "between hop 2 ($(addr 2 2)) and hop 3 ($server)" "$out/r.html" || bad "no per-hop verdict in the HTML"
# flent: one ping series per hop, hop 3's upload RTT above hop 2's, addresses in NOTE.
/usr/bin/python3 - "$out/r.flent.gz" "$(addr 2 2)" << 'PY' || bad "the flent file has no usable hop series"
import gzip, json, sys
d = json.load(gzip.open(sys.argv[1], 'rt'))
res = d['results']
hops = [res.get('Ping (ms) hop %d' % h) for h in (1, 2, 3)]
assert all(h is not None and len(h) == len(d['x_values']) for h in hops), 'hop series'
assert 'Ping (ms) hop 4' not in res, 'a hop beyond the server'
assert 'hop 2 %s' % sys.argv[2] in d['metadata']['NOTE'], 'NOTE'
top = lambda h: max(v for v in h if v is not None)
assert top(hops[2]) > top(hops[1]) + 20, 'hop 3 does not rise above hop 2'
print('ok   flent: hop 1-3 series, peaks %.1f / %.1f / %.1f ms' % tuple(top(h) for h in hops))
PY
if [ "$variant" = unpriv ]; then
	[ "$(jq -r '.queue_location.method' "$r")" = udp ] || bad "method is not udp"
	jq -r '.warnings[]' "$r" | grep -qF "per-hop probes use UDP" || bad "no warning about the UDP fallback"
elif [ "$mode" = icmp ]; then
	want="raw socket"
	[ "$fam" = 4 ] && want="ping socket"
	[ "$(jq -r '.queue_location.method' "$r")" = "$want" ] || bad "method is not $want"
fi
if [ "$variant" = ratelimit ]; then
	[ "$(jq -r '.hops[0].icmp_rate_limited' "$r")" = true ] || bad "r1 is not reported rate-limiting"
	jq -r '.queue_location.evidence' "$r" | grep -q "hop 1 ($(addr 1 1)) rate-limits" ||
		bad "the evidence does not say r1 rate-limits ICMP"
else
	[ "$(jq -r '[.hops[].icmp_rate_limited] | any' "$r")" = false ] || bad "a hop reported rate-limiting"
fi
[ $fail = 0 ] && echo "ok   $name"
exit $fail
