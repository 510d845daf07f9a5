#!/usr/bin/env bash
# bloatmeterd's HTTP listener end to end on the host's 127.0.0.1 with free ports: /healthz,
# /metrics (promtool check metrics, before and after a test), one short real client test, then
# /api/v1/tests (one entry with bytes both ways and the client's reported summary), 404, 405,
# a bad limit, an oversize header (4xx, and the daemon still serves), the dashboard's headers,
# headless Chromium rendering the dashboard (the test's row and an SVG chart with drawn
# paths; screenshot kept at BINDIR/dashboard.png), the connection count back at 1 after all
# that (every way a connection ended took it down again), http-max-connections (idle
# connections fill it; one more waits unanswered until a slot frees), and /healthz 503 while a
# SIGTERM drains a running session. Usage: check_http.sh BINDIR
set -uo pipefail
bindir=$(cd "$1" && pwd)
d=$bindir/bloatmeterd
b=$bindir/bloatmeter
chromium=${CHROMIUM:-/usr/bin/chromium}
. "$(dirname "$0")/../../lib/require.sh"
need_cmd promtool prometheus curl curl python3 python3 "$chromium" chromium
. "$(dirname "$0")/../../lib/harness.sh"
code() { # CURL ARGS...: prints the HTTP status code
	curl -s -o /dev/null -w '%{http_code}' --max-time 10 "$@"
}

hcap=8 # room for Chromium's parallel connections
harness_start_daemon --http --http-max-connections "$hcap"
h=http://127.0.0.1:$hport
check "the log names the HTTP listener" grep -q "HTTP (metrics, API, dashboard) on 127.0.0.1 port $hport" "$work/daemon.log"
check "/healthz: 200 ok" test "$(curl -s --max-time 5 "$h/healthz")" = "ok"
curl -s --max-time 5 "$h/metrics" > "$work/m0.txt"
check "/metrics before any test: promtool check metrics is silent" \
	eval 'promtool check metrics < "$work/m0.txt" > "$work/p0.txt" 2>&1 && [ ! -s "$work/p0.txt" ]'
check "/metrics content type is the text format 0.0.4" \
	eval 'curl -sI --max-time 5 "$h/metrics" | grep -qi "^content-type: text/plain; version=0.0.4"'
check "/api/v1/tests before any test: []" test "$(curl -s --max-time 5 "$h/api/v1/tests")" = "[]"

# One short real test: idle, download and upload.
check "a client test against the daemon" \
	"$b" -p "$port" --phases idle,download,upload -t 2 --idle 1 --gap 0.5 -P 2 -q 127.0.0.1
curl -s --max-time 5 "$h/api/v1/tests" > "$work/api.json"
check "/api/v1/tests: one test with bytes both ways and the client's summary" python3 - "$work/api.json" << 'EOF'
import json, sys
tests = json.load(open(sys.argv[1]))
assert isinstance(tests, list) and len(tests) == 1, tests
t = tests[0]
assert t["id"] == 1 and t["client"] == "127.0.0.0/24", t
assert t["bytes"]["download"] > 0 and t["bytes"]["upload"] > 0, t["bytes"]
assert t["flows"]["download"] == 2 and t["flows"]["upload"] == 2, t["flows"]
assert t["udp_probes"] > 100, t["udp_probes"]
assert isinstance(t["server"]["download_rtt_increase_ms"], (int, float)), t["server"]
c = t["client_reported"]
assert c is not None, t
assert c["grade"] in ("A+", "A", "B", "C", "D", "F"), c
assert isinstance(c["idle_latency_ms"], (int, float)), c
# On a busy loopback a phase's window can lack probe replies (then that figure is left out).
inc = c["latency_increase_ms"]
assert any(isinstance(inc[d], (int, float)) for d in ("download", "upload")), c
assert c["throughput_bps"]["download"] > 0 and c["throughput_bps"]["upload"] > 0, c
print("     test %d: %d B down, %d B up, server %s ms; client: %s/%s ms, grade %s" % (
    t["id"], t["bytes"]["download"], t["bytes"]["upload"],
    t["server"]["download_rtt_increase_ms"], inc["download"], inc["upload"], c["grade"]))
