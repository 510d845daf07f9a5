#!/usr/bin/env bash
# Hostile input against bloatmeterd's public test listener (--web-port), in a private network
# namespace (its own loopback): malformed and huge bytes=, bad methods, HTTP/0.9 and HTTP/2,
# heads too big or with NUL bytes, endless and stalled uploads, malformed and too frequent
# result posts, pipelined requests whose answers are never read, and slowloris from one source
# past its cap and from several past web-max-connections (tests/hostile/hostile_web.py). After
# each, a well-formed client must get a correct /__down answer within a bound, every hostile
# connection must have been closed within its deadline (short ones here: handshake-timeout 2 s,
# idle-timeout 2 s) and the daemon's file descriptors be back to their baseline. Then a subset
# again over HTTPS (web-tls), with a slowloris that trickles a real ClientHello.
# Usage: hostile_web.sh BINDIR
set -euo pipefail
bindir=$1
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../lib/require.sh"
need_root "a private network namespace"
need_cmd ip iproute2 python3 python3
ns=bmhw$$
port=4850
wport=4851
hs=2
idle=2
maxconns=24
perclient=1 # max-sessions-per-client: 8 public-listener connections per client address
. "$here/../lib/harness.sh"
. "$here/../lib/netns.sh"
netns_new "$ns"
# Root in a test namespace: the daemon would otherwise refuse to keep running as root.
dflags=()
"$bindir/bloatmeterd" -n --allow-root yes > /dev/null 2>&1 && dflags+=(--allow-root yes)
log=$work/daemon.log
# run [tls]: one daemon, the cases of hostile_web.py against its public listener.
run() {
	local extra=() rc=0
	[ "${1:-}" = tls ] && extra=(--tls-cert "$work/srv.pem" --tls-key "$work/srv.key" --web-tls yes)
	ip netns exec "$ns" "$bindir/bloatmeterd" "${dflags[@]}" -p $port --dns-port 0 \
		--web-port $wport --web-bind 127.0.0.1 --handshake-timeout $hs --idle-timeout $idle \
		--web-max-connections $maxconns --max-sessions-per-client $perclient "${extra[@]}" \
		-v > "$log" 2>&1 &
	dpid=$!
	wait_log "public test listener" "$log" || true # (hostile_web.py fails if it did not start)
	ip netns exec "$ns" python3 "$here/hostile_web.py" "$dpid" $wport $hs $idle $maxconns \
		$((perclient * 8)) "${1:-}" || rc=$?
	if ! kill -0 "$dpid" 2> /dev/null; then
		echo "FAIL: the daemon died"
		tail -30 "$log"
		exit 1
	fi
	kill "$dpid"
	wait "$dpid" || true
	dpid=
	# Under ASan (scripts/test.sh) a memory error or leak is reported at exit.
	if grep -E "ERROR: (Address|Leak)Sanitizer|runtime error:" "$log"; then
		echo "FAIL: the sanitizer reported an error"
		rc=1
	fi
	if [ $rc != 0 ]; then
		tail -20 "$log"
		exit 1
	fi
}
run
if command -v openssl > /dev/null; then
	openssl req -x509 -newkey rsa:2048 -nodes -keyout "$work/srv.key" -out "$work/srv.pem" \
		-days 2 -subj "/CN=127.0.0.1" 2> /dev/null
	chmod 600 "$work/srv.key"
	run tls
else
	echo "SKIP hostile web over TLS: no openssl (Debian package openssl)"
fi
