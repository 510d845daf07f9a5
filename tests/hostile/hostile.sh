#!/usr/bin/env bash
# Hostile input against the live daemon, in a private network namespace (its own loopback):
# 1. bad bytes on both ports, a vanishing client, then proof that a normal test still succeeds
#    over IPv4 and IPv6 (--max-sessions 1, so a leaked session would refuse it);
# 2. under load, against a second daemon (--max-sessions 4 --max-flows 4: at most 80 pending
#    connections in all, 24 per client): slowloris connections from one source (silent,
#    trickling, half a hello; more than that client's share), a flood of bad datagrams at the
#    reflector and DNS ports, and meanwhile a normal test from another source, which must
#    succeed; then slowloris from four sources at once, past the global cap, a client with a
#    session that opens silent connections (held to its cap: another client is served), a
#    flood of connections that each earn an error reply (their lingering closes capped), and a
#    normal test after it. Throughout, the daemon must stay up and its RSS bounded; its counters, logged
#    at shutdown, must show the bad input.
# 3. with a psk-file: challenges held unanswered by one source are capped and closed within the
#    handshake timeout.
# 4. a session whose client never reads its control connection, says bye and keeps probing
#    is freed within a bounded time of the bye; one that never reads during its test is ended
#    at the backlog cap (16 KiB unsent), long before its deadline.
# 5. a congestion control the kernel does not have is refused without being tried (strace).
# 6. an HTTP request whose headers trickle in is closed at the connection's fixed deadline.
# Usage: hostile.sh BINDIR
set -euo pipefail
bindir=$1
. "$(dirname "$0")/../lib/require.sh"
need_root "a private network namespace"
need_cmd ip iproute2 jq jq python3 python3
# (not harness.sh: its check() and $pids are this script's own)
. "$(dirname "$0")/../lib/netns.sh"
ns=bmh$$
port=4750
dpid=
tmp=$(mktemp -d)
cleanup() {
	[ -n "$dpid" ] && kill "$dpid" 2> /dev/null && wait "$dpid" 2> /dev/null
	netns_cleanup
	rm -rf "$tmp"
}
trap cleanup EXIT
netns_new "$ns"
# Root in a test namespace: the daemon would otherwise refuse to keep running as root.
dflags=()
"$bindir/bloatmeterd" -n --allow-root yes > /dev/null 2>&1 && dflags+=(--allow-root yes)
ip netns exec "$ns" "$bindir/bloatmeterd" "${dflags[@]}" -p $port --max-sessions 1 -v &
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
kill "$dpid"
wait "$dpid" || true

echo "== under load: slowloris, UDP floods, a normal test alongside =="
port=4760
log=$tmp/daemon.log
ip netns exec "$ns" "$bindir/bloatmeterd" "${dflags[@]}" -p $port --max-sessions 4 --max-flows 4 \
	-v > "$log" 2>&1 &
dpid=$!
sleep 0.5
# Resident set (VmRSS) and its peak so far (VmHWM), KiB.
mem() { awk -v k="$2:" '$1 == k { print $2 }' "/proc/$1/status"; }
base=$(mem $dpid VmRSS)
# Normal tests come from 127.0.0.1, attacks from other loopback addresses (other clients).
ip netns exec "$ns" "$bindir/hostile" --slowloris 127.0.0.1 $port 127.0.0.2 60 12 > "$tmp/loris1" &
loris=$!
ip netns exec "$ns" "$bindir/hostile" --udp-flood 127.0.0.1 $port 127.0.0.3 5 20000 > "$tmp/flood" &
flood=$!
sleep 1
rc=0
ip netns exec "$ns" "$bindir/bloatmeter" -p $port -t 2 --idle 1 --gap 0.5 -P 2 -J 127.0.0.1 \
	> "$tmp/during.json" || rc=$?
echo "normal test during slowloris and the flood: exit $rc," \
	"$(jq '.probes.received' "$tmp/during.json" 2> /dev/null || echo '?') of" \
	"$(jq '.probes.sent' "$tmp/during.json" 2> /dev/null || echo '?') probes answered"
