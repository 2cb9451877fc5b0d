/*
 * liquidsched.h: the C interface of the liquidsched core (crate liquidsched-capi).
 *
 * Plan an exchange between the ranks of a communicator on a fabric file written by
 * `liquidsched pmpi-config`: equal messages by the exact liquid search within a time budget,
 * uneven ones by the weighted scheduler's steps. Every function reports errors as a return
 * value with a message in the caller's buffer; none aborts.
 */
#ifndef LIQUIDSCHED_H
#define LIQUIDSCHED_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct ls_fabric ls_fabric;

/* A planned exchange. Pieces of frame k are [frame_start[k], frame_start[k + 1]); piece p sends
 * bytes[p] bytes from rank src[p] to rank dst[p] of the communicator, the pieces of one message
 * following each other in frame order. Local messages join ranks of one host: they do not cross
 * the network and are not scheduled. */
typedef struct {
    uint32_t frames;
    const uint32_t *frame_start; /* frames + 1 entries */
    const uint32_t *src;
    const uint32_t *dst;
    const uint64_t *bytes;
    uint32_t locals;
    const uint32_t *local_src;
    const uint32_t *local_dst;
    const uint64_t *local_bytes;
    int32_t planner;             /* 0: liquid search, 1: weighted steps */
    uint32_t lower_bound_frames; /* liquid search: no schedule has fewer frames */
    int32_t proven;              /* liquid search: the length is proven optimal */
    double bound_s;              /* the busiest resource's time (Λ) */
    double model_s;              /* the schedule's time, frame by frame */
    void *owner;                 /* freed by ls_plan_free */
} ls_plan;

/* The fabric file at path, or NULL with a message (file and line) in error. */
ls_fabric *ls_fabric_load(const char *path, char *error, size_t error_len);
void ls_fabric_free(ls_fabric *fabric);
/* How many ranks of MPI_COMM_WORLD the fabric maps to hosts. */
int32_t ls_fabric_ranks(const ls_fabric *fabric);

/* Plan bytes[i * n + j] bytes from rank i to rank j, rank i being world rank world_rank[i].
 * 0 on success (free with ls_plan_free), -1 with a message in error. */
int ls_plan_ranks(const ls_fabric *fabric, uint32_t n, const int32_t *world_rank, const uint64_t *bytes,
                  double time_limit_s, ls_plan *out, char *error, size_t error_len);
void ls_plan_free(ls_plan *plan);

/* Paced plans of a communicator's exchanges: the routes between its n ranks (rank i is world
 * rank world_rank[i]) taken from the fabric once; each plan gives Λ of a matrix of bytes
 * (bytes[i * n + j] from rank i to rank j), walking only the messages that changed since the
 * planner's last plan (warm: 1). NULL or -1 with a message in error. */
typedef struct ls_paced_planner ls_paced_planner;
ls_paced_planner *ls_paced_planner_new(const ls_fabric *fabric, uint32_t n, const int32_t *world_rank, char *error,
                                       size_t error_len);
int ls_paced_plan(ls_paced_planner *planner, const uint64_t *bytes, double *bound_s, int *warm, char *error,
                  size_t error_len);
void ls_paced_planner_free(ls_paced_planner *planner);

/* Sizes and durations with their units, as the Python package reads them ("4KiB" is 4096 bytes,
 * "4KB" 4000, "500ms" half a second). 0 on success, -1 with a message in error. */
int ls_parse_bytes(const char *text, uint64_t *out, char *error, size_t error_len);
int ls_parse_seconds(const char *text, double *out, char *error, size_t error_len);
/* A share of the links, a plain number from 0 to most ("0.02"). */
int ls_parse_share(const char *text, double most, double *out, char *error, size_t error_len);

/* How the interposition library runs an exchange. */
enum { LS_MODE_LIBRARY = 0, LS_MODE_FRAMES = 1, LS_MODE_PACED = 2 };
/* The collective being called. */
enum { LS_ALLTOALL = 0, LS_ALLTOALLV = 1 };

typedef struct ls_selection ls_selection;
/* The selection table (liquidsched tune's JSON) at path, checked against the fabric's network
 * and the MPI library's version text; NULL with a message when unreadable or measured elsewhere. */
ls_selection *ls_selection_load(const char *path, const ls_fabric *fabric, const char *mpi_library, char *error,
                                size_t error_len);
void ls_selection_free(ls_selection *selection);
/* The number of ranks the table was measured with: it applies to communicators of that size. */
uint32_t ls_selection_ranks(const ls_selection *selection);
/* The mode measured fastest for the collective at the measured size nearest mean_bytes (log
 * scale), which is written to measured_bytes (if not NULL). */
int ls_selection_choose(const ls_selection *selection, int collective, double mean_bytes, uint64_t *measured_bytes);
/* 1 when some measured size runs a schedule for the collective. */
int ls_selection_ever_schedules(const ls_selection *selection, int collective);

/* Without a table: 1 when a schedule could beat the library's MPI_Alltoall of block bytes per
 * message in the cost model (0: the library's algorithm already takes the bound). */
int ls_alltoall_can_lose(uint64_t block);
/* Without a table: the cost model's mode for an MPI_Alltoall of block bytes per message planned
 * as frames frames of model time model_s, and the modelled times of both; -1 with a message. */
int ls_default_alltoall_mode(const ls_fabric *fabric, uint32_t n, const int32_t *world_rank, uint64_t block,
                             double model_s, uint32_t frames, double *library_s, double *schedule_s, char *error,
                             size_t error_len);

#ifdef __cplusplus
}
#endif

#endif
