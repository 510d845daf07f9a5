#!/usr/bin/env bash
# What bloatmeterd says at default verbosity, to the journal: one start line with the
# listening address and the effective limits, then one line per finished test naming only
# the client's network (as /api/v1/tests masks it), each with its sd-daemon priority. Two
# tests, from 127.0.0.1 and (-B) 127.0.1.2, in a namespace of its own (root); stderr is made
# the "journal" by JOURNAL_STREAM naming the log file, as systemd names its stream.
# Usage: check_log.sh BINDIR
set -uo pipefail
. "$(dirname "$0")/../../lib/require.sh"
need_root "a network namespace"
bindir=$1
. "$(dirname "$0")/../../lib/harness.sh"
. "$(dirname "$0")/../../lib/netns.sh"
ns=bmlog$$
bad() { echo "FAIL $*"; fail=1; }
x="ip netns exec $ns"
netns_new $ns || exit 1
log=$work/d.log
: > "$log"
JOURNAL_STREAM=$(stat -c '%d:%i' "$log") $x "$bindir/bloatmeterd" -b 127.0.0.1 -p 4995 \
	--allow-root yes 2> "$log" > /dev/null &
dpid=$!
wait_log "listening on" "$log"
$x "$bindir/bloatmeter" -p 4995 --idle 1 --phases idle -q 127.0.0.1 ||
	bad "the run from 127.0.0.1 failed"
$x "$bindir/bloatmeter" -B 127.0.1.2 -p 4995 --idle 1 --phases idle -q 127.0.0.1 ||
	bad "the run from 127.0.1.2 failed"
sleep 0.3 # the second session's end is logged as the daemon closes it
sed 's/^/     log: /' "$log"
grep -Eq '^<5>bloatmeterd [^ ]+ listening on 127\.0\.0\.1 port 4995 .*; limits: [0-9]+ sessions, [0-9]+ per client, [0-9]+ s each, max-rate ' "$log" ||
	bad "no notice-level start line with the address and the limits"
n=$(grep -c '^<[0-9]>session ' "$log")
[ "$n" = 2 ] || bad "$n lines about sessions for 2 tests (want one each)"
grep -Eq '^<5>session [0-9]+ from 127\.0\.0\.0/24 ended after [0-9.]+ s' "$log" ||
	bad "no notice line for the test from 127.0.0.0/24"
grep -Eq '^<5>session [0-9]+ from 127\.0\.1\.0/24 ended after [0-9.]+ s' "$log" ||
	bad "no notice line for the test from 127.0.1.0/24"
! grep -Eq '127\.0\.1\.2|127\.0\.0\.1:' "$log" || bad "a client's full address is in the log"
! grep -Evq '^<[3-7]>' "$log" || bad "a line without its journal priority"
[ $fail -eq 0 ] && echo "PASS the start line and one masked line per test, with priorities"
exit $fail
