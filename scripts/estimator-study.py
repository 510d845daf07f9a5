#!/usr/bin/env python3
"""Buffer-estimator study (docs/methods.md, "Choosing the buffer estimator").

Runs `bloatmeter lab` over a matrix of tbf bottlenecks (or reads the JSON reports of earlier
runs) and computes, from each report's raw UDP samples, the candidate estimators of the top of
the queue against the configured buffer. The queue is RTT − the idle minimum RTT over the
phase's steady window: in a download phase the uplink carries only ACKs and probes, so this is
the downlink queue (and the other way round).

Usage: scripts/estimator-study.py run BINDIR OUTDIR     (root: runs the matrix, ~1 min a case)
       scripts/estimator-study.py table OUTDIR          (prints the table of saved reports)
"""
import json
import math
import os
import subprocess
import sys

# name, down rate, up rate, down buffer ms, up buffer ms, extra args
MATRIX = [
    ("20/20 100/100 cubic", "20mbit", "20mbit", 100, 100, []),
    ("20/20 100/100 reno", "20mbit", "20mbit", 100, 100, ["--cc", "reno"]),
    ("20/20 100/100 -P 4", "20mbit", "20mbit", 100, 100, ["-P", "4"]),
    ("20/20 100/100 -P auto", "20mbit", "20mbit", 100, 100, ["-P", "auto"]),
    ("50/10 200/200 1% loss", "50mbit", "10mbit", 200, 200, ["--down-loss", "1"]),
    ("20/20 100/100 bbr", "20mbit", "20mbit", 100, 100, ["--cc", "bbr"]),
    ("8/1 300/600", "8mbit", "1mbit", 300, 600, []),
    ("100/20 30/100", "100mbit", "20mbit", 30, 100, []),
    ("200/50 10/20 -P 8", "200mbit", "50mbit", 10, 20, ["-P", "8"]),
    ("2/1 500/1000", "2mbit", "1mbit", 500, 1000, []),
]


def pct(v, p):
    """Type-7 percentile of a sorted list."""
    if not v:
        return float("nan")
    h = (len(v) - 1) * p / 100.0
    lo = math.floor(h)
    hi = min(lo + 1, len(v) - 1)
    return v[lo] + (h - lo) * (v[hi] - v[lo])


def block_maxima(ts, q, t0, t1, secs):
    out, cur, end = [], None, t0 + secs
    for t, x in zip(ts, q):
        if t < t0 or t >= t1:
            continue
        while t >= end:
            if cur is not None:
                out.append(cur)
            cur, end = None, end + secs
        cur = x if cur is None else max(cur, x)
    if cur is not None and t1 - (end - secs) >= secs / 2:
        out.append(cur)
    return sorted(out)


def estimators(ts, q, t0, t1):
    m1 = block_maxima(ts, q, t0, t1, 1.0)
    m4 = block_maxima(ts, q, t0, t1, 4.0)
    qs = sorted(x for t, x in zip(ts, q) if t0 <= t < t1)
    top2 = m1[-2] if len(m1) >= 4 else (m1[-1] if m1 else float("nan"))
    return {
        "LQ 1s max": pct(m1, 25),
        "median 1s max": pct(m1, 50),
        "UQ 1s max": pct(m1, 75),
        "2nd 1s max": top2,
        "LQ 4s max": pct(m4, 25),
        "q p99": pct(qs, 99),
    }


def phase_case(rep, kind):
    ph = next((p for p in rep["phases"] if p["name"] == kind), None)
    if ph is None:
        return None
    t0 = ph["steady_start_s"] if ph["steady_start_s"] is not None else \
        (ph["start_s"] + ph["end_s"]) / 2
    cols = rep["samples"]["udp"]["columns"]
    it, ir = cols.index("t_s"), cols.index("rtt_ms")
    data = [row for row in rep["samples"]["udp"]["data"] if row[ir] is not None]
    base = rep["rtt0_ms"]
    ts = [row[it] for row in data]
    q = [row[ir] - base for row in data]
    return estimators(ts, q, t0, ph["end_s"])


def table(outdir):
    names = None
    rows = []
    for f in sorted(os.listdir(outdir)):
        if not f.endswith(".json"):
            continue
        with open(os.path.join(outdir, f)) as fh:
            rep = json.load(fh)
        truth = rep["lab"]["truth"]
        for kind, key in (("download", "down_buffer_ms"), ("upload", "up_buffer_ms")):
            est = phase_case(rep, kind)
            if est is None:
                continue
            names = list(est)
            errs = [(est[n] - truth[key]) / truth[key] * 100 for n in names]
            cur = rep["buffer"].get(kind)
            rows.append((f[:-5], kind, truth[key], errs, cur))
    if not rows:
        print("no reports in", outdir)
        return 1
    print("| case | dir | truth ms | " + " | ".join(names) + " | reported |")
    print("|---|---|---|" + "---|" * len(names) + "---|")
    for name, kind, truth, errs, cur in rows:
        rep = "-" if cur is None or cur.get("ms") is None else \
            ("≥ " if cur.get("lower_bound") else "") + "%.1f" % cur["ms"]
        print("| %s | %s | %g | " % (name, kind[:2], truth) +
              " | ".join("%+.1f %%" % e for e in errs) + " | %s |" % rep)
    for i, n in enumerate(names):
        e = [abs(r[3][i]) for r in rows if not math.isnan(r[3][i])]
        print("%-14s mean |error| %5.1f %%, worst %5.1f %%" % (n, sum(e) / len(e), max(e)))
    return 0


def run(bindir, outdir):
    os.makedirs(outdir, exist_ok=True)
    for i, (name, dr, ur, db, ub, extra) in enumerate(MATRIX):
        path = os.path.join(outdir, "%02d %s.json" % (i, name.replace("/", "-")))
        cmd = [os.path.join(bindir, "bloatmeter"), "lab", "--down-rate", dr, "--up-rate", ur,
               "--down-buffer", str(db), "--up-buffer", str(ub), "-q", "--json", path] + extra
        print("==", name, flush=True)
        subprocess.run(cmd, check=False, stdout=subprocess.DEVNULL)
    return table(outdir)


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "run":
        sys.exit(run(sys.argv[2], sys.argv[3]))
    if len(sys.argv) == 3 and sys.argv[1] == "table":
        sys.exit(table(sys.argv[2]))
    print(__doc__.strip().splitlines()[-2].strip(), file=sys.stderr)
    sys.exit(2)
