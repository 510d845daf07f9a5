# Sourced by the fault drills that run in network namespaces of their own (check_blackhole.sh,
# check_udpblock.sh, check_slowconnect.sh), with their arguments BINDIR SCHEMA still in $1 $2:
# root, jq, iproute2, nftables and python3-jsonschema (plus DRILL_NEED, more "command package"
# pairs, set before sourcing), the harness and the namespace helpers, the daemon in $d.
# drill_out_dir makes $work/out, where a client that drops to nobody (-Z) can write.
bindir=$1
schema=$2
py=/usr/bin/python3
. "$(dirname "$0")/../../lib/require.sh"
need_root "network namespaces and nftables"
# shellcheck disable=SC2086 # DRILL_NEED is pairs of words on purpose
need_cmd jq jq ip iproute2 nft nftables ${DRILL_NEED:-}
need_py_module $py jsonschema python3-jsonschema
. "$(dirname "$0")/../../lib/harness.sh"
. "$(dirname "$0")/../../lib/netns.sh"
d=$bindir/bloatmeterd

drill_out_dir() {
	chmod 755 "$work" && mkdir "$work/out" && chown nobody "$work/out"
}
