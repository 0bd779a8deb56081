// SPDX-License-Identifier: GPL-2.0-only
/*
 * The store-buffering litmus test between a TCG guest's vCPU and a host
 * thread, through shared memory (QEMU's ivshmem-plain device): the pattern
 * a virtqueue's driver and device use to decide whether to notify.
 *
 *   guest (the driver):  y = 1; full barrier; rg = x;
 *   host  (the device):  x = 1; full barrier; rh = y;
 *
 * With both barriers honoured, rg == 0 && rh == 0 cannot happen: one of
 * the stores comes first and the other side's load sees it. The guest's
 * barrier is the one Linux's virtio_mb() is on x86, `lock; addl $0,
 * -4(%rsp)`. Each round both sides meet, wait a random while (so that
 * every alignment of the two gets tried), run their half and record what
 * they read.
 *
 *   litmus host SHMFILE ROUNDS   creates SHMFILE, runs the host side,
 *                                prints the four outcomes' counts
 *   litmus guest ROUNDS          in the VM: finds the ivshmem BAR, runs
 *                                the guest side
 */
#include <dirent.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define SHM_SIZE (1UL << 20)
#define LINE 64

struct shm {
	_Alignas(LINE) volatile uint32_t g;	/* guest: round started */
	_Alignas(LINE) volatile uint32_t h;	/* host: round done */
	_Alignas(LINE) volatile uint32_t x;
	_Alignas(LINE) volatile uint32_t y;
	_Alignas(LINE) volatile uint32_t done;	/* guest: all rounds done */
	_Alignas(LINE) uint32_t rounds;
	_Alignas(LINE) volatile uint8_t rg[];	/* guest's loads, by round */
};

static unsigned int rnd(unsigned int *s)
{
	*s = *s * 1103515245u + 12345u;
	return *s >> 16;
}

static void spin(unsigned int n)
{
	for (volatile unsigned int i = 0; i < n; i++)
		;
}

static void *map(const char *path, int create)
{
	int fd = open(path, O_RDWR | (create ? O_CREAT | O_TRUNC : 0), 0600);
	void *p;

	if (fd < 0 || (create && ftruncate(fd, SHM_SIZE))) {
		perror(path);
		exit(2);
	}
	p = mmap(NULL, SHM_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED) {
		perror("mmap");
		exit(2);
	}
	close(fd);
	return p;
}

/* the ivshmem-plain device's shared memory: BAR 2 of 1af4:1110 */
static void *guest_map(void)
{
	const char *base = "/sys/bus/pci/devices";
	char path[512], id[32];
	struct dirent *d;
	DIR *dir = opendir(base);
	FILE *f;

	while (dir && (d = readdir(dir))) {
		snprintf(path, sizeof(path), "%s/%s/device", base, d->d_name);
		f = fopen(path, "r");
		if (!f)
			continue;
		if (!fgets(id, sizeof(id), f))
			id[0] = 0;
		fclose(f);
		if (strncmp(id, "0x1110", 6))
			continue;
		snprintf(path, sizeof(path), "%s/%s/enable", base, d->d_name);
		f = fopen(path, "w");
		if (f) {
			fputs("1", f);
			fclose(f);
		}
		snprintf(path, sizeof(path), "%s/%s/resource2", base, d->d_name);
		closedir(dir);
		return map(path, 0);
	}
	fprintf(stderr, "litmus: no ivshmem device\n");
	exit(2);
}

static int guest(uint32_t rounds)
{
	struct shm *s = guest_map();
	unsigned int seed = 1;
	uint32_t i, r;

	while (s->rounds != rounds)	/* the host is ready */
		;
	for (i = 1; i <= rounds; i++) {
		while (s->h != i - 1)
			;
		s->x = 0;
		s->y = 0;
		s->g = i;
		spin(rnd(&seed) % 256);
		s->y = 1;
		asm volatile("lock; addl $0,-4(%%rsp)" ::: "memory", "cc");
		r = s->x;
		s->rg[i] = r;
	}
	while (s->h != rounds)
		;
	s->done = 1;
	printf("guest: %u rounds\n", rounds);
	return 0;
}

static int host(const char *path, uint32_t rounds)
{
	uint32_t i, rh, rg, both0 = 0, g0 = 0, h0 = 0, both1 = 0;
	unsigned int seed = 7;
	struct shm *s;

	/* before SHMFILE exists: run.sh waits for it */
	if (sizeof(*s) + rounds + 1 > SHM_SIZE) {
		fprintf(stderr, "litmus: at most %lu rounds\n",
			SHM_SIZE - sizeof(*s) - 1);
		return 2;
	}
	s = map(path, 1);
	memset((void *)s->rg, 0xff, rounds + 1);
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	s->rounds = rounds;
	for (i = 1; i <= rounds; i++) {
		while (s->g != i)
			;
		spin(rnd(&seed) % 64);
		s->x = 1;
		__atomic_thread_fence(__ATOMIC_SEQ_CST);
		rh = s->y;
		/* the guest's load of this round is in before its next start */
		while (s->rg[i] == 0xff)
			;
		rg = s->rg[i];
		both0 += !rg && !rh;
		g0 += !rg && rh;
		h0 += rg && !rh;
		both1 += rg && rh;
		s->h = i;
	}
	while (!s->done)
		;
	printf("rounds %u: both read 0 (the barriers failed) %u, guest 0 %u, host 0 %u, both 1 %u\n",
	       rounds, both0, g0, h0, both1);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 4 && !strcmp(argv[1], "host"))
		return host(argv[2], strtoul(argv[3], NULL, 0));
	if (argc == 3 && !strcmp(argv[1], "guest"))
		return guest(strtoul(argv[2], NULL, 0));
	fprintf(stderr, "usage: litmus host SHMFILE ROUNDS | litmus guest ROUNDS\n");
	return 2;
}
