#!/usr/bin/env bash
# The HTML report end to end: a short real run in a private network namespace writes
# --html, the page must reference nothing outside itself, and headless Chromium must render
# it with the summary table and SVG charts full of points. Keeps the screenshot at
# BINDIR/html-report.png for a human to look at. The run has --per-hop and --ecn: the queue
# section (verdicts, ECN, per hop) must come below the charts and agree with the JSON, the
# verdict card first. Usage: check_html.sh BINDIR
set -euo pipefail
bindir=$(cd "$1" && pwd)
. "$(dirname "$0")/../../lib/require.sh"
need_root "a private network namespace"
chromium=${CHROMIUM:-/usr/bin/chromium}
need_cmd "$chromium" chromium ip iproute2
ns=bmh$$
port=4750
work=$(mktemp -d)
dpid=
cleanup() {
	[ -n "$dpid" ] && kill "$dpid" 2> /dev/null && wait "$dpid" 2> /dev/null
	ip netns del "$ns" 2> /dev/null || true
	rm -rf "$work"
}
trap cleanup EXIT
fail() {
	echo "FAIL html: $*"
	exit 1
}

ip netns add "$ns"
ip -n "$ns" link set lo up
ip netns exec "$ns" "$bindir/bloatmeterd" --allow-root yes -p $port &
dpid=$!
sleep 0.5
cd "$work"
# -Z root: started as root, the client would write its files as nobody (-Z), which cannot
# enter this test's private directory.
ip netns exec "$ns" "$bindir/bloatmeter" -Z root -p $port -t 3 --idle 2 --gap 1 -P 2 -q --html r.html \
	--json r.json --per-hop udp --ecn 127.0.0.1
[ -s r.html ] || fail "no r.html"

# Self-contained: no scripts, images, stylesheets or fonts fetched from anywhere.
if grep -n -i -E 'src=|href="?https?:|@import|url\(|<script|<link|<img|<iframe' r.html; then
	fail "the page references something outside itself"
fi

# Render it as a browser would. Chromium without network or profile state.
chrome() {
	"$chromium" --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
		--disable-background-networking --disable-component-update --disable-sync \
		--user-data-dir="$(mktemp -d -p "$work")" "$@" 2> /dev/null
}
chrome --dump-dom "file://$work/r.html" > dom.html || fail "chromium could not load the page"
# Points in the polyline(s) of one data series in the rendered DOM.
points() {
	grep -o "<polyline data-series=\"$1\"[^>]*points=\"[^\"]*\"" dom.html |
		sed 's/.*points="//' | tr ' ' '\n' | grep -c ,
}
svgs=$(grep -o '<svg' dom.html | wc -l)
[ "$svgs" -ge 2 ] || fail "only $svgs SVG charts"
grep -q '<table class="phases">' dom.html || fail "no summary table"
for p in idle download upload bidirectional; do
	grep -q "<td class=\"l\">$p\*\?</td>" dom.html || fail "no $p row in the summary table"
done
rtt=$(points rtt)
down=$(points goodput-down)
up=$(points goodput-up)
[ "$rtt" -gt 100 ] || fail "RTT chart has only $rtt points"
[ "$down" -gt 20 ] && [ "$up" -gt 20 ] || fail "goodput chart has only $down/$up points"
if grep -q '<h2>One-way queueing delay' dom.html; then
	q=$(points queue-down)
	[ "$q" -gt 100 ] || fail "one-way delay chart has only $q points"
fi

# The queue section (queue verdicts, ECN, per hop) sits below the charts, the verdict card
# first; its rows say what the JSON says.
need_cmd jq jq
# line of the first (or last) match of a pattern in the DOM; empty when none
first() { grep -n "$1" dom.html | head -1 | cut -d: -f1 || true; }
last() { grep -n "$1" dom.html | tail -1 | cut -d: -f1 || true; }
card=$(first '<section class="verdict">')
svg1=$(first '<svg')
svgN=$(last '</svg>')
queue=$(first '<section class="queue">')
[ -n "$card" ] && [ -n "$svg1" ] && [ "$card" -lt "$svg1" ] || fail "the verdict card is not first"
[ -n "$queue" ] || fail "no queue section"
[ "$queue" -gt "$svgN" ] || fail "the queue section (line $queue) is not below the charts (line $svgN)"
for d in download:downlink upload:uplink; do
	v=$(jq -r ".queue.${d%:*}.verdict" r.json)
	grep -q "<tr data-direction=\"${d#*:}\"><td class=\"l\">${d#*:}</td><td class=\"l qverdict\">$v</td>" dom.html ||
		fail "no ${d#*:} row with the verdict $v"
done
grep -qF "<p class=\"ecn\"><b>ECN:</b> $(jq -r .ecn.verdict r.json) — " dom.html || fail "no ECN verdict"
grep -q '<table class="hops">' dom.html || fail "no per-hop table"
grep -q '<tr><td>1</td><td class="l">127.0.0.1</td>' dom.html || fail "no row for hop 1 (127.0.0.1)"
grep -qF "<b>Where:</b> $(jq -r .queue_location.verdict r.json | sed "s/'/\&#39;/g")" dom.html ||
	grep -qF "<b>Where:</b> $(jq -r .queue_location.verdict r.json)" dom.html || fail "no per-hop verdict"

chrome --screenshot="$work/out.png" --window-size=1200,2400 --hide-scrollbars \
	"file://$work/r.html" > /dev/null || fail "chromium could not take a screenshot"
[ -f out.png ] || fail "no screenshot"
size=$(stat -c %s out.png)
# A blank white 1200×2400 PNG compresses to a few kB; charts and tables do not.
[ "$size" -gt 20000 ] || fail "screenshot is only $size bytes (blank page?)"
cp out.png "$bindir/html-report.png"
cp r.html "$bindir/html-report.html"
echo "PASS html: $svgs charts, queue section below them, RTT $rtt points, goodput $down/$up points, screenshot $size bytes" \
	"($bindir/html-report.png)"