EOF
curl -s --max-time 5 "$h/metrics" > "$work/m1.txt"
check "/metrics after the test: promtool check metrics is silent" \
	eval 'promtool check metrics < "$work/m1.txt" > "$work/p1.txt" 2>&1 && [ ! -s "$work/p1.txt" ]'
check "/metrics counts the session" grep -qx "bloatmeterd_sessions_total 1" "$work/m1.txt"
check "/metrics counts download bytes" grep -Eq '^bloatmeterd_bytes_total\{direction="download"\} [1-9]' "$work/m1.txt"
check "/metrics: the server's download increase and a client's increase observed" eval \
	'grep -q "^bloatmeterd_test_latency_increase_seconds_count{direction=\"download\",source=\"server\"} 1$" "$work/m1.txt" &&
	 grep -Eq "^bloatmeterd_test_latency_increase_seconds_count\{direction=\"(download|upload)\",source=\"client\"\} 1$" "$work/m1.txt"'
check "?limit=1: one test" test "$(curl -s --max-time 5 "$h/api/v1/tests?limit=1" | python3 -c 'import json,sys; print(len(json.load(sys.stdin)))')" = 1
check "?limit=0: 400" test "$(code "$h/api/v1/tests?limit=0")" = 400
check "unknown path: 404" test "$(code "$h/nope")" = 404
check "dot segments: 404" test "$(code --path-as-is "$h/../etc/passwd")" = 404
check "POST: 405 with Allow" eval 'curl -si --max-time 5 -X POST "$h/metrics" | tr -d "\r" | grep -q "^Allow: GET, HEAD$" &&
	[ "$(code -X POST "$h/metrics")" = 405 ]'
check "DELETE: 405" test "$(code -X DELETE "$h/")" = 405
check "HEAD /: 200, headers only" python3 - "$hport" << 'EOF'
import socket, sys
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=5)
s.sendall(b"HEAD / HTTP/1.0\r\n\r\n")
data = b""
while True:
    chunk = s.recv(65536)
    if not chunk:
        break
    data += chunk
head, sep, body = data.partition(b"\r\n\r\n")
assert head.startswith(b"HTTP/1.0 200") or head.startswith(b"HTTP/1.1 200"), head[:40]
assert sep and body == b"", (len(body), head)
EOF
big=$(head -c 16384 /dev/zero | tr '\0' a)
hc=$(code -H "X-Big: $big" "$h/healthz")
check "16 KiB of headers: 4xx ($hc)" test "${hc:0:1}" = 4
check "a 4 KiB body: 4xx" eval 'c=$(code --data-binary @<(head -c 4096 /dev/zero) "$h/healthz"); [ "${c:0:1}" = 4 ]'
check "and the daemon still serves" test "$(curl -s --max-time 5 "$h/healthz")" = "ok"
curl -si --max-time 5 "$h/" | tr -d '\r' > "$work/index.head"
check "/: text/html, CSP, nosniff, no-cache, ETag" eval \
	'grep -qx "Content-Type: text/html; charset=utf-8" "$work/index.head" &&
	 grep -qx "Content-Security-Policy: default-src '"'"'self'"'"'; frame-ancestors '"'"'none'"'"'; base-uri '"'"'none'"'"'; form-action '"'"'none'"'"'" "$work/index.head" &&
	 grep -qx "X-Content-Type-Options: nosniff" "$work/index.head" &&
	 grep -qx "Cache-Control: no-cache" "$work/index.head" && grep -q "^ETag: \"" "$work/index.head"'
etag=$(sed -n 's/^ETag: //p' "$work/index.head")
check "If-None-Match with the ETag: 304" test "$(code -H "If-None-Match: $etag" "$h/")" = 304
check "/dashboard.js: text/javascript" eval 'curl -sI --max-time 5 "$h/dashboard.js" | tr -d "\r" | grep -qx "Content-Type: text/javascript; charset=utf-8"'
check "/dashboard.css: text/css" eval 'curl -sI --max-time 5 "$h/dashboard.css" | tr -d "\r" | grep -qx "Content-Type: text/css; charset=utf-8"'
check "the dashboard references nothing outside the server" eval \
	'! curl -s --max-time 5 "$h/" "$h/dashboard.js" "$h/dashboard.css" |
	   grep -v "http://www.w3.org/2000/svg" | grep -E -i "https?://|@import|url\("'

