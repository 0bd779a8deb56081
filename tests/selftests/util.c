// SPDX-License-Identifier: GPL-2.0-only
/*
 * Harness-free helpers of the dray selftests, see util.h.
 */
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "util.h"

uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static int vread(char *buf, size_t len, const char *fmt, va_list ap)
{
	char path[512];
	FILE *f;
	size_t n;
	int err;

	vsnprintf(path, sizeof(path), fmt, ap);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	errno = 0;
	n = fread(buf, 1, len - 1, f);
	err = ferror(f) ? (errno ? -errno : -EIO) : 0;
	fclose(f);
	if (err)
		return err;
	buf[n] = '\0';
	while (n && (buf[n - 1] == '\n' || buf[n - 1] == ' '))
		buf[--n] = '\0';
	return 0;
}

int sysfs_read(char *buf, size_t len, const char *fmt, ...)
{
	va_list ap;
	int ret;

	va_start(ap, fmt);
	ret = vread(buf, len, fmt, ap);
	va_end(ap);
	return ret;
}

int sysfs_read_ul(unsigned long *val, const char *fmt, ...)
{
	char buf[64], *end;
	va_list ap;
	int ret;

	va_start(ap, fmt);
	ret = vread(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (ret)
		return ret;
	errno = 0;
	*val = strtoul(buf, &end, 0);
	if (errno || end == buf)
		return -EINVAL;
	return 0;
}

bool path_exists(const char *fmt, ...)
{
	char path[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(path, sizeof(path), fmt, ap);
	va_end(ap);
	return access(path, F_OK) == 0;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char * const *)a, *(char * const *)b);
}

int dir_list(char *out, size_t len, const char *dir, const char *prefix)
{
	char *names[256];
	unsigned int n = 0, i;
	struct dirent *de;
	size_t used = 0;
	DIR *d;

	out[0] = '\0';
	d = opendir(dir);
	if (!d)
		return errno == ENOENT ? 0 : -errno;
	while ((de = readdir(d)) && n < 256) {
		if (de->d_name[0] == '.' ||
		    strncmp(de->d_name, prefix, strlen(prefix)))
			continue;
		names[n] = strdup(de->d_name);
		if (!names[n])
			break;
		n++;
	}
	closedir(d);
	qsort(names, n, sizeof(names[0]), cmp_str);
	for (i = 0; i < n; i++) {
		int w = snprintf(out + used, len - used, "%s%s", i ? " " : "",
				 names[i]);

		if (w > 0 && (size_t)w < len - used)
			used += (size_t)w;
		free(names[i]);
	}
	return 0;
}

/* Read the child's output into out (rest discarded), reap it. */
static int collect(pid_t pid, int rfd, char *out, size_t outlen)
{
	char sink[256];
	size_t used = 0;
	int status;

	if (out && outlen)
		out[0] = '\0';
	for (;;) {
		ssize_t n;

		if (out && used + 1 < outlen)
			n = read(rfd, out + used, outlen - used - 1);
		else
			n = read(rfd, sink, sizeof(sink));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		if (out && used + 1 < outlen) {
			used += (size_t)n;
			out[used] = '\0';
		}
	}
	close(rfd);
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return -1;
	if (!WIFEXITED(status))
		return -1;
	return WEXITSTATUS(status);
}

int run_cmd(char *out, size_t outlen, const char *fmt, ...)
{
	char cmd[1024], *argv[32], *save = NULL;
	int pfd[2], argc = 0;
	va_list ap;
	pid_t pid;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);

	/*
	 * Each process start costs 0.1-0.5 s under TCG: run plain commands
	 * directly, only what needs a shell through sh -c.
	 */
	if (strpbrk(cmd, "|&;<>()$`\\\"'*?[]#~=%{}\n")) {
		argv[argc++] = "/bin/sh";
		argv[argc++] = "-c";
		argv[argc++] = cmd;
	} else {
		char *tok;

		for (tok = strtok_r(cmd, " ", &save); tok && argc < 31;
		     tok = strtok_r(NULL, " ", &save))
			argv[argc++] = tok;
	}
	argv[argc] = NULL;
	if (!argc)
		return -1;

	fflush(stdout);
	fflush(stderr);
	if (pipe2(pfd, O_CLOEXEC))
		return -1;
	pid = fork();
	if (pid < 0) {
		close(pfd[0]);
		close(pfd[1]);
		return -1;
	}
	if (!pid) {
		int null = open("/dev/null", O_RDONLY);

		if (null >= 0)
			dup2(null, 0);
		dup2(pfd[1], 1);
		dup2(pfd[1], 2);
		execvp(argv[0], argv);
		_exit(127);
	}
	close(pfd[1]);
	return collect(pid, pfd[0], out, outlen);
}

int netdev_mac(const char *ifname, uint8_t mac[6])
{
	char buf[64];
	int ret;

	ret = sysfs_read(buf, sizeof(buf), SYSFS_NET "/%s/address", ifname);
	if (ret)
		return ret;
	if (sscanf(buf, "%hhx:%hhx:%hhx:%hhx:%hhx:%hhx", &mac[0], &mac[1],
		   &mac[2], &mac[3], &mac[4], &mac[5]) != 6)
		return -EINVAL;
	return 0;
}

