#!/usr/bin/env bash
# Hardened binaries, twice: the build tree's (CMakeLists.txt's own flags) and the packaged ones
# that scripts/build-deb.sh builds with dpkg-buildflags. For the package, also that the flags of
# dpkg-buildflags reached every compile and link: the build gets one marker more per variable
# (DEB_*_MAINT_APPEND, as a package's debian/rules would set) and every compile command must
# carry the CFLAGS and CPPFLAGS words, both binaries' link commands the LDFLAGS words.
# --nocfprotection: no binary on Debian 12 carries the CET note (the C library's start files
# lack it, so the linker drops it; /usr/bin/ls fails that check too).
#   check_hardening.sh SRCDIR BLOATMETER BLOATMETERD
set -uo pipefail
src=$1 client=$2 daemon=$3
. "$src/tests/lib/require.sh"
need_cmd hardening-check devscripts dpkg-buildflags dpkg-dev dpkg-deb dpkg jq jq
. "$src/tests/lib/harness.sh"

check "build tree: hardening-check passes on bloatmeter and bloatmeterd" \
	hardening-check --nocfprotection "$client" "$daemon"

export DEB_CFLAGS_MAINT_APPEND=-fno-common DEB_CPPFLAGS_MAINT_APPEND=-DBM_DPKG_BUILDFLAGS \
	DEB_LDFLAGS_MAINT_APPEND=-Wl,--as-needed
if ! deb=$(JOBS=2 "$src/scripts/build-deb.sh" "$work/build" 2> "$work/build.log" | tail -1) ||
	[ ! -f "$deb" ]; then
	tail -40 "$work/build.log"
	echo "FAIL scripts/build-deb.sh built no package"
	exit 1
fi
echo "ok   scripts/build-deb.sh built $(basename "$deb")"

cd "$src" # dpkg-buildflags' -ffile-prefix-map names the directory it runs in
export DEB_BUILD_MAINT_OPTIONS=hardening=+all
words_in() { # FILE WORDS...: every word occurs in FILE
	local f=$1 w
	shift
	for w in "$@"; do grep -qF -- " $w " "$f" || { echo "     missing $w"; return 1; }; done
}
jq -r '.[] | .command' "$work/build/compile_commands.json" > "$work/commands"
n=$(wc -l < "$work/commands")
check "compile commands found ($n)" test "$n" -gt 20
read -ra cw <<< "$(dpkg-buildflags --get CPPFLAGS) $(dpkg-buildflags --get CFLAGS)"
check "dpkg-buildflags' marker is in the flags used" grep -q -- -DBM_DPKG_BUILDFLAGS <<< "${cw[*]}"
bad=0
while IFS= read -r line; do
	printf ' %s \n' "$line" > "$work/one"
	words_in "$work/one" "${cw[@]}" > /dev/null || bad=$((bad + 1))
done < "$work/commands"
check "every compile command carries dpkg-buildflags' CPPFLAGS and CFLAGS ($bad without)" test "$bad" -eq 0
read -ra lw <<< "$(dpkg-buildflags --get LDFLAGS)"
for t in bloatmeter bloatmeterd; do
	printf ' %s \n' "$(cat "$work/build/CMakeFiles/$t.dir/link.txt")" > "$work/link-$t"
	check "$t's link command carries dpkg-buildflags' LDFLAGS (${lw[*]})" words_in "$work/link-$t" "${lw[@]}"
done
check "the project's _FORTIFY_SOURCE=3 comes after dpkg's =2 in every compile command" \
	test "$(grep -c -- "-D_FORTIFY_SOURCE=2 .*-U_FORTIFY_SOURCE -D_FORTIFY_SOURCE=3" "$work/commands")" -eq "$n"

dpkg-deb -x "$deb" "$work/root"
check "the package: hardening-check passes on /usr/bin/bloatmeter and /usr/sbin/bloatmeterd" \
	hardening-check --nocfprotection "$work/root/usr/bin/bloatmeter" "$work/root/usr/sbin/bloatmeterd"
check "the packaged client runs" "$work/root/usr/bin/bloatmeter" --version
exit $fail
