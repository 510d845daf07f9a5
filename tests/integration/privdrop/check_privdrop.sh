#!/usr/bin/env bash
# The client's privilege drop (-Z, client/run/dropuser.c) against a daemon on loopback. Started
# as root with the ICMP, TCP-connect and capture probes, the client is sampled every 0.1 s in
# /proc/PID/task/*/status: once it has switched, every thread must show nobody's uid and gid
# in all four slots, no capability but CAP_NET_ADMIN on the main thread when the congestion
# control (cubic) is not in tcp_allowed_congestion_control, and the run must still complete
# with ICMP replies, capture packets and the cc set. -Z root keeps root; an output file nobody
# cannot write fails before anything is measured; an unknown user fails.
#   check_privdrop.sh BLOATMETER BLOATMETERD  (root; exit 77 = skipped otherwise)
set -uo pipefail
b=$1 d=$2
. "$(dirname "$0")/../../lib/require.sh"
need_root "starting the client as root to see it drop to nobody"
need_cmd jq jq
. "$(dirname "$0")/../../lib/harness.sh"
chmod 755 "$work"
mkdir "$work/out" && chown nobody "$work/out" || exit 1
nuid=$(id -u nobody) ngid=$(id -g nobody)
harness_start_daemon

sample() { # PID OUT: one line per thread, "tid uid... | gid... | CapEff", then a "--" line
	local t
	for t in /proc/"$1"/task/*; do
		awk -v tid="${t##*/}" '/^Uid:/ { u = $2 " " $3 " " $4 " " $5 }
			/^Gid:/ { g = $2 " " $3 " " $4 " " $5 } /^CapEff:/ { c = $2 }
			END { if (u != "") print tid " | " u " | " g " | " c }' "$t/status" 2> /dev/null
	done >> "$2"
	echo -- >> "$2"
}
run() { # NAME ARGS...: runs the client as root, sampling it; its exit code in $rc
	local name=$1
	shift
	"$b" -p "$port" -v "$@" 127.0.0.1 > "$work/$name.out" 2> "$work/$name.err" &
	local pid=$!
	: > "$work/$name.samples"
	while kill -0 "$pid" 2> /dev/null; do
		sample "$pid" "$work/$name.samples"
		sleep 0.1
	done
	wait "$pid"
	rc=$?
	cpid=$pid
}

# --- the drop, with every probe that needs root
run drop --phases idle,download,upload --idle 2 -t 3 --gap 1 -P 2 \
	--probes udp,icmp,tcp,pcap --json "$work/out/r.json"
check "the run exited 0 (got $rc)" test "$rc" -eq 0
r=$work/out/r.json
check "the report says complete" test "$(jq -r .status "$r" 2> /dev/null)" = complete
check "the log says it runs as nobody" grep -q "running as user nobody (uid $nuid, gid $ngid)" "$work/drop.err"
# The samples from the first with the main thread switched on: every thread switched.
awk -v pid="$cpid" -v u="$nuid $nuid $nuid $nuid" -v g="$ngid $ngid $ngid $ngid" -F' \\| ' '
	$1 == pid && $2 == u { on = 1 }
	$0 == "--" { if (on && n > max) max = n; n = 0; next }
	on { n++; if ($2 != u || $3 != g) bad++ }
	END { printf "%d %d %d\n", on, max, bad }' "$work/drop.samples" > "$work/drop.sum"
read -r on threads bad < "$work/drop.sum"
echo "     samples: $(grep -c -- -- "$work/drop.samples"), switched: $on, most threads after: $threads, threads not switched after: $bad"
check "the client switched to nobody during the run" test "$on" -eq 1
check "the probe and capture threads ran after the switch (>= 3 threads seen)" test "$threads" -ge 3
check "after the switch every thread has nobody's uid and gid in all four slots" test "$bad" -eq 0
want=0000000000000000
grep -qw cubic /proc/sys/net/ipv4/tcp_allowed_congestion_control || want=0000000000001000
check "after the switch the main thread's CapEff is $want (cubic needs CAP_NET_ADMIN: $([ $want = 0000000000000000 ] && echo no || echo yes))" \
	awk -v pid="$cpid" -v u="$nuid $nuid $nuid $nuid" -v w="$want" -F' \\| ' \
	'$1 == pid && $2 == u { seen = 1; if ($4 != w) bad = 1 } END { exit !(seen && !bad) }' "$work/drop.samples"
