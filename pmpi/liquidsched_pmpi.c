/*
 * liquidsched_pmpi.c: MPI_Alltoall and MPI_Alltoallv by liquid schedules, for unmodified MPI
 * applications (LD_PRELOAD=libliquidsched_pmpi.so), through the MPI profiling interface.
 *
 * The fabric (the network, resolved, and the host of every rank of MPI_COMM_WORLD) is read from
 * the file named by LIQUIDSCHED_FABRIC, written by `liquidsched pmpi-config`. For each
 * communicator and each signature of counts (every rank's bytes to every other), rank 0 plans
 * the exchange once through the liquidsched core and broadcasts it; later calls with the same
 * signature reuse it (a small allreduce tells whether every rank's counts are the same as
 * before). A planned exchange runs frame by frame on a private duplicate of the communicator,
 * a barrier between frames, as `liquidsched run --modes frames` does.
 *
 * Where it cannot plan, it calls the library's own collective and says why once on stderr:
 * no fabric, an unreadable one, MPI_IN_PLACE, a datatype that is not contiguous, ranks the
 * fabric does not map, small messages, a message too large for an MPI-3 library's int counts,
 * counts that do not match between ranks (the library then reports the error as it does), or a
 * planning error. The decision is agreed by every rank of the communicator, so that no rank
 * plans while another falls back. Intercommunicators, communicators of one rank and
 * LIQUIDSCHED_PMPI=off go to the library at once, without any message of ours.
 *
 * Calls from several threads at once must be on different communicators, as MPI requires of
 * collectives; the process-wide state (fabric, attribute key) is set up under a lock.
 *
 * Environment:
 *   LIQUIDSCHED_FABRIC      the fabric file (required to plan)
 *   LIQUIDSCHED_TIME_LIMIT  seconds of search per plan (default 2)
 *   LIQUIDSCHED_MIN_BYTES   a rank whose messages average fewer bytes leaves the call to the
 *                           library (default 0: every call is planned)
 *   LIQUIDSCHED_PMPI        "off" calls the library's collectives only
 *   LIQUIDSCHED_VERBOSE     "1": rank 0 prints each plan, and a summary at MPI_Finalize
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <limits.h>
#include <mpi.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "liquidsched.h"

/* MPI 4's large counts where the library has them; int counts (pieces under 2 GiB) before. */
#if MPI_VERSION >= 4
typedef MPI_Count count_t;
#define TYPE_SIZE PMPI_Type_size_c
#define TYPE_EXTENT PMPI_Type_get_extent_c
#define TYPE_TRUE_EXTENT PMPI_Type_get_true_extent_c
#define IRECV PMPI_Irecv_c
#define ISEND PMPI_Isend_c
#else
typedef int count_t;
#define INT_COUNTS 1
#define TYPE_SIZE PMPI_Type_size
#define TYPE_EXTENT PMPI_Type_get_extent
#define TYPE_TRUE_EXTENT PMPI_Type_get_true_extent
#define IRECV PMPI_Irecv
#define ISEND PMPI_Isend
#endif

/* Why a call falls back to the library's collective; when ranks differ, the highest reason
 * found is the one said. */
enum reason {
    PLAN_OK = 0,
    NO_FABRIC_VARIABLE,
    FABRIC_UNREADABLE,
    IN_PLACE,
    NOT_CONTIGUOUS,
    UNMAPPED_RANKS,
    SMALL_MESSAGES,
    TOO_LARGE,
    COUNTS_MISMATCH,
    PLANNING_FAILED,
    REASONS
};

static const char *reason_text[REASONS] = {
    "",
    "LIQUIDSCHED_FABRIC is not set (liquidsched pmpi-config writes the file it names)",
    "the fabric file cannot be used",
    "MPI_IN_PLACE is not planned",
    "a datatype is not contiguous",
    "a rank of the communicator is not in the fabric",
    "messages under LIQUIDSCHED_MIN_BYTES on average (a barrier per frame would cost more than it saves)",
    "a message over 2 GiB, more than this MPI library's int counts carry",
    "the counts do not match between ranks",
    "planning failed",
};

