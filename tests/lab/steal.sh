# Sourced by the lab scripts. A lab's ground truth holds only while the host gives the emulated
# bottleneck (tbf in a namespace, driven by this kernel's timers and softirqs) the CPU it
# needs. On a virtual machine the hypervisor may take CPU away ("steal" in /proc/stat); seen
# here: with about 8 % steal sampled during a CI run's lab tests, a 20 Mbit/s tbf delivered
# 18.2 Mbit/s. These helpers
# measure the steal share of a run so that a failed accuracy check under heavy steal is
# reported as void (skip, exit 77) instead of as a measurement error.

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

# The steal share above which a failed check is void.
STEAL_MAX_PCT=3

# steal_verdict NAME FAIL STEAL_PCT: exits 77 (skip) when the run failed under heavy steal,
# else returns FAIL unchanged.
steal_verdict() {
	local name=$1 fail=$2 pct=$3
	echo "host CPU steal during the run: $pct %"
	if [ "$fail" -ne 0 ] && awk -v p="$pct" -v m="$STEAL_MAX_PCT" 'BEGIN { exit !(p > m) }'; then
		echo "SKIP: $name: the hypervisor took $pct % of the CPU during the run, so the emulated bottleneck could not hold its configured rate; this accuracy check is void"
		exit 77
	fi
	return "$fail"
}
