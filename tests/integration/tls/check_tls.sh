#!/usr/bin/env bash
# Pre-shared keys and TLS on the control channel, on the host's 127.0.0.1 with free ports:
# a throwaway CA signs a certificate for IP 127.0.0.1 and one for 127.0.0.2 (a wrong name);
# daemon A has psk-file, tls-cert and tls-key (plain accepted too), daemon B has
# tls-required = yes and the wrong-name certificate. Real clients check the right key over TLS
# (a short test whose JSON parses), wrong and unknown keys, no key, a wrong CA, a wrong host
# name, --insecure, plain against tls-required; hostile peers send garbage after 0x16 0x03,
# a cut-off ClientHello, or 4 bytes, and the daemon must close them (counted) and serve the
# next test. -n must refuse a key file other users can read. TLS load (--tls-load, daemon T):
# a real download and upload inside TLS with goodput > 0, the report's tls_load (version,
# cipher, kernel TLS false when the kernel has no tls module), its text line; a scripted
# session that asked for a TLS load gets its plain data connection closed and its TLS one
# served; a server without a certificate refuses such a hello. Usage: check_tls.sh BINDIR
set -uo pipefail
bindir=$1
d=$bindir/bloatmeterd
b=$bindir/bloatmeter
. "$(dirname "$0")/../../lib/require.sh"
need_cmd openssl openssl python3 python3 curl curl
. "$(dirname "$0")/../../lib/harness.sh"

# --- keys and certificates
cd "$work" || exit 1
gen_ca() { # NAME
	openssl req -x509 -newkey rsa:2048 -nodes -keyout "$1.key" -out "$1.pem" -days 2 \
		-subj "/CN=bloatmeter test $1" 2> /dev/null
}
gen_cert() { # NAME CA SAN
	openssl req -newkey rsa:2048 -nodes -keyout "$1.key" -out "$1.csr" -subj "/CN=$1" 2> /dev/null &&
		printf 'subjectAltName=%s\n' "$3" > "$1.ext" &&
		openssl x509 -req -in "$1.csr" -CA "$2.pem" -CAkey "$2.key" -CAcreateserial \
			-out "$1.pem" -days 2 -extfile "$1.ext" 2> /dev/null
}
if ! gen_ca ca || ! gen_ca otherca || ! gen_cert srv ca "IP:127.0.0.1" ||
	! gen_cert wrongname ca "IP:127.0.0.2"; then
	echo "FAIL tls_daemon: openssl could not make the test certificates"
	exit 1
fi
chmod 600 ./*.key
umask 077
echo "# test keys" > server.psk
echo "alice $(openssl rand -hex 32)" >> server.psk
echo "bob $(openssl rand -hex 48)   # a longer key" >> server.psk
grep '^alice' server.psk > alice.psk
grep '^bob' server.psk | sed 's/ *#.*//' > bob.psk
echo "alice $(openssl rand -hex 32)" > wrongkey.psk
echo "mallory $(openssl rand -hex 32)" > unknown.psk
umask 022

# Started as root, the daemon must be told it may stay root (if it knows that option).
root_line=
if [ "$(id -u)" = 0 ] && "$d" --help | grep -q -- --allow-root; then root_line="allow-root = yes"; fi
conf() { # FILE PORT EXTRA-LINES...
	local f=$1 port=$2
	shift 2
	{
		echo "port = $port"
		echo "bind = 127.0.0.1"
		echo "dns-port = 0"
		echo "verbose = 2"
		[ -n "$root_line" ] && echo "$root_line"
		for l in "$@"; do echo "$l"; done
	} > "$f"
}

# --- -n: files are opened and checked, not only named
conf a.conf 4750 "psk-file = $work/server.psk" "tls-cert = $work/srv.pem" "tls-key = $work/srv.key"
out=$("$d" -n -c a.conf 2>&1)
check "-n with key file and certificate: OK" test "$?:$out" = "0:bloatmeterd: configuration OK (a.conf)"
cp server.psk open.psk
chmod 644 open.psk
out=$("$d" -n -c a.conf --psk-file "$work/open.psk" 2>&1)
rc=$?
check "-n refuses a key file others can read, in one sentence" eval \
	'[ $rc = 2 ] && [ "$(wc -l <<< "$out")" = 1 ] && grep -q "open.psk is accessible to other users" <<< "$out"'
out=$("$d" -n -c a.conf --tls-key "$work/wrongname.key" 2>&1)
rc=$?
check "-n refuses a key that does not match the certificate" eval \
	'[ $rc = 2 ] && grep -q "does not match the certificate" <<< "$out"'
