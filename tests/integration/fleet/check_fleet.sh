#!/usr/bin/env bash
# Server selection (--server-list / --servers) in network namespaces of our own: a client
# namespace joined by one veth pair to each of two server namespaces, each running bloatmeterd
# (A over IPv4, B over IPv6 on another port). The list also names a port where nothing listens
# (refused) and a black hole (an address whose neighbour entry points at a MAC nobody owns, so
# SYNs vanish: timeout). Checks: the client measures one of the two live daemons, reports all
# four candidates with plausible RTTs and the right errors, prints the "server:" line, and its
# JSON validates against docs/report.schema.json; the daemons log nothing about the handshake
# probes; flag conflicts exit 2 and an all-unreachable list exits 1 with one sentence.
# Usage: check_fleet.sh BINDIR
set -uo pipefail
bindir=$(cd "$1" && pwd)
schema=$(cd "$(dirname "$0")/../../../docs" && pwd)/report.schema.json
py=/usr/bin/python3 # Debian's, with python3-jsonschema (not a pyenv shim)

. "$(dirname "$0")/../../lib/require.sh"
need_root "network namespaces"
need_cmd ip iproute2 ss iproute2
need_py_module $py jsonschema python3-jsonschema

tag=bmt-fleet-$$
nc=$tag-c na=$tag-a nb=$tag-b
tmp=$(mktemp -d /tmp/bm-fleet.XXXXXX)
pids=()
fail=0
cleanup() {
	for p in "${pids[@]}"; do kill "$p" 2> /dev/null && wait "$p" 2> /dev/null; done
	for n in "$nc" "$na" "$nb"; do ip netns del "$n" 2> /dev/null; done
	if [ $fail -eq 0 ]; then rm -rf "$tmp"; else echo "files kept in $tmp"; fi
}
trap cleanup EXIT
trap 'exit 1' INT TERM

check() { # check DESCRIPTION SHELL-CONDITION
	if eval "$2"; then echo "ok   $1"; else echo "FAIL $1"; fail=1; fi
}

# Topology: c (10.77.1.1, fd77:1::1) — a (10.77.1.2); c (10.77.2.1, fd77:2::1) — b (fd77:2::2).
setup() {
	local n
	for n in "$nc" "$na" "$nb"; do
		ip netns add "$n" && ip -n "$n" link set lo up || return 1
	done
	# Created inside the namespaces: nothing appears in the host's, even for a moment.
	ip -n "$na" link add fa type veth peer name fc-a netns "$nc" || return 1
	ip -n "$nb" link add fb type veth peer name fc-b netns "$nc" || return 1
	ip -n "$nc" addr add 10.77.1.1/24 dev fc-a &&
		ip -n "$nc" addr add 10.77.2.1/24 dev fc-b &&
		ip -n "$nc" addr add fd77:2::1/64 dev fc-b nodad &&
		ip -n "$na" addr add 10.77.1.2/24 dev fa &&
		ip -n "$nb" addr add 10.77.2.2/24 dev fb &&
		ip -n "$nb" addr add fd77:2::2/64 dev fb nodad || return 1
	for n in "$nc:fc-a" "$nc:fc-b" "$na:fa" "$nb:fb"; do
		ip -n "${n%%:*}" link set "${n#*:}" up || return 1
	done
	# The black hole: 10.77.1.77 resolves to a MAC no interface has; a drops those frames.
	ip -n "$nc" neigh add 10.77.1.77 lladdr 02:00:5e:00:77:77 dev fc-a nud permanent
}
if ! setup; then
	echo "FAIL cannot build the namespaces"
	fail=1
	exit 1
fi

