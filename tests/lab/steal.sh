# Sourced by the lab scripts. A lab's ground truth holds only while the host gives the emulated
# bottleneck (tbf in a namespace, driven by this kernel's timers and softirqs) the CPU it
# needs. On a virtual machine the hypervisor may take CPU away ("steal" in /proc/stat); seen
# here: with about 8 % steal sampled during a CI run's lab tests, a 20 Mbit/s tbf delivered
# 18.2 Mbit/s. These helpers measure the steal share of a run so that a failed accuracy check
# (a measured figure outside its error bound around the configured truth: buffer, goodput,
# loss rate) under heavy steal is reported as void (skip, exit 77) instead of as a measurement
# error. Steal voids nothing else: a schema, exit-code, leak, presence or classification check
# that fails, fails.
#
# Usage: a script counts its accuracy failures in $accuracy_fail (accuracy_fail MESSAGE) and
# every other failure in its own $fail, then ends with
#   steal_verdict NAME "$fail" "$accuracy_fail" "$steal_pct" || exit 1

accuracy_fail=0
# accuracy_fail MESSAGE: reports a failed accuracy check (one that heavy steal may void).
accuracy_fail() {
	echo "FAIL (accuracy) $*"
	accuracy_fail=1
}

# Prints "steal total" jiffies of all CPUs.
steal_read() {
	awk '/^cpu / { t = 0; for (i = 2; i <= NF; i++) t += $i; print $9, t; exit }' /proc/stat
}

# steal_pct "BEFORE" "AFTER": steal share of the interval in percent (one decimal).
steal_pct() {
	local s0 t0 s1 t1
	read -r s0 t0 <<< "$1"
	read -r s1 t1 <<< "$2"
	awk -v s="$((s1 - s0))" -v t="$((t1 - t0))" 'BEGIN { printf "%.1f", (t > 0 ? 100 * s / t : 0) }'
}

# The steal share above which a failed accuracy check is void.
STEAL_MAX_PCT=3

# steal_verdict NAME FAIL ACCURACY_FAIL STEAL_PCT: returns 1 when any check other than accuracy
# failed (FAIL, whatever the steal); exits 77 (skip) when only accuracy checks failed
# (ACCURACY_FAIL) and the steal share was above STEAL_MAX_PCT; returns 1 when accuracy checks
# failed under less steal; else 0.
steal_verdict() {
	local name=$1 other=$2 accuracy=$3 pct=$4
	echo "host CPU steal during the run: $pct % (accuracy checks void above $STEAL_MAX_PCT %)"
	if [ "$other" -ne 0 ]; then
		echo "FAIL $name: checks other than accuracy failed; CPU steal does not excuse them"
		return 1
	fi
	[ "$accuracy" -eq 0 ] && return 0
	if awk -v p="$pct" -v m="$STEAL_MAX_PCT" 'BEGIN { exit !(p > m) }'; then
		echo "SKIP: $name: the hypervisor took $pct % of the CPU during the run, so the emulated bottleneck could not hold its configured rate; its failed accuracy checks are void (every other check passed)"
		exit 77
	fi
	echo "FAIL $name: accuracy checks failed with $pct % steal (at most $STEAL_MAX_PCT %: not void)"
	return 1
}
