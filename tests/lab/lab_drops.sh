#!/usr/bin/env bash
# Drop-pattern accuracy against configured truth, with the real binaries in the lab:
#  random: nftables drops 1 % downstream and 0.5 % upstream at random (idle run, 4000 probes):
#          reported loss per direction within ±0.5 percentage points, classified "random";
#  tail-drop: a 20 Mbit/s, 50 ms tbf downlink with probes as large as data segments (so the
#          byte-limited queue drops them like data): the download phase's downstream losses
#          are classified "tail-drop".
# CPU steal (steal.sh) may void only the loss-rate error bounds, not the classifications.
# Usage: lab_drops.sh BINDIR
set -euo pipefail
bindir=$1
. "$(dirname "$0")/../lib/require.sh"
need_root "network namespaces, tc and nftables"
need_cmd jq jq ip iproute2 tc iproute2 nft nftables
. "$(dirname "$0")/steal.sh"
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
fail=0
steal0=$(steal_read)
check() { if eval "$2"; then echo "ok   $1"; else echo "FAIL $1"; fail=1; fi; }
# accuracy DESCRIPTION CONDITION: an accuracy check (an error bound around the truth).
accuracy() { if eval "$2"; then echo "ok   $1"; else accuracy_fail "$1"; fi; }
lab() { # OUTFILE ARGS...: one bloatmeter lab run; its exit code is a check of its own
	local f=$1
	shift
	"$bindir/bloatmeter" lab "$@" -q --json "$f" || { echo "FAIL drop patterns: bloatmeter lab $* exited $?"; exit 1; }
}

lab "$out/random.json" --down-loss 1 --up-loss 0.5 --phases idle --idle 40
jq -c '.phases[0] | {loss_pct, probes, up: .loss_pattern.up.class, down: .loss_pattern.down.class}' "$out/random.json"
for d in down up; do
	truth=$(jq ".lab.truth.${d}_loss_pct" "$out/random.json")
	got=$(jq ".phases[0].loss_pct.$d" "$out/random.json")
	accuracy "random loss $d: measured $got % vs configured $truth % (±0.5 pp)" \
		"awk -v g=$got -v t=$truth 'BEGIN { exit !(g - t <= 0.5 && t - g <= 0.5) }'"
	check "random loss $d classified random" \
		"[ \"\$(jq -r .phases[0].loss_pattern.$d.class '$out/random.json')\" = random ]"
done

lab "$out/tail.json" --down-rate 20mbit --down-buffer 50 --phases idle,download --probe-size 1200
jq -c '.phases[1].loss_pattern.down | {class, periods, evidence, confidence}' "$out/tail.json"
check "tail-drop downlink classified tail-drop" \
	"[ \"\$(jq -r '.phases[1].loss_pattern.down.class' '$out/tail.json')\" = tail-drop ]"
steal_verdict "drop patterns" "$fail" "$accuracy_fail" "$(steal_pct "$steal0" "$(steal_read)")" || exit 1
echo "PASS drop patterns"
