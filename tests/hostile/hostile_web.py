#!/usr/bin/env python3
"""Hostile input against bloatmeterd's public test listener (docs/http.md, "Public test
listener"), run by hostile_web.sh inside a private network namespace.

  hostile_web.py PID PORT HANDSHAKE_S IDLE_S MAX_CONNS PER_CLIENT [tls]

With tls (the listener runs web-tls), a subset runs over TLS, and the slowloris trickles a
real ClientHello a byte at a time (the handshake is under the head deadline too).

Every case sends something hostile from its own loopback address, checks the answer (status)
and that the daemon closes the connection within its deadline (at once after a refusal,
handshake-timeout for a head, idle-timeout for a stalled body or an idle keep-alive). After each
case a well-formed client (127.0.0.1) must get a correct /__down answer within a bound, and
the daemon's open file descriptors must come back to their baseline. Prints one line per case
and exits 1 at the first failure."""
import json
import os
import socket
import ssl
import sys
import threading
import time

PID, PORT = int(sys.argv[1]), int(sys.argv[2])
HANDSHAKE, IDLE = float(sys.argv[3]), float(sys.argv[4])
MAX_CONNS, PER_CLIENT = int(sys.argv[5]), int(sys.argv[6])
TLS = len(sys.argv) > 7 and sys.argv[7] == "tls"
CTX = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
CTX.check_hostname = False
CTX.verify_mode = ssl.CERT_NONE  # the test's own throwaway certificate
SLACK = 1.5          # scheduling, ASan, the daemon's timer granularity
GOOD_BOUND = 2.0     # a well-formed /__down answer, when no cap is full
failed = False


def fail(msg):
    print("FAIL: " + msg, flush=True)
    sys.exit(1)


def connect(src="127.0.0.1", timeout=5.0, raw=False):
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.bind((src, 0))
    s.settimeout(timeout)
    s.connect(("127.0.0.1", PORT))
    return CTX.wrap_socket(s) if TLS and not raw else s


def client_hello():
    """The first flight of a TLS client: what a TLS slowloris trickles."""
    inc, out = ssl.MemoryBIO(), ssl.MemoryBIO()
    obj = CTX.wrap_bio(inc, out)
    try:
        obj.do_handshake()
    except ssl.SSLWantReadError:
        pass
    return out.read()


def fds():
    return len(os.listdir("/proc/%d/fd" % PID))


def rss_kib():
    with open("/proc/%d/status" % PID) as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def read_answer(s, limit):
    """One answer: (status, headers dict, body) or (None, None, b"") if the connection closed
    (or was reset) without one within limit seconds."""
    end, buf = time.monotonic() + limit, b""
    while b"\r\n\r\n" not in buf:
        s.settimeout(max(0.05, end - time.monotonic()))
        try:
            d = s.recv(65536)
        except (ConnectionResetError, socket.timeout, ssl.SSLError):
            d = b""
        if not d:
            return None, None, buf
        buf += d
    head, body = buf.split(b"\r\n\r\n", 1)
    lines = head.decode("latin-1").split("\r\n")
    status = int(lines[0].split()[1])
    hdrs = {k.strip().lower(): v.strip() for k, v in (l.split(":", 1) for l in lines[1:])}
    want = int(hdrs.get("content-length", "0"))
    while len(body) < want and time.monotonic() < end:
        s.settimeout(max(0.05, end - time.monotonic()))
        try:
            d = s.recv(1 << 20)
        except (ConnectionResetError, socket.timeout, ssl.SSLError):
            break
        if not d:
            break
        body += d
    return status, hdrs, body


def closed_within(s, limit):
    """Seconds until the daemon closes s (EOF or reset), None if still open after limit.
    Anything it sends meanwhile is read and dropped."""
    t0 = time.monotonic()
    while time.monotonic() - t0 < limit:
        s.settimeout(max(0.05, limit - (time.monotonic() - t0)))
        try:
            if s.recv(65536) == b"":
                return time.monotonic() - t0
        except socket.timeout:
            pass
        except (ConnectionResetError, BrokenPipeError, ssl.SSLError):
            return time.monotonic() - t0
    return None