void gid_fmt(const uint8_t gid[16], char *out, size_t len)
{
	size_t used = 0;
	int i;

	out[0] = '\0';
	for (i = 0; i < 16; i += 2) {
		int w = snprintf(out + used, len - used, "%s%02x%02x",
				 i ? ":" : "", gid[i], gid[i + 1]);

		if (w < 0 || (size_t)w >= len - used)
			return;
		used += (size_t)w;
	}
}

int gid_find_raw(const char *ibdev, const uint8_t gid[16],
		 unsigned int tbl_len)
{
	char want[64], seen[64];
	unsigned int i;

	gid_fmt(gid, want, sizeof(want));
	for (i = 0; i < tbl_len; i++) {
		if (sysfs_read(seen, sizeof(seen),
			       SYSFS_IB "/%s/ports/1/gids/%u", ibdev, i))
			continue;
		if (!strcmp(seen, want))
			return (int)i;
	}
	return -ENOENT;
}

int gid_find_addr(const char *ibdev, const char *addr, unsigned int tbl_len)
{
	uint8_t gid[16] = {};

	if (inet_pton(AF_INET, addr, gid + 12) == 1) {
		gid[10] = 0xff;
		gid[11] = 0xff;
	} else if (inet_pton(AF_INET6, addr, gid) != 1) {
		return -EINVAL;
	}
	return gid_find_raw(ibdev, gid, tbl_len);
}

int uverbs_dev_path(const char *ibdev, char *path, size_t len)
{
	char name[64];
	struct dirent *de;
	DIR *d;
	int ret = -ENODEV;

	d = opendir("/sys/class/infiniband_verbs");
	if (!d)
		return -errno;
	while ((de = readdir(d))) {
		if (strncmp(de->d_name, "uverbs", 6))
			continue;
		if (sysfs_read(name, sizeof(name),
			       "/sys/class/infiniband_verbs/%s/ibdev",
			       de->d_name))
			continue;
		if (!strcmp(name, ibdev)) {
			snprintf(path, len, "/dev/infiniband/%s", de->d_name);
			ret = 0;
			break;
		}
	}
	closedir(d);
	return ret;
}

int uverbs_get_context(int fd, struct ib_uverbs_get_context_resp *resp,
		       void *drv_out, size_t drv_out_len,
		       const void *drv_in, size_t drv_in_len)
{
	struct ib_uverbs_cmd_hdr hdr = {
		.command = IB_USER_VERBS_CMD_GET_CONTEXT,
	};
	struct ib_uverbs_get_context cmd = {};
	size_t in_len = sizeof(hdr) + sizeof(cmd) + drv_in_len;
	size_t out_len = sizeof(*resp) + drv_out_len;
	char *in, *out;
	ssize_t n;
	int ret = 0;

	if (in_len % 4 || out_len % 4)
		return -EINVAL;
	in = calloc(1, in_len);
	out = calloc(1, out_len);
	if (!in || !out) {
		ret = -ENOMEM;
		goto out;
	}
	hdr.in_words = (uint16_t)(in_len / 4);
	hdr.out_words = (uint16_t)(out_len / 4);
	cmd.response = (uintptr_t)out;
	memcpy(in, &hdr, sizeof(hdr));
	memcpy(in + sizeof(hdr), &cmd, sizeof(cmd));
	if (drv_in_len)
		memcpy(in + sizeof(hdr) + sizeof(cmd), drv_in, drv_in_len);
	/* What the kernel does not write keeps the caller's bytes (canaries). */
	if (drv_out_len)
		memcpy(out + sizeof(*resp), drv_out, drv_out_len);

	n = write(fd, in, in_len);
	if (n < 0) {
		ret = -errno;
		goto out;
	}
	if ((size_t)n != in_len) {
		ret = -EIO;
		goto out;
	}
	memcpy(resp, out, sizeof(*resp));
	if (drv_out_len)
		memcpy(drv_out, out + sizeof(*resp), drv_out_len);
out:
	free(in);
	free(out);
	return ret;
}

int maps_count(const char *what)
{
	char line[512];
	int n = 0;
	FILE *f;

	f = fopen("/proc/self/maps", "re");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f))
		if (strstr(line, what))
			n++;
	fclose(f);
	return n;
}

int kmsg_last_problem(char *out, size_t len)
{
	char rec[2048];
	bool after_cut = false;
	int fd;

	out[0] = '\0';
	fd = open("/dev/kmsg", O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	for (;;) {
		ssize_t n = read(fd, rec, sizeof(rec) - 1);
		char *msg, *nl;

		if (n < 0 && errno == EPIPE)	/* overwritten records */
			continue;
		if (n <= 0)
			break;
		rec[n] = '\0';
		msg = strchr(rec, ';');
		if (!msg)
			continue;
		msg++;
		nl = strchr(msg, '\n');
		if (nl)
			*nl = '\0';
		if (strstr(msg, "cut here")) {
			after_cut = true;
			continue;
		}
		/* The line after "cut here" says what went wrong. */
		if (after_cut || strstr(msg, "BUG:") || strstr(msg, "Oops")) {
			snprintf(out, len, "%s", msg);
			after_cut = false;
		}
	}
	close(fd);
	return 0;
}
