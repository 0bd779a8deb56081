/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Small netlink helpers for the dray selftests: rtnetlink for the netdevs
 * the tests build (veth pairs, bridges, addresses, MTU, carrier) and the
 * RDMA netlink family for `rdma link add/delete`.
 *
 * Every function returns 0 or a negative errno: the kernel's own answer
 * (the NLMSG_ERROR of the request) where there is one, so the tests can
 * compare exact error codes.
 */
#ifndef DRAY_SELFTEST_NL_H
#define DRAY_SELFTEST_NL_H

#include <stdbool.h>
#include <stdint.h>

/* rtnetlink */
int rt_veth_add(const char *name, const char *peer);
int rt_bridge_add(const char *name);
int rt_link_del(const char *name);
int rt_link_set_up(const char *name, bool up);
int rt_link_set_mtu(const char *name, unsigned int mtu);
/* master NULL releases the port (nomaster) */
int rt_link_set_master(const char *name, const char *master);
/* addr is an IPv4 or IPv6 literal; IPv6 addresses are added with nodad */
int rt_addr_add(const char *ifname, const char *addr, unsigned int prefix);
int rt_addr_del(const char *ifname, const char *addr, unsigned int prefix);

/* RDMA netlink (NETLINK_RDMA, RDMA_NL_NLDEV) */
int rdma_nl_link_add(const char *ibdev, const char *type, const char *ndev);
int rdma_nl_link_del_index(uint32_t index);
/* looks the device up by name, then deletes it; -ENODEV if there is none */
int rdma_nl_link_del(const char *ibdev);
/* -ENODEV if no ib_device has that name */
int rdma_nl_dev_index(const char *ibdev, uint32_t *index);

#endif /* DRAY_SELFTEST_NL_H */
