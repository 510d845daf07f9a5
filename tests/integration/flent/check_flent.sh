#!/usr/bin/env bash
# flent data file: runs the real daemon and client in a private namespace with --flent, then
# has flent 2.1.1 plot the file (rrul's all_scaled and ping_cdf). flent's exit code is
# unreliable, so each plot must be a real PNG of more than 20 kB; the data file is checked
# for the rrul series and grid, and (--per-hop) a ping series per hop. Keeps
# BINDIR/flent-all_scaled.png to look at.
# Usage: check_flent.sh BINDIR  (root; exit 77 = skipped when not root)
set -uo pipefail
bindir=$(cd "$1" && pwd) || exit 1
. "$(dirname "$0")/../../lib/require.sh"
need_root "a network namespace"
need_cmd flent flent python3 python3 ip iproute2
# flent plots with matplotlib (its own interpreter is Debian's python3).
need_py_module /usr/bin/python3 matplotlib python3-matplotlib
ns=bmf$$
tmp=$(mktemp -d)
dpid=
cleanup() {
	[ -n "$dpid" ] && kill "$dpid" 2> /dev/null
	wait 2> /dev/null
	ip netns del $ns 2> /dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT
ip netns add $ns || exit 1
ip -n $ns link set lo up
x="ip netns exec $ns"
$x "$bindir/bloatmeterd" --allow-root yes -p 4750 2> "$tmp/daemon.log" &
dpid=$!
sleep 0.5
fail=0
ok() { echo "ok   $*"; }
bad() { echo "FAIL: $*"; fail=1; }

cd "$tmp" || exit 1
# -Z root: started as root, the client would write its files as nobody (-Z), which cannot
# enter this test's private directory.
if $x "$bindir/bloatmeter" -Z root -q -t 3 --idle 2 --gap 1 -P 2 --per-hop udp --flent r.flent.gz \
	127.0.0.1; then
	ok "bloatmeter --flent r.flent.gz exited 0"
else
	bad "bloatmeter exited $?"
	cat daemon.log
	exit 1
fi

# The file itself: gzip'd JSON with the layout flent reads (docs/report.md, "flent data file").
if python3 - r.flent.gz << 'EOF'; then
import gzip, json, sys
d = json.load(gzip.open(sys.argv[1], 'rt'))
m, x, res, raw = d['metadata'], d['x_values'], d['results'], d['raw_values']
assert d['version'] == 4, 'version'
assert m['NAME'] == 'rrul' and m['STEP_SIZE'] == 0.2, 'metadata'
assert isinstance(m['T0'], str) and m['T0'].endswith('Z'), 'T0 must be an ISO string'
assert len(x) > 50 and all(abs(b - a - 0.2) < 1e-9 for a, b in zip(x, x[1:])), 'grid'
for s in ('TCP download BE', 'TCP upload BE', 'Ping (ms) UDP BE'):
    assert len(res[s]) == len(x), s + ' length'
    assert raw[s], s + ' raw values'
down = [v for v in res['TCP download BE'] if v is not None]
up = [v for v in res['TCP upload BE'] if v is not None]
ping = [v for v in res['Ping (ms) UDP BE'] if v is not None]
assert max(down) > 10 and max(up) > 10, 'no load seen'
assert ping and min(ping) > 0, 'no RTT'
# --per-hop: one ping series per hop (loopback: hop 1 is the server), its address in NOTE
hop = res.get('Ping (ms) hop 1')
assert hop is not None and len(hop) == len(x), 'no hop 1 series on the grid'
hops = [v for v in hop if v is not None]
assert len(hops) > 20 and min(hops) > 0, 'hop 1 has only %d RTT bins' % len(hops)
assert raw['Ping (ms) hop 1'], 'hop 1 raw values'
assert 'hop 1 127.0.0.1' in m['NOTE'], 'NOTE does not name hop 1'
assert 'Ping (ms) hop 2' not in res, 'a hop beyond the server'
t0 = raw['Ping (ms) UDP BE'][0]['t']
assert 1e9 < t0 < 1e10, 'raw t must be epoch seconds'
print('ok   data file: version 4, rrul, %d x values (0.2 s), down peak %.0f Mbit/s, '
      'up peak %.0f Mbit/s, %d RTT bins, %d raw probes, %d hop 1 bins'
      % (len(x), max(down), max(up), len(ping), len(raw['Ping (ms) UDP BE']), len(hops)))
EOF
	:
else
	bad "data file layout"
fi

# A real PNG: the signature and more than 20 kB (an empty figure is a few kB).
check_png() { # check_png FILE WHAT
	local size
	size=$(stat -c %s "$1" 2> /dev/null || echo 0)
	if [ "$(head -c 8 "$1" 2> /dev/null | od -An -tx1 | tr -d ' \n')" = 89504e470d0a1a0a ] &&
		[ "$size" -gt 20000 ]; then
		ok "flent $2 → PNG of $size bytes"
	else
		bad "flent $2 gave no real PNG ($size bytes); flent said: $(grep -v WARNING "$2.log" | tail -2)"
	fi
}
for plot in all_scaled ping_cdf totals; do
	timeout 120 flent -i r.flent.gz -p $plot -o $plot.png > $plot.log 2>&1
	check_png $plot.png $plot
	if grep -q Traceback $plot.log; then
		bad "flent $plot raised: $(grep -A1 Error $plot.log | tail -1)"
	fi
done
cp all_scaled.png "$bindir/flent-all_scaled.png" 2> /dev/null && echo "     kept $bindir/flent-all_scaled.png"
[ $fail -eq 0 ] && echo "PASS flent"
exit $fail