# Root in our own namespaces: a daemon that drops privileges by default must be told it may stay.
dflags=()
"$bindir/bloatmeterd" -n --allow-root yes > /dev/null 2>&1 && dflags+=(--allow-root yes)
# daemon NAMESPACE PORT: starts bloatmeterd there and waits until it listens (at most 5 s).
daemon() {
	ip netns exec "$1" "$bindir/bloatmeterd" "${dflags[@]}" -v -p "$2" > "$tmp/daemon-$1.log" 2>&1 &
	pids+=($!)
	for _ in $(seq 50); do
		ip netns exec "$1" ss -Hltn "sport = :$2" | grep -q . && return 0
		sleep 0.1
	done
	echo "daemon in $1 did not start"
	return 1
}
daemon "$na" 4750 || { fail=1; exit 1; }
daemon "$nb" 4760 || { fail=1; exit 1; }
client() { ip netns exec "$nc" "$bindir/bloatmeter" "$@"; }

cat > "$tmp/servers" << 'EOF'
# the fleet of check_fleet.sh
10.77.1.2              # A, default port
[fd77:2::2]:4760       # B over IPv6

10.77.1.2:4799         # nothing listens: refused
10.77.1.77             # black hole: timeout
EOF

# 1. A real short run against the one chosen from the list. -Z root: started as root, the
# client would write its files as nobody (-Z), which cannot enter this test's directory.
t0=$(date +%s.%N)
client -Z root --server-list "$tmp/servers" --phases idle,download --idle 1 -t 2 --gap 0 -P 2 \
	--probes udp --json "$tmp/r.json" > "$tmp/text.out" 2> "$tmp/client.err"
rc=$?
t1=$(date +%s.%N)
check "a run from --server-list succeeds (exit $rc, $(awk -v a="$t0" -v b="$t1" \
	'BEGIN { printf "%.1f", b - a }') s)" '[ $rc -eq 0 ]'
[ $rc -eq 0 ] || sed 's/^/     client: /' "$tmp/client.err"
valid=$($py -m jsonschema -i "$tmp/r.json" "$schema" 2>&1)
check "the --json report validates against docs/report.schema.json" \
	'[ -f "$tmp/r.json" ] && [ -z "$valid" ]'
[ -z "$valid" ] || echo "$valid" | head -20 | sed 's/^/     schema: /'

# Checks on the report's server_selection; prints what it saw, exits non-zero on a mismatch.
$py - "$tmp/r.json" > "$tmp/sel.out" 2>&1 << 'EOF'
import json, sys
r = json.load(open(sys.argv[1]))
s = r["server_selection"]
c = s["candidates"]
for i, x in enumerate(c):
    host = f"[{x['host']}]" if ":" in x["host"] else x["host"]
    print(f"     [{i}] {host}:{x['port']} {x['address']} median {x['rtt_ms']} ms "
          f"min {x['min_rtt_ms']} ms samples {x['samples']} failed {x['failed']} "
          f"error {x['error']}{'  <- chosen' if i == s['chosen'] else ''}")
ok = True
def want(cond, what):
    global ok
    if not cond:
        print(f"     mismatch: {what}")
        ok = False
want(len(c) == 4, "four candidates")
want(s["chosen"] in (0, 1), "a live daemon is chosen")
for i in (0, 1):
    want(c[i]["error"] is None and c[i]["samples"] == 5 and c[i]["failed"] == 0,
         f"candidate {i} answered all 5 handshakes")
    want(c[i]["rtt_ms"] is not None and 0 < c[i]["min_rtt_ms"] <= c[i]["rtt_ms"] < 100,
         f"candidate {i} RTT plausible (0 < min <= median < 100 ms)")
want(c[1]["address"] == "[fd77:2::2]:4760", "B's address is the bracketed IPv6 one")
want(c[2]["error"] == "connection refused" and c[2]["rtt_ms"] is None, "refused port")
want(c[3]["error"] == "no answer within 2000 ms" and c[3]["failed"] == 5, "black hole")
chosen = c[s["chosen"]]
want(r["server"] == chosen["address"], "the report's server is the chosen address")
want(all(x["rtt_ms"] is None or chosen["rtt_ms"] <= x["rtt_ms"] for x in c),
     "the chosen median is the lowest")
