#!/usr/bin/env bash
# The manual pages in docs/man/: each renders without a groff or man warning, and each
# documents every long option there is — bloatmeterd(8) every flag of the option table and of
# server/main.c, bloatmeterd.conf(5) every key of the table, bloatmeter(1) every option of the
# client's table (client/options.c) and of any other getopt table in client/*.c — so an option
# added without documentation fails.
#   check_man.sh SRCDIR LIST_OPTIONS   (LIST_OPTIONS prints the option tables, see list_options.c)
set -uo pipefail
src=$1 list=$2
man=$src/docs/man
if ! command -v groff > /dev/null; then
	echo "SKIP: groff is not installed"
	exit 77
fi
export LC_ALL=C.UTF-8
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail=0
bad() { echo "FAIL $*"; fail=1; }

for page in bloatmeter.1 bloatmeterd.8 bloatmeterd.conf.5; do
	f=$man/$page
	out=$(groff -man -ww -z "$f" 2>&1)
	[ -z "$out" ] || bad "$page: groff -ww: $out"
	if command -v man > /dev/null; then
		out=$(MANWIDTH=80 man --warnings -l "$f" 2>&1 > /dev/null)
		[ -z "$out" ] || bad "$page: man --warnings: $out"
	fi
	# Plain text on very long lines without hyphenation, so an option is never split.
	groff -man -Tascii -rLL=400n -rHY=0 -P-cbou "$f" > "$work/$page.txt" 2> /dev/null ||
		bad "$page: does not render"
done

# $1 page text, $2 what it documents, rest: long option names that must appear as --NAME.
need_flags() {
	local txt=$1 what=$2 n missing=()
	shift 2
	for n in "$@"; do
		grep -Eq -- "--$n([^a-z0-9-]|\$)" "$txt" || missing+=("--$n")
	done
	if [ ${#missing[@]} -gt 0 ]; then bad "$what lacks ${missing[*]}"; else echo "ok   $what: $# options"; fi
}
# The long options of every getopt table in the files: lines { "name", xxx_argument, ...
table_opts() { grep -ho '{ *"[a-z0-9-]*", *[a-z_]*_argument' "$@" | cut -d'"' -f2 | sort -u; }

mapfile -t srv < <("$list") || true
[ ${#srv[@]} -gt 5 ] || bad "list_options printed ${#srv[@]} options"
mapfile -t srvextra < <(table_opts "$src/server/main.c")
mapfile -t cli < <("$list" client | cut -d' ' -f1) || true
[ ${#cli[@]} -gt 20 ] || bad "list_options client printed ${#cli[@]} options"
mapfile -t cliextra < <(table_opts "$src"/client/*.c)

need_flags "$work/bloatmeterd.8.txt" "bloatmeterd.8 (option table)" "${srv[@]}"
need_flags "$work/bloatmeterd.8.txt" "bloatmeterd.8 (server/main.c)" "${srvextra[@]}"
need_flags "$work/bloatmeter.1.txt" "bloatmeter.1 (client/options.c)" "${cli[@]}"
need_flags "$work/bloatmeter.1.txt" "bloatmeter.1 (getopt tables in client/*.c)" "${cliextra[@]}"
# A key's entry in the conf page is its tag line: "KEY = value".
missing=()
for n in "${srv[@]}"; do
	grep -Eq "^ *$n = " "$work/bloatmeterd.conf.5.txt" || missing+=("$n")
done
if [ ${#missing[@]} -gt 0 ]; then
	bad "bloatmeterd.conf.5 lacks the keys ${missing[*]}"
else
	echo "ok   bloatmeterd.conf.5: ${#srv[@]} keys"
fi
[ $fail -eq 0 ] && echo "PASS man pages"
exit $fail
