#!/usr/bin/env bash
# The Prometheus examples in docs/fleet.md stay valid: the scrape configuration and the recording
# rules (the YAML blocks starting "# prometheus.yml" and "# bloatmeterd-fleet.rules.yml") pass
# promtool check config, and promtool test rules shows that the fleet-wide quantiles sum the
# buckets of every instance: a fast and a slow server give a median between them.
# Usage: check_prom_examples.sh DOCS_FLEET_MD
set -uo pipefail
doc=$1
. "$(dirname "$0")/../../lib/require.sh"
need_cmd promtool prometheus
tmp=$(mktemp -d /tmp/bm-fleet-prom.XXXXXX)
trap 'rm -rf "$tmp"' EXIT

# Writes the fenced yaml block whose first line is "# NAME" to $tmp/NAME.
extract() {
	awk -v want="# $1" '
		/^```yaml$/ { inb = 1; first = 1; next }
		/^```$/ { inb = 0; take = 0; next }
		inb && first { first = 0; take = ($0 == want) }
		inb && take { print }
	' "$doc" > "$tmp/$1"
	[ -s "$tmp/$1" ] || { echo "FAIL no yaml block \"# $1\" in $doc"; exit 1; }
}
extract prometheus.yml
extract bloatmeterd-fleet.rules.yml

fail=0
out=$(promtool check config "$tmp/prometheus.yml" 2>&1) || fail=1
echo "$out" | sed 's/^/     /'
[ $fail -eq 0 ] && echo "ok   promtool check config (with the rule file)" ||
	echo "FAIL promtool check config"

# Two instances, 5 tests a minute each: a has 4 of 5 under 10 ms and all under 50 ms, b none
# under 50 ms and 3 of 5 under 100 ms. Fleet-wide per minute: 4 ≤ 10 ms, 5 ≤ 50 ms, 8 ≤ 100 ms of
# 10, so the median is 50 ms and p90/p99 fall into +Inf, reported as the last finite bound 0.1.
cat > "$tmp/test.yml" << 'EOF'
rule_files:
  - bloatmeterd-fleet.rules.yml
evaluation_interval: 1m
tests:
  - interval: 1m
    input_series:
      - series: 'bloatmeterd_test_latency_increase_seconds_bucket{job="bloatmeterd",instance="a:4790",direction="download",source="server",le="0.01"}'
        values: '0+4x120'
      - series: 'bloatmeterd_test_latency_increase_seconds_bucket{job="bloatmeterd",instance="a:4790",direction="download",source="server",le="0.05"}'
        values: '0+5x120'
      - series: 'bloatmeterd_test_latency_increase_seconds_bucket{job="bloatmeterd",instance="a:4790",direction="download",source="server",le="0.1"}'
        values: '0+5x120'
      - series: 'bloatmeterd_test_latency_increase_seconds_bucket{job="bloatmeterd",instance="a:4790",direction="download",source="server",le="+Inf"}'
        values: '0+5x120'
      - series: 'bloatmeterd_test_latency_increase_seconds_count{job="bloatmeterd",instance="a:4790",direction="download",source="server"}'
        values: '0+5x120'
      - series: 'bloatmeterd_test_latency_increase_seconds_bucket{job="bloatmeterd",instance="b:4790",direction="download",source="server",le="0.01"}'
        values: '0+0x120'
      - series: 'bloatmeterd_test_latency_increase_seconds_bucket{job="bloatmeterd",instance="b:4790",direction="download",source="server",le="0.05"}'
        values: '0+0x120'
      - series: 'bloatmeterd_test_latency_increase_seconds_bucket{job="bloatmeterd",instance="b:4790",direction="download",source="server",le="0.1"}'
        values: '0+3x120'
      - series: 'bloatmeterd_test_latency_increase_seconds_bucket{job="bloatmeterd",instance="b:4790",direction="download",source="server",le="+Inf"}'
        values: '0+5x120'
      - series: 'bloatmeterd_test_latency_increase_seconds_count{job="bloatmeterd",instance="b:4790",direction="download",source="server"}'
        values: '0+5x120'
    promql_expr_test:
      - expr: job:bloatmeterd_test_latency_increase_seconds:p50_1h
        eval_time: 90m
        exp_samples:
          - labels: 'job:bloatmeterd_test_latency_increase_seconds:p50_1h{job="bloatmeterd",direction="download",source="server"}'
            value: 0.05
      - expr: job:bloatmeterd_test_latency_increase_seconds:p90_1h
        eval_time: 90m
        exp_samples:
          - labels: 'job:bloatmeterd_test_latency_increase_seconds:p90_1h{job="bloatmeterd",direction="download",source="server"}'
            value: 0.1
      - expr: job:bloatmeterd_test_latency_increase_seconds_count:increase1h
        eval_time: 90m
        exp_samples:
          - labels: 'job:bloatmeterd_test_latency_increase_seconds_count:increase1h{job="bloatmeterd",direction="download",source="server"}'
            value: 600
EOF
if out=$(cd "$tmp" && promtool test rules test.yml 2>&1); then
	echo "ok   promtool test rules: fleet median 0.05 s, p90 0.1 s, 600 tests an hour"
else
	echo "$out" | sed 's/^/     /'
	echo "FAIL promtool test rules"
	fail=1
fi
exit $fail
