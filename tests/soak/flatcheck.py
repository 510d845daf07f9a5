#!/usr/bin/env python3
"""Flatness check of a soak's samples: did the daemon's memory or descriptors grow?

SAMPLES has one line per sample, "SECONDS RSS_KIB FDS" (seconds since the soak began). Samples
before --warmup seconds are left out (allocator arenas, caches and the first sessions' buffers
settle there). The rest is split into a first and a second half by time, and:
  - RSS: the peak of the second half may exceed the peak of the first half by at most
    --rss-tol-kib (peaks, because a sample may fall between tests or in the middle of one; a
    leak lifts every later peak, noise does not);
  - fds: the same with --fd-tol descriptors;
  - with --idle-fds BEFORE AFTER (the daemon's descriptors before the first client and after
    the last one ended): AFTER must equal BEFORE.
Prints the figures and "flat" or "NOT FLAT: why"; exit 0 when flat, 1 when not, 2 on bad input.

Usage: flatcheck.py SAMPLES [--warmup S] [--rss-tol-kib K] [--fd-tol N] [--idle-fds B A]
"""
import argparse
import sys


def load(path):
    rows = []
    with open(path) as f:
        for n, line in enumerate(f, 1):
            parts = line.split()
            if not parts:
                continue
            if len(parts) != 3:
                raise ValueError(f"{path}:{n}: want 'SECONDS RSS_KIB FDS'")
            rows.append((float(parts[0]), int(parts[1]), int(parts[2])))
    return rows


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("samples")
    ap.add_argument("--warmup", type=float, default=30.0)
    ap.add_argument("--rss-tol-kib", type=int, default=1024)
    ap.add_argument("--fd-tol", type=int, default=8)
    ap.add_argument("--idle-fds", type=int, nargs=2, metavar=("BEFORE", "AFTER"))
    a = ap.parse_args()
    try:
        rows = [r for r in load(a.samples) if r[0] >= a.warmup]
    except (OSError, ValueError) as e:
        print(f"flatcheck: {e}")
        return 2
    if len(rows) < 4:
        print(f"flatcheck: {len(rows)} samples after the {a.warmup:g} s warm-up, need at least 4")
        return 2
    mid = (rows[0][0] + rows[-1][0]) / 2
    first = [r for r in rows if r[0] < mid]
    second = [r for r in rows if r[0] >= mid]
    rss1, rss2 = max(r[1] for r in first), max(r[1] for r in second)
    fd1, fd2 = max(r[2] for r in first), max(r[2] for r in second)
    print(f"after {a.warmup:g} s warm-up: {len(rows)} samples over {rows[-1][0] - rows[0][0]:.0f} s; "
          f"RSS peak {rss1} KiB then {rss2} KiB ({rss2 - rss1:+d} KiB, tolerance "
          f"{a.rss_tol_kib}); fds peak {fd1} then {fd2} ({fd2 - fd1:+d}, tolerance {a.fd_tol}); "
          f"RSS min {min(r[1] for r in rows)} KiB, max {max(r[1] for r in rows)} KiB")
    why = []
    if rss2 - rss1 > a.rss_tol_kib:
        why.append(f"RSS grew {rss2 - rss1} KiB > {a.rss_tol_kib} KiB")
    if fd2 - fd1 > a.fd_tol:
        why.append(f"open fds grew {fd2 - fd1} > {a.fd_tol}")
    if a.idle_fds:
        before, after = a.idle_fds
        print(f"idle fds: {before} before the first client, {after} after the last")
        if after != before:
            why.append(f"{after - before:+d} fds left open when idle")
    print("NOT FLAT: " + "; ".join(why) if why else "flat")
    return 1 if why else 0


if __name__ == "__main__":
    sys.exit(main())