typedef struct {
    int peer;
    MPI_Aint offset; /* bytes into the message to or from peer */
    count_t bytes;
} piece_t;

typedef struct {
    int n;
    uint64_t *send_row; /* this rank's bytes to each rank: the part of the signature it checks */
    uint64_t *recv_row;
    int frames;
    int *send_start, *recv_start; /* frames + 1 */
    piece_t *sends, *recvs;
} plan_entry;

/* Slots are numbered so that one bit each fits the agreement's mask, below CAN_PLAN. */
#define MAX_PLANS_PER_COMM 16
#define SLOT_BITS ((1u << MAX_PLANS_PER_COMM) - 1)
#define CAN_PLAN (1u << MAX_PLANS_PER_COMM)

typedef struct {
    plan_entry *slot[MAX_PLANS_PER_COMM];
    int next;      /* the slot the next plan takes (round robin: the same on every rank) */
    int unmapped;  /* -1 until asked: whether a rank of the communicator is not in the fabric */
    MPI_Comm comm; /* the private duplicate the pieces travel on, made with the first plan */
} comm_cache;

static pthread_mutex_t setup = PTHREAD_MUTEX_INITIALIZER;
static ls_fabric *fabric;
static int fabric_tried;
static char fabric_error[512];
static int keyval = MPI_KEYVAL_INVALID;
static int noted[REASONS];
static long planned_calls, reused_calls, fallback_calls;

static int verbose(void) {
    const char *v = getenv("LIQUIDSCHED_VERBOSE");
    return v && strcmp(v, "0") != 0 && *v;
}

static int switched_off(void) {
    const char *v = getenv("LIQUIDSCHED_PMPI");
    return v && strcmp(v, "off") == 0;
}

static double time_limit(void) {
    const char *v = getenv("LIQUIDSCHED_TIME_LIMIT");
    double t = v ? atof(v) : 2.0;
    return t > 0 ? t : 2.0;
}

static double min_bytes(void) {
    const char *v = getenv("LIQUIDSCHED_MIN_BYTES");
    return v ? atof(v) : 0.0;
}

static void free_entry(plan_entry *e) {
    if (!e)
        return;
    free(e->send_row);
    free(e->recv_row);
    free(e->send_start);
    free(e->recv_start);
    free(e->sends);
    free(e->recvs);
    free(e);
}

static int delete_cache(MPI_Comm comm, int key, void *value, void *extra) {
    (void)comm, (void)key, (void)extra;
    comm_cache *c = value;
    for (int k = 0; k < MAX_PLANS_PER_COMM; k++)
        free_entry(c->slot[k]);
    if (c->comm != MPI_COMM_NULL)
        PMPI_Comm_free(&c->comm);
    free(c);
    return MPI_SUCCESS;
}

static comm_cache *cache_of(MPI_Comm comm) {
    pthread_mutex_lock(&setup);
    if (keyval == MPI_KEYVAL_INVALID)
        PMPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, delete_cache, &keyval, NULL);
    pthread_mutex_unlock(&setup);
    comm_cache *c;
    int found;
    PMPI_Comm_get_attr(comm, keyval, &c, &found);
    if (found)
        return c;
    c = calloc(1, sizeof *c);
    c->comm = MPI_COMM_NULL;
    c->unmapped = -1;
    PMPI_Comm_set_attr(comm, keyval, c);
    return c;
}

/* The fabric, read at the first call that needs it; its error kept for the note. */
static enum reason fabric_reason(void) {
    const char *path = getenv("LIQUIDSCHED_FABRIC");
    if (!path || !*path)
        return NO_FABRIC_VARIABLE;
    pthread_mutex_lock(&setup);
    if (!fabric_tried) {
        fabric_tried = 1;
        fabric = ls_fabric_load(path, fabric_error, sizeof fabric_error);
    }
    pthread_mutex_unlock(&setup);
    return fabric ? PLAN_OK : FABRIC_UNREADABLE;
}