# A raw session's summaries: an invalid one and a second valid one are ignored and counted as
# ctrl_bad, the first valid one is kept; the test still ends normally with its final stats.
check "summaries: bad ones ignored, the test ends normally" python3 - "$port" << 'EOF'
import json, socket, struct, sys
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=5)
def send(m):
    b = json.dumps(dict(v=1, **m)).encode()
    s.sendall(struct.pack(">I", len(b)) + b)
def recv():
    n = struct.unpack(">I", s.recv(4, socket.MSG_WAITALL))[0]
    return json.loads(s.recv(n, socket.MSG_WAITALL))
send({"type": "hello", "client_version": "test", "cc": "cubic", "duration_s": 5})
w = recv()
assert w["type"] == "welcome" and w["summary"] is True, w
send({"type": "summary", "idle_latency_ms": "3"})
send({"type": "summary", "idle_latency_ms": 3.5, "download_increase_ms": 250, "grade": "D"})
send({"type": "summary", "grade": "A"})
send({"type": "bye"})
while True:
    m = recv()
    assert m["type"] == "stats", m
    if m.get("final"):
        break
EOF
check "the API keeps the first valid summary" python3 - "$h/api/v1/tests?limit=1" << 'EOF'
import json, sys, urllib.request
t = json.load(urllib.request.urlopen(sys.argv[1], timeout=5))[0]
c = t["client_reported"]
assert t["id"] == 2 and c["idle_latency_ms"] == 3.5 and c["grade"] == "D", t
assert c["latency_increase_ms"] == {"download": 250, "upload": None}, c
assert t["server"]["download_rtt_increase_ms"] is None and t["bytes"]["download"] == 0, t
EOF
curl -s --max-time 5 "$h/metrics" > "$work/metrics2.txt"
echo "     $(grep 'reason="ctrl_bad"' "$work/metrics2.txt")"
check "/metrics: the two ignored summaries are ctrl_bad" \
	grep -qx 'bloatmeterd_bad_packets_total{reason="ctrl_bad"} 2' "$work/metrics2.txt"

# Headless Chromium: the script must have fetched the API and drawn the table and chart.
chrome() {
	"$chromium" --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
		--disable-background-networking --disable-component-update --disable-sync \
		--virtual-time-budget=5000 --user-data-dir="$(mktemp -d -p "$work")" "$@" 2> /dev/null
}
chrome --dump-dom "$h/" > "$work/dom.html"
check "dashboard: the test's row" eval 'grep -q "<tr data-id=\"1\"><td>[0-9-]* [0-9:]*</td><td>127.0.0.0/24</td>" "$work/dom.html"'
check "dashboard: the client's grade in the row" grep -Eq '<td class="grade">(A\+|A|B|C|D|F)</td>' "$work/dom.html"
check "dashboard: an SVG chart with drawn paths" eval \
	'grep -q "<svg" "$work/dom.html" && grep -Eq "<path class=\"s-down-server\" data-series=\"down-server\" d=\"M[0-9.]+ [0-9.]+( L[0-9.]+ [0-9.]+)*\"" "$work/dom.html" &&
	 grep -Eq "<path class=\"s-(down|up)-client\" data-series=\"(down|up)-client\" d=\"M[0-9.]+ [0-9.]+( L[0-9.]+ [0-9.]+)*\"" "$work/dom.html"'
check "dashboard: no load error" eval '! grep -q "Cannot load the tests" "$work/dom.html"'
chrome --screenshot="$work/dashboard.png" --window-size=1200,900 --hide-scrollbars "$h/" > /dev/null
size=$(stat -c %s "$work/dashboard.png" 2> /dev/null || echo 0)
# A blank 1200×900 PNG is a few kB; text, a table and a chart are more.
check "dashboard screenshot ($size bytes)" test "$size" -gt 15000
cp "$work/dashboard.png" "$bindir/dashboard.png" 2> /dev/null

# Every connection so far has ended (curl's, Chromium's, refused and oversize ones): the count
# must be back at 1, this scrape's own.
open_now=
for _ in $(seq 30); do
	open_now=$(curl -s --max-time 5 "$h/metrics" | sed -n 's/^bloatmeterd_http_connections //p')
	[ "$open_now" = 1 ] && break
	sleep 0.1
