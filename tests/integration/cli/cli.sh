#!/usr/bin/env bash
# Command-line behaviour: bad flags give one sentence, "Try 'bloatmeter --help'." and exit 2;
# an unreachable,
# refusing or silent server gives one clear error and exit 1 within a bounded time.
# Runs in a private network namespace when root (its own loopback), else on the host loopback
# with a refused port only. Usage: cli.sh BINDIR
set -uo pipefail
bindir=$1
fail=0
run() { # run EXPECTED_RC MAX_SECONDS NEEDLE CMD...
	local want=$1 max=$2 needle=$3
	shift 3
	local t0 t1 rc out
	t0=$(date +%s.%N)
	out=$("$@" 2>&1 > /dev/null)
	rc=$?
	t1=$(date +%s.%N)
	if [ "$rc" -ne "$want" ] || ! grep -q -- "$needle" <<< "$out" ||
		awk -v a="$t0" -v b="$t1" -v m="$max" 'BEGIN { exit !(b - a > m) }'; then
		echo "FAIL: $* → rc $rc (want $want), stderr: $(tail -1 <<< "$out")"
		fail=1
	else
		echo "ok   $* → rc $rc: $(tail -1 <<< "$out")"
	fi
}
b=$bindir/bloatmeter d=$bindir/bloatmeterd
run 2 2 "unknown option" $b --bogus 127.0.0.1
run 2 2 "invalid flow count" $b -P 0 127.0.0.1
run 2 2 "invalid probe interval" $b -i abc 127.0.0.1
run 2 2 "invalid --phases" $b --phases idle,idle 127.0.0.1
# Without SERVER the target is the configuration's default-target (a bad file is bad usage),
# else the built-in one; a URL selects the HTTP mode, whose bad URLs are bad usage too.
conf=$(mktemp)
printf 'default-target = http://127.0.0.1:1/\n' > "$conf"
run 1 5 "cannot reach http://127.0.0.1:1/__down?bytes=0" env BLOATMETER_CONFIG="$conf" $b
printf '# comment\nbogus = 1\n' > "$conf"
run 2 2 "$conf:2: unknown key \"bogus\"" env BLOATMETER_CONFIG="$conf" $b
run 2 2 "bad configuration file: cannot read /nonexistent" env BLOATMETER_CONFIG=/nonexistent $b
rm -f "$conf"
run 2 2 "the URL's port is not a number from 1 to 65535" $b http://127.0.0.1:0
run 2 2 "give either SERVER or --http URL" $b --http http://127.0.0.1/ 127.0.0.1
run 2 2 "are for a bloatmeterd, not an HTTP target" $b --tls https://127.0.0.1/
run 2 2 "invalid --bind" $b -B nonsense 127.0.0.1
run 2 2 "is an IPv4 address, but -6 asks for IPv6" $b -6 -B 127.0.0.1 ::1
run 2 2 "unknown option" $b lab -B 127.0.0.1
run 2 2 "invalid --down-rate" $b lab --down-rate fast
run 2 2 "invalid port" $d -p 70000
run 2 2 "unexpected argument" $d extra
run 0 2 "" $b -V
run 0 2 "" $d -V
# Exactly the sentence and the pointer to --help: the usage would scroll the sentence away.
out=$($b --bogus 127.0.0.1 2>&1)
if [ "$(printf '%s\n' "$out" | wc -l)" = 2 ] && [ "$(printf '%s\n' "$out" | tail -1)" = "Try 'bloatmeter --help'." ]; then
	echo "ok   a bad flag: one sentence and Try 'bloatmeter --help'."
else
	echo "FAIL: a bad flag printed: $out"
	fail=1
