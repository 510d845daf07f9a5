#!/usr/bin/env bash
# The .deb under a running systemd, which the test host lacks as PID 1: /lib/systemd/systemd
# boots as PID 1 of a PID, mount, network, UTS, IPC and cgroup namespace of this test's own,
# on an overlay of the host's root (lower: /, upper: a tmpfs of that mount namespace), so
# dpkg -i, the units and everything they write land in the overlay and vanish with it: the
# host's dpkg database, units and files are never touched. /proc/sys and /sys are read-only
# inside (some net.* settings, such as the postinst's tcp_allowed_congestion_control, are
# global to the kernel), and the bounding set lacks the capabilities whose effects reach past
# the namespaces (modules, clock, raw I/O, device nodes, the kernel log).
# Inside, as a user would, with the README's commands only:
# - dpkg -i; `systemctl enable --now bloatmeterd`: active, listening on port 4750;
# - bloatmeter-measure.service before a server is set: skipped, one journal line says what
#   to set; then BLOATMETER_SERVER=127.0.0.1 in /etc/default/bloatmeter-measure (the one
#   setting the shipped file and the README ask for), `systemctl enable --now
#   bloatmeter-measure.timer`: it waits to start the service within 90 min (the hour plus its
#   random delay); the test starts that service as the timer would: a JSON line in
#   /var/lib/bloatmeter/history.jsonl, and the textfile, which promtool accepts and nobody reads;
# - dpkg -r: the prerm's deb-systemd-invoke stop leaves no bloatmeterd process, both units
#   inactive and port 4750 closed.
# The exit trap powers the namespace's systemd off (killing it if it does not go) and removes
# its cgroup; the overlay goes with the mount namespace. Root only.
#   deb_systemd.sh BUILDDIR VERSION [CPACK]
set -uo pipefail
here=$(dirname "$0")

# --- PID 1 of the namespace (the script re-executed by unshare): the overlay, the API file
# systems systemd expects a container manager to provide, then systemd itself.
if [ "${1:-}" = --boot ]; then
	set -e
	top=$2
	mount --make-rprivate /
	mount -t tmpfs -o mode=755 bm-systemd "$top"
	mkdir "$top/upper" "$top/ovlwork" "$top/root"
	mount -t overlay bm-systemd -o "lowerdir=/,upperdir=$top/upper,workdir=$top/ovlwork" "$top/root"
	r=$top/root
	mount -t proc proc "$r/proc"
	mount --bind "$r/proc/sys" "$r/proc/sys"
	mount -o remount,bind,ro "$r/proc/sys"
	mount -t sysfs -o ro sysfs "$r/sys"
	# cgroup v2 only, whose root in this cgroup namespace is the test's cgroup: left to
	# itself, systemd would mount the host's v1 hierarchies (where it is at their root) and
	# create its cgroups there.
	mount -t cgroup2 -o nosuid,nodev,noexec cgroup2 "$r/sys/fs/cgroup"
	mount -t tmpfs -o mode=755 tmpfs "$r/dev"
	for n in null zero full random urandom tty; do
		touch "$r/dev/$n"
		mount --bind "/dev/$n" "$r/dev/$n"
	done
	mkdir "$r/dev/pts" "$r/dev/shm"
	mount -t devpts -o newinstance,ptmxmode=0666,mode=620 devpts "$r/dev/pts"
	ln -s pts/ptmx "$r/dev/ptmx"
	touch "$r/dev/console" # systemd's console: nothing (the journal has it all)
	mount --bind /dev/null "$r/dev/console"
	mount -t tmpfs -o mode=755 tmpfs "$r/run"
	mount -t tmpfs -o mode=1777 tmpfs "$r/tmp"
	# A container image's "exit 101" policy-rc.d (Docker's) would deny deb-systemd-invoke
	# every action; a real system has none.
	rm -f "$r/usr/sbin/policy-rc.d"
	# Boot to sysinit.target only: the host's own services and timers stay down.
	cd "$r"
	mkdir -p oldroot
	pivot_root . oldroot
	umount -l /oldroot
	rmdir /oldroot
	exec env -i container=bloatmeter-test /usr/bin/setpriv \
		--bounding-set=-sys_module,-sys_time,-sys_rawio,-mknod,-syslog,-wake_alarm,-block_suspend,-mac_admin,-mac_override,-audit_control \
		/lib/systemd/systemd --system --unit=sysinit.target
fi

build=$1 version=$2 cpack=${3:-cpack}
. "$here/../lib/require.sh"
need_root "it boots systemd in namespaces of its own and mounts an overlay of /"
need_cmd unshare util-linux nsenter util-linux setpriv util-linux /lib/systemd/systemd systemd \
	dpkg-deb dpkg jq jq promtool prometheus pgrep procps ss iproute2
. "$here/../lib/harness.sh"
. "$here/build_deb.sh"

