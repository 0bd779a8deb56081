#!/bin/bash
# Inside the test VM: a veth pair veth0 (10.0.0.1) <-> veth1 (10.0.0.2) in
# one network namespace, routed so that traffic between the two addresses
# really crosses the pair instead of short-cutting through `lo`. RoCE address
# resolution (for dray and for Soft-RoCE alike) needs that: the peer must not
# be a local address from the sending interface's point of view.
#
#   accept_local=1 and rp_filter=0 on both ends, a per-destination routing
#   table for each address, rules for locally generated traffic that pick
#   those tables, and the `local` rule moved behind them.
#
# Usage: veth-pair.sh [MTU]      (default 1500)
#        veth-pair.sh routes     the routes of the tables again, on the
#                                pair as it is: taking an end down
#                                removes its routes, bringing it up does
#                                not put them back
set -euo pipefail

routes() {
	ip route replace 10.0.0.2 dev veth0 src 10.0.0.1 table 100
	ip route replace 10.0.0.1 dev veth1 src 10.0.0.2 table 101
}
if [[ ${1:-} == routes ]]; then
	routes
	exit 0
fi

mtu=${1:-1500}

modprobe veth
ip link add veth0 type veth peer name veth1
for i in 0 1; do
	ip link set "veth$i" mtu "$mtu"
	ip addr add "10.0.0.$((i + 1))/24" dev "veth$i"
	sysctl -qw "net.ipv4.conf.veth$i.accept_local=1"
	sysctl -qw "net.ipv4.conf.veth$i.rp_filter=0"
	ip link set "veth$i" up
done
sysctl -qw net.ipv4.conf.all.rp_filter=0

routes
# The rules outlive the pair (a test removes it and makes it again).
if [[ -z $(ip rule show pref 10) ]]; then
	ip rule add pref 10 iif lo to 10.0.0.2 lookup 100
	ip rule add pref 11 iif lo to 10.0.0.1 lookup 101
	ip rule add pref 100 lookup local
	ip rule del pref 0 lookup local
fi

# Wait for both ends to have carrier (veth is immediate, but be sure).
for _ in $(seq 50); do
	if [[ $(cat /sys/class/net/veth0/carrier) == 1 &&
	      $(cat /sys/class/net/veth1/carrier) == 1 ]]; then
		exit 0
	fi
	sleep 0.1
done
echo "veth-pair: no carrier" >&2
exit 1
