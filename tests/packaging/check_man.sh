#!/usr/bin/env bash
# The manual pages in docs/man/: each renders without a groff or man warning, and each
# documents every long option there is — bloatmeterd(8) every flag of the option table and of
# server/main.c, bloatmeterd.conf(5) every key of the table, bloatmeter(1) every option of the
# client's table (client/options.c) with its short flag and value, and only those, and the
# options of any other getopt table in client/*.c — so an option added without documentation
# fails. `bloatmeter --help` must list every option of the client's table too.
#   check_man.sh SRCDIR LIST_OPTIONS BLOATMETER
# (LIST_OPTIONS prints the option tables, see list_options.c; BLOATMETER is the client)
set -uo pipefail
src=$1 list=$2 client=$3
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

# $1 text, $2 tag: whether a line is the tag, or starts with it and a space, after its indent.
has_tag() {
	awk -v t="$2" '{ sub(/^ +/, "") } $0 == t || index($0, t " ") == 1 { f = 1 } END { exit !f }' "$1"
}

mapfile -t srv < <("$list") || true
[ ${#srv[@]} -gt 5 ] || bad "list_options printed ${#srv[@]} options"
mapfile -t srvextra < <(table_opts "$src/server/main.c")
mapfile -t cli < <("$list" client) || true
[ ${#cli[@]} -gt 20 ] || bad "list_options client printed ${#cli[@]} options"
mapfile -t cliextra < <(table_opts "$src"/client/*.c)

need_flags "$work/bloatmeterd.8.txt" "bloatmeterd.8 (option table)" "${srv[@]}"
need_flags "$work/bloatmeterd.8.txt" "bloatmeterd.8 (server/main.c)" "${srvextra[@]}"
need_flags "$work/bloatmeter.1.txt" "bloatmeter.1 (getopt tables in client/*.c)" "${cliextra[@]}"

# The client's table, line "NAME SHORT ARG" ("-" for none): bloatmeter(1) has the tag line of
# each option as groff renders it, "-p, --port port" (the value's name in lower case), and
# `bloatmeter --help` its line, "  -p, --port PORT   help...".
"$client" --help > "$work/help.txt" 2>&1 || bad "bloatmeter --help failed"
missing_man=() missing_help=() names=" "
for line in "${cli[@]}"; do
	read -r name short arg <<< "$line"
	names+="$name "
	tag=--$name
	[ "$short" = - ] || tag="-$short, $tag"
	man=$tag help=$tag
	if [ "$arg" != - ]; then man+=" ${arg,,}" help+=" $arg"; fi
	# An optional value ("[=FILE]") follows the flag without a space.
	if [ "${arg:0:1}" = "[" ]; then man=${man% *}${arg,,} help=${help% *}$arg; fi
	has_tag "$work/bloatmeter.1.txt" "$man" || missing_man+=("'$man'")
	has_tag "$work/help.txt" "$help" || missing_help+=("'$help'")
done
if [ ${#missing_man[@]} -gt 0 ]; then
	bad "bloatmeter.1 lacks the options ${missing_man[*]}"
else
	echo "ok   bloatmeter.1: ${#cli[@]} options of client/options.c"
fi
if [ ${#missing_help[@]} -gt 0 ]; then
	bad "bloatmeter --help lacks the options ${missing_help[*]}"
else
	echo "ok   bloatmeter --help: ${#cli[@]} options of client/options.c"
fi
# No tag line in the page for an option the client does not have (tags are indented 7).
extra=()
while read -r n; do
	[[ $names == *" $n "* ]] || extra+=("--$n")
done < <(sed -nE 's/^ {7}(-[A-Za-z], )?--([a-z0-9-]+).*/\2/p' "$work/bloatmeter.1.txt")
[ ${#extra[@]} -eq 0 ] || bad "bloatmeter.1 documents options the client lacks: ${extra[*]}"
long=$(awk 'length > 80' "$work/help.txt")
[ -z "$long" ] || bad "bloatmeter --help has lines over 80 columns: $long"
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