/* Bytes of one element of a contiguous type (and its extent); -1 when not contiguous. */
static long long contiguous_bytes(MPI_Datatype type, MPI_Aint *extent) {
    count_t size;
#if MPI_VERSION >= 4
    MPI_Count lb, ext, tlb, text;
#else
    MPI_Aint lb, ext, tlb, text;
#endif
    TYPE_SIZE(type, &size);
    TYPE_EXTENT(type, &lb, &ext);
    TYPE_TRUE_EXTENT(type, &tlb, &text);
    if (lb != 0 || tlb != 0 || ext != size || text != size)
        return -1;
    *extent = (MPI_Aint)ext;
    return size;
}

/* This rank's bytes to (or from) each rank and where they start in its buffer, from counts and
 * displacements in elements of type (counts NULL: `count` each, at j * count, as MPI_Alltoall
 * lays them out); NOT_CONTIGUOUS when the type is not, TOO_LARGE when a message exceeds what
 * this MPI library's int counts carry. */
static enum reason byte_layout(int n, const int *counts, const int *displs, int count, MPI_Datatype type,
                               uint64_t *row, MPI_Aint *off) {
    MPI_Aint extent = 0;
    long long size = contiguous_bytes(type, &extent);
    enum reason why = size < 0 ? NOT_CONTIGUOUS : PLAN_OK;
    for (int j = 0; j < n; j++) {
        long long c = counts ? counts[j] : count, d = counts ? displs[j] : (long long)j * count;
        row[j] = why == PLAN_OK ? (uint64_t)c * (uint64_t)size : 0;
        off[j] = why == PLAN_OK ? (MPI_Aint)(d * extent) : 0;
#ifdef INT_COUNTS
        if (row[j] > INT_MAX)
            why = TOO_LARGE;
#endif
    }
    return why;
}

static void note_once(enum reason why, const char *op, const char *detail) {
    if (why == PLAN_OK || noted[why])
        return;
    noted[why] = 1;
    fprintf(stderr, "liquidsched: %s falls back to the MPI library's own: %s%s%s\n", op, reason_text[why],
            detail && *detail ? ": " : "", detail ? detail : "");
}

/* The world rank of every rank of comm, or UNMAPPED_RANKS when the fabric misses one. */
static enum reason world_ranks(MPI_Comm comm, int n, int32_t *world) {
    MPI_Group group, world_group;
    int *mine = malloc(n * sizeof *mine), *theirs = malloc(n * sizeof *theirs);
    for (int i = 0; i < n; i++)
        mine[i] = i;
    PMPI_Comm_group(comm, &group);
    PMPI_Comm_group(MPI_COMM_WORLD, &world_group);
    PMPI_Group_translate_ranks(group, n, mine, world_group, theirs);
    PMPI_Group_free(&group);
    PMPI_Group_free(&world_group);
    enum reason why = PLAN_OK;
    for (int i = 0; i < n; i++) {
        world[i] = theirs[i];
        if (theirs[i] == MPI_UNDEFINED || theirs[i] >= ls_fabric_ranks(fabric))
            why = UNMAPPED_RANKS;
    }
    free(mine);
    free(theirs);
    return why;
}

/* The slots whose plan has this rank's counts, one bit each. */
static unsigned matching_slots(const comm_cache *c, int n, const uint64_t *send_row, const uint64_t *recv_row) {
    unsigned mask = 0;
    for (int k = 0; k < MAX_PLANS_PER_COMM; k++) {
        const plan_entry *e = c->slot[k];
        if (e && e->n == n && !memcmp(e->send_row, send_row, n * sizeof *send_row) &&
            !memcmp(e->recv_row, recv_row, n * sizeof *recv_row))
            mask |= 1u << k;
    }
    return mask;
}

/* This rank's sends and receives, frame by frame, from the whole plan (pieces of a message in
 * frame order, so that each starts where the one before ended). */
