/*
 * liquidsched_pmpi.c: MPI_Alltoall and MPI_Alltoallv by liquid schedules, for unmodified MPI
 * applications (LD_PRELOAD=libliquidsched_pmpi.so), through the MPI profiling interface.
 *
 * The fabric (the network, resolved, and the host of every rank of MPI_COMM_WORLD) is read from
 * the file named by LIQUIDSCHED_FABRIC, written by `liquidsched pmpi-config`.
 *
 * Which way each call runs (LIQUIDSCHED_MODE=auto, the default):
 * - with a selection table (LIQUIDSCHED_SELECTION, written by `liquidsched tune`) measured with
 *   this communicator's number of ranks: the mode measured fastest at the nearest measured size
 *   (mean bytes per message), the library's own collective unless a schedule won by more than
 *   the table's margin, and below the smallest measured size always;
 * - without one: the cost model (crates/capi/src/model.rs): MPI_Alltoall is planned only where
 *   MPICH's algorithm is modelled slower than liquid frames (its pairwise exchange, messages over
 *   32 KiB), MPI_Alltoallv never (MPICH posts it all at once, which the model cannot beat).
 * MPI_Alltoallv follows a table only with LIQUIDSCHED_ALLTOALLV=table: only every rank's counts
 * together tell its mean message, so following the table costs an agreement per call (measured:
 * a third of MPICH's speed at 1 B on an emulated network), and by default it is MPICH's own.
 * A call the library runs by choice costs nothing beyond that choice: for MPI_Alltoall every rank
 * knows the signature (one block size), and MPI_Alltoallv by default needs nothing knowing; no
 * rank speaks to another. LIQUIDSCHED_MODE=frames or paced plans every
 * call that can be planned that way; library is the library's own always.
 *
 * A planned call: rank 0 plans the exchange once per communicator and signature of counts
 * (every rank's bytes to every other) through the liquidsched core and broadcasts it (a paced
 * call needs only Λ, which the core re-plans from the communicator's last paced plan, walking
 * only the messages whose counts changed: milliseconds for 512 ranks); later
 * calls with the same signature reuse it (a small allreduce tells whether every rank's counts
 * are those of a plan). Plans and choices are cached per signature, failed plans too, whose
 * reason is said once. A plan runs on a private duplicate of the communicator (runs.c).
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
 * collectives; the process-wide state (settings, fabric, table, attribute key) is set up under
 * a lock.
 *
 * Environment (sizes and durations take units: LIQUIDSCHED_MIN_BYTES=4KiB is 4096 bytes; a value
 * that cannot be read is refused once, naming the variable, and its default used):
 *   LIQUIDSCHED_FABRIC      the fabric file (required to plan)
 *   LIQUIDSCHED_SELECTION   a selection table; one measured on another network (fingerprint) or
 *                           with another MPI library is refused once, and the model decides
 *   LIQUIDSCHED_MODE        auto (default), frames, paced or library
 *   LIQUIDSCHED_ALLTOALLV   library (default) or table: MPI_Alltoallv follows a table that
 *                           schedules it (an agreement per call)
 *   LIQUIDSCHED_TIME_LIMIT  search per plan (default 2s)
 *   LIQUIDSCHED_PACE_HEADROOM  the paced mode's headroom h: every transfer spread over the bound
 *                           × (1 + h), at most 1 / (1 + h) of every link (default 0.02, at most 0.5)
 *   LIQUIDSCHED_MIN_BYTES   a rank whose messages average fewer bytes leaves the call to the
 *                           library (default 0)
 *   LIQUIDSCHED_PMPI        "off" calls the library's collectives only
 *   LIQUIDSCHED_VERBOSE     "1": rank 0 prints each plan and choice, and a summary at MPI_Finalize
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <limits.h>
#include <math.h>
#include <mpi.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "liquidsched.h"

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

/* Slots are numbered so that one bit each fits the agreement's mask, below CAN_PLAN. */
#define MAX_PLANS_PER_COMM 16
#define SLOT_BITS ((1u << MAX_PLANS_PER_COMM) - 1)
#define CAN_PLAN (1u << MAX_PLANS_PER_COMM)