out=$("$d" -n -c a.conf --tls-cert "$work/missing.pem" 2>&1)
rc=$?
check "-n refuses a missing certificate" eval '[ $rc = 2 ] && grep -q "missing.pem" <<< "$out"'
out=$("$d" -n -c a.conf --tls-required yes --tls-cert "$work/srv.pem" --tls-key "$work/srv.key" 2>&1)
check "-n accepts tls-required with a certificate" test $? = 0

# --- the daemons (a random port may be taken, so try a few)
start() { # NAME CONF-EXTRA...: sets port_NAME
	local name=$1 port
	shift
	for _ in 1 2 3 4 5; do
		port=$((20000 + RANDOM % 40000))
		conf "$name.conf" "$port" "$@"
		"$d" -c "$name.conf" > "$name.log" 2>&1 &
		local pid=$!
		if wait_log "listening on 127.0.0.1 port $port" "$name.log"; then
			pids+=("$pid")
			eval "port_$name=$port pid_$name=$pid"
			return 0
		fi
		kill "$pid" 2> /dev/null
		wait "$pid" 2> /dev/null
	done
	cat "$name.log"
	echo "FAIL tls_daemon: daemon $name did not start"
	exit 1
}
start a "psk-file = $work/server.psk" "tls-cert = $work/srv.pem" "tls-key = $work/srv.key"
start b "tls-cert = $work/wrongname.pem" "tls-key = $work/wrongname.key" "tls-required = yes"
check "A says every session must authenticate" grep -q "pre-shared keys: 2 from" a.log
check "B says TLS is required" grep -q "TLS control connections with .*(required)" b.log

# The public test listener over HTTPS (web-tls) with the same certificate: the browser's and
# the HTTP mode's /__down and /__up answer after the handshake (they once closed on it).
wport=$((20000 + RANDOM % 40000))
start w "tls-cert = $work/srv.pem" "tls-key = $work/srv.key" "web-tls = yes" \
	"web-bind = 127.0.0.1" "web-port = $wport"
wurl=https://127.0.0.1:$wport
got=$(curl -sS --max-time 5 --cacert ca.pem -o down.bin -w '%{http_code}' "$wurl/__down?bytes=100000" 2> wdown.err)
check "web-tls: /__down?bytes=100000 over HTTPS: 200 ($got), 100000 bytes" \
	test "$got:$(stat -c %s down.bin 2> /dev/null)" = "200:100000"
head -c 1000000 /dev/zero > up.bin
got=$(curl -sS --max-time 5 --cacert ca.pem -o /dev/null -w '%{http_code}' --data-binary @up.bin "$wurl/__up" 2> wup.err)
check "web-tls: POST /__up of 1 MB over HTTPS: 200 ($got)" test "$got" = 200
got=$(curl -s --max-time 5 --cacert ca.pem -o /dev/null -w '%{http_code}' "$wurl/__nothing")
check "web-tls: an unknown path: 404 ($got)" test "$got" = 404
check "web-tls: plain HTTP to the HTTPS port gets no HTTP answer" \
	eval '! curl -s --max-time 5 -o /dev/null "http://127.0.0.1:$wport/__down?bytes=10"'
kill -TERM "$pid_w"
wait "$pid_w"
check "web-tls daemon: SIGTERM, exit 0" test $? = 0

client() { # PORT OUT-PREFIX ARGS...: a 1 s idle-only run; its exit code
	local port=$1 out=$2
	shift 2
	"$b" -p "$port" --phases idle --idle 1 -J "$@" > "$out.json" 2> "$out.err"
}
json_ok() { python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); sys.exit(0 if d["phases"] else 1)' "$1"; }
one_sentence() { # ERRFILE PATTERN: exactly one line besides the progress lines, and it matches
	local rest
	rest=$(grep -v -e '^bloatmeter: connecting to ' -e '^bloatmeter: [a-z]* phase, ' "$1")
	[ "$(wc -l <<< "$rest")" = 1 ] && grep -q -- "$2" <<< "$rest"
}

client "$port_a" good --tls --ca ca.pem --psk-file alice.psk 127.0.0.1
rc=$?
check "right key over TLS with --ca: exit 0" test $rc = 0
check "... and its JSON report parses" json_ok good.json
check "... the daemon logged the key id" grep -q "authenticated with key alice" a.log
client "$port_a" good2 --tls --ca ca.pem --psk-file bob.psk 127.0.0.1
check "a second key (96 hex digits) from the same file" test $? = 0
client "$port_a" plainpsk --psk-file alice.psk 127.0.0.1
check "right key without TLS (plain accepted on A)" test $? = 0

