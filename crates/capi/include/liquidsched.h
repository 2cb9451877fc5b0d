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

#ifdef __cplusplus
}
#endif

#endif