# The cgroup v2 hierarchy (all of /sys/fs/cgroup, or /unified beside v1 controllers), where
# the namespace's systemd gets a cgroup of its own as its root.
if [ "$(stat -f -c %T /sys/fs/cgroup)" = cgroup2fs ]; then
	cgtop=/sys/fs/cgroup
elif [ "$(stat -f -c %T /sys/fs/cgroup/unified 2> /dev/null)" = cgroup2fs ]; then
	cgtop=/sys/fs/cgroup/unified
else
	echo "FAIL: no cgroup v2 hierarchy at /sys/fs/cgroup or /sys/fs/cgroup/unified: systemd needs one"
	exit 1
fi
cg=$cgtop/bloatmeter-test.$$
upid=
spid=
teardown() {
	if [ -n "$spid" ] && kill -0 "$spid" 2> /dev/null; then
		kill -RTMIN+4 "$spid" 2> /dev/null # systemd's poweroff
		for _ in $(seq 100); do kill -0 "$upid" 2> /dev/null || break; sleep 0.1; done
		kill -KILL "$spid" 2> /dev/null # PID 1 of the namespace: all of it goes
	elif [ -n "$upid" ]; then
		kill -KILL "$upid" 2> /dev/null # --kill-child: its child, PID 1 to be, goes too
	fi
	[ -n "$upid" ] && wait "$upid" 2> /dev/null
	if [ -d "$cg" ]; then
		find "$cg" -depth -type d -exec rmdir {} + 2> /dev/null ||
			echo "cleanup: cannot remove the cgroup $cg"
	fi
	harness_cleanup
}
trap teardown EXIT

# --- build, boot
build_deb "$build" "$version" "$cpack" "$work/pkg" || exit 1
mkdir "$work/ns" "$cg" || { echo "FAIL: cannot create $work/ns or the cgroup $cg"; exit 1; }
(
	echo "$BASHPID" > "$cg/cgroup.procs" || exit 1
	exec unshare --pid --fork --kill-child --mount --net --uts --ipc --cgroup "$0" --boot "$work/ns"
) > "$work/boot.log" 2>&1 &
upid=$!
t0=$(date +%s.%N)
for _ in $(seq 300); do
	spid=$(pgrep -P "$upid" 2> /dev/null | head -1)
	[ -n "$spid" ] && [ "$(cat /proc/"$spid"/comm 2> /dev/null)" = systemd ] && break
	spid=
	kill -0 "$upid" 2> /dev/null || break
	sleep 0.1
done
# A command inside the namespaces, with a plain environment.
in_ns() {
	nsenter -t "$spid" -m -u -i -n -p -C -r -w \
		env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin LANG=C.UTF-8 "$@"
}
if [ -z "$spid" ]; then
	cat "$work/boot.log"
	echo "FAIL systemd did not start as PID 1 of the namespace"
	exit 1
fi
# systemctl fails at once until PID 1's socket exists, then --wait waits for the boot's end.
for _ in $(seq 300); do
	booted=$(timeout 60 nsenter -t "$spid" -m -u -i -n -p -C -r -w \
		systemctl is-system-running --wait 2>&1)
	[[ "$booted" == *"connect to bus"* ]] || break
	sleep 0.2
done
echo "     systemd booted to sysinit.target: $booted, $(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }') s"
if [ "$booted" != running ]; then
	in_ns systemctl --failed --no-pager
	echo "FAIL systemd in the namespace is not running ($booted)"
	exit 1
fi

jn() { in_ns journalctl -q -o cat --no-pager "$@"; } # the namespace's journal
prop() { in_ns systemctl show -P "$2" "$1"; }         # UNIT PROPERTY
dump() {                                              # what went on inside, after a failure
	echo "--- journal"
	jn | tail -40
}

# --- install, the daemon
in_ns sh -c 'cat > /root/bloatmeter.deb' < "$deb"
if ! in_ns dpkg -i /root/bloatmeter.deb > "$work/install.log" 2>&1; then
	cat "$work/install.log"
	dump
	echo "FAIL dpkg -i $(basename "$deb") in the namespace"
	exit 1
fi
check "dpkg -i under systemd" eval \
	'[ "$(in_ns dpkg-query -W -f="\${db:Status-Status}" bloatmeter)" = installed ]'
check "systemctl enable --now bloatmeterd" eval 'in_ns systemctl enable --now bloatmeterd -q'
listening() { in_ns ss -Hltn 'sport = :4750' | grep -q .; }
for _ in $(seq 50); do listening && break; sleep 0.1; done
check "bloatmeterd is active and listens on port 4750" eval \
	'[ "$(prop bloatmeterd.service ActiveState)" = active ] && listening'
check "its journal has the start line" eval 'jn -u bloatmeterd.service | grep -q "listening on"'

# --- the scheduled measurement: skipped until a server is set, then run by the timer
in_ns systemctl start bloatmeter-measure.service
check "without a server: the start is skipped, not failed" eval \
	'[ "$(prop bloatmeter-measure.service Result)" = success ] &&
	 [ "$(prop bloatmeter-measure.service ExecMainStartTimestampMonotonic)" = 0 ]'