def good_down(nbytes=100000, bound=GOOD_BOUND, src="127.0.0.1"):
    """A well-formed GET /__down: seconds it took, or fail."""
    t0 = time.monotonic()
    try:
        s = connect(src, bound)
        s.sendall(b"GET /__down?bytes=%d HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n" % nbytes)
        st, h, body = read_answer(s, bound)
        s.close()
    except OSError as e:
        return None, "connection failed: %s" % e
    took = time.monotonic() - t0
    if st != 200 or int(h.get("content-length", -1)) != nbytes or body != bytes(nbytes):
        return None, "answer %s with %d body bytes" % (st, len(body))
    if took > bound:
        return None, "took %.2f s" % took
    return took, ""


def good_down_eventually(limit):
    """A well-formed client that retries for up to limit s (while a cap is full): seconds to
    its first correct answer, or fail."""
    t0, why = time.monotonic(), ""
    while time.monotonic() - t0 < limit:
        took, why = good_down()
        if took is not None:
            return time.monotonic() - t0
        time.sleep(0.1)
    fail("no correct /__down answer within %.1f s (%s)" % (limit, why))


def back_to_baseline(base, limit):
    t0 = time.monotonic()
    while time.monotonic() - t0 < limit:
        if fds() <= base:
            return time.monotonic() - t0
        time.sleep(0.05)
    fail("daemon fds %d, baseline %d, %.1f s after the case" % (fds(), base, limit))


def after(name, base, extra=""):
    took, why = good_down()
    if took is None:
        fail("%s: the next client was not served: %s" % (name, why))
    back = back_to_baseline(base, HANDSHAKE + IDLE + SLACK)
    print("ok %-34s %s; next client served in %.0f ms, fds back to baseline in %.1f s"
          % (name, extra, took * 1000, back), flush=True)


# --- one-shot cases: bytes sent, the status expected (None: no answer), close deadline ---

def req(line, headers=(), body=b""):
    return line.encode() + b"\r\n" + b"".join(h.encode() + b"\r\n" for h in headers) + \
        b"\r\n" + body


def post_result(body, ctype="application/json"):
    return req("POST /api/v1/results HTTP/1.1",
               ["Host: t", "Content-Type: " + ctype, "Content-Length: %d" % len(body)], body)


DEEP = ("[" * 5000 + "]" * 5000).encode()
VALID = json.dumps({"version": 1, "grade": "B", "idle_ms": 20,
                    "down": {"mbps": 19, "loaded_ms": 120, "increase_ms": 100},
                    "up": {"mbps": 4.7, "loaded_ms": 220, "increase_ms": 200},
                    "engine": "hostile_web"}).encode()

