#!/usr/bin/env bash
# -B / --bind end to end: in a namespace of its own, a daemon on 127.0.0.1 and a client bound
# to 127.0.1.2 (also on lo). nftables counts every packet that reaches 127.0.0.1: each one —
# control, load flows, UDP, DNS and TCP-connect probes, ICMP echoes — must come from
# 127.0.1.2, and each protocol must have been seen; the daemon's test list names the bound
# network. Then the same run without -B comes from 127.0.0.1, which proves the counters can
# tell. Usage: bind.sh BINDIR
set -uo pipefail
. "$(dirname "$0")/../../lib/require.sh"
need_root "a network namespace and nftables"
need_cmd nft nftables curl curl python3 python3
bindir=$1
b=$bindir/bloatmeter d=$bindir/bloatmeterd
. "$(dirname "$0")/../../lib/harness.sh"
. "$(dirname "$0")/../../lib/netns.sh"
ns=bmbind$$
bad() { echo "FAIL $*"; fail=1; }
x="ip netns exec $ns"

netns_new $ns || exit 1
# Every packet to the daemon's address, by source and protocol (lo delivers both directions
# through input; replies go to 127.0.1.2 and are not counted).
$x nft -f - << 'EOF' || exit 1
table inet bmbind {
	counter stray {}
	counter n_tcp {}
	counter n_udp {}
	counter n_icmp {}
	chain in {
		type filter hook input priority 0; policy accept;
		ip daddr 127.0.0.1 ip saddr != 127.0.1.2 counter name stray
		ip daddr 127.0.0.1 ip saddr 127.0.1.2 meta l4proto tcp counter name n_tcp
		ip daddr 127.0.0.1 ip saddr 127.0.1.2 meta l4proto udp counter name n_udp
		ip daddr 127.0.0.1 ip saddr 127.0.1.2 meta l4proto icmp counter name n_icmp
	}
}
EOF
$x "$d" -b 127.0.0.1 -p 4996 --dns-port 5396 --http-port 8096 --web-port 8196 --allow-root yes \
	> "$work/d.log" 2>&1 &
dpid=$!
wait_listen 4996 $ns
$x nft reset counters table inet bmbind > /dev/null || exit 1

packets() { $x nft list counter inet bmbind "$1" | awk '/packets/ { print $2 }'; }
run() { # run [BLOATMETER OPTIONS]: a short run with every probe that needs no capture
	$x "$b" "$@" -p 4996 --idle 1 -t 2 --gap 0 -P 2 --phases idle,download,upload \
		--probes udp,icmp,dns,tcp,inflow -J 127.0.0.1 > "$work/r.json" 2> "$work/c.err"
}

run -B 127.0.1.2
rc=$?
[ $rc -eq 0 ] || bad "the bound run exits $rc: $(tail -2 "$work/c.err")"
# Every probe kind ran and was answered at the bound address.
kinds=$(python3 -c "import json,sys
r = json.load(open(sys.argv[1]))
print(' '.join('%s=%d' % (k['kind'], sum(p['answered'] for p in k['phases']) if k['available'] else -1)
               for k in r['probe_kinds']))" "$work/r.json" 2>&1)
echo "     answered per probe kind: $kinds"
for k in icmp dns tcp_connect; do
	grep -Eq "(^| )$k=[1-9]" <<< "$kinds" || bad "the $k probe got no answer at 127.0.1.2"
done
stray=$(packets stray) tcp=$(packets n_tcp) udp=$(packets n_udp) icmp=$(packets n_icmp)
echo "     to 127.0.0.1: from 127.0.1.2 tcp $tcp, udp $udp, icmp $icmp; from elsewhere $stray"
[ "$stray" = 0 ] || bad "$stray packets reached the daemon from another address than -B's"
[ "${tcp:-0}" -gt 0 ] && [ "${udp:-0}" -gt 0 ] && [ "${icmp:-0}" -gt 0 ] ||
	bad "not every protocol came from 127.0.1.2 (tcp $tcp, udp $udp, icmp $icmp)"
tests=$($x curl -s http://127.0.0.1:8096/api/v1/tests)
if grep -q '"127.0.1.0/24"' <<< "$tests"; then
	echo "ok   /api/v1/tests names the client network 127.0.1.0/24"
else
	bad "/api/v1/tests does not name 127.0.1.0/24: ${tests:0:300}"
fi

# The HTTP mode against the daemon's public listener: its transfers (libcurl), connect probes
# and ICMP echoes leave from -B's address too.
$x nft reset counters table inet bmbind > /dev/null || exit 1
$x "$b" -B 127.0.1.2 --idle 1 -t 2 --gap 0 -P 2 --phases idle,download,upload \
	--probes udp,icmp,tcp,inflow -J http://127.0.0.1:8196/ > "$work/h.json" 2> "$work/h.err"
rc=$?
[ $rc -eq 0 ] || bad "the bound HTTP-mode run exits $rc: $(tail -2 "$work/h.err")"
stray=$(packets stray) tcp=$(packets n_tcp) icmp=$(packets n_icmp)
echo "     HTTP mode, to 127.0.0.1: from 127.0.1.2 tcp $tcp, icmp $icmp; from elsewhere $stray"
[ "$stray" = 0 ] || bad "HTTP mode: $stray packets reached the daemon from another address than -B's"
[ "${tcp:-0}" -gt 0 ] && [ "${icmp:-0}" -gt 0 ] ||
	bad "HTTP mode: not every protocol came from 127.0.1.2 (tcp $tcp, icmp $icmp)"

# Without -B the kernel picks 127.0.0.1: the stray counter must see it.
$x nft reset counters table inet bmbind > /dev/null || exit 1
run
stray=$(packets stray)
[ "${stray:-0}" -gt 0 ] || bad "an unbound run counted no stray packets: the check cannot tell"
echo "     unbound run: $stray packets from another address"
[ $fail -eq 0 ] && echo "PASS -B binds the control connection, the load and the probes"
exit $fail
