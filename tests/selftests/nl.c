// SPDX-License-Identifier: GPL-2.0-only
/*
 * Netlink helpers for the dray selftests, see nl.h.
 *
 * One request per socket: build the message, send it, read until the
 * kernel's ACK (or NLMSG_DONE for a dump). No library, so the tests see
 * the exact errno the kernel returned.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <linux/if_addr.h>
#include <linux/if_link.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <linux/veth.h>
#include <rdma/rdma_netlink.h>

#include "nl.h"

#define NL_BUF_SIZE	4096
#define NL_RCV_SIZE	32768

struct nl_req {
	struct nlmsghdr *nh;
	size_t cap;
	/* aligned for struct nlmsghdr and every family header */
	char buf[NL_BUF_SIZE] __attribute__((aligned(8)));
};

typedef int (*nl_dump_cb)(const struct nlmsghdr *nh, void *arg);

static void nl_init(struct nl_req *req, uint16_t type, uint16_t flags)
{
	memset(req->buf, 0, sizeof(req->buf));
	req->cap = sizeof(req->buf);
	req->nh = (struct nlmsghdr *)req->buf;
	req->nh->nlmsg_len = NLMSG_HDRLEN;
	req->nh->nlmsg_type = type;
	req->nh->nlmsg_flags = NLM_F_REQUEST | flags;
}

/* Append len bytes (NLMSG_ALIGNed) and return where they went. */
static void *nl_append(struct nl_req *req, const void *data, size_t len)
{
	size_t off = NLMSG_ALIGN(req->nh->nlmsg_len);
	char *dst = req->buf + off;

	/* Requests are built by this file only: overflowing is a bug here. */
	if (off + NLMSG_ALIGN(len) > req->cap)
		abort();
	if (data)
		memcpy(dst, data, len);
	req->nh->nlmsg_len = off + NLMSG_ALIGN(len);
	return dst;
}

static struct nlattr *nla_put(struct nl_req *req, uint16_t type,
			      const void *data, size_t len)
{
	struct nlattr *nla = nl_append(req, NULL, NLA_HDRLEN + len);

	nla->nla_type = type;
	nla->nla_len = NLA_HDRLEN + len;
	if (len)
		memcpy((char *)nla + NLA_HDRLEN, data, len);
	return nla;
}

static void nla_put_str(struct nl_req *req, uint16_t type, const char *s)
{
	nla_put(req, type, s, strlen(s) + 1);
}

static void nla_put_u32(struct nl_req *req, uint16_t type, uint32_t v)
{
	nla_put(req, type, &v, sizeof(v));
}

static struct nlattr *nla_nest_start(struct nl_req *req, uint16_t type)
{
	return nla_put(req, type | NLA_F_NESTED, NULL, 0);
}

static void nla_nest_end(struct nl_req *req, struct nlattr *nest)
{
	nest->nla_len = (uint16_t)(req->buf + req->nh->nlmsg_len - (char *)nest);
}

/*
 * Send the request and collect the answer. A dump hands each message to
 * cb and ends at NLMSG_DONE; anything else ends at the NLMSG_ERROR that
 * acknowledges it.
 */
static int nl_talk(int proto, struct nl_req *req, nl_dump_cb cb, void *arg)
{
	struct sockaddr_nl sa = { .nl_family = AF_NETLINK };
	static uint32_t seq_counter;
	bool dump = req->nh->nlmsg_flags & NLM_F_DUMP;
	uint32_t seq = ++seq_counter + (uint32_t)getpid() * 1000;
	char *rbuf;
	int fd, ret;

	req->nh->nlmsg_seq = seq;
	fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, proto);
	if (fd < 0)
		return -errno;
	rbuf = malloc(NL_RCV_SIZE);
	if (!rbuf) {
		close(fd);
		return -ENOMEM;
	}
	if (sendto(fd, req->buf, req->nh->nlmsg_len, 0, (struct sockaddr *)&sa,
		   sizeof(sa)) < 0) {
		ret = -errno;
		goto out;
	}

	for (;;) {
		ssize_t len = recv(fd, rbuf, NL_RCV_SIZE, 0);
		struct nlmsghdr *nh;

		if (len < 0) {
			if (errno == EINTR)
				continue;
			ret = -errno;
			goto out;
		}
		for (nh = (struct nlmsghdr *)rbuf; NLMSG_OK(nh, (size_t)len);
		     nh = NLMSG_NEXT(nh, len)) {
			if (nh->nlmsg_seq != seq)
				continue;
			if (nh->nlmsg_type == NLMSG_ERROR) {
				const struct nlmsgerr *e = NLMSG_DATA(nh);

				ret = e->error;
				goto out;
			}
			if (nh->nlmsg_type == NLMSG_DONE) {
				ret = 0;
				goto out;
			}
			if (dump && cb) {
				ret = cb(nh, arg);
				if (ret)
					goto out;
			}
		}
	}
