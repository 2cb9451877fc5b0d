/*
 * runs.c: the ways the interposition library runs a planned exchange, each on a private
 * duplicate of the application's communicator.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "internal.h"

/* The time between two chunks of a paced message at its paced rate, the smallest chunk and the
 * most chunks between two ranks (their tags stay under MPI's guaranteed bound): the values of
 * liquidsched.execute.paced. */
#define CHUNK_INTERVAL_S 0.004
#define MIN_CHUNK_BYTES 16384.0
#define MAX_CHUNKS_PER_PAIR 32000
/* The longest a paced rank sleeps before testing its requests again. */
#define LONGEST_NAP_S 0.001

static void copy_to_self(const plan_entry *e, int me, const char *sendbuf, const MPI_Aint *soff, char *recvbuf,
                         const MPI_Aint *roff) {
    if (e->send_row[me])
        memcpy(recvbuf + roff[me], sendbuf + soff[me], e->send_row[me]);
}

void run_frames(const plan_entry *e, MPI_Comm comm, int me, const char *sendbuf, const MPI_Aint *soff,
                char *recvbuf, const MPI_Aint *roff) {
    int receives = e->recv_start[e->frames], most_sends = 0;
    for (int k = 0; k < e->frames; k++) {
        int here = e->send_start[k + 1] - e->send_start[k];
        most_sends = here > most_sends ? here : most_sends;
    }
    MPI_Request *recvs = malloc((receives ? receives : 1) * sizeof *recvs);
    MPI_Request *sends = malloc((most_sends ? most_sends : 1) * sizeof *sends);
    copy_to_self(e, me, sendbuf, soff, recvbuf, roff);
    /* Posted before the first frame, so that no sender of a frame waits for its receiver to post;
     * a frame's tag tells its pieces apart from the same peer's in other frames. */
    for (int k = 0; k < e->frames; k++)
        for (int i = e->recv_start[k]; i < e->recv_start[k + 1]; i++) {
            const piece_t *p = &e->recvs[i];
            IRECV(recvbuf + roff[p->peer] + p->offset, p->bytes, MPI_BYTE, p->peer, k & 0x7fff, comm, &recvs[i]);
        }
    for (int k = 0; k < e->frames; k++) {
        int s = 0;
        for (int i = e->send_start[k]; i < e->send_start[k + 1]; i++) {
            const piece_t *p = &e->sends[i];
            ISEND(sendbuf + soff[p->peer] + p->offset, p->bytes, MPI_BYTE, p->peer, k & 0x7fff, comm, &sends[s++]);
        }
        PMPI_Waitall(s, sends, MPI_STATUSES_IGNORE);
        PMPI_Waitall(e->recv_start[k + 1] - e->recv_start[k], recvs + e->recv_start[k], MPI_STATUSES_IGNORE);
        if (k + 1 < e->frames)
            PMPI_Barrier(comm);
    }
    free(recvs);
    free(sends);
}

long paced_chunk_count(uint64_t bytes, double duration_s) {
    if (!bytes)
        return 0;
    if (!(duration_s > 0))
        return 1;
    double size = fmax(MIN_CHUNK_BYTES, floor((double)bytes / duration_s * CHUNK_INTERVAL_S));
    long count = (long)ceil((double)bytes / size);
    return count < 1 ? 1 : count > MAX_CHUNKS_PER_PAIR ? MAX_CHUNKS_PER_PAIR : count;
}

/* A phase in [0, 1) for message `order` of `count`: bit-reversed, so that the messages of one
 * sender (neighbours in order) start far apart. */
static double phase(long order, long count) {
    int bits = 1;
    while ((1L << bits) < count)
        bits++;
    unsigned long r = 0, o = (unsigned long)order;
    for (int b = 0; b < bits; b++)
        r |= ((o >> b) & 1UL) << (bits - 1 - b);
    return (double)r / (double)(1UL << bits);
}

typedef struct {
    double due_s;
    int peer;
    long k, count;
} due_chunk;

static int by_due(const void *a, const void *b) {
    const due_chunk *x = a, *y = b;
    return x->due_s < y->due_s ? -1 : x->due_s > y->due_s ? 1 : x->peer - y->peer;
}

static void nap(double seconds) {
    if (seconds <= 0)
        return;
    seconds = fmin(seconds, LONGEST_NAP_S);
    struct timespec t = {0, (long)(seconds * 1e9)};
    nanosleep(&t, NULL);
}

/* Bytes [lo, hi) of chunk k of count of a message of `bytes` bytes. */
static void chunk_bounds(uint64_t bytes, long k, long count, uint64_t *lo, uint64_t *hi) {
    *lo = bytes * (uint64_t)k / (uint64_t)count;
    *hi = bytes * (uint64_t)(k + 1) / (uint64_t)count;
}

void run_paced(const plan_entry *e, MPI_Comm comm, int me, const char *sendbuf, const MPI_Aint *soff,
               char *recvbuf, const MPI_Aint *roff) {
    int n = e->n;
    double duration = e->paced_s;
    long receives = 0, sends = 0;
    for (int j = 0; j < n; j++)
        if (j != me) {
            receives += paced_chunk_count(e->recv_row[j], duration);
            sends += paced_chunk_count(e->send_row[j], duration);
        }
    MPI_Request *requests = malloc((receives + sends + 1) * sizeof *requests);
    int *done = malloc((receives + sends + 1) * sizeof *done);
    due_chunk *mine = malloc((sends + 1) * sizeof *mine);
    copy_to_self(e, me, sendbuf, soff, recvbuf, roff);
    long r = 0;
    for (int i = 0; i < n; i++) {
        long count = i == me ? 0 : paced_chunk_count(e->recv_row[i], duration);
        for (long k = 0; k < count; k++, r++) {
            uint64_t lo, hi;
            chunk_bounds(e->recv_row[i], k, count, &lo, &hi);
            IRECV(recvbuf + roff[i] + lo, (count_t)(hi - lo), MPI_BYTE, i, (int)k, comm, &requests[r]);
        }
    }
    long s = 0;
    for (int j = 0; j < n; j++) {
        long count = j == me ? 0 : paced_chunk_count(e->send_row[j], duration);
        double phi = phase((long)me * n + j, (long)n * n);
        for (long k = 0; k < count; k++)
            mine[s++] = (due_chunk){(k + phi) * duration / count, j, k, count};
    }
    qsort(mine, sends, sizeof *mine, by_due);
    double origin = PMPI_Wtime();
    long next = 0, active = r, left = r;
    /* Until the last chunk is handed to MPI the rank tests and sleeps; then it waits as MPI
     * does: the last pieces are under way, and napping would only add to the end. */
    while (next < sends) {
        double now = PMPI_Wtime() - origin;
        for (; next < sends && mine[next].due_s <= now; next++) {
            const due_chunk *c = &mine[next];
            uint64_t lo, hi;
            chunk_bounds(e->send_row[c->peer], c->k, c->count, &lo, &hi);
            ISEND(sendbuf + soff[c->peer] + lo, (count_t)(hi - lo), MPI_BYTE, c->peer, (int)c->k, comm,
                  &requests[active++]);
            left++;
        }
        int found = 0;
        if (left > 0)
            PMPI_Testsome((int)active, requests, &found, done, MPI_STATUSES_IGNORE);
        if (found > 0) { /* MPI_UNDEFINED, when every request is done, is negative */
            left -= found;
            continue;
        }
        if (next < sends)
            nap(mine[next].due_s - (PMPI_Wtime() - origin));
    }
    PMPI_Waitall((int)active, requests, MPI_STATUSES_IGNORE);
    free(requests);
    free(done);
    free(mine);
}