frc=0
wait $flood || frc=$?
lrc=0
wait $loris || lrc=$?
cat "$tmp/flood" "$tmp/loris1"
[ $rc -eq 0 ] || { echo "FAIL: the normal test failed under attack"; exit 1; }
[ $frc -eq 0 ] && [ $lrc -eq 0 ] || { echo "FAIL: see the attack checks above"; exit 1; }
# Past the global cap: 4 sources × 30 connections, 24 held each, 80 in all.
pids=()
for i in 5 6 7 8; do
	ip netns exec "$ns" "$bindir/hostile" --slowloris 127.0.0.1 $port 127.0.0.$i 30 6 \
		> "$tmp/loris$i" &
	pids+=($!)
done
for p in "${pids[@]}"; do
	wait "$p" || { cat "$tmp"/loris[5-8]; echo "FAIL: slowloris wave"; exit 1; }
done
cat "$tmp"/loris[5-8]
# After its one error reply the server lingers at most 2 s from the reply, however the peer
# trickles bytes (a read timeout that restarts on every byte would keep it forever).
ip netns exec "$ns" python3 - 127.0.0.1 $port << 'EOF' || { echo "FAIL: trickle after an error reply"; exit 1; }
import socket, sys, time
s = socket.create_connection((sys.argv[1], int(sys.argv[2])), timeout=5,
                             source_address=("127.0.0.9", 0))
s.sendall(b"\0\0\0\0")  # a zero-length frame: one error reply, a half-close, then close
t0 = time.monotonic()
s.settimeout(0.2)
reply, eof, closed = b"", False, None
while time.monotonic() - t0 < 10 and closed is None:
    try:
        b = s.recv(4096) if not eof else None
        if b == b"":
            eof = True  # the server's half-close; it still reads until its deadline
        elif b:
            reply += b
    except socket.timeout:
        pass
    except ConnectionResetError:
        closed = time.monotonic() - t0
        break
    time.sleep(0.2)
    try:
        s.send(b"x")  # one byte every 0.2 s; fails once the server has closed for good
    except OSError:
        closed = time.monotonic() - t0
print(f"trickle after an error reply: {len(reply)} reply bytes, half-closed {eof}, closed "
      f"after {closed if closed is None else round(closed, 2)} s")
sys.exit(0 if reply and closed is not None and closed < 3.5 else 1)
EOF
# A client with a running session (127.0.0.2) opens 100 silent connections: it is held to its
# own pending cap (24) like any other, so a client at 127.0.0.1 still gets its welcome (a
# session used to exempt its client, which could then fill all 80 places).
ip netns exec "$ns" "$bindir/hostile" --session-hog 127.0.0.1 $port 127.0.0.2 100 127.0.0.1 ||
	{ echo "FAIL: a client with a session took the whole pending budget"; exit 1; }
# 400 connections 1 ms apart, each earning an error reply and a lingering close (2 s), held
# unread: at most 80 (the pending cap) may linger at once, so the daemon's descriptors grow by
# at most that and a client's pending share (24), not by one per connection.
sleep 1
fds() { ls "/proc/$dpid/fd" | wc -l; }
fd0=$(fds)
ip netns exec "$ns" "$bindir/hostile" --linger-flood 127.0.0.1 $port 127.0.0.10 400 &
hpid=$!
fdmax=$fd0
while kill -0 $hpid 2> /dev/null; do
	n=$(fds)
	[ "$n" -le "$fdmax" ] || fdmax=$n
	sleep 0.1
done
wait $hpid
echo "lingering closes: daemon descriptors $fd0 before the flood, at most $fdmax during it"
[ "$fdmax" -le $((fd0 + 80 + 24 + 8)) ] ||
	{ echo "FAIL: lingering connections are not capped"; exit 1; }
ip netns exec "$ns" "$bindir/bloatmeter" -p $port --phases idle,download -t 2 --idle 1 --gap 0.5 \
	-P 2 -q 127.0.0.1
