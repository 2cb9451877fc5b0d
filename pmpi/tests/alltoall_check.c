/*
 * alltoall_check: an MPI application that knows nothing of liquidsched. It times MPI_Alltoall
 * and MPI_Alltoallv and checks every byte it receives, so that it can be run with and without
 * the interposition library (LD_PRELOAD) and compared.
 *
 *   alltoall_check [--op alltoall|alltoallv|both] [--sizes B1,B2,...] [--repeats R] [--warmup W]
 *                  [--split] [--fortran] [--in-place] [--vector]
 *
 * --sizes      bytes per message of MPI_Alltoall (MPI_Alltoallv: about as many, uneven, some 0)
 * --split      also on the two halves of MPI_COMM_WORLD (even and odd ranks)
 * --fortran    call the Fortran entry points (mpi_alltoall_, mpi_alltoallv_) with Fortran handles
 * --in-place   also MPI_Alltoall with MPI_IN_PLACE
 * --vector     also MPI_Alltoall of a strided (non-contiguous) datatype
 * --vary       also MPI_Alltoallv whose counts alternate between two signatures that differ only
 *              in rank 1's message to rank 2 (ranks 0 and others see the same counts throughout)
 *
 * Rank 0 prints one line per case:
 *   result op=alltoall comm=world ranks=8 bytes=1024 runs=5 mean_s=... min_s=... median_s=...
 *          max_s=... exact=1
 * and the exit status is 1 when any byte was wrong.
 */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Present only where the library (or the interposition library) has Fortran bindings. */
extern void mpi_alltoall_(void *, MPI_Fint *, MPI_Fint *, void *, MPI_Fint *, MPI_Fint *, MPI_Fint *, MPI_Fint *)
    __attribute__((weak));
extern void mpi_alltoallv_(void *, MPI_Fint *, MPI_Fint *, MPI_Fint *, void *, MPI_Fint *, MPI_Fint *, MPI_Fint *,
                           MPI_Fint *, MPI_Fint *) __attribute__((weak));

static int repeats = 5, warmup = 1, fortran = 0;
static int wrong = 0;

static unsigned char byte_of(int src, int dst, long k) {
    return (unsigned char)(src * 7 + dst * 13 + k * 3 + (k >> 8) + 1);
}

