#!/usr/bin/python3
"""bloatmeterd's limits end to end on 127.0.0.1 with free ports (docs/bloatmeterd.conf.md):

- max-rate 20M: a download and an upload by the real client measure 20 Mbit/s +- 5 % and
  mark their buffer estimates "server rate limit"; a client that ignores the cap and floods
  an upload flow is read at 1.25 x 20 Mbit/s;
- max-probe-rate: a flood of valid probes on a live session is answered at about the rate,
  the rest counted as udp_ratelimited;
- handshake-timeout and idle-timeout: a silent connection and a session that says hello and
  then nothing are closed in time; an idle-only test longer than idle-timeout completes;
- busy: the refusal carries the time until the running session's expected end, and the
  client prints "server busy, retry after N s" and exits non-zero;
- admission control on lo: a second client is refused while a first one loads the host; a
  missing interface stops the start-up with one sentence (but passes -n).

Usage: check_limits.py BINDIR"""
import json
import os
import random
import re
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import time

BINDIR = sys.argv[1]
DAEMON = os.path.join(BINDIR, "bloatmeterd")
CLIENT = os.path.join(BINDIR, "bloatmeter")
WORK = tempfile.mkdtemp(prefix="bm-limits-")
failed = []


def check(name, ok, detail=""):
    print(("ok   " if ok else "FAIL ") + name + (f"  ({detail})" if detail else ""), flush=True)
    if not ok:
        failed.append(name)