ONESHOT = [
    ("bytes=-1", req("GET /__down?bytes=-1 HTTP/1.1", ["Host: t"]), 400),
    ("bytes=99999999999999999999",
     req("GET /__down?bytes=99999999999999999999 HTTP/1.1", ["Host: t"]), 400),
    ("bytes=18446744073709551616",
     req("GET /__down?bytes=18446744073709551616 HTTP/1.1", ["Host: t"]), 400),
    ("bytes=1073741825", req("GET /__down?bytes=1073741825 HTTP/1.1", ["Host: t"]), 400),
    ("bytes=1e9", req("GET /__down?bytes=1e9 HTTP/1.1", ["Host: t"]), 400),
    ("bytes=", req("GET /__down?bytes= HTTP/1.1", ["Host: t"]), 400),
    ("bytes absent", req("GET /__down HTTP/1.1", ["Host: t"]), 400),
    ("bytes=12abc", req("GET /__down?bytes=12abc HTTP/1.1", ["Host: t"]), 400),
    ("bytes=0x10", req("GET /__down?bytes=0x10 HTTP/1.1", ["Host: t"]), 400),
    ("bytes=+5", req("GET /__down?bytes=+5 HTTP/1.1", ["Host: t"]), 400),
    ("bytes=%35 (encoded)", req("GET /__down?bytes=%35 HTTP/1.1", ["Host: t"]), 400),
    ("GET /__down with a body",
     req("GET /__down?bytes=5 HTTP/1.1", ["Host: t", "Content-Length: 3"], b"abc"), 400),
    ("method DELETE", req("DELETE /__down?bytes=5 HTTP/1.1", ["Host: t"]), 405),
    ("method GET /__up", req("GET /__up HTTP/1.1", ["Host: t"]), 405),
    ("method PUT /api/v1/results", req("PUT /api/v1/results HTTP/1.1",
                                       ["Host: t", "Content-Length: 2"], b"{}"), 405),
    ("method CONNECT", req("CONNECT 127.0.0.1:80 HTTP/1.1", ["Host: t"]), 400),
    ("method lower-case get", req("get /__down?bytes=5 HTTP/1.1", ["Host: t"]), 405),
    ("HTTP/0.9 request", b"GET /__down?bytes=5\r\n\r\n", 400),
    ("HTTP/1.2", req("GET /__down?bytes=5 HTTP/1.2", ["Host: t"]), 505),
    ("HTTP/2 preface", b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", 400),
    ("absolute-form target", req("GET http://t/__down?bytes=5 HTTP/1.1", ["Host: t"]), 400),
    ("header too big (9000 bytes)",
     req("GET /__down?bytes=5 HTTP/1.1", ["Host: t", "X-Big: " + "a" * 9000]), 431),
    ("8 KiB without a blank line", b"GET /__down?bytes=5 HTTP/1.1\r\nX: " + b"a" * 8400, 431),
    ("target too long", req("GET /__down?bytes=5&x=" + "a" * 300 + " HTTP/1.1", ["Host: t"]), 400),
    ("NUL in the target", b"GET /__down?bytes=5\x00 HTTP/1.1\r\nHost: t\r\n\r\n", 400),
    ("NUL in a header", req("GET /__down?bytes=5 HTTP/1.1", ["Host: t\x00x"]), 400),
    ("bare CR", b"GET /__down?bytes=5 HTTP/1.1\rHost: t\r\n\r\n", 400),
    ("bare LF line endings", b"GET /__down?bytes=5 HTTP/1.1\nHost: t\n\n", None),
    ("obs-fold header", req("GET /__down?bytes=5 HTTP/1.1", ["Host: t", " folded"]), 400),
    ("binary garbage", bytes(range(256)) * 4 + b"\r\n\r\n", 400),
    ("Content-Length 1 GiB + 1",
     req("POST /__up HTTP/1.1", ["Host: t", "Content-Length: 1073741825"]), 400),
    ("Content-Length 2^64",
     req("POST /__up HTTP/1.1", ["Host: t", "Content-Length: 18446744073709551616"]), 400),
    ("Content-Length -1", req("POST /__up HTTP/1.1", ["Host: t", "Content-Length: -1"]), 400),
    ("two Content-Lengths", req("POST /__up HTTP/1.1",
                                ["Host: t", "Content-Length: 5", "Content-Length: 6"]), 400),
    ("Content-Length and chunked", req("POST /__up HTTP/1.1", ["Host: t", "Content-Length: 5",
                                                              "Transfer-Encoding: chunked"]), 400),
    ("Transfer-Encoding gzip", req("POST /__up HTTP/1.1",
                                   ["Host: t", "Transfer-Encoding: gzip, chunked"]), 501),
    ("upload without a length", req("POST /__up HTTP/1.1", ["Host: t"]), 411),
    ("chunk size overflowing (17 hex digits)",
     req("POST /__up HTTP/1.1", ["Host: t", "Transfer-Encoding: chunked"],
         b"10000000000000000\r\n"), 400),
    ("chunk size of 9 hex digits",
     req("POST /__up HTTP/1.1", ["Host: t", "Transfer-Encoding: chunked"], b"100000000\r\n"), 400),
    ("chunk size negative", req("POST /__up HTTP/1.1", ["Host: t", "Transfer-Encoding: chunked"],
                                b"-1\r\n"), 400),
    ("chunk-size line without end", req("POST /__up HTTP/1.1",
                                        ["Host: t", "Transfer-Encoding: chunked"], b"1" * 200), 400),
    ("chunk data without CRLF", req("POST /__up HTTP/1.1",
                                    ["Host: t", "Transfer-Encoding: chunked"], b"2\r\nabcd\r\n"),
     400),
    ("result: not JSON", post_result(b"grade=A"), 400),
    ("result: wrong Content-Type", post_result(VALID, "text/plain"), 415),
    ("result: deep nesting", post_result(DEEP[:4000]), 400),
    ("result: huge string", post_result(b'{"version":1,"grade":"A","engine":"' + b"x" * 4000
                                        + b'"}'), 400),
    ("result: wrong types", post_result(b'{"version":"1","grade":1,"idle_ms":"5",'
                                        b'"down":[1]}'), 400),
    ("result: NaN and negative", post_result(b'{"version":1,"grade":"A","idle_ms":-1}'), 400),
    ("result: unknown key", post_result(b'{"version":1,"grade":"A","admin":true}'), 400),
    ("result: NUL inside", post_result(b'{"version":1,"grade":"A"}\x00'), 400),
    ("result: Content-Length 5000", req("POST /api/v1/results HTTP/1.1",
                                        ["Host: t", "Content-Type: application/json",
                                         "Content-Length: 5000"]), 413),
    ("result: chunked past 4096 bytes",
     req("POST /api/v1/results HTTP/1.1", ["Host: t", "Content-Type: application/json",
                                           "Transfer-Encoding: chunked"],
         b"".join(b"400\r\n" + b" " * 1024 + b"\r\n" for _ in range(5))), 413),
]


def oneshot(i, name, data, want, raw=False):
    src = "127.0.1.%d" % (1 + i % 250)
    s = connect(src, raw=raw)
    t0 = time.monotonic()
    try:
        s.sendall(data)
    except (ConnectionResetError, BrokenPipeError, ssl.SSLError):
        pass  # refused before it had all of it
    st, _, _ = read_answer(s, HANDSHAKE + SLACK)
    if want is not None and st != want:
        fail("%s: status %s, expected %d" % (name, st, want))
    if want is None and st is not None and st < 400:
        fail("%s: status %s, expected a refusal or none" % (name, st))
    limit = (0.0 if st else HANDSHAKE) + SLACK
    closed = closed_within(s, limit)
    s.close()
    if closed is None:
        fail("%s: connection still open %.1f s after the answer" % (name, limit))
    return "status %s, closed after %.2f s" % (st, time.monotonic() - t0)


# --- cases that hold a connection ---

def stalled(name, data, deadline, src, raw=False):
    """Sends data and then nothing: the daemon must close within deadline."""
    s = connect(src, raw=raw)
    s.sendall(data)
    t0 = time.monotonic()
    closed = closed_within(s, deadline + SLACK)
    s.close()
    if closed is None:
        fail("%s: still open %.1f s later (deadline %.0f s)" % (name, deadline + SLACK, deadline))
    if closed < deadline - 0.5:
        fail("%s: closed after %.2f s, before its deadline of %.0f s" % (name, closed, deadline))
    return "closed after %.2f s (deadline %.0f s)" % (closed, deadline)


def endless_chunk(src):
    """A chunk of 4 GiB - 1 whose bytes never stop: refused with 413 at 1 GiB."""
    s = connect(src, 30)
    s.sendall(req("POST /__up HTTP/1.1", ["Host: t", "Transfer-Encoding: chunked"])
              + b"ffffffff\r\n")
    block, sent, t0 = bytes(1 << 20), 0, time.monotonic()
    try:
        while sent < (1 << 30) + (64 << 20) and time.monotonic() - t0 < 60:
            s.sendall(block)
            sent += len(block)
    except (ConnectionResetError, BrokenPipeError, socket.timeout):
        pass
    st, _, _ = read_answer(s, 5)
    closed = closed_within(s, SLACK)
    s.close()
    if st != 413 or closed is None:
        fail("endless chunk: status %s after %d MiB, closed %s" % (st, sent >> 20, closed))
    return "413 after %d MiB sent, closed" % (sent >> 20)


def pipeline_unread(src):
    """Pipelined bytes=0 requests (each answer ~10x its request) from a client that never
    reads: the daemon must stop taking requests once its answers back up, and close the
    connection at its deadline, not queue answers without bound."""
    s = connect(src)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    one = b"GET /__down?bytes=0 HTTP/1.1\r\nHost: t\r\n\r\n"
    block = one * 2000
    rss0, t0, sent, closed = rss_kib(), time.monotonic(), 0, None
    s.setblocking(False)
    peak = rss0
    while time.monotonic() - t0 < 4 * (HANDSHAKE + IDLE) + SLACK:
        try:
            sent += s.send(block)
        except BlockingIOError:
            time.sleep(0.01)
        except (ConnectionResetError, BrokenPipeError):
            closed = time.monotonic() - t0
            break
        peak = max(peak, rss_kib())
    s.close()
    grew = (peak - rss0) / 1024
    if grew > 8 or closed is None:
        fail("pipelined requests, answers unread: daemon RSS +%.0f MiB after %d MiB of "
             "requests, connection %s" % (grew, sent >> 20,
                                          "still open" if closed is None else "closed"))
    return "%d KiB of requests taken, RSS +%.1f MiB, closed after %.1f s" % (
        sent >> 10, grew, closed)


def pipeline_read(src, n=20000):
    """The same pipelining from a client that does read, after a pause: more answers (6 MB)
    than the socket buffers hold, so the daemon holds its reading and must resume it; every
    answer arrives."""
    s = connect(src, 10)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 65536)
    sender = threading.Thread(target=s.sendall,
                              args=(b"GET /__down?bytes=0 HTTP/1.1\r\nHost: t\r\n\r\n" * n,))
    sender.start()
    time.sleep(1)  # let the answers back up first
    got, tail, t0 = 0, b"", time.monotonic()
    while got < n and time.monotonic() - t0 < 20:
        d = s.recv(65536)
        if not d:
            break
        # Count status lines, also one split across two reads.
        buf = tail + d
        got += buf.count(b"HTTP/1.1 200 OK\r\n")
        tail = buf[-16:]
        got -= tail.count(b"HTTP/1.1 200 OK\r\n")
    got += tail.count(b"HTTP/1.1 200 OK\r\n")
    sender.join()
    s.close()
    if got != n:
        fail("pipelined requests read after a pause: %d of %d answers" % (got, n))
    return "%d answers in %.1f s" % (got, time.monotonic() - t0)