client "$port_a" wrongkey --tls --ca ca.pem --psk-file wrongkey.psk 127.0.0.1
rc=$?
check "wrong key: exit non-zero, one sentence" eval \
	'[ $rc != 0 ] && one_sentence wrongkey.err "server rejected the pre-shared key"'
check "... the daemon logged why at debug level" grep -q "authentication from .* failed: wrong MAC" a.log
client "$port_a" unknown --tls --ca ca.pem --psk-file unknown.psk 127.0.0.1
rc=$?
check "unknown key id: the same sentence" eval \
	'[ $rc != 0 ] && one_sentence unknown.err "server rejected the pre-shared key"'
client "$port_a" nokey --tls --ca ca.pem 127.0.0.1
rc=$?
check "no --psk-file against a PSK server: clear error" eval \
	'[ $rc != 0 ] && one_sentence nokey.err "the server requires a pre-shared key (--psk-file)"'
client "$port_b" noproof --tls --insecure --psk-file alice.psk 127.0.0.1
rc=$?
check "a key against a server without keys: the client refuses" eval \
	'[ $rc != 0 ] && grep -q "server could not prove the pre-shared key" noproof.err'
cp alice.psk loose.psk
chmod 644 loose.psk
client "$port_a" loose --tls --ca ca.pem --psk-file loose.psk 127.0.0.1
rc=$?
check "a client key file others can read is refused" eval \
	'[ $rc != 0 ] && one_sentence loose.err "loose.psk is accessible to other users"'

client "$port_a" wrongca --tls --ca otherca.pem --psk-file alice.psk 127.0.0.1
rc=$?
check "wrong CA: certificate verify failed, one sentence" eval \
	'[ $rc != 0 ] && one_sentence wrongca.err "TLS handshake with 127.0.0.1 failed: certificate verify failed"'
check "... counted on the daemon" wait_log "TLS handshake from .* failed: .*unknown ca" a.log
client "$port_b" wrongname --tls --ca ca.pem 127.0.0.1
rc=$?
check "certificate for another address: verify failed" eval \
	'[ $rc != 0 ] && one_sentence wrongname.err "certificate verify failed (.*mismatch)"'
client "$port_b" insecure --tls --insecure 127.0.0.1
rc=$?
check "--insecure: works, with a warning" eval \
	'[ $rc = 0 ] && json_ok insecure.json && grep -q "insecure: the server.s certificate is not checked" insecure.err'
client "$port_b" plain 127.0.0.1
rc=$?
check "plain client against tls-required: clear error" eval \
	'[ $rc != 0 ] && one_sentence plain.err "accepts control connections only over TLS"'
start c "max-sessions = 2"
client "$port_c" notls --tls --ca ca.pem 127.0.0.1
rc=$?
check "--tls against a server without a certificate: clear error" eval \
	'[ $rc != 0 ] && one_sentence notls.err "TLS handshake with 127.0.0.1 failed: .*(the server may not offer TLS)"'
"$b" -p "$port_a" --ca ca.pem 127.0.0.1 > /dev/null 2> ca-alone.out
rc=$?
check "--ca without --tls is bad usage" eval '[ $rc = 2 ] && grep -q "need --tls" ca-alone.out'

# --- TLS load: the bulk flows inside TLS too
start t "tls-cert = $work/srv.pem" "tls-key = $work/srv.key"
"$b" -p "$port_t" --phases download,upload -t 2 --idle 1 -J --tls-load --ca ca.pem 127.0.0.1 \
	> tlsload.json 2> tlsload.err
check "--tls-load download + upload: exit 0" test $? = 0
ktls_kernel=0
grep -qw tls /proc/sys/net/ipv4/tcp_available_ulp 2> /dev/null && ktls_kernel=1
cat > tlsload_check.py << 'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
t = d["config"]["tls_load"]
tp = {p["name"]: p["throughput_mbps"] for p in d["phases"]}
ok = (t is not None and t["version"].startswith("TLSv1.") and t["cipher"] and t["flows"] >= 2
      and tp["download"]["down"] > 0 and tp["upload"]["up"] > 0)
# Without the kernel's tls module nothing may claim kernel TLS.
if sys.argv[2] == "0":
    ok = ok and t["ktls"] is False and t["ktls_send_flows"] == 0 and t["ktls_recv_flows"] == 0
