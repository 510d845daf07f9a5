#!/usr/bin/env bash
# Hostile input against the live daemon, in a private network namespace (its own loopback):
# bad bytes on both ports, a vanishing client, then proof that a normal test still succeeds and
# the daemon is still running. Usage: hostile.sh BINDIR
set -euo pipefail
bindir=$1
if [ "$(id -u)" -ne 0 ]; then
	echo "SKIP: needs root for a private network namespace"
	exit 77
fi
ns=bmh$$
port=4750
ip netns add "$ns"
dpid=
cleanup() {
	[ -n "$dpid" ] && kill "$dpid" 2> /dev/null && wait "$dpid" 2> /dev/null
	ip netns del "$ns" 2> /dev/null || true
}
trap cleanup EXIT
ip -n "$ns" link set lo up
ip netns exec "$ns" "$bindir/bloatmeterd" -p $port --max-sessions 1 -v &
dpid=$!
sleep 0.5
ip netns exec "$ns" "$bindir/hostile" 127.0.0.1 $port
# The session the vanished client left must be freed: with --max-sessions 1 a leak would
# make this normal test fail with "busy".
sleep 0.5
ip netns exec "$ns" "$bindir/bloatmeter" -p $port -t 2 --idle 1 --gap 0.5 -J 127.0.0.1 > "$bindir/hostile-after.json"
jq -e '.phases | length == 4' "$bindir/hostile-after.json" > /dev/null
jq -e '[.phases[].probes.received] | add > 100' "$bindir/hostile-after.json" > /dev/null
ip netns exec "$ns" "$bindir/bloatmeter" -p $port -t 2 --idle 1 --gap 0.5 -q ::1
kill -0 "$dpid"
echo "PASS hostile: daemon survived and served normal tests over IPv4 and IPv6 afterwards"
