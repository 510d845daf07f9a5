#!/usr/bin/env bash
# ICMP probe and first-hop lookup through a real router: namespaces client (-a), router (-r)
# and server (-b) joined by veths, the client's default route via the router. The driver looks
# up the route to the server (must name the router and the client's veth), probes the server
# and the router for 1 s each over IPv4 and IPv6 — first through a raw socket (root, ping
# sockets off as in a fresh namespace), then through a ping socket (ping_group_range opened
# for gid 0) — and probes addresses the router refuses, which must come back as ICMP errors.
# Usage: check_icmp.sh ICMP_CHECK_BINARY
set -euo pipefail
driver=$1
. "$(dirname "$0")/../../lib/require.sh"
need_root "network namespaces for icmp_netns"
need_cmd ip iproute2 nft nftables
p=bmt-icmp-$$
a=$p-a r=$p-r b=$p-b
cleanup() {
	for ns in "$a" "$r" "$b"; do
		ip netns del "$ns" 2> /dev/null || true
	done
}
trap cleanup EXIT

# Benchmarking ranges (RFC 2544, RFC 5180), subnets the namespace lab does not use.
c4=198.18.41.2 r4c=198.18.41.1 r4s=198.18.42.1 s4=198.18.42.2
c6=2001:2:0:41::2 r6c=2001:2:0:41::1 r6s=2001:2:0:42::1 s6=2001:2:0:42::2
route4=198.18.42.99 route6=2001:2:0:42::99 nft4=198.18.42.98
for ns in "$a" "$r" "$b"; do
	ip netns add "$ns"
	# No duplicate address detection, link-local addresses included: a tentative router
	# address leaves neighbour discovery unanswered for the first second.
	ip netns exec "$ns" sysctl -q -w net.ipv6.conf.all.accept_dad=0 \
		net.ipv6.conf.default.accept_dad=0
	ip -n "$ns" link set lo up
done
ip -n "$a" link add veth-r type veth peer name veth-c netns "$r"
ip -n "$r" link add veth-s type veth peer name veth-r netns "$b"
# addr NS DEV V4 V6
addr() {
	ip -n "$1" link set "$2" up
	ip -n "$1" addr add "$3/24" dev "$2"
	ip -n "$1" -6 addr add "$4/64" dev "$2" nodad
}
addr "$a" veth-r $c4 $c6
addr "$r" veth-c $r4c $r6c
addr "$r" veth-s $r4s $r6s
addr "$b" veth-r $s4 $s6
ip -n "$a" route add default via $r4c
ip -n "$a" -6 route add default via $r6c
ip -n "$b" route add default via $r4s
ip -n "$b" -6 route add default via $r6s
# The router forwards and answers every ICMP error it may (no per-destination rate limit),
# and refuses three addresses on the server's subnet: by unreachable routes, and for IPv4 also
# by a firewall reject (below), since IPv4 errors for unreachable routes have a second limit
# that is not per namespace (net.ipv4.route.error_cost: a burst of about 5, then 1/s).
ip netns exec "$r" sysctl -q -w net.ipv4.ip_forward=1 net.ipv6.conf.all.forwarding=1 \
	net.ipv4.icmp_ratelimit=0 net.ipv6.icmp.ratelimit=0
ip -n "$r" route add unreachable $route4/32
ip -n "$r" -6 route add unreachable $route6/128
if ! ip netns exec "$r" nft -f - <<- EOF; then
	table ip bmt {
		chain forward {
			type filter hook forward priority 0;
			ip daddr $nft4 reject with icmp type host-unreachable
		}
	}
	EOF
	echo "FAIL icmp_netns: nft could not load the router's reject rule"
	exit 1
fi

fail=0
# run DESCRIPTION ARGS...: one driver run in the client namespace.
run() {
	local what=$1
	shift
	echo "== $what"
	if ! ip netns exec "$a" "$driver" "$@"; then
		echo "FAIL icmp_netns: $what"
		fail=1
	fi
}
# each METHOD: every check, with the socket kind the probe must choose.
each() {
	local method=$1
	run "IPv4 $method: server and gateway" path $s4 $r4c veth-r "$method"
	run "IPv6 $method: server and gateway" path $s6 $r6c veth-r "$method"
	run "IPv4 $method: unreachable route (rate-limited errors)" unreach $route4 "$method" 1
	run "IPv6 $method: unreachable route" unreach $route6 "$method" 90
	run "IPv4 $method: firewall reject" unreach $nft4 "$method" 90
}

range=$(ip netns exec "$a" cat /proc/sys/net/ipv4/ping_group_range)
if [ "$(echo $range)" != "1 0" ]; then
	echo "FAIL icmp_netns: a fresh namespace allows ping sockets ($range); cannot test raw"
	exit 1
fi
each "raw socket"
ip netns exec "$a" sysctl -q -w net.ipv4.ping_group_range="0 0"
each "ping socket"
if [ $fail -ne 0 ]; then
	exit 1
fi
echo "PASS icmp_netns: route lookup, echo to server and gateway, and ICMP errors, over IPv4" \
	"and IPv6, through raw and ping sockets"
