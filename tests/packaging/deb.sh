#!/usr/bin/env bash
# The Debian package end to end: cpack builds it from this build tree; its file list, control
# fields, conffiles and postinst are checked (postinst against stand-in adduser, getent,
# sysctl and systemctl, so the host is not changed); then, from the extracted tree, the daemon
# is started as root on loopback with --user nobody and must run every thread as nobody with
# no capability and no_new_privs, serve a real client from the same tree, and exit 0 on
# SIGTERM. Then the service as an ISP would run it (nobody, PSK, TLS required, max-rate,
# the HTTP listener), again from the package. A root start without a user refuses (or, if the account exists, runs as
# "bloatmeter"), and allow-root = yes keeps root with a warning. Not root: the package checks
# and an unprivileged run only.
#   deb.sh BUILDDIR VERSION [CPACK]
set -uo pipefail
build=$1 version=$2 cpack=${3:-cpack}
. "$(dirname "$0")/../lib/require.sh"
need_cmd dpkg-deb dpkg man man-db jq jq openssl openssl curl curl promtool prometheus \
	setpriv util-linux logrotate logrotate
. "$(dirname "$0")/../lib/harness.sh"
. "$(dirname "$0")/build_deb.sh"
chmod 755 "$work" # the extracted tree is read by a daemon that is not root

# --- build
build_deb "$build" "$version" "$cpack" "$work/pkg" || exit 1
echo "ok   built $(basename "$deb")"

# --- contents
dpkg-deb -c "$deb" > "$work/listing"
awk '{ print $NF }' "$work/listing" | sed 's|^\./|/|' > "$work/files"
for p in /usr/bin/bloatmeter /usr/sbin/bloatmeterd /etc/bloatmeter/bloatmeterd.conf \
	/lib/systemd/system/bloatmeterd.service /lib/systemd/system/bloatmeter-measure.service \
	/lib/systemd/system/bloatmeter-measure.timer /usr/lib/sysctl.d/60-bloatmeter.conf \
	/usr/share/man/man1/bloatmeter.1 /usr/share/man/man5/bloatmeterd.conf.5 \
	/usr/share/man/man8/bloatmeterd.8 /usr/share/doc/bloatmeter/README.md \
	/usr/share/doc/bloatmeter/bloatmeterd.conf.md /etc/logrotate.d/bloatmeterd; do
	check "contains $p" grep -qx -- "$p" "$work/files"
done
check "nothing left in /usr/etc or /usr/lib/systemd" eval '! grep -Eq "^/usr/(etc|lib/systemd)" "$work/files"'
check "bloatmeterd is mode 755 root/root" \
	grep -Eq "^-rwxr-xr-x root/root .* \./usr/sbin/bloatmeterd$" "$work/listing"

# --- control fields
field() { dpkg-deb -f "$deb" "$1"; }
check "Package: bloatmeter" test "$(field Package)" = bloatmeter
check "Version: $version" test "$(field Version)" = "$version"
check "Section: net" test "$(field Section)" = net
check "Architecture: $(dpkg --print-architecture)" test "$(field Architecture)" = "$(dpkg --print-architecture)"
check "Maintainer set" eval '[[ "$(field Maintainer)" == *"<"*"@"*">" ]]'
check "Description has a summary and a body" eval '[ "$(field Description | wc -l)" -ge 2 ]'
deps=$(field Depends)
echo "     Depends: $deps"
for d in adduser libc6 libevent-core libjson-c libssl libpcap; do
	check "Depends names $d" grep -q -- "$d" <<< "$deps"
done
dpkg-deb -e "$deb" "$work/control"
check "conffiles: the daemon's configuration and the measurement's defaults" \
	test "$(cat "$work/control/conffiles")" = "$(printf '%s\n' /etc/bloatmeter/bloatmeterd.conf /etc/default/bloatmeter-measure /etc/logrotate.d/bloatmeterd)"
for s in postinst prerm postrm; do
	check "$s is executable sh" eval '[ -x "$work/control/$s" ] && sh -n "$work/control/$s"'
done
check "Depends names init-system-helpers (deb-systemd-helper)" grep -q init-system-helpers <<< "$deps"
check "/etc/default/bloatmeter-measure is shipped" grep -qx /etc/default/bloatmeter-measure "$work/files"

# --- postinst with stand-ins that record their calls (getent's answer is chosen per run)
mkdir -p "$work/fake"
for t in adduser sysctl systemctl deb-systemd-helper deb-systemd-invoke; do
	printf '#!/bin/sh\necho "%s $*" >> "%s/calls"\n' "$t" "$work" > "$work/fake/$t"