typedef struct {
    plan_entry *slot[MAX_PLANS_PER_COMM];
    int next;      /* the slot the next plan takes (round robin: the same on every rank) */
    int unmapped;  /* -1 until asked: whether a rank of the communicator is not in the fabric */
    MPI_Comm comm; /* the private duplicate the pieces travel on, made with the first plan */
    ls_paced_planner *paced; /* rank 0's: the routes between the ranks, and the last paced plan */
} comm_cache;

/* What LIQUIDSCHED_MODE asks: the cost model or a table (auto), or one way for every call. */
enum setting { AUTO = -1, ALWAYS_LIBRARY = LS_MODE_LIBRARY, ALWAYS_FRAMES = LS_MODE_FRAMES, ALWAYS_PACED = LS_MODE_PACED };
/* The way a call is to run before the ranks agree: a mode, or one only known after agreeing. */
enum { BY_TABLE_MEAN = -2, BY_MODEL = -3 };

static const char *mode_name[] = {"the library's own", "frames", "paced"};

static pthread_mutex_t setup = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t settings_once = PTHREAD_ONCE_INIT;
static enum setting setting = AUTO;
static double time_limit_s = 2.0, min_bytes = 0.0;
/* The paced mode's headroom h (rates at most 1 / (1 + h) of every link) and its largest value:
 * liquidsched.execute.paced.PACE_HEADROOM and MAX_PACE_HEADROOM. */
static double pace_headroom = 0.02;
#define MAX_PACE_HEADROOM 0.5
/* Whether MPI_Alltoallv follows a table that schedules it, at the price of an agreement per call. */
static int alltoallv_by_table;
static ls_fabric *fabric;
static int fabric_tried;
static char fabric_error[512];
static ls_selection *selection;
static int keyval = MPI_KEYVAL_INVALID;
static MPI_Op agree_op = MPI_OP_NULL;
static int noted[REASONS];
static long planned_calls, reused_calls, fallback_calls, chosen_library_calls;
/* Calls handed to the library's collective and the time this library spent on them before the
 * handover: what it adds where it runs the library's own code, measured rather than inferred from
 * two launches' timings. */
static long handed_calls;
static double handing_s;

static int world_rank_zero(void) {
    int rank = 0;
    PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
    return rank == 0;
}

static int verbose(void) {
    const char *v = getenv("LIQUIDSCHED_VERBOSE");
    return v && strcmp(v, "0") != 0 && *v;
}

static int switched_off(void) {
    const char *v = getenv("LIQUIDSCHED_PMPI");
    return v && strcmp(v, "off") == 0;
}

/* A variable that cannot be read is said once (by world rank 0), with its default. */
static void refuse_variable(const char *name, const char *value, const char *why, const char *instead) {
    if (world_rank_zero())
        fprintf(stderr, "liquidsched: %s=%s is refused: %s; %s\n", name, value, why, instead);
}

static void read_mode_setting(void) {
    const char *v = getenv("LIQUIDSCHED_MODE");
    static const struct {
        const char *name;
        enum setting value;
    } known[] = {{"auto", AUTO}, {"library", ALWAYS_LIBRARY}, {"frames", ALWAYS_FRAMES}, {"paced", ALWAYS_PACED}};
    if (!v || !*v)
        return;
    for (size_t i = 0; i < sizeof known / sizeof *known; i++)
        if (strcmp(v, known[i].name) == 0) {
            setting = known[i].value;
            return;
        }
    refuse_variable("LIQUIDSCHED_MODE", v, "expected auto, frames, paced or library", "auto is used");
}

static void read_alltoallv_setting(void) {
    const char *v = getenv("LIQUIDSCHED_ALLTOALLV");
    if (!v || !*v || strcmp(v, "library") == 0)
        return;
    if (strcmp(v, "table") == 0)
        alltoallv_by_table = 1;
    else
        refuse_variable("LIQUIDSCHED_ALLTOALLV", v, "expected library or table", "library is used");
}

