#!/usr/bin/env bash
# The long fuzzing runs (docs/fuzzing.md): builds the libFuzzer targets of tests/fuzz with clang
# in build-fuzz/, writes the binary seeds, then runs each fuzzer in turn until it has done
# RUNS executions or TIME seconds have passed, whichever comes first, on its corpus in
# tests/fuzz/corpus/NAME (kept: new inputs are added there, and the corpus is minimised with
# -merge=1 at the end of each run, so the next run starts where this one stopped). A crash
# leaves its input in build-fuzz/crashes/ and makes the script exit 1. Prints a table of
# executions, coverage (libFuzzer's cov: edges, ft: features), corpus size and crashes, also
# written to build-fuzz/fuzz-summary.md.
#   scripts/fuzz.sh [-n RUNS] [-t SECONDS] [NAME...]
# Defaults: 10 000 000 executions or 1800 s each, every fuzzer (NAME: control, ctrl, dns, ...).
# CI runs each for 20 s only (ctest -L fuzz in scripts/test.sh).
set -uo pipefail
runs=10000000
secs=1800
while getopts "n:t:h" o; do
	case $o in
	n) runs=$OPTARG ;;
	t) secs=$OPTARG ;;
	*)
		sed -n '2,13p' "$0" | sed 's/^# \{0,1\}//'
		exit 2
		;;
	esac
done
shift $((OPTIND - 1))
case "$runs$secs" in *[!0-9]*)
	echo "fuzz.sh: -n and -t take whole numbers" >&2
	exit 2
	;;
esac
src=$(cd "$(dirname "$0")/.." && pwd)
bld=$src/build-fuzz
corpus=$src/tests/fuzz/corpus
for t in clang:clang jq:jq; do
	command -v "${t%%:*}" > /dev/null || {
		echo "fuzz.sh: ${t%%:*} is missing (Debian package ${t#*:})" >&2
		exit 2
	}
done

mkdir -p "$bld"
CC=clang cmake -S "$src" -B "$bld" -DCMAKE_BUILD_TYPE=Debug -DBM_FUZZ=ON -DBM_LAB_TESTS=OFF \
	> "$bld/cmake.log" 2>&1 && cmake --build "$bld" -j"$(nproc)" > "$bld/build.log" 2>&1 || {
	tail -20 "$bld/cmake.log" "$bld/build.log"
	echo "fuzz.sh: the fuzz build failed (clang and libclang-rt-14-dev installed?)" >&2
	exit 1
}
mkdir -p "$corpus/ctrl" "$corpus/probe" "$corpus/control"
"$bld/bin/fuzz_seeds" "$corpus/ctrl" "$corpus/probe" "$corpus/control" || exit 1

# The fuzzers and their -max_len, as ctest runs them (tests/fuzz/CMakeLists.txt).
ctest --test-dir "$bld" -L fuzz --show-only=json-v1 |
	jq -r '.tests[] | select(.name != "fuzz_seeds") | [.name, (.command[] | select(startswith("-max_len=")))] | @tsv' \
		> "$bld/fuzzers.tsv"
mkdir -p "$bld/crashes" "$bld/logs"
summary=$bld/fuzz-summary.md
{
	echo "| fuzzer | executions | seconds | exec/s | cov (edges) | ft (features) | corpus | crashes |"
	echo "|---|---:|---:|---:|---:|---:|---:|---:|"
} > "$summary"
cat "$summary"
failed=0
while IFS=$'\t' read -r test maxlen; do
	name=${test#fuzz_}
	if [ $# -gt 0 ] && ! printf '%s\n' "$@" | grep -qx -- "$name"; then
		continue
	fi
	dir=$corpus/$name
	log=$bld/logs/$name.log
	mkdir -p "$dir"
	start=$(date +%s)
	UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 "$bld/bin/$test" -runs="$runs" \
		-max_total_time="$secs" "$maxlen" -print_final_stats=1 \
		-artifact_prefix="$bld/crashes/$name-" "$dir" > "$log" 2>&1
	rc=$?
	took=$(($(date +%s) - start))
	execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
	cov=$(grep -Eo 'cov: [0-9]+' "$log" | tail -1 | cut -d' ' -f2)
	ft=$(grep -Eo 'ft: [0-9]+' "$log" | tail -1 | cut -d' ' -f2)
	crashes=$(find "$bld/crashes" -name "$name-*" -newer "$bld/fuzzers.tsv" | wc -l)
	if [ $rc != 0 ] && [ "$crashes" = 0 ]; then crashes="exit $rc"; fi
	[ "$crashes" = 0 ] || failed=1
	# Keep the corpus small: only the inputs that add coverage, and the committed seeds
	# (named by hand; libFuzzer's own are 40 hex digits).
	rm -rf "$dir.min" && mkdir "$dir.min" &&
		"$bld/bin/$test" -merge=1 "$maxlen" "$dir.min" "$dir" > "$bld/logs/$name.merge.log" 2>&1 &&
		find "$dir" -maxdepth 1 -type f -regextype posix-extended ! -regex '.*/[0-9a-f]{40}' -exec cp -n {} "$dir.min/" \; &&
		rm -rf "$dir" && mv "$dir.min" "$dir" || rm -rf "$dir.min"
	line="| $name | ${execs:-?} | $took | $(( ${execs:-0} / (took > 0 ? took : 1) )) | ${cov:-?} | ${ft:-?} | $(ls "$dir" | wc -l) | $crashes |"
	echo "$line" | tee -a "$summary"
done < "$bld/fuzzers.tsv"
echo "logs in $bld/logs; crashing inputs (if any) in $bld/crashes; table in $summary"
exit $failed