class Daemon:
    """A bloatmeterd on 127.0.0.1 from a configuration file, on a random free port."""

    def __init__(self, lines):
        for _ in range(5):
            self.port = random.randint(20000, 60000)
            self.conf = os.path.join(WORK, "d.conf")
            with open(self.conf, "w") as f:
                f.write(f"port = {self.port}\nbind = 127.0.0.1\ndns-port = 0\nverbose = 1\n")
                if os.geteuid() == 0:  # CI runs as root: stay root (no user to switch to)
                    f.write("allow-root = yes\n")
                f.write("".join(l + "\n" for l in lines))
            self.logpath = os.path.join(WORK, f"daemon-{self.port}.log")
            self.log = open(self.logpath, "w")
            self.proc = subprocess.Popen([DAEMON, "-c", self.conf], stdout=self.log,
                                         stderr=subprocess.STDOUT)
            if self.wait_log(f"listening on 127.0.0.1 port {self.port}", 5):
                return
            self.stop()
        raise SystemExit("FAIL the daemon did not start:\n" + self.text())

    def text(self):
        with open(self.logpath) as f:
            return f.read()

    def wait_log(self, pattern, timeout):
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            m = re.search(pattern, self.text())
            if m:
                return m
            if self.proc.poll() is not None:
                return re.search(pattern, self.text())
            time.sleep(0.1)
        return None

    def stop(self):
        """SIGTERM; the exit code (-9 if it had to be killed)."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.log.close()
        return self.proc.returncode

    def stop_clean(self, what):
        rc = self.stop()
        bad = re.search(r"AddressSanitizer|runtime error|LeakSanitizer", self.text())
        check(f"{what}: the daemon exits 0 without sanitizer reports", rc == 0 and not bad,
              f"rc {rc}" + (f", {bad.group(0)}" if bad else ""))


def frame(obj):
    body = json.dumps(obj).encode()
    return struct.pack(">I", len(body)) + body


def read_frame(s, timeout):
    """The next control message, or None at EOF or timeout."""
    s.settimeout(timeout)
    try:
        hdr = b""
        while len(hdr) < 4:
            chunk = s.recv(4 - len(hdr))
            if not chunk:
                return None
            hdr += chunk
        (n,) = struct.unpack(">I", hdr)
        body = b""
        while len(body) < n:
            chunk = s.recv(n - len(body))
            if not chunk:
                return None
            body += chunk
        return json.loads(body)
    except (socket.timeout, ConnectionResetError):
        return None


def hello(port, duration=60):
    s = socket.create_connection(("127.0.0.1", port), timeout=5)
    s.sendall(frame({"v": 1, "type": "hello", "client_version": "check_limits", "cc": "cubic",
                     "duration_s": duration}))
    return s, read_frame(s, 5)


def client(port, *args, timeout=60):
    p = subprocess.run([CLIENT, "-p", str(port), *args, "127.0.0.1"], capture_output=True,
                       text=True, timeout=timeout)
    return p.returncode, p.stdout, p.stderr


def run_json(port, *args):
    rc, out, err = client(port, "-J", "--probes", "udp", *args)
    try:
        return rc, json.loads(out), err
    except ValueError:
        return rc, None, err


# ---- max-rate, max-probe-rate, timeouts ------------------------------------------------------
d = Daemon(["max-rate = 20M", "max-probe-rate = 200", "handshake-timeout = 2",
            "idle-timeout = 3", "max-sessions = 1"])

for phase, key, buf in (("download", "down", "download"), ("upload", "up", "upload")):
    # Two flows, 8 s: loopback's 64 KiB MSS makes each paced flow send 128 KiB bursts (TSO
    # autosizing sends at least two segments), so few flows and a long window keep that
    # granularity well inside 5 %.
    rc, rep, err = run_json(d.port, "--phases", phase, "-t", "8", "--gap", "1", "-P", "2")
    mbps = rep["phases"][0]["throughput_mbps"][key] if rep else None
    check(f"{phase} with max-rate 20M runs", rc == 0, err.strip()[-200:])
    check(f"{phase} measures 20 Mbit/s +- 5 %", mbps is not None and 19.0 <= mbps <= 21.0,
          f"{mbps} Mbit/s")
    est = rep["buffer"][buf] if rep else None
    check(f"{phase} buffer estimate is a lower bound: server rate limit",
          est is not None and est["lower_bound"] and
          est["lower_bound_reason"] == "server rate limit",
          json.dumps(est)[:200] if est else "no estimate")
    check(f"{phase} report notes the server's cap",
          rep is not None and any("limits each direction of a test to 20.0 Mbit/s" in w
                                  for w in rep["warnings"]))

# A client that ignores the cap: two upload flows written as fast as the socket takes.
s, w = hello(d.port)
check("welcome announces max_rate_bps", w is not None and w.get("max_rate_bps") == 20000000,
      json.dumps(w))
token = bytes.fromhex(w["token"])
stop = threading.Event()


# Blocking sockets: a record is never cut short (a timeout could leave half of one sent).
def flood_blocking(flow_id):
    f = socket.create_connection(("127.0.0.1", d.port))
    f.sendall(b"BMD1" + bytes([1]) + b"U" + struct.pack(">H", flow_id) + token + bytes(8))
    rec = b"D\x00" + struct.pack(">H", 16000 - 16) + bytes(12) + os.urandom(16000 - 16)
    try:
        while not stop.is_set():
            f.sendall(rec)
    except OSError:
        pass
    f.close()


threads = [threading.Thread(target=flood_blocking, args=(i,), daemon=True) for i in range(2)]
for t in threads:
    t.start()
stats = []
end = time.monotonic() + 6
while time.monotonic() < end:
    m = read_frame(s, 1)
    if m and m.get("type") == "stats":
        stats.append((m["t_ns"], m["up_rx_bytes"]))
stop.set()
s.close()
# The first second fills the socket buffers; the rate from 2 s to the end is the reads'.
stats = [x for x in stats if x[0] >= stats[0][0] + 2e9] if stats else []
rate = ((stats[-1][1] - stats[0][1]) * 8e3 / (stats[-1][0] - stats[0][0])) if len(stats) > 2 else 0
check("a client ignoring max-rate is read at 1.25 x 20 Mbit/s +- 10 %", 22.5 <= rate <= 27.5,
      f"{rate:.1f} Mbit/s")
for t in threads:
    t.join(5)
time.sleep(0.5)  # the session ends when its control connection closes

def probe_flood(port, n, per_s):
    """Sends n valid probe requests at per_s on a new session; the replies counted."""
    s, w = hello(port)
    token = bytes.fromhex(w["token"])
    u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    u.connect(("127.0.0.1", w["udp_port"]))
    u.setblocking(False)
    replies = 0
    t0 = time.monotonic()
    for i in range(n):
        u.send(b"BMP1" + bytes([1, 1, 0, 0]) + token + struct.pack(">I", i) + bytes(4) +
               struct.pack(">q", time.monotonic_ns()) + bytes(24))
        while time.monotonic() < t0 + (i + 1) / per_s:
            try:
                u.recv(2048)
                replies += 1
            except BlockingIOError:
                time.sleep(0.0001)
    time.sleep(0.2)
    while True:
        try:
            u.recv(2048)
            replies += 1
        except BlockingIOError:
            break
    u.close()
    s.close()
    time.sleep(0.3)  # the session ends with its control connection
    return replies


# A flood of valid probes on a live session: about the rate (200/s, bursts of 50) answered.
replies = probe_flood(d.port, 2000, 2000)
check("a probe flood at 2000/s gets about 200/s + burst 50 answered", 200 <= replies <= 290,
      f"{replies} replies")

# handshake-timeout 2: a connection that never says what it is.
s = socket.create_connection(("127.0.0.1", d.port))
t0 = time.monotonic()
got = read_frame(s, 6)
dt = time.monotonic() - t0
check("a silent connection is closed after handshake-timeout 2 s", got is None and 1.5 <= dt <= 3.5,
      f"{dt:.1f} s")
s.close()

# idle-timeout 3: hello, then silence (no flows, no probes, no messages).
s, w = hello(d.port)
t0 = time.monotonic()
reason = None
while time.monotonic() < t0 + 8:
    m = read_frame(s, 8)
    if m is None:
        break
    if m.get("type") == "error":
        reason = m.get("reason")
dt = time.monotonic() - t0
check("a session silent after hello is ended after idle-timeout 3 s",
      reason == "session idle for too long" and 2.8 <= dt <= 4.5, f"{reason!r} after {dt:.1f} s")
s.close()

# An idle-only test longer than idle-timeout: its probes keep it alive.
rc, out, err = client(d.port, "--phases", "idle", "--idle", "5", "-q")
check("an idle phase of 5 s with idle-timeout 3 s completes", rc == 0, err.strip()[-200:])

# busy: max-sessions 1; a holder asks for 10 + 10 s; a second client is told the time left.
holder = subprocess.Popen([CLIENT, "-p", str(d.port), "--phases", "idle", "--idle", "10", "-q",
                           "127.0.0.1"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
n = len(re.findall(r"session \d+ from .*: cc", d.text()))
d.wait_log(r"(?s)(session \d+ from .*: cc.*){%d}" % (n + 1), 5)
t_start = time.monotonic()
time.sleep(2)
rc, out, err = client(d.port, "--phases", "idle", "--idle", "1")
left = 20 - (time.monotonic() - t_start)
m = re.search(r"server busy, retry after (\d+) s", err)
check("a busy server: the client says so and exits non-zero", rc != 0 and m is not None,
      err.strip()[-200:])
check("retry after = the running session's expected end", m is not None and
      abs(int(m.group(1)) - left) <= 2, f"{m.group(1) if m else None} s, expected about {left:.0f}")
holder.send_signal(signal.SIGINT)
holder.wait(10)

# SIGHUP applies the limits; a lower probe rate at once (50/s, bursts of 12.5).
with open(d.conf) as f:
    text = f.read()
with open(d.conf, "w") as f:
    f.write(text.replace("max-probe-rate = 200", "max-probe-rate = 50")
            .replace("idle-timeout = 3", "idle-timeout = 4"))
d.proc.send_signal(signal.SIGHUP)
check("SIGHUP reloads the limits", d.wait_log(
    r"limits reloaded: max-rate 20 Mbit/s, max-probe-rate 50/s, handshake-timeout 2 s, "
    r"idle-timeout 4 s, admission-max-rate none", 5) is not None)
time.sleep(0.5)  # a holder's session may still be closing: max-sessions is 1
replies = probe_flood(d.port, 1000, 2000)
check("after the reload a flood at 2000/s for 0.5 s gets about 12 + 25 answered",
      25 <= replies <= 50, f"{replies} replies")

# A download connection whose client stops reading moves no byte once the buffers are full:
# closed after idle-timeout (4 s now); the open flow alone kept its session in use.
s, w = hello(d.port)
f = socket.create_connection(("127.0.0.1", d.port))
f.sendall(b"BMD1" + bytes([1]) + b"D" + struct.pack(">H", 0) + bytes.fromhex(w["token"]) +
          bytes(8))
time.sleep(4 + 2.5)
f.settimeout(0.5)
closed, end = False, time.monotonic() + 3
try:
    while time.monotonic() < end:
        if not f.recv(1 << 20):
            closed = True
            break
except ConnectionResetError:
    closed = True
except socket.timeout:
    closed = False
check("a download connection not read for idle-timeout is closed", closed)
f.close()
s.close()
time.sleep(0.3)
d.stop_clean("limits daemon")
log = d.text()
m = re.search(r"UDP over max-probe-rate (\d+); refused by admission control (\d+); "
              r"idle-timeout: data connections (\d+), sessions (\d+)", log)
check("counters: udp_ratelimited, flows_idle and sessions_idle logged", m is not None and
      int(m.group(1)) >= 2600 and int(m.group(3)) == 1 and int(m.group(4)) == 1,
      m.group(0) if m else "no counter line")

# ---- admission control ----------------------------------------------------------------------
conf = os.path.join(WORK, "adm.conf")
with open(conf, "w") as f:
    f.write("admission-interface = bmnosuch0\nadmission-max-rate = 100M\n")
p = subprocess.run([DAEMON, "-n", "-c", conf], capture_output=True, text=True)
check("-n accepts an admission-interface that does not exist", p.returncode == 0,
      p.stdout.strip() + p.stderr.strip())
p = subprocess.run([DAEMON, "-c", conf, "-p", str(random.randint(20000, 60000)), "-b",
                    "127.0.0.1", "--dns-port", "0"] +
                   (["--allow-root", "yes"] if os.geteuid() == 0 else []),
                   capture_output=True, text=True, timeout=10)
check("a missing admission-interface stops the start-up with one sentence",
      p.returncode == 1 and "admission-interface bmnosuch0: cannot read" in p.stderr and
      "no such interface" in p.stderr, p.stderr.strip())

d = Daemon(["admission-interface = lo", "admission-max-rate = 500M"])
first = subprocess.Popen([CLIENT, "-p", str(d.port), "--phases", "download", "-t", "6", "--gap",
                          "1", "-q", "--probes", "udp", "127.0.0.1"], stdout=subprocess.DEVNULL,
                         stderr=subprocess.DEVNULL)
time.sleep(3)
rc, out, err = client(d.port, "--phases", "idle", "--idle", "1")
m = re.search(r"server busy, retry after (\d+) s", err)
check("while a download loads lo past 500 Mbit/s, a second client is busy",
      rc != 0 and m is not None and 5 <= int(m.group(1)) <= 30, err.strip()[-200:])
first.wait(30)
check("the loading client's run is unharmed", first.returncode == 0)
# Once the load is gone (other tests may load lo too: wait for a quiet second), admitted.
ok = False
for _ in range(10):
    time.sleep(1)
    rc, out, err = client(d.port, "--phases", "idle", "--idle", "1", "-q")
    if rc == 0:
        ok = True
        break
check("after the load, a client is admitted again", ok, err.strip()[-200:])
d.stop_clean("admission daemon")
m = re.search(r"refused by admission control (\d+)", d.text())
check("sessions_refused_admission counted", m is not None and int(m.group(1)) >= 1,
      m.group(0) if m else "no counter line")

subprocess.run(["rm", "-rf", WORK])
if failed:
    print(f"{len(failed)} check(s) failed")
    sys.exit(1)
print("all limits checks passed")