check "and one journal line says what to set" eval \
	'[ "$(jn -u bloatmeter-measure.service | grep -c "set BLOATMETER_SERVER in /etc/default/bloatmeter-measure")" = 1 ]'
in_ns sed -i 's/^#BLOATMETER_SERVER=.*/BLOATMETER_SERVER=127.0.0.1/' /etc/default/bloatmeter-measure
check "BLOATMETER_SERVER set in the shipped /etc/default/bloatmeter-measure" \
	eval 'in_ns grep -qx BLOATMETER_SERVER=127.0.0.1 /etc/default/bloatmeter-measure'
check "systemctl enable --now bloatmeter-measure.timer" eval \
	'in_ns systemctl enable --now bloatmeter-measure.timer -q'
# When it elapses is systemd's business: within the hour plus RandomizedDelaySec (30 min).
# Its catch-up after a missed run (Persistent=) is also delayed by up to 30 min after boot,
# so the test starts the service the timer triggers, as the timer would.
next=$(in_ns systemctl show -P NextElapseUSecRealtime bloatmeter-measure.timer)
check "the timer waits, to start bloatmeter-measure.service within 90 min ($next)" eval \
	'[ "$(prop bloatmeter-measure.timer SubState)" = waiting ] &&
	 [ "$(prop bloatmeter-measure.timer Triggers)" = bloatmeter-measure.service ] &&
	 left=$(($(date -d "$next" +%s) - $(date +%s))) && [ "$left" -ge 0 ] && [ "$left" -le 5400 ]'
skipped=$(prop bloatmeter-measure.service InvocationID)
t1=$(date +%s)
# A default run takes about 41 s (bloatmeter --help); the unit's TimeoutStartSec (10 min)
# would end a hang after ctest's timeout, so the test gives up at 3 min.
check "systemctl start bloatmeter-measure.service" eval \
	'timeout 180 nsenter -t "$spid" -m -u -i -n -p -C -r -w systemctl start bloatmeter-measure.service'
echo "     bloatmeter-measure.service ran for $(($(date +%s) - t1)) s"
check "it ran (a new invocation that started its command) and exited 0" eval \
	'[ "$(prop bloatmeter-measure.service InvocationID)" != "$skipped" ] &&
	 [ "$(prop bloatmeter-measure.service ExecMainStartTimestampMonotonic)" != 0 ] &&
	 [ "$(prop bloatmeter-measure.service ExecMainCode)" = 1 ] &&
	 [ "$(prop bloatmeter-measure.service ExecMainStatus)" = 0 ] &&
	 [ "$(prop bloatmeter-measure.service Result)" = success ]'
in_ns cat /var/lib/bloatmeter/history.jsonl > "$work/history.jsonl" 2> /dev/null
check "one JSON line in /var/lib/bloatmeter/history.jsonl, measured against 127.0.0.1" eval \
	'[ "$(wc -l < "$work/history.jsonl")" = 1 ] &&
	 jq -e ".status == \"complete\" and .server == \"127.0.0.1:4750\"" \
		"$work/history.jsonl" > /dev/null'
prom=/var/lib/bloatmeter/bloatmeter.prom
check "nobody (as node_exporter's user) reads $prom" eval \
	'in_ns setpriv --reuid=nobody --regid="$(id -g nobody)" --clear-groups cat "$prom" > "$work/bm.prom"'
check "it has the run's metrics, and promtool accepts it" eval \
	'grep -q "^bloatmeter_rtt_seconds{server=\"127.0.0.1:4750\",phase=\"download\"" "$work/bm.prom" &&
	 promtool check metrics < "$work/bm.prom"'

# --- remove: the prerm stops what runs
check "before dpkg -r: bloatmeterd and the timer are active" eval \
	'[ "$(prop bloatmeterd.service ActiveState)" = active ] &&
	 [ "$(prop bloatmeter-measure.timer ActiveState)" = active ]'
if ! in_ns dpkg -r bloatmeter > "$work/remove.log" 2>&1; then
	cat "$work/remove.log"
	echo "FAIL dpkg -r bloatmeter"
	fail=1
fi
check "dpkg -r: no bloatmeterd process is left" eval '! in_ns pgrep -x bloatmeterd > /dev/null'
for u in bloatmeterd.service bloatmeter-measure.timer bloatmeter-measure.service; do
	check "dpkg -r: $u is inactive" eval '[ "$(prop $u ActiveState)" = inactive ]'
done
check "dpkg -r: nothing listens on port 4750" eval '! listening'
if [ "$fail" != 0 ]; then
	in_ns pgrep -a bloatmeterd
	dump
fi
[ "$fail" = 0 ] && echo "PASS $(basename "$deb") under systemd $(in_ns systemctl --version | awk 'NR == 1 { print $2 }')"
exit "$fail"
