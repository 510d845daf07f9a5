#!/usr/bin/env bash
# Browser tests in a three-namespace lab: client — router — server, one tbf per direction on the
# router's egress ports (METHODS.md "Lab notes"): 20 Mbit/s down with 100 ms of buffer, 5 Mbit/s
# up with 200 ms (limit = rate × buffer in bytes, burst 4 ms of rate and at least four frames).
# The real bloatmeterd runs with its public listener (--web-port) in the server namespace,
# chromium (playwright-core, drive.mjs) in the client namespace.
#   engine: the bare @cloudflare/speedtest engine must measure each direction's goodput within
#           10 % of the tbf rate × 1448/1514 (TCP payload per frame as tbf counts it).
#   page:   the daemon's page: goodput within 10 %, loaded-latency increase per direction within
#           20 % of the configured buffer, and the grade the CLI gives on the same lab (the
#           bloatmeter client against the same daemon, phases idle,download,upload).
# Usage: browser_lab.sh engine|page BINDIR NPMDIR WEBPAGE_DIR SRCDIR [SCREENSHOT]
# Run under `flock /tmp/bm-lab.lock` next to other lab tests.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../lib/require.sh"
mode=$1 bindir=$2 npmdir=$3 pagedir=$4 srcdir=$5 shot=${6:-}
need_root "network namespaces and tc"
need_cmd ip iproute2 tc iproute2 jq jq node nodejs /usr/bin/chromium chromium
[ -d "$npmdir/node_modules/playwright-core" ] || { echo "FAIL: playwright-core not installed in $npmdir (build the bm_browser_npm target; needs nodejs and npm)"; exit 1; }
engine_js=$(dirname "$pagedir")/webpage-npm/node_modules/@cloudflare/speedtest/dist/speedtest.js
[ -f "$engine_js" ] || { echo "FAIL: the page build (cmake/webpage.cmake) installed no @cloudflare/speedtest at $engine_js (needs nodejs and npm)"; exit 1; }

DOWN_BPS=20000000 DOWN_MS=100 UP_BPS=5000000 UP_MS=200 WEB_PORT=8080 CTL_PORT=4343
ns=bmb$$
work=$(mktemp -d)
cleanup() {
	[ -n "${dpid:-}" ] && kill "$dpid" 2> /dev/null && wait "$dpid" 2> /dev/null
	for n in c r s; do ip netns del "$ns-$n" 2> /dev/null || true; done
	rm -rf "$work"
}
trap cleanup EXIT
nsx() { local n=$1; shift; ip netns exec "$ns-$n" "$@"; }

# tbf ARGS: DEV RATE_BPS BUFFER_MS (in the router namespace)
tbf() {
	local limit=$(($2 / 8 * $3 / 1000)) burst=$(($2 / 8 * 4 / 1000))
	[ $burst -ge $((4 * 1514)) ] || burst=$((4 * 1514))
	nsx r tc qdisc add dev "$1" root tbf rate "$2bit" burst "$burst" limit "$limit"
}
for n in c r s; do ip netns add "$ns-$n"; nsx $n ip link set lo up; done
ip link add c0 netns "$ns-c" type veth peer name rc netns "$ns-r"
ip link add s0 netns "$ns-s" type veth peer name rs netns "$ns-r"
nsx c ip addr add 10.77.1.2/24 dev c0; nsx c ip link set c0 up
nsx s ip addr add 10.77.2.2/24 dev s0; nsx s ip link set s0 up
nsx r ip addr add 10.77.1.1/24 dev rc; nsx r ip link set rc up
nsx r ip addr add 10.77.2.1/24 dev rs; nsx r ip link set rs up
nsx s ip route add default via 10.77.2.1
nsx r sysctl -qw net.ipv4.ip_forward=1
# The browser sends the uploads with the client namespace's congestion control. A user's
# browser runs on Windows, macOS or Linux defaults: cubic (the CLI sets it on its flows, the
# daemon on its downloads). A new namespace inherits the host's default instead (BBR on some
# test machines, which keeps queues short), and its sysctl may name only an algorithm in the
# host's tcp_allowed_congestion_control, which may lack cubic; reno, the one always allowed,
# halves its window at each loss: with the browser's 4-5 flows the upload queue swung between
# 100 and 200 ms and the page read 112-190 ms for 200. A route's congctl has no such restriction.
nsx c ip route add default via 10.77.1.1 congctl cubic ||
	{ echo "FAIL: cannot set cubic on the client's route (ip route ... congctl cubic; needs the kernel's tcp_cubic)"; exit 1; }
