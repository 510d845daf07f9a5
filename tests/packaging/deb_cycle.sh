#!/usr/bin/env bash
# The .deb on a real system: cpack builds it from this build tree, `dpkg -i` installs it into
# the host's dpkg database, and then: the binaries run, the conffiles are registered and
# intact, the installed units pass `systemd-analyze verify`, and the maintainer scripts ran
# (the system user, the sysctl.d setting, deb-systemd-helper's state for both units, neither
# enabled). `dpkg -r` masks the units and keeps the conffiles; `dpkg --purge` leaves nothing:
# no file of the package, no conffile, no unit state, no /var/lib/bloatmeter. The system user
# stays, as Debian keeps accounts files may still belong to (packaging/deb/postrm).
# It changes the host, so: root only; it refuses to run when dpkg already knows the package
# or a file it would create exists; whatever happens, the exit trap purges the package and
# removes what the test created (the user, the unit state), and restores the sysctl.
#   deb_cycle.sh BUILDDIR VERSION [CPACK]
set -uo pipefail
build=$1 version=$2 cpack=${3:-cpack}
. "$(dirname "$0")/../lib/require.sh"
. "$(dirname "$0")/build_deb.sh"
need_root "it installs and purges the package in this host's dpkg database"
need_cmd dpkg dpkg dpkg-deb dpkg systemd-analyze systemd deb-systemd-helper init-system-helpers \
	adduser adduser deluser adduser userdel passwd sysctl procps man man-db

dsh=/var/lib/systemd/deb-systemd-helper-enabled
dshm=/var/lib/systemd/deb-systemd-helper-masked
units="bloatmeterd.service bloatmeter-measure.timer"
# Everything the package or its scripts create, which must not exist before (else it is
# someone else's) and must not exist after a purge (the trap removes it if it does).
created=(/etc/bloatmeter /etc/default/bloatmeter-measure /etc/logrotate.d/bloatmeterd
	/var/lib/bloatmeter
	/usr/sbin/bloatmeterd /usr/bin/bloatmeter /lib/systemd/system/bloatmeterd.service
	/lib/systemd/system/bloatmeter-measure.service /lib/systemd/system/bloatmeter-measure.timer
	/usr/lib/sysctl.d/60-bloatmeter.conf)
for u in $units; do created+=("$dsh/$u.dsh-also" "$dshm/$u" "$dsh/$u"); done

status=$(dpkg-query -W -f='${db:Status-Status}' bloatmeter 2> /dev/null)
if [ -n "$status" ] && [ "$status" != not-installed ]; then
	echo "FAIL: dpkg already knows the package bloatmeter ($status): this test installs and" \
		"purges it and will not touch an install it did not make (dpkg --purge bloatmeter first)"
	exit 1
fi
for p in "${created[@]}"; do
	if [ -e "$p" ]; then
		echo "FAIL: $p exists although the package is not installed: left from another" \
			"install, it is not this test's to remove"
		exit 1
	fi
done
had_user=0
getent passwd bloatmeter > /dev/null && had_user=1
cc_key=net.ipv4.tcp_allowed_congestion_control
cc_before=$(sysctl -n $cc_key)

work=$(mktemp -d)
cleanup() {
	local st
	st=$(dpkg-query -W -f='${db:Status-Status}' bloatmeter 2> /dev/null)
	if [ -n "$st" ] && [ "$st" != not-installed ]; then
		dpkg --purge bloatmeter > /dev/null 2>&1 ||
			echo "cleanup: dpkg --purge bloatmeter failed; remove it by hand"
	fi
	rm -rf "${created[@]}"
	if [ $had_user = 0 ] && getent passwd bloatmeter > /dev/null; then
		# A daemon started meanwhile as root without a user switches to this account, and
		# deluser refuses an account in use: the entry goes anyway (userdel -f), the
		# process keeps running under its number.
		deluser --system --quiet bloatmeter > /dev/null 2>&1 ||
			userdel -f bloatmeter > /dev/null 2>&1 ||
			echo "cleanup: cannot remove the user bloatmeter; remove it by hand"
		if getent group bloatmeter > /dev/null; then
			delgroup --system --quiet bloatmeter > /dev/null 2>&1 || true
		fi
	fi
	[ "$(sysctl -n $cc_key)" = "$cc_before" ] || sysctl -q -w "$cc_key=$cc_before" || true
	rm -rf "$work"
}
trap cleanup EXIT
fail=0
check() { # NAME COMMAND...
	local name=$1
	shift
	if "$@"; then echo "ok   $name"; else echo "FAIL $name"; fail=1; fi
}
state() { dpkg-query -W -f='${db:Status-Status}' bloatmeter 2> /dev/null; }

