/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Helpers of the dray selftests that need no test harness: sysfs, child
 * commands, time, raw uverbs commands. Functions return 0 or a negative
 * errno unless said otherwise.
 */
#ifndef DRAY_SELFTEST_UTIL_H
#define DRAY_SELFTEST_UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <rdma/ib_user_verbs.h>

#define SYSFS_IB	"/sys/class/infiniband"
#define SYSFS_PLAT	"/sys/bus/platform/devices"
#define SYSFS_NET	"/sys/class/net"

uint64_t now_ms(void);

/* Read a sysfs (or any) file into buf, without the trailing newline. */
int sysfs_read(char *buf, size_t len, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* Parse a file holding one decimal or 0x-prefixed number. */
int sysfs_read_ul(unsigned long *val, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
bool path_exists(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/*
 * The sorted, space-separated names in dir that start with prefix ("" for
 * all); an absent directory gives an empty list.
 */
int dir_list(char *out, size_t len, const char *dir, const char *prefix);

/*
 * Run a command with stdout and stderr captured into out (may be NULL).
 * Plain "prog arg..." is executed directly, anything with shell syntax
 * through sh -c. Returns the exit status (0..255), -1 if it did not exit.
 */
int run_cmd(char *out, size_t outlen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

int netdev_mac(const char *ifname, uint8_t mac[6]);

/* "fe80:0000:...": a GID as the kernel's sysfs prints it */
void gid_fmt(const uint8_t gid[16], char *out, size_t len);
/* GID index of an address literal (IPv4 as ::ffff:a.b.c.d); -ENOENT */
int gid_find_addr(const char *ibdev, const char *addr, unsigned int tbl_len);
int gid_find_raw(const char *ibdev, const uint8_t gid[16],
		 unsigned int tbl_len);

/* /dev/infiniband/uverbsN of an ib_device */
int uverbs_dev_path(const char *ibdev, char *path, size_t len);

/*
 * The legacy write() command IB_USER_VERBS_CMD_GET_CONTEXT. drv_out_len
 * and drv_in_len are the driver-private response and request sizes (each
 * a multiple of 4), placed right after the core structures as uverbs
 * expects. Bytes of drv_out the kernel does not write keep their value.
 */
int uverbs_get_context(int fd, struct ib_uverbs_get_context_resp *resp,
		       void *drv_out, size_t drv_out_len,
		       const void *drv_in, size_t drv_in_len);

/*
 * The kernel log line that describes the latest WARN/BUG/Oops (the line
 * after "cut here"), or "" if there is none.
 */
int kmsg_last_problem(char *out, size_t len);

/* Lines of /proc/self/maps whose path contains what. */
int maps_count(const char *what);

#endif /* DRAY_SELFTEST_UTIL_H */
