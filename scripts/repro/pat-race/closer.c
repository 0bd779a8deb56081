// SPDX-License-Identifier: GPL-2.0-only
/*
 * closer NPROC MAX_US: NPROC processes, each with 8 contexts on dray0 (8
 * doorbell mappings), wait for IBV_EVENT_DEVICE_FATAL, sleep a random
 * 0..MAX_US microseconds and close their contexts: the provider munmaps
 * each doorbell page then, while uverbs may be disassociating them.
 * Prints "ready PID" once a process has its contexts.
 */
#include <infiniband/verbs.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/wait.h>

#define NCTX 8

static int child(unsigned int max_us)
{
	struct ibv_context *ctx[NCTX];
	struct ibv_async_event ev;
	struct ibv_device **list;
	int i, n, k = 0;

	srand(getpid() ^ time(NULL));
	list = ibv_get_device_list(&n);
	for (i = 0; list && i < n && !k; i++) {
		if (strcmp(ibv_get_device_name(list[i]), "dray0"))
			continue;
		for (k = 0; k < NCTX; k++) {
			ctx[k] = ibv_open_device(list[i]);
			if (!ctx[k])
				break;
		}
	}
	if (k < NCTX) {
		fprintf(stderr, "closer: %d contexts on dray0\n", k);
		return 1;
	}
	printf("ready %d\n", getpid());
	fflush(stdout);
	while (!ibv_get_async_event(ctx[0], &ev)) {
		enum ibv_event_type t = ev.event_type;

		ibv_ack_async_event(&ev);
		if (t == IBV_EVENT_DEVICE_FATAL)
			break;
	}
	usleep(rand() % (max_us + 1));
	for (i = 0; i < k; i++)
		ibv_close_device(ctx[i]);
	ibv_free_device_list(list);
	return 0;
}

int main(int argc, char **argv)
{
	int nproc, p, st, bad = 0;
	unsigned int max_us;

	if (argc != 3) {
		fprintf(stderr, "usage: closer NPROC MAX_US\n");
		return 2;
	}
	nproc = atoi(argv[1]);
	max_us = strtoul(argv[2], NULL, 0);
	for (p = 0; p < nproc; p++) {
		pid_t pid = fork();

		if (pid < 0)
			return 1;
		if (!pid)
			_exit(child(max_us));
	}
	while (wait(&st) > 0)
		bad |= !WIFEXITED(st) || WEXITSTATUS(st);
	return bad;
}
