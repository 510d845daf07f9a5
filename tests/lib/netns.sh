# Sourced by the test scripts that run in network namespaces (and by those that need a free
# loopback port instead): netns_new and netns_veth make named namespaces, which netns_cleanup
# deletes (tests/lib/harness.sh's exit trap calls it; a script with its own trap calls it
# there); netns_private re-executes a script in an unnamed one; netns_start_daemon starts "$d"
# in a namespace as harness_start_daemon does on the host; wait_listen waits for a TCP port.
# Sourcing it does nothing else: it may come before a re-execution.
netns_made=()

netns_new() { # NAME...: namespaces with their loopback up, deleted by netns_cleanup
	local n
	for n in "$@"; do
		ip netns add "$n" || return 1
		netns_made+=("$n")
		ip -n "$n" link set lo up || return 1
	done
}

netns_veth() { # C S CADDR/LEN SADDR/LEN: namespaces C and S (made here) linked by a veth pair,
	# vc in C and vs in S, each up with its address.
	netns_new "$1" "$2" &&
		ip -n "$1" link add vc type veth peer name vs netns "$2" &&
		ip -n "$1" addr add "$3" dev vc && ip -n "$2" addr add "$4" dev vs &&
		ip -n "$1" link set vc up && ip -n "$2" link set vs up
}

netns_cleanup() { # deletes every namespace netns_new made
	local n
	for n in "${netns_made[@]}"; do ip netns del "$n" 2> /dev/null || true; done
	netns_made=()
}

netns_start_daemon() { # NS ADDR PORT FLAGS...: "$d" (the caller sets d) in namespace NS on
	# ADDR port PORT, log in $work/daemon.log, pid in $dpid; the test fails if it does not
	# say it listens within 5 s (wait_log of harness.sh).
	local ns=$1 addr=$2 p=$3
	shift 3
	ip netns exec "$ns" "$d" -b "$addr" -p "$p" --dns-port 0 --allow-root yes -v "$@" \
		> "$work/daemon.log" 2>&1 &
	dpid=$!
	wait_log "listening on $addr port $p" && return 0
	cat "$work/daemon.log"
	echo "FAIL $(basename "$0"): the daemon did not start"
	exit 1
}

netns_private() { # MARK SCRIPT ARGS...: as root, re-executes SCRIPT ARGS in a private network
	# namespace (unshare -n, MARK set in the environment so the second pass stays), where the
	# loopback is brought up and $port is 4750; otherwise $port is a free loopback port
	# (TCP and UDP, and the next one for the DNS responder).
	if [ "$(id -u)" -eq 0 ] && [ -z "${!1:-}" ]; then
		need_cmd unshare util-linux
		export "$1"=1
		exec unshare -n -- "${@:2}"
	fi
	if [ -n "${!1:-}" ]; then
		ip link set lo up
		port=4750
		return 0
	fi
	port=
	local p
	for p in $(shuf -i 20000-59000 -n 50); do
		if [ -z "$(ss -Htuln "( sport = :$p or sport = :$((p + 1)) )")" ]; then
			port=$p
			return 0
		fi
	done
	echo "FAIL: no free port found"
	exit 1
}

wait_listen() { # PORT [NS]: waits up to 5 s for a TCP listener on PORT (in namespace NS)
	local x=()
	[ -n "${2:-}" ] && x=(ip netns exec "$2")
	for _ in $(seq 100); do
		[ -n "$("${x[@]}" ss -Htln "sport = :$1")" ] && return 0
		sleep 0.05
	done
	return 1
}