done
check "/metrics: HTTP connections open after all that: 1 ($open_now)" test "$open_now" = 1

# http-max-connections: idle connections fill the cap; one more is accepted by the kernel but
# not served until a slot frees, then it is.
check "http-max-connections $hcap: over the cap a request waits, then is served" \
	python3 - "$hport" "$hcap" << 'EOF'
import re, socket, sys, time
port, cap = int(sys.argv[1]), int(sys.argv[2])
def conn(timeout=5):
    return socket.create_connection(("127.0.0.1", port), timeout=timeout)
def answer(s):
    buf = b""
    while b"\r\n\r\n" not in buf:
        c = s.recv(65536)
        if not c:
            raise EOFError("closed")
        buf += c
    head, body = buf.split(b"\r\n\r\n", 1)
    n = int(re.search(rb"(?im)^content-length: *(\d+)", head).group(1))
    while len(body) < n:
        body += s.recv(65536)
    return head.split(b"\r\n")[0].decode(), body.decode()
def get(s, path):
    s.sendall(b"GET %s HTTP/1.1\r\nHost: t\r\n\r\n" % path.encode())
    return answer(s)
def metric(text, name):
    return int(re.search(r"(?m)^%s (\d+)$" % re.escape(name), text).group(1))
a = conn()
m = get(a, "/metrics")[1]
paused0 = metric(m, "bloatmeterd_http_listener_paused_total")
assert metric(m, "bloatmeterd_http_connections") == 1, m
idle = [conn() for _ in range(cap - 1)]  # with a: the cap
time.sleep(0.3)
d = conn(timeout=1.5)  # the kernel completes the handshake; the daemon does not accept
d.sendall(b"GET /healthz HTTP/1.1\r\nHost: t\r\n\r\n")
try:
    print("answered over the cap:", d.recv(100))
    sys.exit(1)
except socket.timeout:
    pass
idle.pop().close()
t0 = time.monotonic()
d.settimeout(3)
status, body = answer(d)
waited = time.monotonic() - t0
assert status.startswith("HTTP/1.1 200") and body.strip() == "ok", (status, body)
m = get(a, "/metrics")[1]
now = metric(m, "bloatmeterd_http_connections")
paused = metric(m, "bloatmeterd_http_listener_paused_total")
print("     served %.0f ms after a slot freed; open %d, listener paused %d times" %
      (waited * 1000, now, paused - paused0))
assert now == cap and paused >= paused0 + 1, (now, paused, paused0)
for s in idle + [a, d]:
    s.close()
time.sleep(0.5)
assert metric(get(conn(), "/metrics")[1], "bloatmeterd_http_connections") == 1
EOF

# SIGTERM with a session open: /healthz says 503 during the drain, the daemon exits 0.
python3 - "$port" "$work/session.ready" << 'EOF' &
import json, socket, struct, sys, time
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
body = json.dumps({"v": 1, "type": "hello", "client_version": "test", "cc": "cubic",
                   "duration_s": 30}).encode()
s.sendall(struct.pack(">I", len(body)) + body)
n = struct.unpack(">I", s.recv(4, socket.MSG_WAITALL))[0]
assert json.loads(s.recv(n, socket.MSG_WAITALL))["type"] == "welcome"
open(sys.argv[2], "w").close()
time.sleep(8)  # keep the session open; the daemon drains 2 s and then stops anyway
EOF
spid=$!
for _ in $(seq 50); do [ -e "$work/session.ready" ] && break; sleep 0.1; done
check "a raw session is running" test -e "$work/session.ready"
kill -TERM "$dpid"
hz=
for _ in $(seq 15); do
	hz=$(code "$h/healthz")
	[ "$hz" = 503 ] && break
	sleep 0.1
done
check "/healthz during the drain: 503" test "$hz" = 503
wait "$dpid"
drc=$?
dpid=
check "SIGTERM: the daemon exits 0" test "$drc" = 0
kill "$spid" 2> /dev/null
wait "$spid" 2> /dev/null
if [ "$fail" != 0 ]; then
	echo "--- daemon log"
	cat "$work/daemon.log"
	echo "--- promtool"
	cat "$work"/p*.txt
	echo "--- api"
	cat "$work/api.json"
fi
exit "$fail"