kill -0 $dpid
peak=$(mem $dpid VmHWM)
kill $dpid
wait $dpid || true
dpid=
# Bound: the pending cap (80) × one 64 KiB frame each is 5 MiB; four sessions' buffers and the
# threads' malloc arenas add a few more. 16 MiB over the start would mean something grows with
# the number of connections or datagrams, of which this test makes thousands.
bound=$((base + 16 * 1024))
echo "daemon RSS: $base KiB at start, peak (VmHWM) $peak KiB, bound $bound KiB"
[ "$peak" -le "$bound" ] || { echo "FAIL: RSS grew past the bound"; exit 1; }
grep -E "counters|DNS:" "$log"
# The first number after a phrase in the log ("timed out 12"), or the one before it ("3 bad").
after() { grep -oE "$1 [0-9]+" "$log" | head -1 | awk '{ print $NF }'; }
before() { grep -oE "[0-9]+ $1" "$log" | head -1 | awk '{ print $1 }'; }
fails=0
check() {
	if [ -n "$2" ] && [ "$2" -gt 0 ]; then
		echo "ok   counter: $1 = $2"
	else
		echo "FAIL counter: $1 = ${2:-missing}"
		fails=$((fails + 1))
	fi
}
check "connections timed out before their first message" "$(after "timed out")"
check "connections reset over the pending cap" "$(after "over the pending cap")"
check "lingering closes cut short over their cap" "$(after "lingering closes cut short")"
check "undecodable probe datagrams" "$(after "UDP reflected [0-9]+, bad" | tail -1)"
check "probe datagrams with unknown tokens" "$(after "unknown")"
check "malformed DNS queries" "$(before "bad, [0-9]+ rate-limited")"
check "DNS queries over the source's rate" "$(before "rate-limited")"
[ $fails -eq 0 ] || exit 1
echo "PASS hostile load: daemon stayed up, RSS bounded, counters show the attacks," \
	"normal tests passed"

echo "== with a psk-file: challenges held unanswered =="
# One source opens 40 connections, each with a 64 KiB hello, reads the challenge and never
# answers it. The hello stage counts against that client's pending cap (2 × 4 + 16 = 24 with
# --max-flows 4), so the rest are reset at accept, and it ends within the handshake timeout
# from accept: every held connection is closed by then.
port=4780
printf 'hostile %s\n' "$(head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n')" > "$tmp/psk"
chmod 600 "$tmp/psk"
ip netns exec "$ns" "$bindir/bloatmeterd" "${dflags[@]}" -p $port --max-sessions 4 --max-flows 4 \
	--psk-file "$tmp/psk" -v > "$log" 2>&1 &
dpid=$!
sleep 0.5
ip netns exec "$ns" "$bindir/hostile" --psk-hold 127.0.0.1 $port 127.0.0.2 40 24 ||
	{ echo "FAIL: held challenges"; exit 1; }
kill -0 $dpid
kill $dpid
wait $dpid || true
dpid=
echo "PASS hostile psk: the hello stage is capped and ends within the handshake timeout"

echo "== a closing session whose client never reads =="
# A client with a tiny receive buffer never reads its control connection, says bye and keeps
# its probes coming. The namespace's TCP send buffers are made small (4 KiB) for this daemon,
# so its stats fill them within seconds and the final stats cannot be flushed: the session
# must still end within SESSIONLIFE_CLOSE_S of the bye (--max-sessions 1: a new client gets
# its welcome), not hold its place until the daemon restarts.
port=4790
wmem=$(ip netns exec "$ns" cat /proc/sys/net/ipv4/tcp_wmem)
ip netns exec "$ns" sysctl -qw net.ipv4.tcp_wmem="4096 4096 4096"
ip netns exec "$ns" "$bindir/bloatmeterd" "${dflags[@]}" -p $port --max-sessions 1 -v > "$log" 2>&1 &
dpid=$!
sleep 0.5
rc=0
ip netns exec "$ns" "$bindir/hostile" --bye-hold 127.0.0.1 $port || rc=$?
[ $rc -eq 0 ] || { ip netns exec "$ns" sysctl -qw net.ipv4.tcp_wmem="$wmem"; echo "FAIL: a closing session held its place"; exit 1; }
# The same during the test: a client that asks for 280 s and keeps probing but never reads
# its stats is ended once 16 KiB of them wait unsent (SESSIONLIFE_BACKLOG_MAX), with a log
# line, not at its deadline.
ip netns exec "$ns" "$bindir/hostile" --read-hold 127.0.0.1 $port || rc=$?
ip netns exec "$ns" sysctl -qw net.ipv4.tcp_wmem="$wmem"
[ $rc -eq 0 ] || { echo "FAIL: a session whose client never reads held its place"; exit 1; }
grep -Eq "session [0-9]+: its client left [0-9]+ bytes of stats unread, ended" "$log" ||
	{ echo "FAIL: no log line for the unread session"; exit 1; }
