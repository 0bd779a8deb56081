// SPDX-License-Identifier: GPL-2.0-only
/*
 * mpi_check: what a training job asks of MPI, every byte checked. Run by
 * the mpi group of run.sh as two ranks of Debian's Open MPI over UCX
 * (pml ucx, osc ucx), one rank on each RDMA device:
 *
 *   - point to point: messages of 1 B to 4 MiB (eager and rendezvous,
 *     the latter by RDMA READ or WRITE of the peer's buffer) sent, checked
 *     and echoed back, and nonblocking exchanges both ways at once;
 *   - collectives: broadcast, allreduce (sum, as a gradient exchange
 *     does), allgather and alltoall, of small and of 8 MiB buffers;
 *   - one-sided: MPI_Put, MPI_Get and MPI_Accumulate into a window,
 *     between fences.
 *
 * Every buffer's contents are a function of (rank, size, round), so a
 * byte in the wrong place or from the wrong message is caught. Prints
 * "mpi_check: N checks passed" on rank 0 and exits 0; the first mismatch
 * is printed and aborts the job with status 2.
 */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_P2P		(4u << 20)
#define BIG		(8u << 20)
#define ROUNDS		3

static int rank, nranks;
static unsigned long checks;

static uint8_t pattern(int from, size_t len, int round, size_t i)
{
	uint64_t x = (uint64_t)from * 0x9e3779b97f4a7c15ull ^
		     (uint64_t)len * 0xbf58476d1ce4e5b9ull ^
		     (uint64_t)round * 0x94d049bb133111ebull ^ i;

	x ^= x >> 29;
	x *= 0xbf58476d1ce4e5b9ull;
	return (uint8_t)(x >> 56);
}

static void fill(uint8_t *b, int from, size_t len, int round)
{
	for (size_t i = 0; i < len; i++)
		b[i] = pattern(from, len, round, i);
}

static void check(const char *what, const uint8_t *b, int from, size_t len,
		  int round)
{
	for (size_t i = 0; i < len; i++) {
		uint8_t want = pattern(from, len, round, i);

		if (b[i] != want) {
			fprintf(stderr,
				"mpi_check: rank %d: %s, %zu bytes from rank %d, round %d: byte %zu is 0x%02x, want 0x%02x\n",
				rank, what, len, from, round, i, b[i], want);
			MPI_Abort(MPI_COMM_WORLD, 2);
		}
	}
	checks++;
}

static void check_i64(const char *what, const int64_t *v, size_t n,
		      int64_t (*want)(size_t i))
{
	for (size_t i = 0; i < n; i++) {
		if (v[i] != want(i)) {
			fprintf(stderr,
				"mpi_check: rank %d: %s: element %zu is %lld, want %lld\n",
				rank, what, i, (long long)v[i],
				(long long)want(i));
			MPI_Abort(MPI_COMM_WORLD, 2);
		}
	}
	checks++;
}

/* Rank 0 sends, rank 1 checks and echoes its own pattern back. */
static void ping_pong(uint8_t *buf)
{
	int peer = 1 - rank;

	for (size_t len = 1; len <= MAX_P2P; len *= 4) {
		for (int r = 0; r < ROUNDS; r++) {
			if (rank == 0) {
				fill(buf, 0, len, r);
				MPI_Send(buf, (int)len, MPI_BYTE, peer, r,
					 MPI_COMM_WORLD);
				memset(buf, 0, len);
				MPI_Recv(buf, (int)len, MPI_BYTE, peer, r,
					 MPI_COMM_WORLD, MPI_STATUS_IGNORE);
				check("echo", buf, 1, len, r);
			} else {
				memset(buf, 0, len);
				MPI_Recv(buf, (int)len, MPI_BYTE, peer, r,
					 MPI_COMM_WORLD, MPI_STATUS_IGNORE);
				check("send", buf, 0, len, r);
				fill(buf, 1, len, r);
				MPI_Send(buf, (int)len, MPI_BYTE, peer, r,
					 MPI_COMM_WORLD);
			}
		}
	}
}

/* Both ranks send and receive at once, several messages in flight. */
static void exchange(uint8_t *sbuf, uint8_t *rbuf)
{
	enum { N = 8 };
	size_t len = MAX_P2P / N;
	MPI_Request req[2 * N];
	int peer = 1 - rank;

	for (int i = 0; i < N; i++) {
		fill(sbuf + i * len, rank, len, i);
		MPI_Irecv(rbuf + i * len, (int)len, MPI_BYTE, peer, 100 + i,
			  MPI_COMM_WORLD, &req[i]);
	}
	for (int i = 0; i < N; i++)
		MPI_Isend(sbuf + i * len, (int)len, MPI_BYTE, peer, 100 + i,
			  MPI_COMM_WORLD, &req[N + i]);
	MPI_Waitall(2 * N, req, MPI_STATUSES_IGNORE);
	for (int i = 0; i < N; i++)
		check("exchange", rbuf + i * len, peer, len, i);
}