static void keep_my_pieces(plan_entry *e, int me, int n, uint32_t frames, const uint32_t *start, const uint32_t *src,
                           const uint32_t *dst, const uint64_t *bytes) {
    MPI_Aint *sent = calloc(n, sizeof *sent), *got = calloc(n, sizeof *got);
    size_t total = start[frames], ns = 0, nr = 0;
    for (size_t p = 0; p < total; p++) {
        ns += src[p] == (uint32_t)me;
        nr += dst[p] == (uint32_t)me;
    }
    e->frames = (int)frames;
    e->send_start = malloc((frames + 1) * sizeof(int));
    e->recv_start = malloc((frames + 1) * sizeof(int));
    e->sends = malloc((ns ? ns : 1) * sizeof(piece_t));
    e->recvs = malloc((nr ? nr : 1) * sizeof(piece_t));
    ns = nr = 0;
    for (uint32_t k = 0; k < frames; k++) {
        e->send_start[k] = (int)ns;
        e->recv_start[k] = (int)nr;
        for (uint32_t p = start[k]; p < start[k + 1]; p++) {
            if (src[p] == (uint32_t)me) {
                e->sends[ns++] = (piece_t){(int)dst[p], sent[dst[p]], (count_t)bytes[p]};
                sent[dst[p]] += (MPI_Aint)bytes[p];
            }
            if (dst[p] == (uint32_t)me) {
                e->recvs[nr++] = (piece_t){(int)src[p], got[src[p]], (count_t)bytes[p]};
                got[src[p]] += (MPI_Aint)bytes[p];
            }
        }
    }
    e->send_start[frames] = (int)ns;
    e->recv_start[frames] = (int)nr;
    free(sent);
    free(got);
}

/* Whether what the plan brings this rank from each rank is what it expects to receive. */
static int receives_match(const plan_entry *e, int me) {
    uint64_t *got = calloc(e->n, sizeof *got);
    for (int i = 0; i < e->recv_start[e->frames]; i++)
        got[e->recvs[i].peer] += (uint64_t)e->recvs[i].bytes;
    got[me] = e->send_row[me];
    int same = !memcmp(got, e->recv_row, e->n * sizeof *got);
    free(got);
    return same;
}

/* The whole plan as arrays: the core's frames, the local messages added to the first frame. */
typedef struct {
    uint32_t frames, pieces;
    uint32_t *start, *src, *dst;
    uint64_t *bytes;
} flat_plan;

static void flatten(const ls_plan *p, flat_plan *f) {
    f->frames = p->frames ? p->frames : (p->locals ? 1 : 0);
    f->pieces = p->frame_start[p->frames] + p->locals;
    f->start = malloc((f->frames + 1) * sizeof(uint32_t));
    f->src = malloc((f->pieces + 1) * sizeof(uint32_t));
    f->dst = malloc((f->pieces + 1) * sizeof(uint32_t));
    f->bytes = malloc((f->pieces + 1) * sizeof(uint64_t));
    uint32_t q = 0;
    f->start[0] = 0;
    for (uint32_t k = 0; k < f->frames; k++) {
        if (k == 0)
            for (uint32_t l = 0; l < p->locals; l++, q++) {
                f->src[q] = p->local_src[l];
                f->dst[q] = p->local_dst[l];
                f->bytes[q] = p->local_bytes[l];
            }
        if (k < p->frames)
            for (uint32_t i = p->frame_start[k]; i < p->frame_start[k + 1]; i++, q++) {
                f->src[q] = p->src[i];
                f->dst[q] = p->dst[i];
                f->bytes[q] = p->bytes[i];
            }
        f->start[k + 1] = q;
    }
}

static void free_flat(flat_plan *f) {
    free(f->start);
    free(f->src);
    free(f->dst);
    free(f->bytes);
}

/* Rank 0 plans the exchange of the whole matrix and broadcasts it; every rank keeps its own
 * pieces. NULL (on every rank) when planning failed or the counts do not match. */