kill -0 $dpid
kill $dpid
wait $dpid || true
dpid=
echo "PASS hostile closing: a session that never takes its stats is freed after its bye, or at the backlog cap"

echo "== a congestion control the kernel does not have =="
# With privileges, setting TCP_CONGESTION to a name the kernel does not have makes it try to
# load module tcp_NAME: a client must not get to choose kernel modules. Under strace, the
# daemon may set only names from tcp_available_congestion_control — a hello, and a test with
# load flows, asking for one it does not have are answered cc_ok false (the test runs with
# the default) without a single setsockopt of that name.
if command -v strace > /dev/null; then
	port=4800
	bad=bm_not_a_module # 15 bytes, [a-z_]: a valid name no kernel has
	ip netns exec "$ns" strace -f -qq -e trace=setsockopt -o "$tmp/strace" \
		"$bindir/bloatmeterd" "${dflags[@]}" -p $port -v > "$log" 2>&1 &
	spid=$!
	sleep 1
	dpid=$(pgrep -P $spid)
	ip netns exec "$ns" "$bindir/hostile" --cc 127.0.0.1 $port $bad | tee "$tmp/cc"
	ip netns exec "$ns" "$bindir/hostile" --cc 127.0.0.1 $port reno | tee -a "$tmp/cc"
	ip netns exec "$ns" "$bindir/bloatmeter" -p $port --phases idle,download -t 2 --idle 1 \
		--gap 0 -P 2 --cc $bad -q 127.0.0.1 > /dev/null
	kill $dpid
	wait $spid || true
	dpid=
	grep -q "^cc $bad: cc_ok 0" "$tmp/cc" || { echo "FAIL: cc $bad not refused"; exit 1; }
	grep -q "^cc reno: cc_ok 1, cc_used reno" "$tmp/cc" || { echo "FAIL: cc reno refused"; exit 1; }
	if grep "TCP_CONGESTION, \"$bad\"" "$tmp/strace"; then
		echo "FAIL: the daemon tried to set a congestion control the kernel does not have"
		exit 1
	fi
	# (strace shows a 4-byte name as a number: any successful set will do.)
	grep -q 'TCP_CONGESTION, .* = 0$' "$tmp/strace" || { echo "FAIL: strace saw no cc set"; exit 1; }
	echo "PASS hostile cc: only available congestion controls are ever set"
else
	echo "SKIP hostile cc: no strace"
fi

echo "== HTTP: a request whose headers trickle in =="
# One header byte every 4 s keeps evhttp's inactivity timeout (10 s) from ever firing; the
# connection must still be closed at its fixed deadline (HTTPCAP_CONN_MAX_S, 20 s) and not
# hold one of the http-max-connections slots for as long as the client likes.
port=4810
ip netns exec "$ns" "$bindir/bloatmeterd" "${dflags[@]}" -p $port --dns-port 0 --http-port 4811 \
	-v > "$log" 2>&1 &
dpid=$!
sleep 0.5
ip netns exec "$ns" python3 - 4811 << 'PYEOF' || { echo "FAIL: a trickling HTTP client kept its connection"; exit 1; }
import socket, sys, time
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=5)
s.sendall(b"GET / HTTP/1.1\r\nHost: t\r\nX-Slow: ")
t0, closed = time.monotonic(), None
s.settimeout(4)
while time.monotonic() - t0 < 30:
    try:
        if s.recv(4096) == b"":
            closed = time.monotonic() - t0
            break
    except socket.timeout:
        pass
    except ConnectionResetError:
        closed = time.monotonic() - t0
        break
    try:
        s.send(b"a")  # one byte of a header that never ends
    except OSError:
        closed = time.monotonic() - t0
        break
print("HTTP headers trickled one byte every 4 s: connection %s" %
      ("still open after 30 s" if closed is None else "closed after %.1f s" % closed))
sys.exit(0 if closed is not None and closed < 24 else 1)
PYEOF
kill -0 $dpid
kill $dpid
wait $dpid || true
dpid=
echo "PASS hostile http: a connection trickling its headers is closed at its deadline"
