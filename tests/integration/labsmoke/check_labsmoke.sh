#!/usr/bin/env bash
# The whole client path of `bloatmeter lab` once, short, over both of its servers — bloatmeterd
# and its public HTTPS listener — through to the written reports; CI also runs it in the
# ASan/UBSan build, where it once caught the reports reading the lab's strings after the lab
# was freed. The accuracy of the lab is the lab tests' business, not this one's.
# Usage: check_labsmoke.sh BINDIR SCHEMA
set -uo pipefail
bindir=$1 schema=$2
. "$(dirname "$0")/../../lib/require.sh"
need_root "network namespaces and tc for the lab"
need_cmd jq jq ip iproute2 tc iproute2 openssl openssl
need_py_module /usr/bin/python3 jsonschema python3-jsonschema
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail=0
check() { # LABEL COMMAND...
	if "${@:2}"; then echo "ok   $1"; else echo "FAIL $1"; fail=1; fi
}

run() { # NAME ARGS...: a short lab run, its report in $work/NAME.json
	local name=$1
	shift
	"$bindir/bloatmeter" lab --down-rate 50mbit --up-rate 20mbit --phases idle,download \
		--idle 1 -t 2 --gap 0 --json-file "$work/$name.json" "$@" > "$work/$name.txt" 2> "$work/$name.err"
}

run tcp
check "lab against bloatmeterd: exit 0" test $? = 0
check "... its report matches the schema" /usr/bin/python3 -m jsonschema -i "$work/tcp.json" "$schema"
check "... and names the lab's server address" \
	jq -e '.server | test("^198\\.18\\.[0-9]+\\.[0-9]+:[0-9]+$")' "$work/tcp.json"
run https --https
check "lab against the public HTTPS listener: exit 0" test $? = 0
check "... its report matches the schema" /usr/bin/python3 -m jsonschema -i "$work/https.json" "$schema"
check "... names the listener's URL, in JSON and text" eval \
	'jq -e ".server == .http.url and (.server | test(\"^https://198\\\\.18\\\\.\"))" "$work/https.json" > /dev/null &&
	 grep -q "^HTTP test against https://198\.18\.[0-9.]*:[0-9]* (" "$work/https.txt"'
check "... and the server's congestion control it announced (cubic)" \
	jq -e '.cc.server.used == "cubic"' "$work/https.json"
if [ "$fail" != 0 ]; then
	for f in "$work"/*.txt "$work"/*.err; do echo "--- $f"; cat "$f"; done
fi
exit "$fail"