fi
if [ "$(id -u)" -eq 0 ]; then
	ns=bmcli$$
	ip netns add $ns
	trap 'ip netns del $ns 2> /dev/null' EXIT
	ip -n $ns link set lo up
	x="ip netns exec $ns"
	run 1 3 "cannot connect" $x $b -p 4999 127.0.0.1
	run 1 3 "Network is unreachable" $x $b 198.18.200.1
	run 1 3 "cannot resolve" $x $b no-such-host.invalid
	# No configuration at all: the built-in target, named in the error and the JSON.
	run 1 5 "speed.cloudflare.com" $x env -u BLOATMETER_CONFIG -u XDG_CONFIG_HOME HOME=/nonexistent $b
	out=$($x env -u BLOATMETER_CONFIG -u XDG_CONFIG_HOME HOME=/nonexistent $b -J 2> /dev/null)
	if jq -e '.status == "failed" and .server == "https://speed.cloudflare.com"' <<< "$out" > /dev/null; then
		echo "ok   no SERVER and no configuration: the built-in default target"
	else
		echo "FAIL: no SERVER, no configuration: $out"
		fail=1
	fi
	# No route anywhere: every attempt of the server race fails inside connect(); the race
	# must end at once (it used to wait in poll forever).
	run 1 5 "the server 198.18.200.1:4750 could not be reached" $x timeout 10 $b --servers 198.18.200.1
	# Every address in turn: dual.test is ::1 (preferred, nothing listens) and 127.0.0.1
	# (a daemon), from the namespace's own hosts file (ip netns exec mounts /etc/netns/NS/).
	mkdir -p /etc/netns/$ns
	trap 'ip netns del $ns 2> /dev/null; rm -rf /etc/netns/$ns' EXIT
	printf '::1 dual.test\n127.0.0.1 dual.test\n' > /etc/netns/$ns/hosts
	$x $d -b 127.0.0.1 -p 4997 --dns-port 0 --allow-root yes > /dev/null 2>&1 &
	dual=$!
	sleep 0.5
	run 0 15 "" $x $b -p 4997 --phases idle --idle 1 -q dual.test
	run 1 3 "cannot connect to \[::1\]:4997" $x $b -6 -p 4997 --phases idle --idle 1 -q dual.test
	run 1 3 "IPv4 only" $x $b -4 -p 4997 ::1
	# -B: of a family the server has, and an address of this host; else bad usage.
	run 2 2 "is an IPv4 address, but ::1 has no IPv4 address" $x $b -B 127.0.0.1 -p 4997 ::1
	run 2 2 "is an IPv6 address, but 127.0.0.1 has no IPv6 address" $x $b -B ::1 127.0.0.1
	run 2 2 "cannot use it here" $x $b -B 192.0.2.1 127.0.0.1
	# --json alone: the report on stdout (iperf3's habit); --json=FILE, --json-file FILE and
	# the old "--json FILE SERVER" write FILE.
	js=$(mktemp -d)
	out=$($x $b -p 4997 --phases idle --idle 1 --json 127.0.0.1 2> /dev/null)
	if [ "${out:0:1}" = "{" ] && grep -q '"status"' <<< "$out"; then
		echo "ok   --json SERVER: the JSON report on stdout"
	else
		echo "FAIL: --json SERVER printed: $(head -c 200 <<< "$out")"
		fail=1
	fi
	for form in "--json $js/old.json" "--json=$js/eq.json" "--json-file $js/file.json"; do
		f=${form##*[ =]}
		# shellcheck disable=SC2086 # the form is two words or one on purpose
		# -Z root: as root the client would write as nobody, who cannot enter $js
		if $x $b -Z root -p 4997 --phases idle --idle 1 -q $form 127.0.0.1 > /dev/null 2>&1 &&
			grep -q '"status"' "$f"; then
			echo "ok   $form SERVER: the JSON report in the file"
		else
			echo "FAIL: $form SERVER wrote no JSON report"
			fail=1
		fi
	done
	rm -rf "$js"
	# --quick: at most 12 s end to end, idle, download and upload, no bidirectional phase.
	t0=$(date +%s.%N)
	out=$($x $b -p 4997 --quick -J 127.0.0.1 2> /dev/null)
	t1=$(date +%s.%N)
	kinds=$(jq -r '[.phases[].name] | join(",")' <<< "$out" 2> /dev/null)
	if [ "$kinds" = "idle,download,upload" ] && jq -e '.status == "complete"' <<< "$out" > /dev/null &&
		awk -v a="$t0" -v b="$t1" 'BEGIN { exit !(b - a <= 12) }'; then
		echo "ok   --quick: $kinds, complete in $(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }') s"
	else
		echo "FAIL: --quick: phases '$kinds' in $(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }') s (want idle,download,upload within 12 s): $(head -c 200 <<< "$out")"
		fail=1
	fi
	kill $dual 2> /dev/null
	wait $dual 2> /dev/null
	$x "$bindir/hostile" --silent 4998 10 &
	sleep 0.3
	run 1 8 "no answer from the server: timed out" $x $b -p 4998 127.0.0.1
	kill %1 2> /dev/null
	wait
else
	run 1 3 "cannot connect" $b -p 1 127.0.0.1
fi
[ $fail -eq 0 ] && echo "PASS cli"
exit $fail
