/*
 * internal.h: what the parts of the interposition library share: a rank's part of a planned
 * exchange, and the ways of running it (runs.c).
 */
#ifndef LIQUIDSCHED_PMPI_INTERNAL_H
#define LIQUIDSCHED_PMPI_INTERNAL_H

#include <mpi.h>
#include <stdint.h>

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

typedef struct {
    int peer;
    MPI_Aint offset; /* bytes into the message to or from peer */
    count_t bytes;
} piece_t;

/* What a signature's entry says to do: a mode of liquidsched.h (LS_MODE_*), or nothing to run
 * because its planning failed (the reason was said once). */
enum { ENTRY_FAILED = -1 };

typedef struct {
    int n;
    uint64_t *send_row; /* this rank's bytes to each rank: the part of the signature it checks */
    uint64_t *recv_row;
    int mode;           /* LS_MODE_* or ENTRY_FAILED */
    double paced_s;     /* the paced mode's duration: Λ × (1 + rank 0's LIQUIDSCHED_PACE_HEADROOM) */
    int frames;
    int *send_start, *recv_start; /* frames + 1 */
    piece_t *sends, *recvs;
} plan_entry;

/* Run the plan frame by frame: every receive posted first, a frame's sends together, a barrier
 * between frames; the message to itself copied. */
void run_frames(const plan_entry *e, MPI_Comm comm, int me, const char *sendbuf, const MPI_Aint *soff,
                char *recvbuf, const MPI_Aint *roff);

/* Paced all at once: every message sent from the start in chunks handed to MPI at its share of
 * the paced duration (bytes / paced_s), the rank testing and sleeping in between; no barrier. */
void run_paced(const plan_entry *e, MPI_Comm comm, int me, const char *sendbuf, const MPI_Aint *soff,
               char *recvbuf, const MPI_Aint *roff);

/* The chunks of a paced message of `bytes` bytes over `duration_s` seconds (the rule of the Python
 * package's liquidsched.execute.paced, so that both send alike). */
long paced_chunk_count(uint64_t bytes, double duration_s);

#endif