static int compare_doubles(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static void report(MPI_Comm world, const char *op, const char *comm_name, int ranks, long bytes, double *times,
                   int exact) {
    int me, all_exact;
    MPI_Comm_rank(world, &me);
    MPI_Allreduce(&exact, &all_exact, 1, MPI_INT, MPI_LAND, world);
    if (!all_exact)
        wrong = 1;
    if (me != 0)
        return;
    double sum = 0;
    for (int i = 0; i < repeats; i++)
        sum += times[i];
    qsort(times, repeats, sizeof *times, compare_doubles);
    double median = repeats % 2 ? times[repeats / 2] : (times[repeats / 2 - 1] + times[repeats / 2]) / 2;
    printf("result op=%s comm=%s ranks=%d bytes=%ld runs=%d mean_s=%.9g min_s=%.9g median_s=%.9g max_s=%.9g "
           "exact=%d\n",
           op, comm_name, ranks, bytes, repeats, sum / repeats, times[0], median, times[repeats - 1], all_exact);
    fflush(stdout);
}

/* The slowest rank's time of one call, from a barrier. */
static double timed(MPI_Comm comm, void (*call)(void *), void *arg) {
    double t, slowest;
    MPI_Barrier(comm);
    t = MPI_Wtime();
    call(arg);
    t = MPI_Wtime() - t;
    MPI_Allreduce(&t, &slowest, 1, MPI_DOUBLE, MPI_MAX, comm);
    return slowest;
}

typedef struct {
    MPI_Comm comm;
    int n, me;
    long bytes;
    unsigned char *send, *recv;
    int in_place;
} alltoall_case;

static void call_alltoall(void *arg) {
    alltoall_case *c = arg;
    int count = (int)c->bytes;
    if (c->in_place) {
        MPI_Alltoall(MPI_IN_PLACE, count, MPI_BYTE, c->recv, count, MPI_BYTE, c->comm);
    } else if (fortran) {
        MPI_Fint fc = count, ft = MPI_Type_c2f(MPI_BYTE), fcomm = MPI_Comm_c2f(c->comm), ierr;
        mpi_alltoall_(c->send, &fc, &ft, c->recv, &fc, &ft, &fcomm, &ierr);
    } else {
        MPI_Alltoall(c->send, count, MPI_BYTE, c->recv, count, MPI_BYTE, c->comm);
    }
}

static void run_alltoall(MPI_Comm world, MPI_Comm comm, const char *name, long bytes, int in_place) {
    alltoall_case c = {comm, 0, 0, bytes, NULL, NULL, in_place};
    MPI_Comm_size(comm, &c.n);
    MPI_Comm_rank(comm, &c.me);
    size_t total = (size_t)bytes * c.n;
    c.send = malloc(total ? total : 1);
    c.recv = malloc(total ? total : 1);
    double *times = malloc(repeats * sizeof *times);
    int exact = 1;
    for (int run = 0; run < warmup + repeats; run++) {
        for (int d = 0; d < c.n; d++)
            for (long k = 0; k < bytes; k++)
                c.send[(size_t)d * bytes + k] = byte_of(c.me, d, k + run);
        if (in_place)
            memcpy(c.recv, c.send, total);
        else
            memset(c.recv, 0, total);
        double t = timed(comm, call_alltoall, &c);
        if (run >= warmup)
            times[run - warmup] = t;
        for (int s = 0; s < c.n; s++)
            for (long k = 0; k < bytes; k++)
                exact &= c.recv[(size_t)s * bytes + k] == byte_of(s, c.me, k + run);
    }
    report(world, in_place ? "alltoall-in-place" : fortran ? "alltoall-fortran" : "alltoall", name, c.n, bytes, times,
           exact);
    free(c.send), free(c.recv), free(times);
}

/* MPI_Alltoallv of ints, uneven: rank i sends ((5i + 3j) mod 4) units to rank j (some none),
 * with a gap of one int between messages so that the displacements matter. */
static int variant = 0; /* --vary: which of the two signatures the next call uses */

static int units_of(int i, int j, int unit) {
    return ((5 * i + 3 * j) % 4) * unit + (variant && i == 1 && j == 2 ? unit : 0);
}

typedef struct {
    MPI_Comm comm;
    int *send, *recv, *sc, *sd, *rc, *rd;
} alltoallv_case;

static void call_alltoallv(void *arg) {
    alltoallv_case *c = arg;
    if (fortran) {
        int n;
        MPI_Comm_size(c->comm, &n);
        MPI_Fint *v = malloc(4 * n * sizeof *v), ft = MPI_Type_c2f(MPI_INT), fcomm = MPI_Comm_c2f(c->comm), ierr;
        for (int i = 0; i < n; i++)
            v[i] = c->sc[i], v[n + i] = c->sd[i], v[2 * n + i] = c->rc[i], v[3 * n + i] = c->rd[i];
        mpi_alltoallv_(c->send, v, v + n, &ft, c->recv, v + 2 * n, v + 3 * n, &ft, &fcomm, &ierr);
        free(v);
    } else {
        MPI_Alltoallv(c->send, c->sc, c->sd, MPI_INT, c->recv, c->rc, c->rd, MPI_INT, c->comm);
    }
}

static int value_of(int src, int dst, int k, int run) { return src * 1000003 + dst * 1009 + k * 7 + run; }

static void run_alltoallv(MPI_Comm world, MPI_Comm comm, const char *name, long bytes) {
    int n, me;
    MPI_Comm_size(comm, &n);
    MPI_Comm_rank(comm, &me);
    int unit = bytes / 8 > 0 ? (int)(bytes / 8) : 1;
    alltoallv_case c = {comm, NULL, NULL, malloc(n * sizeof(int)), malloc(n * sizeof(int)), malloc(n * sizeof(int)),
                        malloc(n * sizeof(int))};
    int st = 0, rt = 0;
    long moved = 0;
    for (int j = 0; j < n; j++) {
        c.sc[j] = units_of(me, j, unit), c.sd[j] = st, st += c.sc[j] + 1;
        c.rc[j] = units_of(j, me, unit), c.rd[j] = rt, rt += c.rc[j] + 1;
        moved += c.sc[j];
    }
    c.send = malloc(st * sizeof(int));
    c.recv = malloc(rt * sizeof(int));
    double *times = malloc(repeats * sizeof *times);
    int exact = 1;
    for (int run = 0; run < warmup + repeats; run++) {
        for (int j = 0; j < n; j++)
            for (int k = 0; k < c.sc[j]; k++)
                c.send[c.sd[j] + k] = value_of(me, j, k, run);
        for (int k = 0; k < rt; k++)
            c.recv[k] = -1;
        double t = timed(comm, call_alltoallv, &c);
        if (run >= warmup)
            times[run - warmup] = t;
        for (int j = 0; j < n; j++) {
            for (int k = 0; k < c.rc[j]; k++)
                exact &= c.recv[c.rd[j] + k] == value_of(j, me, k, run);
            exact &= c.recv[c.rd[j] + c.rc[j]] == -1; /* the gap is left alone */
        }
    }
    long total;
    moved *= sizeof(int);
    MPI_Allreduce(&moved, &total, 1, MPI_LONG, MPI_SUM, comm);
    report(world, variant ? "alltoallv-variant" : fortran ? "alltoallv-fortran" : "alltoallv", name, n, total / ((long)n * n), times, exact);
    free(c.send), free(c.recv), free(c.sc), free(c.sd), free(c.rc), free(c.rd), free(times);
}

/* MPI_Alltoallv calls alternating between two signatures, each call on fresh counts and data:
 * S1, S2, S1, S2, ... so that plans made for one must not serve the other. */
static void run_varying(MPI_Comm world, MPI_Comm comm, const char *name, long bytes) {
    int saved = repeats;
    repeats = 1;
    for (int call = 0; call < 6; call++) {
        variant = call % 2;
        run_alltoallv(world, comm, name, bytes);
    }
    variant = 0;
    repeats = saved;
}

/* MPI_Alltoall of one int out of every two: a strided datatype the library must handle. */
static void run_vector(MPI_Comm world, MPI_Comm comm, const char *name, long bytes) {
    int n, me, count = bytes / 4 > 0 ? (int)(bytes / 4) : 1;
    MPI_Comm_size(comm, &n);
    MPI_Comm_rank(comm, &me);
    MPI_Datatype strided, every_other;
    MPI_Type_vector(count, 1, 2, MPI_INT, &strided);
    MPI_Type_create_resized(strided, 0, 2 * count * sizeof(int), &every_other);
    MPI_Type_commit(&every_other);
    int *send = malloc(2 * count * n * sizeof(int)), *recv = malloc(2 * count * n * sizeof(int));
    double *times = malloc(repeats * sizeof *times);
    int exact = 1;
    for (int run = 0; run < warmup + repeats; run++) {
        for (int j = 0; j < n; j++)
            for (int k = 0; k < 2 * count; k++)
                send[2 * count * j + k] = value_of(me, j, k, run);
        for (int k = 0; k < 2 * count * n; k++)
            recv[k] = -1;
        MPI_Barrier(comm);
        double t = MPI_Wtime(), slowest;
        MPI_Alltoall(send, 1, every_other, recv, 1, every_other, comm);
        t = MPI_Wtime() - t;
        MPI_Allreduce(&t, &slowest, 1, MPI_DOUBLE, MPI_MAX, comm);
        if (run >= warmup)
            times[run - warmup] = slowest;
        for (int j = 0; j < n; j++)
            for (int k = 0; k < 2 * count; k++)
                exact &= recv[2 * count * j + k] == (k % 2 ? -1 : value_of(j, me, k, run));
    }
    report(world, "alltoall-vector", name, n, (long)count * 4, times, exact);
    MPI_Type_free(&every_other);
    MPI_Type_free(&strided);
    free(send), free(recv), free(times);
}

static int vary = 0;

static void run_all(MPI_Comm world, MPI_Comm comm, const char *name, const char *op, long *sizes, int nsizes,
                    int in_place, int vector) {
    for (int s = 0; s < nsizes; s++) {
        if (!strcmp(op, "alltoall") || !strcmp(op, "both"))
            run_alltoall(world, comm, name, sizes[s], 0);
        if (!strcmp(op, "alltoallv") || !strcmp(op, "both"))
            run_alltoallv(world, comm, name, sizes[s]);
        if (in_place)
            run_alltoall(world, comm, name, sizes[s], 1);
        if (vector)
            run_vector(world, comm, name, sizes[s]);
        if (vary)
            run_varying(world, comm, name, sizes[s]);
    }
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    const char *op = "both";
    long sizes[64] = {1024};
    int nsizes = 1, split = 0, in_place = 0, vector = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--op") && i + 1 < argc) {
            op = argv[++i];
        } else if (!strcmp(argv[i], "--sizes") && i + 1 < argc) {
            nsizes = 0;
            for (char *t = strtok(argv[++i], ","); t && nsizes < 64; t = strtok(NULL, ","))
                sizes[nsizes++] = atol(t);
        } else if (!strcmp(argv[i], "--repeats") && i + 1 < argc) {
            repeats = atoi(argv[++i]);
        } else if (!strcmp(argv[i], "--warmup") && i + 1 < argc) {
            warmup = atoi(argv[++i]);
        } else if (!strcmp(argv[i], "--split")) {
            split = 1;
        } else if (!strcmp(argv[i], "--fortran")) {
            fortran = 1;
        } else if (!strcmp(argv[i], "--in-place")) {
            in_place = 1;
        } else if (!strcmp(argv[i], "--vector")) {
            vector = 1;
        } else if (!strcmp(argv[i], "--vary")) {
            vary = 1;
        } else {
            fprintf(stderr, "alltoall_check: unknown argument %s\n", argv[i]);
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
    }
    if (repeats < 1 || warmup < 0 || (fortran && (!mpi_alltoall_ || !mpi_alltoallv_))) {
        fprintf(stderr, "alltoall_check: %s\n",
                fortran ? "no Fortran MPI_Alltoall entry point in this process" : "bad --repeats or --warmup");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    run_all(MPI_COMM_WORLD, MPI_COMM_WORLD, "world", op, sizes, nsizes, in_place, vector);
    if (split) {
        int me;
        MPI_Comm half;
        MPI_Comm_rank(MPI_COMM_WORLD, &me);
        MPI_Comm_split(MPI_COMM_WORLD, me % 2, me, &half);
        run_all(MPI_COMM_WORLD, half, me % 2 ? "odd" : "even", op, sizes, nsizes, 0, 0);
        MPI_Comm_free(&half);
    }
    MPI_Finalize();
    return wrong;
}