out:
	free(rbuf);
	close(fd);
	return ret;
}

static int rt_talk(struct nl_req *req)
{
	return nl_talk(NETLINK_ROUTE, req, NULL, NULL);
}

/*
 * From sysfs, not if_nametoindex(): its ioctl makes the kernel try
 * request_module("netdev-NAME") for a missing name, a modprobe run that
 * costs half a second under TCG.
 */
static int ifindex_of(const char *name, int *index)
{
	char path[128], buf[32];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/sys/class/net/%s/ifindex", name);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? -ENODEV : -errno;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -ENODEV;
	buf[n] = '\0';
	*index = atoi(buf);
	return *index > 0 ? 0 : -ENODEV;
}

int rt_veth_add(const char *name, const char *peer)
{
	struct ifinfomsg ifi = { .ifi_family = AF_UNSPEC };
	struct nlattr *linkinfo, *data, *peer_nest;
	struct nl_req req;

	nl_init(&req, RTM_NEWLINK, NLM_F_ACK | NLM_F_CREATE | NLM_F_EXCL);
	nl_append(&req, &ifi, sizeof(ifi));
	nla_put_str(&req, IFLA_IFNAME, name);
	linkinfo = nla_nest_start(&req, IFLA_LINKINFO);
	nla_put_str(&req, IFLA_INFO_KIND, "veth");
	data = nla_nest_start(&req, IFLA_INFO_DATA);
	peer_nest = nla_nest_start(&req, VETH_INFO_PEER);
	/* The peer's attributes start with its own ifinfomsg. */
	nl_append(&req, &ifi, sizeof(ifi));
	nla_put_str(&req, IFLA_IFNAME, peer);
	nla_nest_end(&req, peer_nest);
	nla_nest_end(&req, data);
	nla_nest_end(&req, linkinfo);
	return rt_talk(&req);
}

int rt_bridge_add(const char *name)
{
	struct ifinfomsg ifi = { .ifi_family = AF_UNSPEC };
	struct nlattr *linkinfo;
	struct nl_req req;

	nl_init(&req, RTM_NEWLINK, NLM_F_ACK | NLM_F_CREATE | NLM_F_EXCL);
	nl_append(&req, &ifi, sizeof(ifi));
	nla_put_str(&req, IFLA_IFNAME, name);
	linkinfo = nla_nest_start(&req, IFLA_LINKINFO);
	nla_put_str(&req, IFLA_INFO_KIND, "bridge");
	nla_nest_end(&req, linkinfo);
	return rt_talk(&req);
}

int rt_link_del(const char *name)
{
	struct ifinfomsg ifi = { .ifi_family = AF_UNSPEC };
	struct nl_req req;
	int ret;

	ret = ifindex_of(name, &ifi.ifi_index);
	if (ret)
		return ret;
	nl_init(&req, RTM_DELLINK, NLM_F_ACK);
	nl_append(&req, &ifi, sizeof(ifi));
	return rt_talk(&req);
}

/* RTM_NEWLINK on an existing link with one optional u32 attribute. */
static int rt_link_change(const char *name, unsigned int flags,
			  unsigned int change, uint16_t attr, uint32_t value)
{
	struct ifinfomsg ifi = {
		.ifi_family = AF_UNSPEC,
		.ifi_flags = flags,
		.ifi_change = change,
	};
	struct nl_req req;
	int ret;

	ret = ifindex_of(name, &ifi.ifi_index);
	if (ret)
		return ret;
	nl_init(&req, RTM_NEWLINK, NLM_F_ACK);
	nl_append(&req, &ifi, sizeof(ifi));
	if (attr)
		nla_put_u32(&req, attr, value);
	return rt_talk(&req);
}

int rt_link_set_up(const char *name, bool up)
{
	return rt_link_change(name, up ? IFF_UP : 0, IFF_UP, 0, 0);
}

int rt_link_set_mtu(const char *name, unsigned int mtu)
{
	return rt_link_change(name, 0, 0, IFLA_MTU, mtu);
}

int rt_link_set_master(const char *name, const char *master)
{
	int mindex = 0, ret;

	if (master) {
		ret = ifindex_of(master, &mindex);
		if (ret)
			return ret;
	}
	return rt_link_change(name, 0, 0, IFLA_MASTER, (uint32_t)mindex);
}

