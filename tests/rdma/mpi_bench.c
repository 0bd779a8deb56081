// SPDX-License-Identifier: GPL-2.0-only
/*
 * mpi_bench: the time of one MPI_Allreduce, the collective a data-parallel
 * training step spends its communication in. A benchmark program for
 * scripts/bench-guest.sh, run as two ranks of Debian's Open MPI over UCX
 * (one rank on each RDMA device, no shared memory):
 *
 *   mpi_bench SIZE ITERS
 *
 * Each rank contributes SIZE bytes of int64 values (MPI_SUM), ITERS timed
 * calls after 3 untimed ones; every call's result is checked whole, after
 * its timing. Rank 0 prints
 *
 *   mpi_bench: allreduce SIZE B, ITERS calls: median M us, mean A us,
 *   min L us, result checked
 *
 * and the job exits 0; a wrong element aborts it with status 2.
 */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define WARMUP		3
#define MAX_SIZE	(64ul << 20)
#define MAX_ITERS	100000ul

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* Element i of rank r's contribution; the sum over ranks is checked. */
static int64_t contribution(int r, size_t i, unsigned long call)
{
	return (int64_t)(r + 1) * (int64_t)(i + 1) + (int64_t)call;
}

static void check(const int64_t *v, size_t n, int nranks, unsigned long call)
{
	for (size_t i = 0; i < n; i++) {
		int64_t want = 0;

		for (int r = 0; r < nranks; r++)
			want += contribution(r, i, call);
		if (v[i] != want) {
			fprintf(stderr,
				"mpi_bench: call %lu: element %zu is %lld, want %lld\n",
				call, i, (long long)v[i], (long long)want);
			MPI_Abort(MPI_COMM_WORLD, 2);
		}
	}
}

static unsigned long parse(const char *s, unsigned long max)
{
	char *end;
	unsigned long v = strtoul(s, &end, 0);

	return (*s && !*end && v && v <= max) ? v : 0;
}

int main(int argc, char **argv)
{
	unsigned long size, iters, call;
	int rank, nranks;
	int64_t *in, *out;
	double *t, sum = 0;
	size_t n;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &nranks);
	size = argc == 3 ? parse(argv[1], MAX_SIZE) : 0;
	iters = argc == 3 ? parse(argv[2], MAX_ITERS) : 0;
	if (!size || size % sizeof(int64_t) || !iters || nranks < 2) {
		if (!rank)
			fprintf(stderr,
				"usage: mpirun -np 2 mpi_bench SIZE ITERS (SIZE a multiple of 8, at most %lu; ITERS at most %lu)\n",
				MAX_SIZE, MAX_ITERS);
		MPI_Abort(MPI_COMM_WORLD, 1);
	}
	n = size / sizeof(int64_t);
	in = malloc(size);
	out = malloc(size);
	t = calloc(iters, sizeof(*t));
	if (!in || !out || !t) {
		fprintf(stderr, "mpi_bench: out of memory\n");
		MPI_Abort(MPI_COMM_WORLD, 1);
	}

	for (call = 0; call < WARMUP + iters; call++) {
		double t0;

		for (size_t i = 0; i < n; i++)
			in[i] = contribution(rank, i, call);
		memset(out, 0, size);
		MPI_Barrier(MPI_COMM_WORLD);
		t0 = MPI_Wtime();
		MPI_Allreduce(in, out, (int)n, MPI_INT64_T, MPI_SUM,
			      MPI_COMM_WORLD);
		if (call >= WARMUP)
			t[call - WARMUP] = (MPI_Wtime() - t0) * 1e6;
		check(out, n, nranks, call);
	}

	if (!rank) {
		for (call = 0; call < iters; call++)
			sum += t[call];
		qsort(t, iters, sizeof(*t), cmp_double);
		printf("mpi_bench: allreduce %lu B, %lu calls: median %.1f us, mean %.1f us, min %.1f us, result checked\n",
		       size, iters,
		       iters % 2 ? t[iters / 2] :
				   (t[iters / 2 - 1] + t[iters / 2]) / 2,
		       sum / (double)iters, t[0]);
	}
	free(in);
	free(out);
	free(t);
	MPI_Finalize();
	return 0;
}