# --- build (the same cpack run as deb.sh)
build_deb "$build" "$version" "$cpack" "$work/pkg" || exit 1

# --- install
if ! dpkg -i "$deb" > "$work/install.log" 2>&1; then
	cat "$work/install.log"
	echo "FAIL dpkg -i $(basename "$deb")"
	exit 1
fi
check "dpkg -i: the package is installed" test "$(state)" = installed
dpkg -L bloatmeter > "$work/files"
check "bloatmeter --version runs" test "$(/usr/bin/bloatmeter --version)" = "bloatmeter $version"
check "bloatmeterd -V runs" test "$(/usr/sbin/bloatmeterd -V)" = "bloatmeterd $version"
check "the installed configuration checks OK" eval \
	'/usr/sbin/bloatmeterd -n -c /etc/bloatmeter/bloatmeterd.conf > /dev/null 2>&1'
# Conffiles: those of the package's control are registered with dpkg, present, unchanged
# (dpkg's md5sum), and each is one this test knows to remove should the purge leave it.
dpkg-deb -e "$deb" "$work/control"
want=$(sort "$work/control/conffiles" | tr '\n' ' ')
dpkg-query -W -f='${Conffiles}\n' bloatmeter | awk 'NF >= 2 { print $2 "  " $1 }' > "$work/conf.md5"
check "conffiles registered: $want" \
	test "$(awk '{ print $2 }' "$work/conf.md5" | sort | tr '\n' ' ')" = "$want"
for c in /etc/bloatmeter/bloatmeterd.conf /etc/default/bloatmeter-measure; do
	check "$c is a conffile" grep -qx "$c" "$work/control/conffiles"
done
for c in $want; do
	check "$c is in this test's cleanup list" eval '[[ " ${created[*]} " == *" $c "* ]] ||
		[[ " ${created[*]} " == *" ${c%/*} "* ]]'
done
check "conffiles installed and intact" eval 'md5sum --quiet -c "$work/conf.md5"'
# The units as installed (their ExecStart binaries and man: pages exist now).
for u in bloatmeterd.service bloatmeter-measure.service bloatmeter-measure.timer; do
	out=$(cd / && systemd-analyze verify "/lib/systemd/system/$u" 2>&1 | grep -F "$u")
	check "$u passes systemd-analyze verify${out:+: $out}" test -z "$out"
done
# What postinst did.
check "postinst created the system user bloatmeter" eval 'getent passwd bloatmeter > /dev/null'
check "postinst applied 60-bloatmeter.conf (cubic allowed)" eval \
	'grep -qw cubic <<< "$(sysctl -n $cc_key)"'
for u in $units; do
	check "deb-systemd-helper recorded the state of $u" test -s "$dsh/$u.dsh-also"
	check "$u is not enabled by the install" \
		eval '! ls /etc/systemd/system/*.wants/"$u" > /dev/null 2>&1'
done

# --- remove: binaries go, conffiles stay, the units are masked until purge or reinstall
if ! dpkg -r bloatmeter > "$work/remove.log" 2>&1; then
	cat "$work/remove.log"
	echo "FAIL dpkg -r bloatmeter"
	fail=1
fi
check "dpkg -r: only the conffiles are left" test "$(state)" = config-files
check "dpkg -r: the binaries are gone" eval '[ ! -e /usr/sbin/bloatmeterd ] && [ ! -e /usr/bin/bloatmeter ]'
check "dpkg -r: the conffiles stay" eval 'md5sum --quiet -c "$work/conf.md5"'
for u in $units; do
	check "postrm remove masked $u" test -e "$dshm/$u"
done

# --- purge: nothing is left
if ! dpkg --purge bloatmeter > "$work/purge.log" 2>&1; then
	cat "$work/purge.log"
	echo "FAIL dpkg --purge bloatmeter"
	fail=1
fi
st=$(state)
check "dpkg --purge: dpkg no longer knows the package" eval '[ -z "$st" ] || [ "$st" = not-installed ]'
left=()
while read -r f; do
	# Shared directories (/usr/bin, /etc, /lib -> usr/lib ...) stay; every file and link of
	# ours must go.
	if { [ -e "$f" ] || [ -L "$f" ]; } && ! [ -d "$f" ]; then left+=("$f"); fi
done < "$work/files"
for p in "${created[@]}"; do [ -e "$p" ] && left+=("$p"); done
check "dpkg --purge: no file, conffile or unit state is left${left[*]:+: ${left[*]}}" \
	test ${#left[@]} -eq 0
check "the system user stays after purge (accounts are kept)" \
	eval 'getent passwd bloatmeter > /dev/null'
[ $fail -eq 0 ] && echo "PASS install, remove and purge of $(basename "$deb")"
exit $fail