static void read_size_setting(void) {
    const char *v = getenv("LIQUIDSCHED_MIN_BYTES");
    char why[256];
    uint64_t bytes;
    if (!v || !*v)
        return;
    if (ls_parse_bytes(v, &bytes, why, sizeof why) == 0)
        min_bytes = (double)bytes;
    else
        refuse_variable("LIQUIDSCHED_MIN_BYTES", v, why, "0 is used (every call may be planned)");
}

static void read_time_setting(void) {
    const char *v = getenv("LIQUIDSCHED_TIME_LIMIT");
    char why[256];
    double seconds;
    if (!v || !*v)
        return;
    if (ls_parse_seconds(v, &seconds, why, sizeof why) == 0)
        time_limit_s = seconds;
    else
        refuse_variable("LIQUIDSCHED_TIME_LIMIT", v, why, "2s is used");
}

static void read_headroom_setting(void) {
    const char *v = getenv("LIQUIDSCHED_PACE_HEADROOM");
    char why[256], instead[64];
    double share;
    if (!v || !*v)
        return;
    if (ls_parse_share(v, MAX_PACE_HEADROOM, &share, why, sizeof why) == 0) {
        pace_headroom = share;
    } else {
        snprintf(instead, sizeof instead, "%g is used", pace_headroom);
        refuse_variable("LIQUIDSCHED_PACE_HEADROOM", v, why, instead);
    }
}

/* Read after the fabric, whose network the table must have been measured on. */
static void read_selection(void) {
    const char *path = getenv("LIQUIDSCHED_SELECTION");
    char why[768], version[MPI_MAX_LIBRARY_VERSION_STRING];
    int length = 0;
    if (!path || !*path || setting != AUTO)
        return;
    MPI_Get_library_version(version, &length);
    selection = ls_selection_load(path, fabric, version, why, sizeof why);
    if (!selection && world_rank_zero())
        fprintf(stderr, "liquidsched: LIQUIDSCHED_SELECTION is refused: %s; the cost model decides instead\n", why);
}