static int rt_addr(uint16_t type, uint16_t flags, const char *ifname,
		   const char *addr, unsigned int prefix)
{
	struct ifaddrmsg ifa = { .ifa_prefixlen = (uint8_t)prefix };
	unsigned char raw[16];
	struct nl_req req;
	size_t alen;
	int index, ret;

	ret = ifindex_of(ifname, &index);
	if (ret)
		return ret;
	ifa.ifa_index = (uint32_t)index;
	if (inet_pton(AF_INET, addr, raw) == 1) {
		ifa.ifa_family = AF_INET;
		alen = 4;
	} else if (inet_pton(AF_INET6, addr, raw) == 1) {
		ifa.ifa_family = AF_INET6;
		/* No duplicate address detection: usable at once. */
		ifa.ifa_flags = IFA_F_NODAD;
		alen = 16;
	} else {
		return -EINVAL;
	}

	nl_init(&req, type, NLM_F_ACK | flags);
	nl_append(&req, &ifa, sizeof(ifa));
	nla_put(&req, IFA_LOCAL, raw, alen);
	nla_put(&req, IFA_ADDRESS, raw, alen);
	return rt_talk(&req);
}

int rt_addr_add(const char *ifname, const char *addr, unsigned int prefix)
{
	return rt_addr(RTM_NEWADDR, NLM_F_CREATE | NLM_F_EXCL, ifname, addr,
		       prefix);
}

int rt_addr_del(const char *ifname, const char *addr, unsigned int prefix)
{
	return rt_addr(RTM_DELADDR, 0, ifname, addr, prefix);
}

static int rdma_talk(struct nl_req *req, nl_dump_cb cb, void *arg)
{
	return nl_talk(NETLINK_RDMA, req, cb, arg);
}

int rdma_nl_link_add(const char *ibdev, const char *type, const char *ndev)
{
	struct nl_req req;

	nl_init(&req, RDMA_NL_GET_TYPE(RDMA_NL_NLDEV, RDMA_NLDEV_CMD_NEWLINK),
		NLM_F_ACK);
	nla_put_str(&req, RDMA_NLDEV_ATTR_DEV_NAME, ibdev);
	nla_put_str(&req, RDMA_NLDEV_ATTR_LINK_TYPE, type);
	nla_put_str(&req, RDMA_NLDEV_ATTR_NDEV_NAME, ndev);
	return rdma_talk(&req, NULL, NULL);
}

int rdma_nl_link_del_index(uint32_t index)
{
	struct nl_req req;

	nl_init(&req, RDMA_NL_GET_TYPE(RDMA_NL_NLDEV, RDMA_NLDEV_CMD_DELLINK),
		NLM_F_ACK);
	nla_put_u32(&req, RDMA_NLDEV_ATTR_DEV_INDEX, index);
	return rdma_talk(&req, NULL, NULL);
}

struct dev_lookup {
	const char *name;
	uint32_t index;
	bool found;
};

static int dev_lookup_cb(const struct nlmsghdr *nh, void *arg)
{
	struct dev_lookup *l = arg;
	const struct nlattr *nla = NLMSG_DATA(nh);
	int rem = (int)nh->nlmsg_len - NLMSG_HDRLEN;
	const char *name = NULL;
	uint32_t index = 0;
	bool have_index = false;

	while (rem >= NLA_HDRLEN && nla->nla_len >= NLA_HDRLEN &&
	       nla->nla_len <= rem) {
		const void *payload = (const char *)nla + NLA_HDRLEN;
		uint16_t type = nla->nla_type & NLA_TYPE_MASK;

		if (type == RDMA_NLDEV_ATTR_DEV_INDEX &&
		    nla->nla_len >= NLA_HDRLEN + sizeof(uint32_t)) {
			memcpy(&index, payload, sizeof(index));
			have_index = true;
		} else if (type == RDMA_NLDEV_ATTR_DEV_NAME &&
			   nla->nla_len > NLA_HDRLEN) {
			name = payload;
		}
		rem -= NLA_ALIGN(nla->nla_len);
		nla = (const struct nlattr *)((const char *)nla +
					      NLA_ALIGN(nla->nla_len));
	}
	if (name && have_index && !strcmp(name, l->name)) {
		l->index = index;
		l->found = true;
	}
	return 0;
}

int rdma_nl_dev_index(const char *ibdev, uint32_t *index)
{
	struct dev_lookup l = { .name = ibdev };
	struct nl_req req;
	int ret;

	nl_init(&req, RDMA_NL_GET_TYPE(RDMA_NL_NLDEV, RDMA_NLDEV_CMD_GET),
		NLM_F_DUMP);
	ret = rdma_talk(&req, dev_lookup_cb, &l);
	if (ret)
		return ret;
	if (!l.found)
		return -ENODEV;
	*index = l.index;
	return 0;
}

int rdma_nl_link_del(const char *ibdev)
{
	uint32_t index;
	int ret;

	ret = rdma_nl_dev_index(ibdev, &index);
	if (ret)
		return ret;
	return rdma_nl_link_del_index(index);
}
