/*
 * fortran.c: the Fortran bindings of the interposition library's collectives, so that Fortran
 * applications are served whether their MPI library's Fortran layer calls MPI_ or PMPI_ entry
 * points. Handles are converted; Fortran's MPI_IN_PLACE is a common block of the library's,
 * found by name.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <mpi.h>
#include <stdlib.h>

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