/* The settings, the fabric and the table, read once (pthread_once: at the first call). */
static void read_settings(void) {
    read_mode_setting();
    read_alltoallv_setting();
    read_size_setting();
    read_time_setting();
    read_headroom_setting();
    const char *path = getenv("LIQUIDSCHED_FABRIC");
    if (path && *path && setting != ALWAYS_LIBRARY) {
        fabric_tried = 1;
        fabric = ls_fabric_load(path, fabric_error, sizeof fabric_error);
        if (fabric)
            read_selection();
    }
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
    ls_paced_planner_free(c->paced);
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

static enum reason fabric_reason(void) {
    if (!fabric_tried)
        return NO_FABRIC_VARIABLE;
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

/* The slots whose entry has this rank's counts, one bit each. */
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

/* A new entry for this rank's signature, with nothing to run yet. */
static plan_entry *new_entry(int n, int mode, const uint64_t *send_row, const uint64_t *recv_row) {
    plan_entry *e = calloc(1, sizeof *e);
    e->n = n;
    e->mode = mode;
    e->send_row = malloc(n * sizeof *send_row);
    e->recv_row = malloc(n * sizeof *recv_row);
    memcpy(e->send_row, send_row, n * sizeof *send_row);
    memcpy(e->recv_row, recv_row, n * sizeof *recv_row);
    e->send_start = calloc(1, sizeof(int));
    e->recv_start = calloc(1, sizeof(int));
    return e;
}

/* Rank 0's decision on a plan it made: the wanted mode, or the cost model's for BY_MODEL. */
static int decided_mode(const ls_plan *p, int wanted, const char *op, int n, const int32_t *world, uint64_t block) {
    if (wanted != BY_MODEL)
        return wanted;
    double library_s = NAN, schedule_s = NAN;
    char error[256] = "";
    int mode = ls_default_alltoall_mode(fabric, (uint32_t)n, world, block, p->model_s, p->frames, &library_s,
                                        &schedule_s, error, sizeof error);
    if (mode < 0) {
        fprintf(stderr, "liquidsched: %s: the cost model failed (%s); the library's own runs\n", op, error);
        return LS_MODE_LIBRARY;
    }
    if (verbose())
        fprintf(stderr,
                "liquidsched: %s of %llu B per message on %d ranks: %s by the cost model (MPICH's pairwise "
                "exchange %.6g s, liquid frames %.6g s)\n",
                op, (unsigned long long)block, n, mode_name[mode], library_s, schedule_s);
    return mode;
}

static void say_plan(const ls_plan *p, const char *op, int n, double seconds) {
    fprintf(stderr,
            "liquidsched: %s on %d ranks planned by the %s in %.3f s: %u frames%s, model %.6g s, "
            "bound %.6g s (%.1f%%)\n",
            op, n, p->planner == 0 ? "liquid search" : "weighted scheduler", seconds, p->frames,
            p->planner == 0 ? (p->proven ? " (optimal, proven)" : " (not proven optimal)") : "", p->model_s,
            p->bound_s, p->model_s > 0 ? 100.0 * p->bound_s / p->model_s : 100.0);
}

/* The entry fails on every rank unless every rank receives what it expects (`mine`: this one does). */
static void fail_unless_all_receive_as_expected(plan_entry *e, int mine, MPI_Comm comm, int me, const char *op) {
    int all;
    PMPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_LAND, comm);
    if (!all) {
        if (me == 0)
            note_once(COUNTS_MISMATCH, op, NULL);
        e->mode = ENTRY_FAILED;
    }
}

/* Rank 0 plans the exchange of the whole matrix, decides its mode and broadcasts both; every
 * rank keeps its own pieces. The entry's mode is ENTRY_FAILED (on every rank) when planning
 * failed or the counts do not match, LS_MODE_LIBRARY when the model chose the library. */
static plan_entry *plan_exchange(MPI_Comm comm, const char *op, int n, int me, int wanted, uint64_t block,
                                 const uint64_t *send_row, const uint64_t *recv_row) {
    uint64_t *matrix = me == 0 ? malloc((size_t)n * n * sizeof *matrix) : NULL;
    PMPI_Gather(send_row, n, MPI_UINT64_T, matrix, n, MPI_UINT64_T, 0, comm);
    flat_plan flat = {0};
    int32_t status[2] = {0, LS_MODE_LIBRARY}; /* planned (0) or not (-1), and the mode */
    double paced_s = 0;
    char error[512] = "";
    if (me == 0) {
        int32_t *world = malloc(n * sizeof *world);
        world_ranks(comm, n, world);
        ls_plan p;
        double t0 = PMPI_Wtime();
        status[0] = ls_plan_ranks(fabric, (uint32_t)n, world, matrix, time_limit_s, &p, error, sizeof error);
        if (status[0] == 0) {
            if (verbose())
                say_plan(&p, op, n, PMPI_Wtime() - t0);
            status[1] = decided_mode(&p, wanted, op, n, world, block);
            /* Rank 0's headroom for every rank: a rank that read another would cut its chunks
             * otherwise than its peers. */
            paced_s = p.bound_s * (1 + pace_headroom);
            if (verbose() && status[1] == LS_MODE_PACED)
                fprintf(stderr, "liquidsched: %s paced over %.6g s (the bound × %g)\n", op, paced_s,
                        1 + pace_headroom);
            flatten(&p, &flat);
            ls_plan_free(&p);
        }
        free(world);
        free(matrix);
    }
    PMPI_Bcast(status, 2, MPI_INT32_T, 0, comm);
    plan_entry *e = new_entry(n, status[0] == 0 ? status[1] : ENTRY_FAILED, send_row, recv_row);
    if (status[0] != 0) {
        if (me == 0) {
            note_once(PLANNING_FAILED, op, error);
            if (verbose())
                fprintf(stderr, "liquidsched: %s on %d ranks: planning failed for these counts; later calls with "
                        "them go to the library at once\n", op, n);
        }
        return e;
    }
    if (e->mode == LS_MODE_LIBRARY) {
        free_flat(&flat);
        return e;
    }
    PMPI_Bcast(&paced_s, 1, MPI_DOUBLE, 0, comm);
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
    e->paced_s = paced_s;
    free(e->send_start);
    free(e->recv_start);
    keep_my_pieces(e, me, n, flat.frames, flat.start, flat.src, flat.dst, flat.bytes);
    free_flat(&flat);
    /* Pieces written where the receiver does not expect them would overrun its buffer. */
    fail_unless_all_receive_as_expected(e, receives_match(e, me), comm, me, op);
    return e;
}

/* Rank 0's Λ of the gathered matrix, by the communicator's paced planner (made with its first
 * paced plan, then re-planned from its last plan: only the messages that changed are walked);
 * -1 with a message when the planner cannot be made or the plan fails. */
static int paced_bound(comm_cache *c, MPI_Comm comm, const char *op, int n, const uint64_t *matrix, double *bound_s,
                       char *error, size_t error_len) {
    double t0 = PMPI_Wtime();
    if (!c->paced) {
        int32_t *world = malloc(n * sizeof *world);
        world_ranks(comm, n, world);
        c->paced = ls_paced_planner_new(fabric, (uint32_t)n, world, error, error_len);
        free(world);
        if (!c->paced)
            return -1;
    }
    int warm = 0;
    if (ls_paced_plan(c->paced, matrix, bound_s, &warm, error, error_len) != 0)
        return -1;
    if (verbose())
        fprintf(stderr,
                "liquidsched: %s on %d ranks planned paced (%s) in %.3f ms: bound %.6g s, paced over %.6g s (the "
                "bound × %g)\n",
                op, n, warm ? "from the last plan" : "cold", 1e3 * (PMPI_Wtime() - t0), *bound_s,
                *bound_s * (1 + pace_headroom), 1 + pace_headroom);
    return 0;
}

/* A paced call needs no frames: rank 0 plans Λ alone and broadcasts the paced duration; every
 * rank checks that what each rank sends it is what it expects. The entry is ENTRY_FAILED (on
 * every rank) when planning failed or the counts do not match. */
static plan_entry *plan_paced(comm_cache *c, MPI_Comm comm, const char *op, int n, int me, const uint64_t *send_row,
                              const uint64_t *recv_row) {
    uint64_t *matrix = me == 0 ? malloc((size_t)n * n * sizeof *matrix) : NULL;
    PMPI_Gather(send_row, n, MPI_UINT64_T, matrix, n, MPI_UINT64_T, 0, comm);
    /* planned (0) or not (-1), and the paced duration: Λ × (1 + rank 0's headroom), so that
     * every rank cuts its chunks alike */
    double status[2] = {0, 0};
    char error[512] = "";
    if (me == 0) {
        double bound_s = 0;
        status[0] = paced_bound(c, comm, op, n, matrix, &bound_s, error, sizeof error);
        status[1] = bound_s * (1 + pace_headroom);
        free(matrix);
    }
    PMPI_Bcast(status, 2, MPI_DOUBLE, 0, comm);
    plan_entry *e = new_entry(n, status[0] == 0 ? LS_MODE_PACED : ENTRY_FAILED, send_row, recv_row);
    if (status[0] != 0) {
        if (me == 0)
            note_once(PLANNING_FAILED, op, error);
        return e;
    }
    e->paced_s = status[1];
    /* Chunks written where the receiver does not expect them would overrun its buffer. */
    uint64_t *sent_to_me = malloc(n * sizeof *sent_to_me);
    PMPI_Alltoall(send_row, 1, MPI_UINT64_T, sent_to_me, 1, MPI_UINT64_T, comm);
    int mine = !memcmp(sent_to_me, recv_row, n * sizeof *sent_to_me);
    free(sent_to_me);
    fail_unless_all_receive_as_expected(e, mine, comm, me, op);
    return e;
}

/* The reason said for an agreed fallback: the highest whose bit some rank cleared. */
static enum reason agreed_reason(unsigned cleared_bits) {
    for (int why = REASONS - 1; why > 0; why--)
        if (!(cleared_bits & (1u << why)))
            return (enum reason)why;
    return PLANNING_FAILED;
}

/* The agreement's reduction: the slots every rank can reuse and the reasons no rank has (bitwise
 * and), and the bytes of every rank (sum). */
static void agree(void *in, void *inout, int *len, MPI_Datatype *type) {
    (void)type;
    uint64_t *a = in, *b = inout;
    for (int i = 0; i + 2 < *len; i += 3) {
        b[i] &= a[i];
        b[i + 1] &= a[i + 1];
        b[i + 2] += a[i + 2];
    }
}

static MPI_Op agreement_op(void) {
    pthread_mutex_lock(&setup);
    if (agree_op == MPI_OP_NULL)
        PMPI_Op_create(agree, 1, &agree_op);
    pthread_mutex_unlock(&setup);
    return agree_op;
}

static uint64_t row_total(const uint64_t *row, int n, int me) {
    uint64_t total = 0;
    for (int j = 0; j < n; j++)
        total += j == me ? 0 : row[j];
    return total;
}

/* The mode a table gives for mean bytes per message, said when verbose each time the measured
 * size or the mode changes (below the smallest measured size, the same size gives the library). */
static int table_mode(int collective, const char *op, double mean_bytes, int me) {
    uint64_t measured = 0, smallest = 0;
    int mode = ls_selection_choose(selection, collective, mean_bytes, &measured);
    static uint64_t last_size[2] = {UINT64_MAX, UINT64_MAX};
    static int last_mode[2] = {-1, -1};
    if (verbose() && me == 0 && (last_size[collective] != measured || last_mode[collective] != mode)) {
        last_size[collective] = measured;
        last_mode[collective] = mode;
        ls_selection_choose(selection, collective, 0.0, &smallest); /* no size is below it */
        int below = measured == smallest && mean_bytes < (double)smallest;
        fprintf(stderr, "liquidsched: %s of %.0f B per message: %s (selection table, %s %llu B)\n", op, mean_bytes,
                mode_name[mode], below ? "below its smallest measured size," : "measured at",
                (unsigned long long)measured);
    }
    return mode;
}

/* Agree on a slot to reuse, a plan to make, or a fallback; plan when needed; run. Returns 1 when
 * the exchange was done here, 0 when the caller must call the library. */
static int scheduled_exchange(const char *op, int collective, MPI_Comm comm, enum reason local, int wanted,
                              const void *sendbuf, const uint64_t *send_row, const MPI_Aint *soff, void *recvbuf,
                              const uint64_t *recv_row, const MPI_Aint *roff, int n, int me) {
    comm_cache *c = local == PLAN_OK ? cache_of(comm) : NULL;
    uint64_t mine[3] = {(c ? matching_slots(c, n, send_row, recv_row) | CAN_PLAN : 0u),
                        local == PLAN_OK ? ~0u : ~(1u << local), row_total(send_row, n, me)};
    uint64_t agreed[3];
    PMPI_Allreduce(mine, agreed, 3, MPI_UINT64_T, agreement_op(), comm);
    if (!(agreed[0] & CAN_PLAN)) {
        enum reason why = agreed_reason((unsigned)agreed[1]);
        if (me == 0)
            note_once(why, op, why == FABRIC_UNREADABLE ? fabric_error : NULL);
        fallback_calls++;
        return 0;
    }
    if (wanted == BY_TABLE_MEAN) {
        wanted = table_mode(collective, op, (double)agreed[2] / ((double)n * (n - 1)), me);
        if (wanted == LS_MODE_LIBRARY) {
            chosen_library_calls++;
            return 0;
        }
    }
    plan_entry *e;
    if (agreed[0] & SLOT_BITS) {
        e = c->slot[__builtin_ctz((unsigned)agreed[0] & SLOT_BITS)];
        reused_calls += e->mode > LS_MODE_LIBRARY;
    } else {
        e = wanted == LS_MODE_PACED
                ? plan_paced(c, comm, op, n, me, send_row, recv_row)
                : plan_exchange(comm, op, n, me, wanted, send_row[me == 0 ? 1 : 0], send_row, recv_row);
        free_entry(c->slot[c->next]);
        c->slot[c->next] = e;
        c->next = (c->next + 1) % MAX_PLANS_PER_COMM;
        planned_calls += e->mode > LS_MODE_LIBRARY;
    }
    if (e->mode == ENTRY_FAILED) {
        fallback_calls++;
        return 0;
    }
    if (e->mode == LS_MODE_LIBRARY) {
        chosen_library_calls++;
        return 0;
    }
    if (c->comm == MPI_COMM_NULL)
        PMPI_Comm_dup(comm, &c->comm);
    (e->mode == LS_MODE_PACED ? run_paced : run_frames)(e, c->comm, me, sendbuf, soff, recvbuf, roff);
    return 1;
}

/* Whether this rank's slots hold an MPI_Alltoall entry of `block` bytes per message that the
 * model left to the library: every rank has the same entries and the same block, so each can
 * tell alone. */
static int model_chose_library(MPI_Comm comm, int n, uint64_t block) {
    comm_cache *c = cache_of(comm);
    for (int k = 0; k < MAX_PLANS_PER_COMM; k++) {
        const plan_entry *e = c->slot[k];
        int same = e && e->n == n && e->mode == LS_MODE_LIBRARY;
        for (int j = 0; same && j < n; j++)
            same = e->send_row[j] == block && e->recv_row[j] == block;
        if (same)
            return 1;
    }
    return 0;
}

/* What this rank alone can tell about planning comm's collective. */
static enum reason local_reason(MPI_Comm comm, int n) {
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
    return (double)row_total(send_row, n, me) / (n - 1) < min_bytes ? SMALL_MESSAGES : PLAN_OK;
}

/* How the call is to run, from what every rank knows alike (the settings, the table, and for
 * MPI_Alltoall its `block` bytes per message): a mode, BY_TABLE_MEAN or BY_MODEL, or
 * LS_MODE_LIBRARY at once. */
static int wanted_mode(int collective, const char *op, MPI_Comm comm, int n, int me, uint64_t block) {
    if (setting != AUTO)
        return (int)setting;
    int table = selection && ls_selection_ranks(selection) == (uint32_t)n;
    static int said_ranks;
    if (selection && !table && !said_ranks && me == 0) {
        said_ranks = 1;
        fprintf(stderr, "liquidsched: the selection table was measured with %u ranks, not %d: the cost model decides "
                "for communicators of other sizes\n", ls_selection_ranks(selection), n);
    }
    /* Only every rank's counts together tell an MPI_Alltoallv's mean: following a table costs an
     * agreement per call, which small calls cannot afford, so it is asked for. */
    if (collective == LS_ALLTOALLV)
        return table && alltoallv_by_table && ls_selection_ever_schedules(selection, LS_ALLTOALLV) ? BY_TABLE_MEAN
                                                                                                   : LS_MODE_LIBRARY;
    if (table)
        return table_mode(LS_ALLTOALL, op, (double)block, me);
    if (!ls_alltoall_can_lose(block) || model_chose_library(comm, n, block))
        return LS_MODE_LIBRARY;
    return BY_MODEL;
}

/* Both collectives, from counts and displacements (NULL counts: MPI_Alltoall's layout). */
static int exchange(const char *op, int collective, MPI_Comm comm, int n, int me, const void *sendbuf,
                    const int *scounts, const int *sdispls, int scount, MPI_Datatype stype, void *recvbuf,
                    const int *rcounts, const int *rdispls, int rcount, MPI_Datatype rtype) {
    pthread_once(&settings_once, read_settings);
    if (setting == ALWAYS_LIBRARY)
        return 0;
    /* Alike on every rank: the same environment, and MPI_IN_PLACE given by all or none. */
    enum reason why = fabric_reason();
    if (why == PLAN_OK && sendbuf == MPI_IN_PLACE)
        why = IN_PLACE;
    if (why != PLAN_OK) {
        if (me == 0)
            note_once(why, op, why == FABRIC_UNREADABLE ? fabric_error : NULL);
        fallback_calls++;
        return 0;
    }
    /* Decided before any work on counts, so that a call left to the library costs no more. An
     * MPI_Alltoall's block has the same bytes on every rank, whatever its type is here. */
    count_t size = 0;
    if (collective == LS_ALLTOALL)
        TYPE_SIZE(stype, &size);
    int wanted = wanted_mode(collective, op, comm, n, me, (uint64_t)scount * (uint64_t)size);
    if (wanted == LS_MODE_LIBRARY) {
        chosen_library_calls++;
        return 0;
    }
    uint64_t *send_row = malloc(n * sizeof *send_row), *recv_row = malloc(n * sizeof *recv_row);
    MPI_Aint *soff = malloc(n * sizeof *soff), *roff = malloc(n * sizeof *roff);
    why = byte_layout(n, scounts, sdispls, scount, stype, send_row, soff);
    if (why == PLAN_OK)
        why = byte_layout(n, rcounts, rdispls, rcount, rtype, recv_row, roff);
    if (why == PLAN_OK)
        why = local_reason(comm, n);
    if (why == PLAN_OK)
        why = size_reason(send_row, n, me);
    int done = scheduled_exchange(op, collective, comm, why, wanted, sendbuf, send_row, soff, recvbuf, recv_row,
                                  roff, n, me);
    free(send_row), free(recv_row), free(soff), free(roff);
    return done;
}

static void count_handover(double entered) {
    handed_calls++;
    handing_s += PMPI_Wtime() - entered;
}

int MPI_Alltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
                 MPI_Datatype recvtype, MPI_Comm comm) {
    double entered = PMPI_Wtime();
    int n = 0, me = 0;
    if (library_only(comm, &n, &me) || !exchange("MPI_Alltoall", LS_ALLTOALL, comm, n, me, sendbuf, NULL, NULL,
                                                 sendcount, sendtype, recvbuf, NULL, NULL, recvcount, recvtype)) {
        count_handover(entered);
        return PMPI_Alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
    }
    return MPI_SUCCESS;
}

