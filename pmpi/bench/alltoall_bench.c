/*
 * alltoall_bench: an OSU-like latency benchmark of MPI_Alltoall and MPI_Alltoallv. Plain MPI C:
 * it knows nothing of liquidsched, so that it can be run with and without the interposition
 * library (LD_PRELOAD) or under `liquidsched launch`, and compared with osu_alltoall.
 *
 *   alltoall_bench [-m [MIN:]MAX|A,B,...] [-i ITERATIONS] [-x WARMUP] [-I ITERATIONS] [-X WARMUP]
 *                  [-c alltoall|alltoallv|both] [-f table|json] [-h]
 *
 * -m  message sizes in bytes, every rank to every rank (itself included), from MIN to MAX by
 *     powers of 2 (default 1:4194304), or a list of sizes in increasing order (at most 64)
 * -i  timed calls per size (default 1000 up to 8 KiB, 100 above, as OSU's collectives)
 * -x  untimed warm-up calls before them (default 200 up to 8 KiB, 10 above)
 * -I, -X  the same above 8 KiB only (after -i and -x, whatever the order)
 * -c  the collectives measured (default both; alltoallv with every count equal to the size)
 * -f  json: one JSON document on stdout instead of the table
 *
 * For each collective and size: the send buffer is filled with a pattern that names its source,
 * destination and offset, the receive buffer poisoned; the warm-up calls; then each timed call
 * from a barrier (MPI_Barrier before every timed call, outside the time), its time summed. As
 * OSU defines them, a rank's latency is its average over the timed calls, and the table gives
 * the average, minimum and maximum of that latency over the ranks, in microseconds. The
 * received bytes are then checked against the pattern once; a mismatch is reported on stderr
 * by the rank that saw it, marked in the output, and the exit status is 1. Bad options: a
 * message from rank 0 and exit status 2. Rank 0 prints; every line is flushed as it is written.
 */
#include <limits.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define LARGE_MESSAGE_BYTES 8192L
#define DEFAULT_MAX_BYTES (4L << 20)
#define MAX_SIZES 64

static long iterations = 1000, iterations_large = 100, warmup = 200, warmup_large = 10;
static long min_bytes = 1, max_bytes = DEFAULT_MAX_BYTES;
static int run_alltoall = 1, run_alltoallv = 1, json = 0;
/* The sizes of a -m list (none: MIN to MAX by powers of 2). */
static long listed[MAX_SIZES];
static int listed_count = 0;

static unsigned char pattern(int src, int dst, long k) {
    return (unsigned char)(src * 7 + dst * 13 + k * 3 + (k >> 8) + 1);
}

static int usage(int me, const char *why) {
    if (me == 0) {
        if (why)
            fprintf(stderr, "alltoall_bench: %s\n", why);
        fprintf(stderr, "usage: alltoall_bench [-m [MIN:]MAX|A,B,...] [-i ITERATIONS] [-x WARMUP] [-I ITERATIONS] "
                        "[-X WARMUP] [-c alltoall|alltoallv|both] [-f table|json]\n");
    }
    return 2;
}

/* A whole number in [low, high], else -1. */
static long number(const char *text, long low, long high) {
    char *end;
    long value = strtol(text, &end, 10);
    if (end == text || *end || value < low || value > high)
        return -1;
    return value;
}

/* A -m list A,B,... into `listed`; -1 when a size is not a whole number of bytes, the list is
 * too long or not increasing. */
static int read_list(const char *text) {
    char copy[1024];
    if (strlen(text) >= sizeof copy)
        return -1;
    strcpy(copy, text);
    listed_count = 0;
    for (char *save = NULL, *item = strtok_r(copy, ",", &save); item; item = strtok_r(NULL, ",", &save)) {
        long value = number(item, 1, INT_MAX);
        if (value < 0 || listed_count == MAX_SIZES || (listed_count && value <= listed[listed_count - 1]))
            return -1;
        listed[listed_count++] = value;
    }
    return listed_count ? 0 : -1;
}

