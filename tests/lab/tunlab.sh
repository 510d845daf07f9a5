# shellcheck shell=bash
# Sourced by the userspace-bottleneck lab scripts (lab_tun.sh, lab_codel.sh, lab_queue.sh): the
# tools they need, a temporary directory ($out, report $r) removed at exit, and the check helpers.
#   check LABEL EXPR     a check that always counts ($fail)
#   accuracy LABEL EXPR  an accuracy check, which heavy CPU steal may void (steal.sh)
#   near A B TOL         both numbers, |A - B| <= TOL
. "$(dirname "${BASH_SOURCE[0]}")/../lib/require.sh"
need_root "network namespaces and TUN devices for the userspace bottleneck"
need_cmd jq jq ip iproute2
need_py_module /usr/bin/python3 jsonschema python3-jsonschema
[ -c /dev/net/tun ] || { echo "FAIL: /dev/net/tun is missing (kernel module tun)"; exit 1; }
. "$(dirname "${BASH_SOURCE[0]}")/steal.sh"
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
fail=0
r=$out/report.json
check() { if eval "$2"; then echo "ok   $1"; else echo "FAIL $1"; fail=1; fi; }
accuracy() { if eval "$2"; then echo "ok   $1"; else accuracy_fail "$1"; fi; }
near() { awk -v a="$1" -v b="$2" -v t="$3" 'BEGIN { exit !(a != "null" && b != "null" && a != "" && b != "" && a - b <= t && b - a <= t) }'; }