sys.exit(0 if ok else 1)
EOF
src=$?
cat "$tmp/sel.out"
check "server_selection: all four candidates, the lowest live median chosen, right errors" \
	'[ $src -eq 0 ]'
line=$(grep '^server: ' "$tmp/text.out")
echo "     text: $line"
check "the text report names the server and the candidates" \
	'grep -Eq "^server: (10\.77\.1\.2:4750|\[fd77:2::2\]:4760) \(lowest idle RTT [0-9.]+ ms of 4 candidates\)$" <<< "$line"'
# Each daemon got 5 handshakes that closed with a reset before saying anything: it must not
# complain about them (the classifier frees such a connection silently, counting nothing).
complaints() {
	grep -Ei "bad|malformed|invalid|unexpected|timeout|timed out|reset|refused|error|fail" \
		"$tmp/daemon-$na.log" "$tmp/daemon-$nb.log" | grep -v "running as root"
}
check "the daemons (-v) logged no complaint about the handshakes" '! complaints | grep -q .'
complaints | head -5 | sed 's/^/     daemon: /'
# Their counters (printed on SIGTERM) must not count the handshakes as bad or timed out.
for p in "${pids[@]}"; do kill -TERM "$p" 2> /dev/null; done
for p in "${pids[@]}"; do wait "$p" 2> /dev/null; done
pids=()
for n in "$na" "$nb"; do
	counters=$(grep -h "counters: sessions" "$tmp/daemon-$n.log")
	echo "     ${n##*-}: ${counters#bloatmeterd: }"
	check "daemon ${n##*-}: control bad 0, timed out 0 after 5 handshakes" \
		'[ -z "$counters" ] || grep -q "control bad 0, timed out 0" <<< "$counters"'
done

# 2. Flags: conflicts are bad usage (exit 2, one sentence); nobody reachable exits 1.
usage() { # usage NEEDLE ARGS...: exit 2 and NEEDLE in the first line of stderr
	local needle=$1 out rc
	shift
	out=$(client "$@" 2>&1 > /dev/null)
	rc=$?
	[ $rc -eq 2 ] && head -1 <<< "$out" | grep -qF -- "$needle" && return 0
	echo "     rc $rc: $(head -1 <<< "$out")"
	return 1
}
check "a positional SERVER with --servers is refused" \
	'usage "give either SERVER or --servers/--server-list, not both" --servers 10.77.1.2 10.77.1.2'
check "--servers with --server-list is refused" \
	'usage "cannot be combined" --servers 10.77.1.2 --server-list "$tmp/servers"'
check "the lab refuses --servers" 'usage "the lab runs its own server" lab --servers 10.77.1.2'
check "a bad entry names itself" \
	'usage "invalid --servers: bad server \"10.77.1.2:0\": invalid port (1-65535)" --servers 10.77.1.2,10.77.1.2:0'
printf '10.77.1.2\nbad host\n' > "$tmp/bad"
check "a bad file line names its line" \
	'usage "invalid --server-list: $tmp/bad:2: bad server \"bad host\"" --server-list "$tmp/bad"'
t0=$(date +%s.%N)
out=$(client --servers 10.77.1.2:4799,10.77.1.77 --phases idle --idle 1 2>&1 > /dev/null)
rc=$?
t1=$(date +%s.%N)
echo "     stderr: $out"
check "nobody reachable: exit 1, one sentence naming both, within 5 s" \
	'[ $rc -eq 1 ] && [ "$(wc -l <<< "$out")" -eq 1 ] &&
	 grep -qF "none of the 2 servers could be reached: 10.77.1.2:4799 (connection refused), 10.77.1.77:4750 (no answer within 2000 ms)" <<< "$out" &&
	 awk -v a="$t0" -v b="$t1" "BEGIN { exit !(b - a < 5) }"'

if [ $fail -eq 0 ]; then
	echo "PASS fleet: a live server chosen by handshake RTT, every candidate reported, flags checked"
fi
exit $fail