static plan_entry *plan_exchange(MPI_Comm comm, const char *op, int n, int me, const uint64_t *send_row,
                                 const uint64_t *recv_row) {
    uint64_t *matrix = me == 0 ? malloc((size_t)n * n * sizeof *matrix) : NULL;
    PMPI_Gather(send_row, n, MPI_UINT64_T, matrix, n, MPI_UINT64_T, 0, comm);
    flat_plan flat = {0};
    int32_t status = 0;
    char error[512] = "";
    if (me == 0) {
        int32_t *world = malloc(n * sizeof *world);
        world_ranks(comm, n, world);
        ls_plan p;
        double t0 = PMPI_Wtime();
        status = ls_plan_ranks(fabric, (uint32_t)n, world, matrix, time_limit(), &p, error, sizeof error);
        if (status == 0) {
            flatten(&p, &flat);
            if (verbose())
                fprintf(stderr,
                        "liquidsched: %s on %d ranks planned by the %s in %.3f s: %u frames%s, model %.6g s, "
                        "bound %.6g s (%.1f%%)\n",
                        op, n, p.planner == 0 ? "liquid search" : "weighted scheduler", PMPI_Wtime() - t0,
                        p.frames,
                        p.planner == 0 ? (p.proven ? " (optimal, proven)" : " (not proven optimal)") : "",
                        p.model_s, p.bound_s, p.model_s > 0 ? 100.0 * p.bound_s / p.model_s : 100.0);
            ls_plan_free(&p);
        }
        free(world);
        free(matrix);
    }
    PMPI_Bcast(&status, 1, MPI_INT32_T, 0, comm);
    if (status != 0) {
        if (me == 0)
            note_once(PLANNING_FAILED, op, error);
        return NULL;
    }
    PMPI_Bcast(&flat.frames, 1, MPI_UINT32_T, 0, comm);
    PMPI_Bcast(&flat.pieces, 1, MPI_UINT32_T, 0, comm);
    if (me != 0) {
        flat.start = malloc((flat.frames + 1) * sizeof(uint32_t));
        flat.src = malloc((flat.pieces + 1) * sizeof(uint32_t));
        flat.dst = malloc((flat.pieces + 1) * sizeof(uint32_t));
        flat.bytes = malloc((flat.pieces + 1) * sizeof(uint64_t));
    }
    PMPI_Bcast(flat.start, (int)flat.frames + 1, MPI_UINT32_T, 0, comm);
    PMPI_Bcast(flat.src, (int)flat.pieces, MPI_UINT32_T, 0, comm);
    PMPI_Bcast(flat.dst, (int)flat.pieces, MPI_UINT32_T, 0, comm);
    PMPI_Bcast(flat.bytes, (int)flat.pieces, MPI_UINT64_T, 0, comm);
    plan_entry *e = calloc(1, sizeof *e);
    e->n = n;
    e->send_row = malloc(n * sizeof *send_row);
    e->recv_row = malloc(n * sizeof *recv_row);
    memcpy(e->send_row, send_row, n * sizeof *send_row);
    memcpy(e->recv_row, recv_row, n * sizeof *recv_row);
    keep_my_pieces(e, me, n, flat.frames, flat.start, flat.src, flat.dst, flat.bytes);
    free_flat(&flat);
    /* Pieces written where the receiver does not expect them would overrun its buffer. */
    int mine = receives_match(e, me), all;
    PMPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_LAND, comm);
    if (!all) {
        if (me == 0)
            note_once(COUNTS_MISMATCH, op, NULL);
        free_entry(e);
        return NULL;
    }
    return e;
}

/* Run the plan: frame by frame, every receive and send of a frame together, a barrier
 * between frames; the message to itself copied. */
