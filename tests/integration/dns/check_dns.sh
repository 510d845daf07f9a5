#!/usr/bin/env bash
# The DNS responder end to end: the real bloatmeterd on loopback answers real dig queries by
# the rules of docs/protocol.md ("DNS responder"), announces itself in the welcome, and the
# client's DNS probe module gets >= 90 % answers with sane RTTs, then is rate-limited when it
# floods. As root it runs in a private network namespace (its own loopback, IPv4 and IPv6);
# otherwise on the host's 127.0.0.1 with free ports, without the IPv6 checks.
# Usage: check_dns.sh BINDIR
set -euo pipefail
bindir=$1
zone=probe.bloatmeter.test
. "$(dirname "$0")/../../lib/require.sh"
need_cmd dig bind9-dnsutils python3 python3
work=$(mktemp -d)
ns=
dpid=
cleanup() {
	if [ -n "$dpid" ]; then kill "$dpid" 2> /dev/null || true; wait "$dpid" 2> /dev/null || true; fi
	[ -n "$ns" ] && ip netns del "$ns" 2> /dev/null
	rm -rf "$work"
}
trap cleanup EXIT
run=()
bind=()
v6=0
if [ "$(id -u)" -eq 0 ] && ip netns add "bmt-dns-$$" 2> /dev/null; then
	ns=bmt-dns-$$
	run=(ip netns exec "$ns")
	ip -n "$ns" link set lo up
	v6=1
else
	bind=(-b 127.0.0.1) # never listen beyond loopback on a shared host
fi
fail=0
check() { # NAME COMMAND...: runs the check, reports it, remembers a failure
	local name=$1
	shift
	if "$@"; then echo "ok   $name"; else echo "FAIL $name"; fail=1; fi
}

# Start the daemon; on the host a random port pair may be taken, so try a few.
for try in 1 2 3 4 5; do
	if [ -n "$ns" ]; then port=4750; else port=$((20000 + RANDOM % 40000)); fi
	dport=$((port + 1))
	"${run[@]}" "$bindir/bloatmeterd" "${bind[@]}" --allow-root yes -v -p "$port" --dns-port "$dport" \
		> "$work/daemon.log" 2>&1 &
	dpid=$!
	up=0
	for i in $(seq 30); do
		kill -0 "$dpid" 2> /dev/null || break
		if "${run[@]}" dig @127.0.0.1 -p "$dport" +time=1 +tries=1 +norec "$zone" A > /dev/null 2>&1; then
			up=1
			break
		fi
		sleep 0.1
	done
	[ "$up" = 1 ] && break
	kill "$dpid" 2> /dev/null || true
	wait "$dpid" 2> /dev/null || true
	dpid=
done
if [ -z "$dpid" ]; then
	cat "$work/daemon.log"
	echo "FAIL dns_dig: the daemon did not start answering DNS"
	exit 1
fi

ask() { # SERVER TYPE NAME: the full dig output over UDP, no recursion asked
	"${run[@]}" dig "@$1" -p "$dport" +notcp +norec +time=2 +tries=2 "$3" "$2" > "$work/out" 2>&1 || true
	cat "$work/out"
}
has() { grep -Eq -- "$1" "$work/out"; }
status_is() { has "status: $1,"; }
answers() { has "ANSWER: $1,"; }
authoritative() { has "flags: qr aa;"; }

ask 127.0.0.1 A "$zone" > /dev/null
check "apex A: NOERROR, authoritative, the local IPv4 address" \
	eval 'status_is NOERROR && authoritative && has "^$zone\.[[:space:]]+0[[:space:]]+IN[[:space:]]+A[[:space:]]+127\.0\.0\.1$"'