print(t, tp["download"]["down"], tp["upload"]["up"])
sys.exit(0 if ok else 1)
EOF
check "... goodput > 0 both ways, tls_load in the report (kernel TLS only if the kernel has it)" \
	python3 tlsload_check.py tlsload.json "$ktls_kernel"
"$b" -p "$port_t" --phases download -t 2 --idle 1 --tls-load --insecure -v 127.0.0.1 \
	> tlsload.txt 2> tlsload-text.err
check "... the text report says so in one line" eval \
	'[ $? = 0 ] && [ "$(grep -c "^load over TLS: TLSv1" tlsload.txt)" = 1 ]'
# Control frames for the scripted peers below (python3 imports it from their directory).
cat > frames.py << 'EOF'
import json, struct
def recv_all(s, n):
    b = b""
    while len(b) < n:
        c = s.recv(n - len(b))
        if not c:
            raise EOFError
        b += c
    return b
def frame(o):
    b = json.dumps(o).encode()
    return struct.pack(">I", len(b)) + b
def read_frame(s):
    return json.loads(recv_all(s, struct.unpack(">I", recv_all(s, 4))[0]))
EOF
cat > tlsload_refuse.py << 'EOF'
import socket, ssl, struct, sys
from frames import frame, read_frame, recv_all
port, ca = int(sys.argv[1]), sys.argv[2]
def conn(tls):
    s = socket.create_connection(("127.0.0.1", port), timeout=5)
    if not tls:
        return s
    ctx = ssl.create_default_context(cafile=ca)
    return ctx.wrap_socket(s, server_hostname="127.0.0.1")
hello = {"v": 1, "type": "hello", "client_version": "t", "cc": "cubic", "duration_s": 30,
         "tls_load": True}
if sys.argv[3] == "nocert":  # a server without a certificate: an error, not a session
    c = conn(False)
    c.sendall(frame(hello))
    print(read_frame(c).get("reason"))
    sys.exit(0)
ctl = conn(True)
ctl.sendall(frame(hello))
w = read_frame(ctl)
assert w["type"] == "welcome" and w.get("tls_load") is True, w
dh = b"BMD1" + bytes([1, ord("D")]) + struct.pack(">H", 0) + bytes.fromhex(w["token"]) + bytes(8)
p = conn(False)
p.sendall(dh)
try:
    print("plain", len(p.recv(4096)))  # 0: closed without a byte
except ConnectionResetError:
    print("plain 0")
t = conn(True)
t.sendall(dh)
rec = recv_all(t, 16)
print("tls", chr(rec[0]))  # the first record's type: 'D' (data)
EOF
python3 tlsload_refuse.py "$port_t" ca.pem session > refuse.out 2>&1
check "a TLS-load session: its plain data connection is closed, its TLS one served" eval \
	'grep -qx "plain 0" refuse.out && grep -qx "tls D" refuse.out'
python3 tlsload_refuse.py "$port_c" ca.pem nocert > nocert.out 2>&1
check "a TLS load from a server without a certificate: refused in one sentence" \
	grep -q "no TLS certificate for a TLS load" nocert.out

# --- hostile bytes after a TLS record header: closed (counted), never blocking the daemon
cat > hostile.py << 'EOF'
import socket, ssl, sys, time, os
port, kind = int(sys.argv[1]), sys.argv[2]
s = socket.create_connection(("127.0.0.1", port), timeout=10)
if kind == "garbage":
    s.sendall(b"\x16\x03\x01\x00\x40" + os.urandom(64) + b"\x16\x03" + os.urandom(4000))
elif kind == "short":
    s.sendall(b"\x16\x03\x01\x02")
    s.close()
    sys.exit(0)
else:  # a real ClientHello, cut off after 60 bytes: the handshake never completes
    ctx = ssl.create_default_context()
    ctx.check_hostname = False
    ctx.verify_mode = ssl.CERT_NONE
    inc, out = ssl.MemoryBIO(), ssl.MemoryBIO()
    obj = ctx.wrap_bio(inc, out, server_side=False)
    try:
        obj.do_handshake()
    except ssl.SSLWantReadError:
        pass
    s.sendall(out.read()[:60])
t0 = time.monotonic()
try:
    while s.recv(4096):
        pass
except OSError:
    pass
print("%.1f" % (time.monotonic() - t0))
EOF
python3 hostile.py "$port_a" garbage > garbage.out 2>&1
check "garbage after 0x16 0x03: the daemon closes at once" \
	awk '{ exit !($1 < 1) }' garbage.out