static void run_plan(const plan_entry *e, MPI_Comm comm, int me, const char *sendbuf, const MPI_Aint *soff,
                     char *recvbuf, const MPI_Aint *roff) {
    int most = 0;
    for (int k = 0; k < e->frames; k++) {
        int here = e->send_start[k + 1] - e->send_start[k] + e->recv_start[k + 1] - e->recv_start[k];
        most = here > most ? here : most;
    }
    MPI_Request *requests = malloc((most ? most : 1) * sizeof *requests);
    if (e->send_row[me])
        memcpy(recvbuf + roff[me], sendbuf + soff[me], e->send_row[me]);
    for (int k = 0; k < e->frames; k++) {
        int r = 0, tag = k & 0x7fff;
        for (int i = e->recv_start[k]; i < e->recv_start[k + 1]; i++) {
            const piece_t *p = &e->recvs[i];
            IRECV(recvbuf + roff[p->peer] + p->offset, p->bytes, MPI_BYTE, p->peer, tag, comm, &requests[r++]);
        }
        for (int i = e->send_start[k]; i < e->send_start[k + 1]; i++) {
            const piece_t *p = &e->sends[i];
            ISEND(sendbuf + soff[p->peer] + p->offset, p->bytes, MPI_BYTE, p->peer, tag, comm, &requests[r++]);
        }
        PMPI_Waitall(r, requests, MPI_STATUSES_IGNORE);
        if (k + 1 < e->frames)
            PMPI_Barrier(comm);
    }
    free(requests);
}

/* The reason said for an agreed fallback: the highest whose bit some rank cleared. */
static enum reason agreed_reason(unsigned cleared_bits) {
    for (int why = REASONS - 1; why > 0; why--)
        if (!(cleared_bits & (1u << why)))
            return (enum reason)why;
    return PLANNING_FAILED;
}

/* The common path of both collectives, once this rank's bytes and offsets are known: agree on
 * a slot to reuse, a plan to make, or a fallback; plan when needed; run. Returns 1 when the
 * exchange was done here, 0 when the caller must fall back. */
static int scheduled_exchange(const char *op, MPI_Comm comm, enum reason local, const void *sendbuf,
                              const uint64_t *send_row, const MPI_Aint *soff, void *recvbuf, const uint64_t *recv_row,
                              const MPI_Aint *roff, int n, int me) {
    comm_cache *c = local == PLAN_OK ? cache_of(comm) : NULL;
    unsigned mine[2] = {(c ? matching_slots(c, n, send_row, recv_row) | CAN_PLAN : 0u),
                        local == PLAN_OK ? ~0u : ~(1u << local)};
    unsigned agreed[2];
    PMPI_Allreduce(mine, agreed, 2, MPI_UNSIGNED, MPI_BAND, comm);
    if (!(agreed[0] & CAN_PLAN)) {
        enum reason why = agreed_reason(agreed[1]);
        if (me == 0)
            note_once(why, op, why == FABRIC_UNREADABLE ? fabric_error : NULL);
        fallback_calls++;
        return 0;
    }
    plan_entry *e;
    if (agreed[0] & SLOT_BITS) {
        e = c->slot[__builtin_ctz(agreed[0] & SLOT_BITS)];
        reused_calls++;
    } else {
        e = plan_exchange(comm, op, n, me, send_row, recv_row);
        if (!e) {
            fallback_calls++;
            return 0;
        }
        free_entry(c->slot[c->next]);
        c->slot[c->next] = e;
        c->next = (c->next + 1) % MAX_PLANS_PER_COMM;
        if (c->comm == MPI_COMM_NULL)
            PMPI_Comm_dup(comm, &c->comm);
        planned_calls++;
    }
    run_plan(e, c->comm, me, sendbuf, soff, recvbuf, roff);
    return 1;
}

/* What this rank alone can tell about planning comm's collective. */
static enum reason local_reason(MPI_Comm comm, const void *sendbuf, int n) {
    enum reason why = fabric_reason();
    if (why != PLAN_OK)
        return why;
    if (sendbuf == MPI_IN_PLACE)
        return IN_PLACE;
    /* A communicator's ranks never change: their places in the fabric are looked up once. */
    comm_cache *c = cache_of(comm);
    if (c->unmapped < 0) {
        int32_t *world = malloc(n * sizeof *world);
        c->unmapped = world_ranks(comm, n, world) == UNMAPPED_RANKS;
        free(world);
    }
    return c->unmapped ? UNMAPPED_RANKS : PLAN_OK;
}