def keepalive_idle(src):
    s = connect(src)
    s.sendall(req("GET /__down?bytes=10 HTTP/1.1", ["Host: t"]))
    st, _, body = read_answer(s, 2)
    if st != 200 or body != bytes(10):
        fail("keep-alive: first answer %s" % st)
    t0 = time.monotonic()
    closed = closed_within(s, IDLE + SLACK)
    s.close()
    if closed is None:
        fail("an idle keep-alive connection still open %.1f s after its answer" % (IDLE + SLACK))
    return "closed after %.2f s (idle-timeout %.0f s)" % (time.monotonic() - t0, IDLE)


def rate(src):
    got = []
    for _ in range(8):
        s = connect(src)
        s.sendall(post_result(VALID))
        st, _, _ = read_answer(s, 2)
        got.append(st)
        s.close()
    if got[:6] != [204] * 6 or got[6:] != [429, 429]:
        fail("result rate: statuses %s, expected six 204 then 429" % got)
    return "statuses %s" % got


def slowloris(srcs, per_src, name):
    """per_src connections from each source, each trickling its head one byte at a time,
    held until the daemon closes them; meanwhile the well-formed client must be served
    within a bound (at once while a per-client cap holds them off; once the head deadline
    has freed a place when the whole listener is full). Every trickler must be closed
    within handshake-timeout of its accept."""
    conns, refused = [], 0
    head = b"GET /__down?bytes=5 HTTP/1.1\r\nHost: t\r\nX-Slow: " + b"a" * 10000
    if TLS:
        head = client_hello()
    for src in srcs:
        for _ in range(per_src):
            try:
                s = connect(src, 2, raw=True)
                conns.append([s, time.monotonic(), None])
            except OSError:
                refused += 1
    full = len(srcs) * min(per_src, PER_CLIENT) >= MAX_CONNS
    bound = HANDSHAKE + SLACK + GOOD_BOUND if full else GOOD_BOUND
    served, t0, pos = None, time.monotonic(), 0
    while time.monotonic() - t0 < HANDSHAKE + 2 * SLACK:
        for c in conns:
            if c[2] is not None:
                continue
            try:
                c[0].send(head[pos:pos + 1])
                c[0].setblocking(False)
                if c[0].recv(4096) == b"":
                    c[2] = time.monotonic() - c[1]
            except BlockingIOError:
                pass
            except OSError:
                c[2] = time.monotonic() - c[1]
        pos += 1
        if served is None:
            took, _ = good_down(bound=0.5)
            if took is not None:
                served = time.monotonic() - t0
        if all(c[2] is not None for c in conns):
            break
        time.sleep(0.05)
    if served is None:
        served = good_down_eventually(bound) + (time.monotonic() - t0)
    if served > bound:
        fail("%s: the well-formed client was served after %.1f s (bound %.1f s)"
             % (name, served, bound))
    open_ = [c for c in conns if c[2] is None]
    late = [c[2] for c in conns if c[2] is not None and c[2] > HANDSHAKE + SLACK]
    for c in conns:
        c[0].close()
    if open_ or late:
        fail("%s: %d trickling connections still open, %d closed late (%s s)" %
             (name, len(open_), len(late), late[:3]))
    held = [c[2] for c in conns]
    over = refused + sum(1 for h in held if h < 0.5)  # closed at once: over a cap
    return ("%d connections (%d refused over a cap), the longest held %.2f s; the well-formed "
            "client served after %.2f s" % (len(conns) + refused, over,
                                            max(held) if held else 0, served))