static int parse(int argc, char **argv, int me) {
    int opt;
    long large_calls = -1, large_warmup = -1;
    opterr = 0;
    while ((opt = getopt(argc, argv, "m:i:x:I:X:c:f:h")) != -1) {
        switch (opt) {
        case 'm': {
            const char *colon = strchr(optarg, ':');
            if (strchr(optarg, ',')) {
                if (read_list(optarg) != 0)
                    return usage(me, "-m: a list is of at most 64 sizes, whole bytes from 1 to 2147483647, increasing");
                min_bytes = listed[0], max_bytes = listed[listed_count - 1];
                break;
            }
            listed_count = 0;
            if (colon) {
                char first[32];
                size_t len = (size_t)(colon - optarg);
                if (len == 0 || len >= sizeof first)
                    return usage(me, "-m: expected MIN:MAX or MAX, in bytes");
                memcpy(first, optarg, len);
                first[len] = 0;
                min_bytes = number(first, 1, INT_MAX);
                max_bytes = number(colon + 1, 1, INT_MAX);
            } else {
                max_bytes = number(optarg, 1, INT_MAX);
            }
            if (min_bytes < 1 || max_bytes < 1)
                return usage(me, "-m: sizes are whole numbers of bytes from 1 to 2147483647");
            if (min_bytes > max_bytes)
                return usage(me, "-m: MIN is above MAX");
            break;
        }
        case 'i':
            if ((iterations = iterations_large = number(optarg, 1, INT_MAX)) < 0)
                return usage(me, "-i: expected a whole number of calls >= 1");
            break;
        case 'x':
            if ((warmup = warmup_large = number(optarg, 0, INT_MAX)) < 0)
                return usage(me, "-x: expected a whole number of calls >= 0");
            break;
        case 'I':
            if ((large_calls = number(optarg, 1, INT_MAX)) < 0)
                return usage(me, "-I: expected a whole number of calls >= 1");
            break;
        case 'X':
            if ((large_warmup = number(optarg, 0, INT_MAX)) < 0)
                return usage(me, "-X: expected a whole number of calls >= 0");
            break;
        case 'c':
            if (!strcmp(optarg, "alltoall"))
                run_alltoall = 1, run_alltoallv = 0;
            else if (!strcmp(optarg, "alltoallv"))
                run_alltoall = 0, run_alltoallv = 1;
            else if (!strcmp(optarg, "both"))
                run_alltoall = run_alltoallv = 1;
            else
                return usage(me, "-c: expected alltoall, alltoallv or both");
            break;
        case 'f':
            if (!strcmp(optarg, "json"))
                json = 1;
            else if (!strcmp(optarg, "table"))
                json = 0;
            else
                return usage(me, "-f: expected table or json");
            break;
        case 'h':
            usage(me, NULL);
            return 1;
        default:
            return usage(me, "unknown option or missing value");
        }
    }
    if (optind < argc)
        return usage(me, "unexpected argument");
    if (large_calls > 0)
        iterations_large = large_calls;
    if (large_warmup >= 0)
        warmup_large = large_warmup;
    return 0;
}

typedef struct {
    const char *name;     /* "alltoall" or "alltoallv" */
    long bytes;           /* per message */
    long iterations;
    double avg_us, min_us, max_us;
    int exact;            /* every rank received the pattern */
} result;