done
printf '#!/bin/sh\nexit "${FAKE_GETENT_RC:-2}"\n' > "$work/fake/getent"
chmod +x "$work"/fake/*
postinst() { # GETENT_RC: runs postinst configure; its exit code
	rm -f "$work/calls"
	FAKE_GETENT_RC=$1 PATH="$work/fake:$PATH" sh "$work/control/postinst" configure 0.0
}
check "postinst without the user: exit 0" postinst 2
check "postinst creates the system user" grep -Eq "^adduser --system --group .*bloatmeter$" "$work/calls"
check "postinst applies the sysctl.d file" grep -q "^sysctl -q -p /usr/lib/sysctl.d/60-bloatmeter.conf" "$work/calls"
check "postinst with the user: exit 0" postinst 0
check "postinst is idempotent (no second adduser)" eval '! grep -q "^adduser" "$work/calls"'
check "postinst records the units' state for purge" \
	grep -q "^deb-systemd-helper update-state bloatmeterd.service bloatmeter-measure.timer" "$work/calls"
maint() { # SCRIPT ARG: runs a maintainer script with the stand-ins; its exit code
	rm -f "$work/calls"
	PATH="$work/fake:$PATH" sh "$work/control/$1" "$2"
}
check "postrm purge: exit 0, units purged" eval \
	'maint postrm purge && grep -q "^deb-systemd-helper purge bloatmeterd.service" "$work/calls"'
check "prerm remove: exit 0" maint prerm remove

# --- run from the extracted tree
root=$work/root
dpkg-deb -x "$deb" "$root"
d=$root/usr/sbin/bloatmeterd
b=$root/usr/bin/bloatmeter
conf=$root/etc/bloatmeter/bloatmeterd.conf
out=$("$d" -n -c "$conf" 2>&1)
check "the packaged configuration checks OK" test "$out" = "bloatmeterd: configuration OK ($conf)"
check "the packaged man pages render" eval 'man -l "$root/usr/share/man/man8/bloatmeterd.8" > /dev/null 2>&1'

# Starts the daemon with the given flags on a free port; sets dpid and port, or fails.
start() {
	for _ in 1 2 3 4 5; do
		port=$((20000 + RANDOM % 40000))
		"$d" -c "$conf" -b 127.0.0.1 -p "$port" -v "$@" > "$work/daemon.log" 2>&1 &
		dpid=$!
		for _ in $(seq 50); do
			grep -q "listening on 127.0.0.1 port $port" "$work/daemon.log" && return 0
			kill -0 "$dpid" 2> /dev/null || break
			sleep 0.1
		done
		kill "$dpid" 2> /dev/null
		wait "$dpid" 2> /dev/null
		dpid=
	done
	cat "$work/daemon.log"
	return 1
}
stop() { # SIGTERM; exit code 0 expected
	kill -TERM "$dpid"
	wait "$dpid"
	local rc=$?
	dpid=
	return $rc
}
# Every thread's status: the uid and gid (all four), no capability, no_new_privs.
threads_as() { # UID GID
	local t n=0
	for t in /proc/"$dpid"/task/*; do
		n=$((n + 1))
		grep -qx "Uid:	$1	$1	$1	$1" "$t/status" &&
			grep -qx "Gid:	$2	$2	$2	$2" "$t/status" &&
			grep -qx "CapEff:	0000000000000000" "$t/status" &&
			grep -qx "CapPrm:	0000000000000000" "$t/status" &&
			grep -qx "NoNewPrivs:	1" "$t/status" || { cat "$t/status"; return 1; }
	done
	echo "     $n threads as uid $1 gid $2, CapEff 0, NoNewPrivs 1"
	[ "$n" -ge 3 ] # main, UDP reflector, DNS responder at least
}

if [ "$(id -u)" = 0 ]; then
	uid=$(id -u nobody) gid=$(id -g nobody)
	if start --user nobody; then
		check "--user nobody: every thread dropped" threads_as "$uid" "$gid"
		check "it logs the switch" grep -q "running as user nobody (uid $uid" "$work/daemon.log"
		check "a client from the package completes a run" eval \
			'"$b" -p "$port" --phases idle,download --idle 1 -t 2 --gap 0 -P 2 127.0.0.1 > "$work/client.out" 2>&1'
		check "its report has the download phase" grep -Eq "^download[* ]" "$work/client.out"
		check "SIGTERM: exit 0" stop
	else
		check "the daemon starts as root with --user nobody" false
	fi

	# The results-log as the package rotates it: the daemon (root, dropping to nobody) owns
	# the file it created; the packaged /etc/logrotate.d/bloatmeterd, pointed at a file here
	# and with a stand-in systemctl whose reload sends SIGHUP, rotates it and the next test's
	# line lands in the new file.
	lr=$work/lr
	mkdir -p "$lr/bin"
	sed "s|/var/log/bloatmeter/results.jsonl|$lr/results.jsonl|" \
		"$root/etc/logrotate.d/bloatmeterd" > "$lr/logrotate.conf"
	if start --user nobody --results-log "$lr/results.jsonl"; then
		printf '#!/bin/sh\ncase "$*" in *is-active*) exit 0 ;; *reload*) kill -HUP %s ;; esac\n' \
			"$dpid" > "$lr/bin/systemctl"
		chmod +x "$lr/bin/systemctl"
		check "results-log: a client from the package completes a run" eval \
			'"$b" -p "$port" --phases idle,download --idle 1 -t 2 --gap 0 -P 1 127.0.0.1 > /dev/null 2>&1'
		sleep 0.5
		check "results-log: one line, the file owned by nobody" eval \
			'[ "$(wc -l < "$lr/results.jsonl")" = 1 ] && [ "$(stat -c %U "$lr/results.jsonl")" = nobody ]'
		check "the packaged logrotate file rotates it" eval \
			'PATH="$lr/bin:$PATH" logrotate -f -s "$lr/state" "$lr/logrotate.conf" 2> "$lr/err" ||
			 { cat "$lr/err"; false; }'
		check "the daemon reopened the path" wait_log "results-log $lr/results.jsonl opened"
		check "results-log: a second run" eval \
			'"$b" -p "$port" --phases idle,download --idle 1 -t 2 --gap 0 -P 1 127.0.0.1 > /dev/null 2>&1'
		sleep 0.5
		check "its line is in the new file, the old one in results.jsonl.1" eval \
			'[ "$(wc -l < "$lr/results.jsonl")" = 1 ] && [ "$(wc -l < "$lr/results.jsonl.1")" = 1 ] &&
			 jq -e ".source == \"cli\"" "$lr/results.jsonl" > /dev/null'
		check "SIGTERM: exit 0" stop
	else
		check "the daemon starts as root with --results-log" false
	fi

	# The service as an ISP runs it, all from the package's tree: started as root, dropped to
	# nobody, with pre-shared keys and TLS required (key files readable by root only, so
	# they must be read before the drop), a rate limit and the HTTP listener.
	svc=$work/svc
	mkdir -p "$svc"
	(
		cd "$svc" || exit 1
		openssl req -x509 -newkey rsa:2048 -nodes -keyout ca.key -out ca.pem -days 2 \
			-subj "/CN=bloatmeter deb test CA" 2> /dev/null &&
			openssl req -newkey rsa:2048 -nodes -keyout srv.key -out srv.csr \
				-subj "/CN=127.0.0.1" 2> /dev/null &&
			printf 'subjectAltName=IP:127.0.0.1\n' > srv.ext &&
			openssl x509 -req -in srv.csr -CA ca.pem -CAkey ca.key -CAcreateserial \
				-out srv.pem -days 2 -extfile srv.ext 2> /dev/null
	) || echo "     openssl could not make the certificates"
	umask 077
	echo "isp-test $(openssl rand -hex 32)" > "$svc/keys.psk"
	cp "$svc/keys.psk" "$svc/client.psk"
	umask 022
	chmod 600 "$svc"/*.key
	chmod 755 "$svc"
	http=$((20000 + RANDOM % 40000))
	if start --user nobody --psk-file "$svc/keys.psk" --tls-cert "$svc/srv.pem" \
		--tls-key "$svc/srv.key" --tls-required yes --max-rate 20M --http-port "$http"; then
		check "service: every thread runs as nobody" threads_as "$uid" "$gid"
		check "service: a TLS + PSK client from the package completes a download" eval \
			'"$b" -p "$port" --tls --ca "$svc/ca.pem" --psk-file "$svc/client.psk" \
				--phases idle,download --idle 1 -t 3 --gap 0 -P 2 -J 127.0.0.1 \
				> "$work/svc.json" 2> "$work/svc.err"'
		down=$(jq '.phases[] | select(.name == "download") | .throughput_mbps.down' \
			"$work/svc.json" 2> /dev/null)
		echo "     download under max-rate 20M: ${down:-?} Mbit/s"
		check "service: the download kept to max-rate (≤ 21 Mbit/s)" \
			awk -v d="${down:-999}" 'BEGIN { exit !(d > 0 && d <= 21) }'
		check "service: a plain client is refused with one sentence" eval \
			'! "$b" -p "$port" --phases idle --idle 1 127.0.0.1 > /dev/null 2> "$work/plain.err" &&
			 [ "$(grep -c . "$work/plain.err")" = 2 ] && [ "$(grep -c "^bloatmeter: error:" "$work/plain.err")" = 1 ]'
		check "service: a wrong key is refused" eval \
			'echo "isp-test $(openssl rand -hex 32)" > "$work/wrong.psk" && chmod 600 "$work/wrong.psk" &&
			 ! "$b" -p "$port" --tls --ca "$svc/ca.pem" --psk-file "$work/wrong.psk" \
				--phases idle --idle 1 127.0.0.1 > /dev/null 2>&1'
		check "service: /healthz answers" eval \
			'[ "$(curl -s --max-time 5 "http://127.0.0.1:$http/healthz")" = ok ]'
		curl -s --max-time 5 "http://127.0.0.1:$http/metrics" > "$work/metrics.txt"
		check "service: /metrics counts the failed authentication" \
			grep -Eq '^bloatmeterd_bad_packets_total\{reason="auth_failed"\} [1-9]' "$work/metrics.txt"
		check "service: promtool accepts /metrics" eval \
			'promtool check metrics < "$work/metrics.txt"'
		check "service: SIGTERM: exit 0" stop
	else
		check "the service configuration starts from the package" false
	fi

	# Root without a user: the "bloatmeter" account or a refusal.
	if getent passwd bloatmeter > /dev/null; then
		if start; then
			check "no user, account bloatmeter exists: runs as it" \
				threads_as "$(id -u bloatmeter)" "$(id -g bloatmeter)"
			check "SIGTERM: exit 0" stop
		else
			check "no user: the daemon starts as bloatmeter" false
		fi
	else
		"$d" -c "$conf" -b 127.0.0.1 -p 1 > "$work/refuse.log" 2>&1
		rc=$?
		check "no user, no bloatmeter account: refuses with exit 1" test "$rc" = 1
		check "and says what to set" grep -q 'started as root with no user to switch to: set "user = NAME" (or create the system user "bloatmeter"), or "allow-root = yes" to run as root' "$work/refuse.log"
		check "without binding anything" eval '! grep -q "listening" "$work/refuse.log"'
		if start --allow-root yes; then
			check "allow-root = yes: still root" grep -qx "Uid:	0	0	0	0" /proc/"$dpid"/status
			check "with no_new_privs" grep -qx "NoNewPrivs:	1" /proc/"$dpid"/status
			check "and a warning" grep -q "warning: running as root (allow-root = yes)" "$work/daemon.log"
			check "SIGTERM: exit 0" stop
		else
			check "allow-root = yes: the daemon starts" false
		fi
	fi
	# Not root but holding an ambient capability (as a unit with AmbientCapabilities would):
	# it binds a port below 1024 with it, then holds no capability at all.
	for _ in 1 2 3 4 5; do
		port=$((900 + RANDOM % 100)) # and DNS on the next one
		setpriv --reuid="$uid" --regid="$gid" --clear-groups --inh-caps=+net_bind_service \
			--ambient-caps=+net_bind_service \
			"$d" -c "$conf" -b 127.0.0.1 -p "$port" -v > "$work/daemon.log" 2>&1 &
		dpid=$!
		for _ in $(seq 50); do
			grep -q "listening on 127.0.0.1 port $port" "$work/daemon.log" && break 2
			kill -0 "$dpid" 2> /dev/null || break
			sleep 0.1
		done
		kill "$dpid" 2> /dev/null
		wait "$dpid" 2> /dev/null
		dpid=
	done
	if [ -n "$dpid" ]; then
		check "unprivileged with CAP_NET_BIND_SERVICE: bound port $port" true
		check "then no capability (ambient and inheritable too)" eval \
			'threads_as "$uid" "$gid" && grep -qx "CapAmb:	0000000000000000" /proc/"$dpid"/status &&
			grep -qx "CapInh:	0000000000000000" /proc/"$dpid"/status'
		check "SIGTERM: exit 0" stop
	else
		cat "$work/daemon.log"
		check "unprivileged with CAP_NET_BIND_SERVICE: the daemon starts" false
	fi
	# A user that is root is refused unless allowed.
	"$d" -c "$conf" -b 127.0.0.1 -p 1 --user root > "$work/rootuser.log" 2>&1
	rc=$?
	check "--user root without allow-root: refused" eval '[ $rc = 1 ] && grep -q "is uid 0" "$work/rootuser.log"'
else
	echo "     not root: the unprivileged run only"
	if start; then
		check "not root: keeps its uid, no capability" threads_as "$(id -u)" "$(id -g)"
		check "a client from the package completes a run" eval \
			'"$b" -p "$port" --phases idle --idle 1 -q 127.0.0.1'
		check "SIGTERM: exit 0" stop
	else
		check "the daemon starts" false
	fi
fi
if [ "$fail" != 0 ]; then
	echo "--- daemon log"
	cat "$work/daemon.log"
	[ -f "$work/client.out" ] && { echo "--- client"; cat "$work/client.out"; }
fi
[ "$fail" = 0 ] && echo "PASS packaging_deb"
exit "$fail"