TLS_ONESHOT = ("bytes=-1", "bytes=99999999999999999999", "HTTP/0.9 request", "HTTP/2 preface",
               "header too big (9000 bytes)", "NUL in a header", "Content-Length 1 GiB + 1",
               "chunk size overflowing (17 hex digits)", "result: deep nesting")


def main_tls(base):
    n = 0
    for i, (name, data, want) in enumerate(ONESHOT):
        if name in TLS_ONESHOT:
            after("TLS " + name, base, oneshot(i, name, data, want))
            n += 1
    after("TLS silent (no ClientHello)", base,
          stalled("tls silent", b"", HANDSHAKE, "127.0.2.1", raw=True))
    after("TLS half a ClientHello", base,
          stalled("tls hello", client_hello()[:20], HANDSHAKE, "127.0.2.2", raw=True))
    after("TLS not TLS at all", base, oneshot(0, "plain HTTP to TLS", ONESHOT[0][1], None, raw=True))
    after("TLS head trickled, never finished", base,
          stalled("head", b"GET /__down?bytes=5 HTTP/1.1\r\nHost: t\r\n", HANDSHAKE, "127.0.2.3"))
    after("TLS Content-Length 1 GiB, body stalls", base,
          stalled("upload stall", req("POST /__up HTTP/1.1", ["Host: t",
                                                             "Content-Length: 1073741824"])
                  + b"x" * 1000, IDLE, "127.0.2.4"))
    after("TLS keep-alive left idle", base, keepalive_idle("127.0.2.7"))
    after("TLS slowloris, one source past its cap", base,
          slowloris(["127.0.3.1"], PER_CLIENT + 4, "TLS slowloris one source"))
    nsrc = MAX_CONNS // PER_CLIENT + 2
    after("TLS slowloris, %d sources past the cap" % nsrc, base,
          slowloris(["127.0.4.%d" % (i + 1) for i in range(nsrc)], PER_CLIENT,
                    "TLS slowloris many sources"))
    print("PASS hostile web (TLS): %d cases; daemon fds %d (baseline %d), RSS %d KiB"
          % (n + 8, fds(), base, rss_kib()), flush=True)