check "after the switch every other thread holds no capability" \
	awk -v pid="$cpid" -v u="$nuid $nuid $nuid $nuid" -F' \\| ' \
	'$1 != pid && $2 == u && $4 != "0000000000000000" { bad = 1 } END { exit bad }' "$work/drop.samples"
check "ICMP probes got replies" \
	jq -e '[.probe_kinds[] | select(.kind == "icmp") | .phases[].answered] | add > 10' "$r"
check "TCP connect probes got replies" \
	jq -e '[.probe_kinds[] | select(.kind == "tcp_connect") | .phases[].answered] | add > 5' "$r"
check "the capture ran and saw packets" jq -e '.capture.ran == true and .capture.packets > 100' "$r"
check "the client's load flows used cubic" jq -e '.cc.client.ok == true and .cc.client.used == "cubic"' "$r"

# --- a congestion control everyone may set: no capability is kept at all
allowed=$(awk '{ print $1 }' /proc/sys/net/ipv4/tcp_allowed_congestion_control)
run allowed --cc "$allowed" --phases idle,download --idle 1 -t 2 --gap 0 -P 1 --probes udp,icmp
check "--cc $allowed (allowed for everyone): exited 0 (got $rc)" test "$rc" -eq 0
check "--cc $allowed: after the switch no thread holds a capability" \
	awk -v u="$nuid $nuid $nuid $nuid" -F' \\| ' \
	'$2 == u { seen = 1; if ($4 != "0000000000000000") bad = 1 } END { exit !(seen && !bad) }' "$work/allowed.samples"

# --- -Z root keeps root
run root -Z root --phases idle --idle 1 --probes udp,icmp
check "-Z root: exited 0 (got $rc)" test "$rc" -eq 0
check "-Z root: the log says it keeps root" grep -q -- "-Z root: keeps running as root" "$work/root.err"
check "-Z root: every sample shows uid 0" \
	awk -F' \\| ' '$0 != "--" && $2 != "0 0 0 0" { bad = 1 } END { exit bad }' "$work/root.samples"

# --- an output nobody cannot write: refused before measuring
start=$(date +%s%N)
run nowrite --phases idle --idle 3 --json "$work/r.json"
ms=$((($(date +%s%N) - start) / 1000000))
check "unwritable --json: exit 1 (got $rc)" test "$rc" -eq 1
check "unwritable --json: refused within 2 s, before the 3 s run ($ms ms)" test "$ms" -lt 2000
check "unwritable --json: the sentence names the user and the file" \
	grep -q "user nobody (-Z) cannot write $work/r.json" "$work/nowrite.err"
check "unwritable --json: the failed document (written as root) says so" \
	jq -e '.status == "failed" and (.error | test("cannot write"))' "$work/r.json"

# --- under sudo, without -Z: the caller (SUDO_USER) — here daemon, a user that is not nobody
duid=$(id -u daemon 2> /dev/null) || { echo "FAIL: no user daemon (Debian's base-passwd has one)"; exit 1; }
SUDO_USER=daemon run sudo --phases idle --idle 1 --probes udp
check "SUDO_USER=daemon, no -Z: exited 0 (got $rc)" test "$rc" -eq 0
check "SUDO_USER=daemon, no -Z: the log says it runs as daemon" \
	grep -q "running as user daemon (uid $duid," "$work/sudo.err"
check "SUDO_USER=daemon, no -Z: samples after the switch show daemon's uid" \
	awk -F' \\| ' -v u="$duid $duid $duid $duid" '$2 == u { seen = 1 } END { exit !seen }' "$work/sudo.samples"
SUDO_USER=daemon run sudoz -Z nobody --phases idle --idle 1 --probes udp
check "SUDO_USER=daemon with -Z nobody: -Z wins" grep -q "running as user nobody" "$work/sudoz.err"

# --- an unknown user
run nouser -Z bm-no-such-user --phases idle --idle 1
check "-Z unknown user: exit 1 (got $rc)" test "$rc" -eq 1
check "-Z unknown user: says so" grep -q 'cannot run as user "bm-no-such-user" (-Z): no such user' "$work/nouser.err"
exit $fail