/* Whether the call goes to the library at once: switched off, an intercommunicator (whose two
 * groups this library does not plan), or one rank. */
static int library_only(MPI_Comm comm, int *n, int *me) {
    int inter;
    if (switched_off())
        return 1;
    PMPI_Comm_test_inter(comm, &inter);
    if (inter)
        return 1;
    PMPI_Comm_size(comm, n);
    PMPI_Comm_rank(comm, me);
    return *n < 2;
}

/* SMALL_MESSAGES when this rank's messages to the others average under LIQUIDSCHED_MIN_BYTES. */
static enum reason size_reason(const uint64_t *send_row, int n, int me) {
    double total = 0;
    for (int j = 0; j < n; j++)
        total += j == me ? 0 : (double)send_row[j];
    return total / (n - 1) < min_bytes() ? SMALL_MESSAGES : PLAN_OK;
}

/* Both collectives, from counts and displacements (NULL counts: MPI_Alltoall's layout). */
static int exchange(const char *op, MPI_Comm comm, int n, int me, const void *sendbuf, const int *scounts,
                    const int *sdispls, int scount, MPI_Datatype stype, void *recvbuf, const int *rcounts,
                    const int *rdispls, int rcount, MPI_Datatype rtype) {
    enum reason why = local_reason(comm, sendbuf, n);
    uint64_t *send_row = malloc(n * sizeof *send_row), *recv_row = malloc(n * sizeof *recv_row);
    MPI_Aint *soff = malloc(n * sizeof *soff), *roff = malloc(n * sizeof *roff);
    if (why == PLAN_OK)
        why = byte_layout(n, scounts, sdispls, scount, stype, send_row, soff);
    if (why == PLAN_OK)
        why = byte_layout(n, rcounts, rdispls, rcount, rtype, recv_row, roff);
    if (why == PLAN_OK)
        why = size_reason(send_row, n, me);
    int done = scheduled_exchange(op, comm, why, sendbuf, send_row, soff, recvbuf, recv_row, roff, n, me);
    free(send_row), free(recv_row), free(soff), free(roff);
    return done;
}

int MPI_Alltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
                 MPI_Datatype recvtype, MPI_Comm comm) {
    int n = 0, me = 0;
    if (library_only(comm, &n, &me) || !exchange("MPI_Alltoall", comm, n, me, sendbuf, NULL, NULL, sendcount,
                                                 sendtype, recvbuf, NULL, NULL, recvcount, recvtype))
        return PMPI_Alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
    return MPI_SUCCESS;
}

int MPI_Alltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[], MPI_Datatype sendtype,
                  void *recvbuf, const int recvcounts[], const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm) {
    int n = 0, me = 0;
    if (library_only(comm, &n, &me) || !exchange("MPI_Alltoallv", comm, n, me, sendbuf, sendcounts, sdispls, 0,
                                                 sendtype, recvbuf, recvcounts, rdispls, 0, recvtype))
        return PMPI_Alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype, comm);
    return MPI_SUCCESS;
}

int MPI_Finalize(void) {
    if (verbose() && !switched_off()) {
        int rank;
        PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
        if (rank == 0)
            fprintf(stderr, "liquidsched: rank 0 made %ld planned, %ld reused and %ld fallback exchanges\n",
                    planned_calls, reused_calls, fallback_calls);
    }
    /* MPI deletes the attributes of MPI_COMM_SELF at finalization, not those of MPI_COMM_WORLD. */
    if (keyval != MPI_KEYVAL_INVALID) {
        PMPI_Comm_delete_attr(MPI_COMM_WORLD, keyval);
        PMPI_Comm_free_keyval(&keyval);
    }
    ls_fabric_free(fabric);
    fabric = NULL;
    return PMPI_Finalize();
}

/* -- Fortran ------------------------------------------------------------------------------------
 * The Fortran bindings, so that Fortran applications are served whether their MPI library's
 * Fortran layer calls MPI_ or PMPI_ entry points. Handles are converted; Fortran's MPI_IN_PLACE
 * is a common block of the library's, found by name. */