tbf rc $DOWN_BPS $DOWN_MS   # towards the client: download
tbf rs $UP_BPS $UP_MS       # towards the server: upload

# ip netns exec directly, not the nsx function: $! must be the daemon itself, or the kill in
# cleanup misses it and it lives on holding the inherited /tmp/bm-lab.lock.
ip netns exec "$ns-s" "$bindir/bloatmeterd" -b 10.77.2.2 -p $CTL_PORT --dns-port 0 --allow-root yes \
	--web-port $WEB_PORT -v > "$work/daemon.log" 2>&1 &
dpid=$!
for _ in $(seq 50); do
	nsx c bash -c "exec 3<>/dev/tcp/10.77.2.2/$WEB_PORT" 2> /dev/null && break
	sleep 0.1
done
url=http://10.77.2.2:$WEB_PORT/
# Node resolves an ES module's imports from the script's own directory up, never from
# NODE_PATH: drive.mjs runs beside the build tree's node_modules (a clean checkout has none).
export HOME=$work
cp "$here/drive.mjs" "$npmdir/drive.mjs" || exit 1
drive() { nsx c node "$npmdir/drive.mjs" "$@" 2> "$work/browser.log"; }

fail=0
# check LABEL MEASURED TRUTH TOLERANCE_PCT
check() {
	if awk -v L="$mode: $1" -v g="$2" -v w="$3" -v t="$4" 'BEGIN { if (g == "null" || g == "") { printf "%-32s no value (truth %.1f)\n", L, w; exit 1 } e = (g - w) / w * 100; printf "%-32s measured %8.1f  truth %8.1f  error %+6.1f %% (bound ±%s %%)\n", L, g, w, e, t; exit !(e <= t && e >= -t) }'; then :; else fail=1; fi
}
down_truth=$(awk -v r=$DOWN_BPS 'BEGIN { print r * 1448 / 1514 / 1e6 }')
up_truth=$(awk -v r=$UP_BPS 'BEGIN { print r * 1448 / 1514 / 1e6 }')

if [ "$mode" = engine ]; then
	out=$(drive engine "$url" "$engine_js" -) || { cat "$work/browser.log" "$work/daemon.log"; echo "FAIL engine: the browser run failed"; exit 1; }
	echo "engine result: $out"
	[ "$(jq -r '.error // empty' <<< "$out")" = "" ] || { tail -n 40 "$work/browser.log"; echo "FAIL engine: $(jq -r .error <<< "$out")"; exit 1; }
	check "download goodput (Mbit/s)" "$(jq .down_mbps <<< "$out")" "$down_truth" 10
	check "upload goodput (Mbit/s)" "$(jq .up_mbps <<< "$out")" "$up_truth" 10
else
	out=$(drive page "$url" - "${shot:--}") || { cat "$work/browser.log" "$work/daemon.log"; echo "FAIL page: the browser run failed"; exit 1; }
	echo "page result: $out"
	[ "$(jq -r '.error // empty' <<< "$out")" = "" ] || { tail -n 40 "$work/browser.log"; echo "FAIL page: $(jq -r .error <<< "$out")"; exit 1; }
	check "download goodput (Mbit/s)" "$(jq .down.mbps <<< "$out")" "$down_truth" 10
	check "upload goodput (Mbit/s)" "$(jq .up.mbps <<< "$out")" "$up_truth" 10
	check "download increase (ms)" "$(jq .down.increase_ms <<< "$out")" $DOWN_MS 20
	check "upload increase (ms)" "$(jq .up.increase_ms <<< "$out")" $UP_MS 20
	nsx c "$bindir/bloatmeter" -Z root 10.77.2.2 -p $CTL_PORT --phases idle,download,upload \
		--json-file "$work/cli.json" > "$work/cli.txt" 2>&1 || { cat "$work/cli.txt"; echo "FAIL page: the CLI run failed"; exit 1; }
	cli=$(jq -r .grade.overall "$work/cli.json")
	pg=$(jq -r .grade <<< "$out")
	printf '%-32s page %s  CLI %s (CLI increase down %s ms, up %s ms)\n' "page: grade" "$pg" "$cli" \
		"$(jq '[.phases[] | select(.name == "download") | .latency_increase_ms][0]' "$work/cli.json")" \
		"$(jq '[.phases[] | select(.name == "upload") | .latency_increase_ms][0]' "$work/cli.json")"
	[ "$pg" = "$cli" ] || { echo "FAIL page: grade $pg, the CLI's $cli"; fail=1; }
fi
[ $fail -eq 0 ] || { echo "FAIL browser $mode"; exit 1; }
echo "PASS browser $mode"
