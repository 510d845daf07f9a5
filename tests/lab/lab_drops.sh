#!/usr/bin/env bash
# Drop-pattern accuracy against configured truth, with the real binaries in the lab:
#  random: nftables drops 1 % downstream and 0.5 % upstream at random (idle run, 4000 probes):
#          reported loss per direction within ±0.5 percentage points, classified "random";
#  tail-drop: a 20 Mbit/s, 50 ms tbf downlink with probes as large as data segments (so the
#          byte-limited queue drops them like data): the download phase's downstream losses
#          are classified "tail-drop".
# Usage: lab_drops.sh BINDIR
set -euo pipefail
bindir=$1
if [ "$(id -u)" -ne 0 ]; then
	echo "SKIP: needs root for network namespaces"
	exit 77
fi
. "$(dirname "$0")/steal.sh"
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
fail=0
steal0=$(steal_read)
check() { if eval "$2"; then echo "ok   $1"; else echo "FAIL $1"; fail=1; fi; }

"$bindir/bloatmeter" lab --down-loss 1 --up-loss 0.5 --phases idle --idle 40 -q --json "$out/random.json"
jq -c '.phases[0] | {loss_pct, probes, up: .loss_pattern.up.class, down: .loss_pattern.down.class}' "$out/random.json"
for d in down up; do
	truth=$(jq ".lab.truth.${d}_loss_pct" "$out/random.json")
	got=$(jq ".phases[0].loss_pct.$d" "$out/random.json")
	check "random loss $d: measured $got % vs configured $truth % (±0.5 pp)" \
		"awk -v g=$got -v t=$truth 'BEGIN { exit !(g - t <= 0.5 && t - g <= 0.5) }'"
	check "random loss $d classified random" \
		"[ \"\$(jq -r .phases[0].loss_pattern.$d.class '$out/random.json')\" = random ]"
done

"$bindir/bloatmeter" lab --down-rate 20mbit --down-buffer 50 --phases idle,download --probe-size 1200 \
	-q --json "$out/tail.json"
jq -c '.phases[1].loss_pattern.down | {class, periods, evidence, confidence}' "$out/tail.json"
check "tail-drop downlink classified tail-drop" \
	"[ \"\$(jq -r '.phases[1].loss_pattern.down.class' '$out/tail.json')\" = tail-drop ]"
steal_verdict "drop patterns" $fail "$(steal_pct "$steal0" "$(steal_read)")" || exit 1
echo "PASS drop patterns"