static const char *fortran_in_place_names[] = {"mpifcmb5_", "mpifcmb5__", "MPIFCMB5", "mpifcmb5",
                                               "mpi_fortran_in_place_", "mpi_fortran_in_place",
                                               "MPI_FORTRAN_IN_PLACE", "mpi_fortran_in_place__"};

static const void *c_buffer(const void *buf) {
    enum { NAMES = sizeof fortran_in_place_names / sizeof *fortran_in_place_names };
    static void *in_place[NAMES];
    static int looked;
    if (!looked) {
        for (int i = 0; i < NAMES; i++)
            in_place[i] = dlsym(RTLD_DEFAULT, fortran_in_place_names[i]);
        looked = 1;
    }
    for (int i = 0; i < NAMES; i++)
        if (in_place[i] && in_place[i] == buf)
            return MPI_IN_PLACE;
    return buf;
}

static void fortran_alltoall(void *sb, MPI_Fint *sc, MPI_Fint *st, void *rb, MPI_Fint *rc, MPI_Fint *rt,
                             MPI_Fint *comm, MPI_Fint *ierr) {
    *ierr = MPI_Alltoall(c_buffer(sb), *sc, PMPI_Type_f2c(*st), rb, *rc, PMPI_Type_f2c(*rt), PMPI_Comm_f2c(*comm));
}

static void fortran_alltoallv(void *sb, MPI_Fint *sc, MPI_Fint *sd, MPI_Fint *st, void *rb, MPI_Fint *rc,
                              MPI_Fint *rd, MPI_Fint *rt, MPI_Fint *comm, MPI_Fint *ierr) {
    MPI_Comm c = PMPI_Comm_f2c(*comm);
    int n, inter;
    PMPI_Comm_test_inter(c, &inter);
    /* An intercommunicator's arrays have an entry per rank of the other group. */
    if (inter)
        PMPI_Comm_remote_size(c, &n);
    else
        PMPI_Comm_size(c, &n);
    int *v = malloc(4 * n * sizeof *v);
    for (int i = 0; i < n; i++) {
        v[i] = sc[i], v[n + i] = sd[i], v[2 * n + i] = rc[i], v[3 * n + i] = rd[i];
    }
    *ierr = MPI_Alltoallv(c_buffer(sb), v, v + n, PMPI_Type_f2c(*st), rb, v + 2 * n, v + 3 * n, PMPI_Type_f2c(*rt), c);
    free(v);
}

#define FORTRAN_ALLTOALL(name)                                                                                 \
    void name(void *sb, MPI_Fint *sc, MPI_Fint *st, void *rb, MPI_Fint *rc, MPI_Fint *rt, MPI_Fint *comm,    \
              MPI_Fint *ierr) {                                                                                \
        fortran_alltoall(sb, sc, st, rb, rc, rt, comm, ierr);                                                  \
    }
#define FORTRAN_ALLTOALLV(name)                                                                                \
    void name(void *sb, MPI_Fint *sc, MPI_Fint *sd, MPI_Fint *st, void *rb, MPI_Fint *rc, MPI_Fint *rd,      \
              MPI_Fint *rt, MPI_Fint *comm, MPI_Fint *ierr) {                                                  \
        fortran_alltoallv(sb, sc, sd, st, rb, rc, rd, rt, comm, ierr);                                         \
    }

FORTRAN_ALLTOALL(mpi_alltoall_)
FORTRAN_ALLTOALL(mpi_alltoall__)
FORTRAN_ALLTOALL(mpi_alltoall)
FORTRAN_ALLTOALL(MPI_ALLTOALL)
FORTRAN_ALLTOALLV(mpi_alltoallv_)
FORTRAN_ALLTOALLV(mpi_alltoallv__)
FORTRAN_ALLTOALLV(mpi_alltoallv)
FORTRAN_ALLTOALLV(MPI_ALLTOALLV)