ask 127.0.0.1 A "x-1.$zone" > /dev/null
check "one label below, A" eval 'status_is NOERROR && has "IN[[:space:]]+A[[:space:]]+127\.0\.0\.1$"'
ask 127.0.0.1 TXT "Who.$zone" > /dev/null
check "TXT whoami over IPv4" eval 'status_is NOERROR && has "^Who\.$zone\.[[:space:]]+0[[:space:]]+IN[[:space:]]+TXT[[:space:]]+\"127\.0\.0\.1\"$"'
ask 127.0.0.1 AAAA "x.$zone" > /dev/null
check "AAAA over IPv4: NOERROR, no answer" eval 'status_is NOERROR && answers 0'
ask 127.0.0.1 MX "x.$zone" > /dev/null
check "other type: NOERROR, no answer" eval 'status_is NOERROR && answers 0 && authoritative'
ask 127.0.0.1 ANY "$zone" > /dev/null
check "ANY: REFUSED" eval 'status_is REFUSED && answers 0'
ask 127.0.0.1 A "example.com" > /dev/null
check "outside the zone: REFUSED" eval 'status_is REFUSED && answers 0'
ask 127.0.0.1 A "a.b.$zone" > /dev/null
check "two labels below: NXDOMAIN, authoritative" eval 'status_is NXDOMAIN && authoritative'
"${run[@]}" dig @127.0.0.1 -p "$dport" +notcp +norec +time=2 +tries=2 +opcode=status "$zone" > "$work/out" 2>&1 || true
check "opcode STATUS: NOTIMP" status_is NOTIMP
if [ "$v6" = 1 ]; then
	# An answer is never larger than its query (issue 16): a plain query gets the question
	# with TC set; one padded with EDNS(0) (RFC 7830) gets the record.
	"${run[@]}" dig @::1 -p "$dport" +notcp +ignore +noedns +norec +time=2 +tries=2 "x.$zone" AAAA > "$work/out" 2>&1 || true
	check "AAAA over IPv6, unpadded: truncated, no answer" eval 'status_is NOERROR && answers 0 && has "flags: qr aa tc;"'
	"${run[@]}" dig @::1 -p "$dport" +notcp +norec +padding=64 +time=2 +tries=2 "x.$zone" AAAA > "$work/out" 2>&1 || true
	check "AAAA over IPv6, padded: the local IPv6 address" eval 'status_is NOERROR && has "IN[[:space:]]+AAAA[[:space:]]+::1$"'
	ask ::1 TXT "x.$zone" > /dev/null
	check "TXT whoami over IPv6" eval 'has "IN[[:space:]]+TXT[[:space:]]+\"::1\"$"'
	ask ::1 A "x.$zone" > /dev/null
	check "A over IPv6: NOERROR, no answer" eval 'status_is NOERROR && answers 0'
fi
echo "--- dig $zone A, as seen:"
ask 127.0.0.1 A "$zone" | sed -n '/HEADER/,/MSG SIZE/p'

# The welcome tells clients where the responder is.
"${run[@]}" python3 - 127.0.0.1 "$port" > "$work/welcome" << 'EOF' || true
import json, socket, struct, sys
s = socket.create_connection((sys.argv[1], int(sys.argv[2])), timeout=5)
hello = json.dumps({"v": 1, "type": "hello", "client_version": "test", "cc": "cubic",
                    "duration_s": 5}).encode()
s.sendall(struct.pack(">I", len(hello)) + hello)
buf = b""
while len(buf) < 4 or len(buf) < 4 + struct.unpack(">I", buf[:4])[0]:
    chunk = s.recv(65536)
    if not chunk:
        break
    buf += chunk
w = json.loads(buf[4:4 + struct.unpack(">I", buf[:4])[0]])
print(w.get("type"), w.get("dns_port"), w.get("dns_zone"))
EOF
check "welcome announces dns_port $dport and dns_zone $zone" \
	grep -qx "welcome $dport $zone" "$work/welcome"

# The client's probe module against the responder: >= 90 % answered, sane RTTs.
check "probe module, A over IPv4, 100 queries/s for 1 s" \
	"${run[@]}" "$bindir/dns_probe_check" 127.0.0.1 "$dport" "$zone" A 10 1000 90
if [ "$v6" = 1 ]; then
	check "probe module, AAAA over IPv6" \
		"${run[@]}" "$bindir/dns_probe_check" ::1 "$dport" "$zone" AAAA 10 1000 90
fi
# Flooding at 1000 queries/s from one address: the limiter (burst 100, 200/s) answers about
# a third; the rest are dropped, counted, and seen by the probe as lost.
sleep 0.6 # refill the bucket the checks above used
check "probe module flooding 1000/s is rate-limited to 15..50 %" \
	"${run[@]}" "$bindir/dns_probe_check" 127.0.0.1 "$dport" "$zone" TXT 1 1000 15 50

kill "$dpid"
wait "$dpid" || true
dpid=
echo "--- daemon log:"
cat "$work/daemon.log"
check "daemon counted rate-limited queries" \
	grep -Eq 'DNS: [0-9]+ queries, [0-9]+ answered, [0-9]+ refused, [0-9]+ bad, [1-9][0-9]* rate-limited' "$work/daemon.log"
if [ "$fail" = 0 ]; then
	echo "PASS dns_dig: responder rules, welcome, probe module and rate limit"
else
	echo "FAIL dns_dig"
fi
exit "$fail"