int MPI_Alltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[], MPI_Datatype sendtype,
                  void *recvbuf, const int recvcounts[], const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm) {
    double entered = PMPI_Wtime();
    int n = 0, me = 0;
    if (library_only(comm, &n, &me) || !exchange("MPI_Alltoallv", LS_ALLTOALLV, comm, n, me, sendbuf, sendcounts,
                                                 sdispls, 0, sendtype, recvbuf, recvcounts, rdispls, 0, recvtype)) {
        count_handover(entered);
        return PMPI_Alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype, comm);
    }
    return MPI_SUCCESS;
}

int MPI_Finalize(void) {
    if (verbose() && !switched_off() && world_rank_zero())
        fprintf(stderr,
                "liquidsched: rank 0 made %ld planned, %ld reused and %ld fallback exchanges, and left %ld to the "
                "library by choice\n",
                planned_calls, reused_calls, fallback_calls, chosen_library_calls);
    if (verbose() && !switched_off() && world_rank_zero() && handed_calls > 0)
        fprintf(stderr, "liquidsched: rank 0 handed %ld calls to the library after %.3f us of its own on average\n",
                handed_calls, 1e6 * handing_s / (double)handed_calls);
    /* MPI deletes the attributes of MPI_COMM_SELF at finalization, not those of MPI_COMM_WORLD. */
    if (keyval != MPI_KEYVAL_INVALID) {
        PMPI_Comm_delete_attr(MPI_COMM_WORLD, keyval);
        PMPI_Comm_free_keyval(&keyval);
    }
    if (agree_op != MPI_OP_NULL)
        PMPI_Op_free(&agree_op);
    ls_selection_free(selection);
    selection = NULL;
    ls_fabric_free(fabric);
    fabric = NULL;
    return PMPI_Finalize();
}