/* One collective at one size: warm-up, timed calls from a barrier each, one check. */
static result measure(int alltoallv, long bytes, int n, int me, unsigned char *send, unsigned char *recv,
                      int *counts, int *displs) {
    result r = {alltoallv ? "alltoallv" : "alltoall", bytes, 0, 0, 0, 0, 1};
    long calls = bytes > LARGE_MESSAGE_BYTES ? iterations_large : iterations;
    long skip = bytes > LARGE_MESSAGE_BYTES ? warmup_large : warmup;
    size_t total = (size_t)bytes * (size_t)n;
    for (int d = 0; d < n; d++) {
        counts[d] = (int)bytes;
        displs[d] = (int)(bytes * d);
        for (long k = 0; k < bytes; k++)
            send[(size_t)d * bytes + k] = pattern(me, d, k);
    }
    memset(recv, 0xA5, total);
    double timer = 0;
    for (long i = 0; i < skip + calls; i++) {
        MPI_Barrier(MPI_COMM_WORLD);
        double start = MPI_Wtime();
        if (alltoallv)
            MPI_Alltoallv(send, counts, displs, MPI_BYTE, recv, counts, displs, MPI_BYTE, MPI_COMM_WORLD);
        else
            MPI_Alltoall(send, (int)bytes, MPI_BYTE, recv, (int)bytes, MPI_BYTE, MPI_COMM_WORLD);
        double stop = MPI_Wtime();
        if (i >= skip)
            timer += stop - start;
    }
    int exact = 1;
    for (int s = 0; s < n && exact; s++)
        for (long k = 0; k < bytes; k++)
            if (recv[(size_t)s * bytes + k] != pattern(s, me, k)) {
                fprintf(stderr, "alltoall_bench: rank %d, MPI_%s of %ld bytes: byte %ld from rank %d is %u, "
                                "expected %u\n",
                        me, alltoallv ? "Alltoallv" : "Alltoall", bytes, k, s, recv[(size_t)s * bytes + k],
                        pattern(s, me, k));
                exact = 0;
                break;
            }
    double latency = timer * 1e6 / (double)calls, sum = 0;
    MPI_Reduce(&latency, &r.min_us, 1, MPI_DOUBLE, MPI_MIN, 0, MPI_COMM_WORLD);
    MPI_Reduce(&latency, &r.max_us, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    MPI_Reduce(&latency, &sum, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
    MPI_Allreduce(&exact, &r.exact, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
    r.avg_us = sum / n;
    r.iterations = calls;
    return r;
}

static void print_header(const char *name, int n) {
    printf("# alltoall_bench: MPI_%s latency, %d ranks\n", name, n);
    printf("# %-10s %16s %16s %16s %11s\n", "Size", "Avg Latency(us)", "Min Latency(us)", "Max Latency(us)",
           "Iterations");
    fflush(stdout);
}

static void print_row(const result *r) {
    printf("%-12ld %16.2f %16.2f %16.2f %11ld%s\n", r->bytes, r->avg_us, r->min_us, r->max_us, r->iterations,
           r->exact ? "" : "  MISMATCH");
    fflush(stdout);
}

int main(int argc, char **argv) {
    int n, me;
    MPI_Init(&argc, &argv);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    int status = parse(argc, argv, me);
    if (status) {
        MPI_Finalize();
        return status == 1 ? 0 : status;
    }
    size_t total = (size_t)max_bytes * (size_t)n;
    unsigned char *send = malloc(total), *recv = malloc(total);
    int *counts = malloc(n * sizeof *counts), *displs = malloc(n * sizeof *displs);
    int ok = send && recv && counts && displs, all_ok;
    MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
    if (!all_ok) {
        if (me == 0)
            fprintf(stderr, "alltoall_bench: cannot allocate 2 x %zu bytes per rank (-m MAX smaller?)\n", total);
        MPI_Finalize();
        return 1;
    }
    if ((long)total / n != max_bytes || max_bytes * (long)(n - 1) > INT_MAX) {
        if (me == 0)
            fprintf(stderr, "alltoall_bench: %ld bytes x %d ranks: displacements beyond an int\n", max_bytes, n);
        MPI_Finalize();
        return 2;
    }
    if (!listed_count)
        for (long b = min_bytes; b <= max_bytes && listed_count < MAX_SIZES; b *= 2)
            listed[listed_count++] = b;
    int sizes = listed_count;
    result *rows = malloc((size_t)(2 * sizes) * sizeof *rows);
    int count = 0, all_exact = 1;
    for (int v = 0; v < 2; v++) {
        if (!(v ? run_alltoallv : run_alltoall))
            continue;
        if (me == 0 && !json)
            print_header(v ? "Alltoallv" : "Alltoall", n);
        for (int k = 0; k < sizes; k++) {
            result r = measure(v, listed[k], n, me, send, recv, counts, displs);
            all_exact &= r.exact;
            rows[count++] = r;
            if (me == 0 && !json)
                print_row(&r);
        }
    }
    if (me == 0 && json) {
        char library[MPI_MAX_LIBRARY_VERSION_STRING];
        int len;
        MPI_Get_library_version(library, &len);
        char *newline = strchr(library, '\n');
        if (newline)
            *newline = 0;
        printf("{\"benchmark\": \"alltoall_bench\", \"ranks\": %d, \"mpi_library\": \"", n);
        for (const char *c = library; *c; c++) {
            if (*c == '"' || *c == '\\')
                printf("\\%c", *c);
            else if ((unsigned char)*c >= 0x20)
                putchar(*c);
        }
        printf("\", \"iterations\": %ld, \"iterations_large\": %ld, \"warmup\": %ld, \"warmup_large\": %ld, "
               "\"large_message_bytes\": %ld, \"verified\": %s, \"results\": [",
               iterations, iterations_large, warmup, warmup_large, LARGE_MESSAGE_BYTES, all_exact ? "true" : "false");
        for (int i = 0; i < count; i++)
            printf("%s\n  {\"collective\": \"%s\", \"size_bytes\": %ld, \"avg_latency_us\": %.3f, "
                   "\"min_latency_us\": %.3f, \"max_latency_us\": %.3f, \"iterations\": %ld, \"verified\": %s}",
                   i ? "," : "", rows[i].name, rows[i].bytes, rows[i].avg_us, rows[i].min_us, rows[i].max_us,
                   rows[i].iterations, rows[i].exact ? "true" : "false");
        printf("\n]}\n");
        fflush(stdout);
    }
    free(rows), free(send), free(recv), free(counts), free(displs);
    MPI_Finalize();
    return all_exact ? 0 : 1;
}