static int64_t sum_of_ranks(size_t i)
{
	int64_t s = 0;

	for (int r = 0; r < nranks; r++)
		s += (int64_t)(r + 1) * (int64_t)(i + 1);
	return s;
}

static void collectives(uint8_t *a, uint8_t *b)
{
	size_t sizes[] = { 8, 4096, BIG };

	for (size_t k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++) {
		size_t len = sizes[k], n = len / sizeof(int64_t);
		int64_t *v = (int64_t *)a;

		/* broadcast from each root in turn */
		for (int root = 0; root < nranks; root++) {
			if (rank == root)
				fill(a, root, len, 7);
			else
				memset(a, 0, len);
			MPI_Bcast(a, (int)len, MPI_BYTE, root, MPI_COMM_WORLD);
			check("bcast", a, root, len, 7);
		}

		/* allreduce: each rank contributes (rank + 1) * (i + 1) */
		for (size_t i = 0; i < n; i++)
			v[i] = (int64_t)(rank + 1) * (int64_t)(i + 1);
		MPI_Allreduce(MPI_IN_PLACE, v, (int)n, MPI_INT64_T, MPI_SUM,
			      MPI_COMM_WORLD);
		check_i64("allreduce", v, n, sum_of_ranks);

		/* allgather and alltoall: block r of the result from rank r */
		size_t blk = len / (size_t)nranks;

		fill(a, rank, blk, 8);
		MPI_Allgather(a, (int)blk, MPI_BYTE, b, (int)blk, MPI_BYTE,
			      MPI_COMM_WORLD);
		for (int r = 0; r < nranks; r++)
			check("allgather", b + (size_t)r * blk, r, blk, 8);

		for (int r = 0; r < nranks; r++)
			fill(a + (size_t)r * blk, rank, blk, 9 + r);
		MPI_Alltoall(a, (int)blk, MPI_BYTE, b, (int)blk, MPI_BYTE,
			     MPI_COMM_WORLD);
		for (int r = 0; r < nranks; r++)
			check("alltoall", b + (size_t)r * blk, r, blk, 9 + rank);
	}
}

static int64_t twice_index(size_t i)
{
	return 2 * (int64_t)i;
}

/* Each rank puts into and gets from its peer's window. */
static void one_sided(uint8_t *tmp)
{
	size_t len = 1u << 20, n = len / sizeof(int64_t);
	int peer = 1 - rank;
	uint8_t *win_buf;
	MPI_Win win;

	MPI_Win_allocate((MPI_Aint)len, 1, MPI_INFO_NULL, MPI_COMM_WORLD,
			 &win_buf, &win);
	memset(win_buf, 0, len);

	/* PUT: the peer's window gets my pattern */
	fill(tmp, rank, len, 11);
	MPI_Win_fence(0, win);
	MPI_Put(tmp, (int)len, MPI_BYTE, peer, 0, (int)len, MPI_BYTE, win);
	MPI_Win_fence(0, win);
	check("put", win_buf, peer, len, 11);

	/* GET: my window holds the peer's pattern; read it back from there */
	memset(tmp, 0, len);
	MPI_Win_fence(0, win);
	MPI_Get(tmp, (int)len, MPI_BYTE, peer, 0, (int)len, MPI_BYTE, win);
	MPI_Win_fence(0, win);
	check("get", tmp, rank, len, 11);

	/* ACCUMULATE: both ranks add i into every rank's window */
	int64_t *w = (int64_t *)win_buf, *t = (int64_t *)tmp;

	for (size_t i = 0; i < n; i++) {
		w[i] = 0;
		t[i] = (int64_t)i;
	}
	MPI_Win_fence(0, win);
	MPI_Accumulate(t, (int)n, MPI_INT64_T, peer, 0, (int)n, MPI_INT64_T,
		       MPI_SUM, win);
	MPI_Accumulate(t, (int)n, MPI_INT64_T, rank, 0, (int)n, MPI_INT64_T,
		       MPI_SUM, win);
	MPI_Win_fence(0, win);
	check_i64("accumulate", w, n, twice_index);

	MPI_Win_free(&win);
}

int main(int argc, char **argv)
{
	uint8_t *a, *b;
	unsigned long total;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &nranks);
	if (nranks != 2) {
		if (!rank)
			fprintf(stderr, "mpi_check: run with 2 ranks\n");
		MPI_Abort(MPI_COMM_WORLD, 1);
	}
	a = malloc(BIG);
	b = malloc(BIG);
	if (!a || !b) {
		fprintf(stderr, "mpi_check: out of memory\n");
		MPI_Abort(MPI_COMM_WORLD, 1);
	}

	ping_pong(a);
	exchange(a, b);
	collectives(a, b);
	one_sided(a);

	MPI_Reduce(&checks, &total, 1, MPI_UNSIGNED_LONG, MPI_SUM, 0,
		   MPI_COMM_WORLD);
	if (!rank)
		printf("mpi_check: %lu checks passed\n", total);
	free(a);
	free(b);
	MPI_Finalize();
	return 0;
}
