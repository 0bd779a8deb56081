#!/bin/bash
# Inside the test VM: RC traffic between dray0 and dray1 on a routed veth
# pair, and within dray0, with ibverbs-utils and perftest. Each run must
# exit 0 (perftest fails on any error completion). Prints TAP lines and
# "smoke: N passed, N failed".
set -uo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd -P)
eval "$("$repo/scripts/rdma-env.sh")"

pass=0
fail=0
n=0
result() {	# name, rc
	n=$((n + 1))
	if [[ $2 -eq 0 ]]; then
		echo "ok $n - smoke.$1"
		pass=$((pass + 1))
	else
		echo "not ok $n - smoke.$1 (rc $2)"
		echo "#   client:"
		tail -20 /tmp/smoke-client.log | sed 's/^/#   /'
		echo "#   server:"
		tail -4 /tmp/smoke-server.log | sed 's/^/#   /'
		dmesg | grep -E 'dray' | tail -5 | sed 's/^/#   /'
		fail=$((fail + 1))
	fi
}

wait_listen() {	# port
	for _ in $(seq 150); do
		ss -ltn | grep -q ":$1 " && return 0
		sleep 0.1
	done
	return 1
}

# server device, client device, client address, port, command...
# perftest gives up after a complete run when it cannot calibrate its
# cycle counter ("Can't produce a report"; under TCG on a busy host): that
# pair runs again, on another port, up to three times in all.
pair() {
	local sdev=$1 cdev=$2 addr=$3 port=$4 srv_rc cli_rc attempt spid
	shift 4
	for attempt in 0 1 2; do
		timeout 120 "$@" -d "$sdev" -p "$((port + attempt * 1000))" \
			>/tmp/smoke-server.log 2>&1 &
		spid=$!
		wait_listen "$((port + attempt * 1000))"
		timeout 120 "$@" -d "$cdev" -p "$((port + attempt * 1000))" \
			"$addr" >/tmp/smoke-client.log 2>&1
		cli_rc=$?
		wait "$spid"
		srv_rc=$?
		[[ $cli_rc -eq 0 && $srv_rc -eq 0 ]] && return 0
		grep -q "Can't produce a report" /tmp/smoke-client.log \
			/tmp/smoke-server.log || return 1
		echo "# $*: perftest could not calibrate its clock, again"
	done
	return 1
}

"$repo/scripts/vm/veth-pair.sh" || { echo "smoke: 0 passed, 1 failed"; exit 1; }
modprobe dray
rdma link add dray0 type dray netdev veth0
rdma link add dray1 type dray netdev veth1

# The IPv4 RoCEv2 GID appears asynchronously.
gid=1
for _ in $(seq 100); do
	[[ $(cat /sys/class/infiniband/dray0/ports/1/gids/$gid) == *ffff:0a00:0001 ]] && break
	sleep 0.1
done

pair dray1 dray0 10.0.0.2 18515 ibv_rc_pingpong -g $gid -n 20
result rc_pingpong_two_devices $?
pair dray0 dray0 10.0.0.1 18516 ibv_rc_pingpong -g $gid -n 20 -s 8192
result rc_pingpong_same_device $?
pair dray1 dray0 10.0.0.2 18517 ibv_rc_pingpong -g $gid -n 20 -e
result rc_pingpong_events $?

port=18600
for t in ib_write_bw ib_send_bw ib_read_bw ib_atomic_bw \
	 ib_write_lat ib_send_lat ib_read_lat ib_atomic_lat; do
	port=$((port + 1))
	pair dray1 dray0 10.0.0.2 $port $t -x $gid -n 50
	result "$t" $?
done
port=$((port + 1))
pair dray1 dray0 10.0.0.2 $port ib_write_bw -x $gid -n 5 -a
result ib_write_bw_all_sizes $?

# UD: ibv_ud_pingpong (-c: the server checks every byte it receives),
# between the devices and within dray0, with and without completion events,
# up to the active MTU (1024 on a 1500-byte veth), and over the IPv6
# link-local GID 0.
port=18700
for args in "-s 1" "-s 512" "-s 1024" "-s 1024 -e" "-s 64 -e"; do
	port=$((port + 1))
	pair dray1 dray0 10.0.0.2 $port ibv_ud_pingpong -g $gid -n 20 -c $args
	result "ud_pingpong_two_devices ${args}" $?
done
port=$((port + 1))
pair dray0 dray0 10.0.0.1 $port ibv_ud_pingpong -g $gid -n 20 -c -s 1024
result ud_pingpong_same_device $?
port=$((port + 1))
pair dray0 dray0 10.0.0.1 $port ibv_ud_pingpong -g $gid -n 20 -c -s 256 -e
result ud_pingpong_same_device_events $?
port=$((port + 1))
pair dray1 dray0 10.0.0.2 $port ibv_ud_pingpong -g 0 -n 20 -c -s 1024
result ud_pingpong_ipv6_link_local $?

echo "smoke: $pass passed, $fail failed"
[[ $fail -eq 0 ]]