python3 hostile.py "$port_a" cut > cut.out 2>&1 &
cutpid=$!
python3 hostile.py "$port_a" short > /dev/null 2>&1
sleep 0.5
client "$port_a" during --tls --ca ca.pem --psk-file alice.psk 127.0.0.1
check "a test runs while a cut-off handshake waits" test $? = 0
wait "$cutpid"
check "the cut-off handshake is closed by the handshake timeout (<= 6 s)" \
	awk '{ exit !($1 >= 1 && $1 <= 6.5) }' cut.out
client "$port_a" after --tls --ca ca.pem --psk-file alice.psk 127.0.0.1
check "the daemon still serves a test afterwards" eval '[ $? = 0 ] && json_ok after.json'
check "the daemon is alive" kill -0 "$pid_a"

# --- counters, logged at a clean stop, with a connection in every stage before its session:
# each must be freed (the sanitizer build reports a leak as a non-zero exit).
cat > stages.py << 'EOF'
import socket, ssl, sys, time
from frames import frame, read_frame
port, ca, ready = int(sys.argv[1]), sys.argv[2], sys.argv[3]
conns = []
def raw():
    s = socket.create_connection(("127.0.0.1", port), timeout=5)
    conns.append(s)
    return s
ctx = ssl.create_default_context(cafile=ca)
raw()                                 # silent: the peek stage
raw().sendall(b"\0\0\0\x40{")         # half a frame: the plain stage
inc, out = ssl.MemoryBIO(), ssl.MemoryBIO()
half = ctx.wrap_bio(inc, out, server_hostname="127.0.0.1")
try:
    half.do_handshake()
except ssl.SSLWantReadError:
    pass
raw().sendall(out.read()[:60])        # half a ClientHello: the TLS stage on a worker
conns.append(ctx.wrap_socket(raw(), server_hostname="127.0.0.1"))  # TLS, no frame yet
c = ctx.wrap_socket(raw(), server_hostname="127.0.0.1")
conns.append(c)
c.sendall(frame({"v": 1, "type": "hello", "client_version": "t", "cc": "cubic",
                 "duration_s": 5}))
assert read_frame(c)["type"] == "challenge"  # control before its session (PSK)
e = raw()
e.sendall(b"\0\0\0\0")                # one error reply, then the closing linger
e.recv(4096)
time.sleep(0.2)
open(ready, "w").close()
time.sleep(10)
EOF
python3 stages.py "$port_a" ca.pem stages.ready > stages.out 2>&1 &
stagespid=$!
for _ in $(seq 50); do [ -e stages.ready ] && break; sleep 0.1; done
check "connections held in every stage (peek, plain, TLS, PSK challenge, error linger)" \
	test -e stages.ready
kill -TERM "$pid_a"
wait "$pid_a"
check "SIGTERM with them open: exit 0" test $? = 0
kill "$stagespid" 2> /dev/null
wait "$stagespid" 2> /dev/null
kill -TERM "$pid_t"
wait "$pid_t"
pids=("$pid_b" "$pid_c")
# T served the two --tls-load runs (their flows in the first one's report, one more download
# flow or more in the second) and the scripted session's one TLS data connection.
tls_flows=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["config"]["tls_load"]["flows"])' tlsload.json 2> /dev/null)
tls_line=$(grep -o "TLS load flows [0-9]* (kernel TLS: send [0-9]*, receive [0-9]*)" t.log)
read -r _ _ _ t_flows _ _ _ t_send _ t_recv <<< "${tls_line//[(),]/ }"
check "T counted its TLS load flows (>= $((${tls_flows:-0} + 2))): ${t_flows:-none}" \
	test "${t_flows:-0}" -ge "$((${tls_flows:-99} + 2))"
if [ "$ktls_kernel" = 0 ]; then
	check "... none in kernel TLS (the kernel has no tls module)" test "$t_send:$t_recv" = "0:0"
else
	check "... the kernel encrypts and decrypts every one" test "$t_send:$t_recv" = "$t_flows:$t_flows"
fi
check "counted: 2 failed authentications" grep -q "authentication failed 2," a.log
check "counted: at least 4 failed TLS handshakes" \
	grep -Eq "TLS handshakes failed ([4-9]|[1-9][0-9])" a.log
if [ "$fail" != 0 ]; then
	for f in a.log b.log t.log ./*.err ./*.out; do echo "--- $f"; cat "$f"; done
fi
exit "$fail"