def main():
    took, why = good_down()
    if took is None:
        fail("the daemon does not serve /__down at all: " + why)
    time.sleep(0.2)
    base = fds()
    print("baseline: %d fds, RSS %d KiB" % (base, rss_kib()), flush=True)
    if TLS:
        main_tls(base)
        return
    for i, (name, data, want) in enumerate(ONESHOT):
        after(name, base, oneshot(i, name, data, want))
    after("head trickled, never finished", base,
          stalled("head", b"GET /__down?bytes=5 HTTP/1.1\r\nHost: t\r\n", HANDSHAKE, "127.0.2.1"))
    after("HTTP/0.9 request, no blank line", base,
          stalled("http09", b"GET /\r\n", HANDSHAKE, "127.0.2.2"))
    after("silent connection", base, stalled("silent", b"", HANDSHAKE, "127.0.2.3"))
    after("Content-Length 1 GiB, body stalls", base,
          stalled("upload stall", req("POST /__up HTTP/1.1", ["Host: t",
                                                             "Content-Length: 1073741824"])
                  + b"x" * 1000, IDLE, "127.0.2.4"))
    after("chunked body stalls mid-chunk", base,
          stalled("chunk stall", req("POST /__up HTTP/1.1",
                                     ["Host: t", "Transfer-Encoding: chunked"])
                  + b"1000\r\nabc", IDLE, "127.0.2.5"))
    after("result body stalls", base,
          stalled("result stall", req("POST /api/v1/results HTTP/1.1",
                                      ["Host: t", "Content-Type: application/json",
                                       "Content-Length: 100"]) + b"{", IDLE, "127.0.2.6"))
    after("keep-alive left idle", base, keepalive_idle("127.0.2.7"))
    after("endless chunk (4 GiB)", base, endless_chunk("127.0.2.8"))
    after("result posts past 6/min", base, rate("127.0.2.9"))
    after("pipelined, answers never read", base, pipeline_unread("127.0.2.10"))
    after("pipelined, answers read after a pause", base, pipeline_read("127.0.2.11"))
    after("slowloris, one source past its cap", base,
          slowloris(["127.0.3.1"], PER_CLIENT + 4, "slowloris one source"))
    nsrc = MAX_CONNS // PER_CLIENT + 2
    after("slowloris, %d sources past the cap" % nsrc, base,
          slowloris(["127.0.4.%d" % (i + 1) for i in range(nsrc)], PER_CLIENT,
                    "slowloris many sources"))
    print("PASS hostile web: %d cases; daemon fds %d (baseline %d), RSS %d KiB"
          % (len(ONESHOT) + 13, fds(), base, rss_kib()), flush=True)


main()
