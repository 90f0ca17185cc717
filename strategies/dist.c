/* dist.c — one process per GPU: launcher detection, MPI_Init, node-local rank from MPI's shared-memory split,
 * the GPU of each process, the NCCL unique id broadcast and the few collectives the harness needs (agreement on
 * errors, gathering per-rank statistics to rank 0). Without MPI (no HAVE_MPI) only the refusal is compiled:
 * dist_init never returns 1, so every other function sees a NULL dist_t and does nothing.
 *
 *   mpirun -np 4 ./scaling --strategy nccl --model lenet --dataset mnist        (see README: one process per GPU) */
#include "dist.h"
#include "dist_env.h"
#include "../engine/check.h"
#include <cuda_runtime.h>
#include <nccl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#ifdef HAVE_MPI
#include <mpi.h>
#endif

#define DIST_MSG 1024           /* agreed messages travel in a fixed buffer */
_Static_assert(sizeof(((dist_t *)0)->node) == DIST_NODE_ID_MAX, "dist_t.node holds a node identity");
#define DIST_BUS 32             /* PCI bus id "0000:00:00.0" with room */

static const char *process_getenv_(void *ctx, const char *name) {
    (void)ctx;
    return getenv(name);
}

/* What both builds do first: a one-process dist_t, then the launcher's environment. Returns -1 (err set) for a
 * confused environment, 0 for one process (nothing more to do), 1 when a launcher started several. */
static int dist_start_(dist_t *d, dist_env_t *env, char *err, size_t errlen) {
    memset(d, 0, sizeof *d);
    d->size = d->local_size = d->n_nodes = d->gpus_per_node = d->is_root = 1;
    d->device = -1;
    if (gethostname(d->host, sizeof d->host - 1) != 0) snprintf(d->host, sizeof d->host, "?");
    snprintf(d->node, sizeof d->node, "%s", d->host);
    if (dist_env_detect(process_getenv_, NULL, env, err, errlen) != 0) return -1;
    return dist_env_multi(env) ? 1 : 0;
}

#ifdef HAVE_MPI

typedef struct {
    MPI_Comm host;              /* the processes of this host (MPI_COMM_TYPE_SHARED): they share its GPUs */
    MPI_Comm vote;              /* the stop votes' own (dist_vote_step): they are outstanding while a step runs its
                                 * own MPI collectives, which then never have to be ordered against them */
} dist_impl_t;

static MPI_Comm host_comm_(const dist_t *d) { return ((dist_impl_t *)d->impl)->host; }

/* The hint for a world that MPI and the launcher see differently. */
static const char *mismatch_hint_(const char *launcher) {
    if (strcmp(launcher, "srun") == 0)
        return "run srun --mpi=pmix (srun --mpi=list shows what this Slurm offers)";
    return "is this scaling built against the MPI that this launcher belongs to?";
}

/* The ranks of each node: MPI's shared-memory split (the host), or with SCALING_NODE_ID on every rank the ranks that
 * share its value; a node is labelled by its lowest rank. Fills local_rank, local_size (within the node), n_nodes
 * and gpus_per_node. 0, or -1 with a message; collective (each step agrees before the next). */
static int nodes_init_(dist_t *d, const dist_env_t *env, char *err, size_t errlen) {
    dist_impl_t *impl = d->impl;
    CHECK_MPI(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, d->rank, MPI_INFO_NULL, &impl->host));
    CHECK_MPI(MPI_Comm_set_errhandler(impl->host, MPI_ERRORS_RETURN));
    int over = dist_node_id(process_getenv_, NULL, d->host, d->node, sizeof d->node, err, errlen);
    if (dist_agree(d, over < 0 ? -1 : 0, err, errlen) != 0) return -1;
    int n_over = 0;
    CHECK_MPI(MPI_Allreduce(&over, &n_over, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    if (n_over != 0 && n_over != d->size) {
        snprintf(err, errlen, "SCALING_NODE_ID is set on %d of the %d ranks: set it on every rank or on none", n_over,
                 d->size);
        return -1;
    }
    int label = d->rank;
    int *labels = malloc((size_t)d->size * sizeof *labels);
    char *ids = n_over ? malloc((size_t)d->size * DIST_NODE_ID_MAX) : NULL;
    if (!labels || (n_over && !ids)) { fprintf(stderr, "dist_init: out of host memory\n"); exit(1); }
    if (n_over) {
        CHECK_MPI(MPI_Allgather(d->node, DIST_NODE_ID_MAX, MPI_CHAR, ids, DIST_NODE_ID_MAX, MPI_CHAR, MPI_COMM_WORLD));
        for (int r = d->rank - 1; r >= 0; r--)
            if (strncmp(ids + (size_t)r * DIST_NODE_ID_MAX, d->node, DIST_NODE_ID_MAX) == 0) label = r;
    } else {
        CHECK_MPI(MPI_Allreduce(&d->rank, &label, 1, MPI_INT, MPI_MIN, impl->host));
    }
    MPI_Comm node;
    CHECK_MPI(MPI_Comm_split(MPI_COMM_WORLD, label, d->rank, &node));
    CHECK_MPI(MPI_Comm_set_errhandler(node, MPI_ERRORS_RETURN));
    CHECK_MPI(MPI_Comm_rank(node, &d->local_rank));
    CHECK_MPI(MPI_Comm_size(node, &d->local_size));
    CHECK_MPI(MPI_Comm_free(&node));
    CHECK_MPI(MPI_Allgather(&label, 1, MPI_INT, labels, 1, MPI_INT, MPI_COMM_WORLD));
    int rc = dist_nodes_check(labels, d->size, &d->n_nodes, &d->gpus_per_node, err, errlen);
    free(labels);
    free(ids);
    /* Under the override the launcher's local rank counts the host's ranks, not the node's: nothing to compare. */
    if (rc == 0 && !n_over) rc = dist_local_rank_check(env, d->local_rank, d->host, err, errlen);
    return rc;
}

/* A rank that exits on an error (check_fail, a failed CSV write) must not leave the other ranks blocked in a
 * collective: at exit, an MPI that was initialised but not finalised is aborted, which ends the whole job.
 * Unchecked on purpose: this runs inside exit(). */
static void abort_unfinished_mpi_(void) {
    int init = 0, fin = 0;
    MPI_Initialized(&init);
    MPI_Finalized(&fin);
    if (init && !fin) MPI_Abort(MPI_COMM_WORLD, 1);
}

int dist_init(dist_t *d, char *err, size_t errlen) {
    dist_env_t env;
    int multi = dist_start_(d, &env, err, errlen);
    if (multi <= 0) return multi;
    d->launcher = env.launcher;

    CHECK_MPI(MPI_Init(NULL, NULL));
    atexit(abort_unfinished_mpi_);
    /* Errors come back as codes, so CHECK_MPI reports them with file:line instead of MPI's own abort. */
    CHECK_MPI(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    CHECK_MPI(MPI_Comm_rank(MPI_COMM_WORLD, &d->rank));
    CHECK_MPI(MPI_Comm_size(MPI_COMM_WORLD, &d->size));
    d->is_root = d->rank == 0;
    if (env.size < 0 && d->size == 1) {
        /* A PMIx launcher that did not say how many it started, and started one: the single-process mode. */
        CHECK_MPI(MPI_Finalize());
        d->launcher = NULL;
        return 0;
    }
    if (env.size > 0 && env.size != d->size) {
        /* Typically srun without PMIx: every process is an MPI singleton of its own (rank 0 of 1). The
         * launcher's rank decides who prints, so the message comes once. */
        snprintf(err, errlen, "%s started %d processes but MPI sees %d: %s", env.launcher, env.size, d->size,
                 mismatch_hint_(env.launcher));
        d->is_root = env.rank == 0;
        CHECK_MPI(MPI_Finalize());
        return -1;
    }
    dist_impl_t *impl = calloc(1, sizeof *impl);
    if (!impl) { fprintf(stderr, "dist_init: out of host memory\n"); exit(1); }
    impl->host = impl->vote = MPI_COMM_NULL;
    d->impl = impl;
    int rc = nodes_init_(d, &env, err, errlen);
    rc = dist_agree(d, rc, err, errlen);
    if (rc != 0) {
        dist_finalize(d);
        d->is_root = d->rank == 0;
        return -1;
    }
    /* Collective: only once every rank is known to be here. */
    CHECK_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &impl->vote));
    CHECK_MPI(MPI_Comm_set_errhandler(impl->vote, MPI_ERRORS_RETURN));
    return 1;
}

int dist_select_device(dist_t *d, char *err, size_t errlen) {
    int n = 0, rc;
    cudaError_t e = cudaGetDeviceCount(&n);
    if (e != cudaSuccess) {
        snprintf(err, errlen, "no CUDA device on %s (%s)", d->host, cudaGetErrorString(e));
        n = 0;
        rc = -1;
    } else {
        rc = dist_pick_device(d->local_rank, d->local_size, n, d->host, &d->device, err, errlen);
    }
    char bus[DIST_BUS] = "";
    if (rc == 0) {
        /* Set before anything touches CUDA, so no process creates a context on another process's GPU. */
        CHECK_CUDA(cudaSetDevice(d->device));
        CHECK_CUDA(cudaDeviceGetPCIBusId(bus, sizeof bus, d->device));
    }
    /* One device visible per process but the same one twice (or a node with one GPU): compare the physical GPUs
     * of every process on this host, emulated nodes included. */
    int host_rank, host_size;
    CHECK_MPI(MPI_Comm_rank(host_comm_(d), &host_rank));
    CHECK_MPI(MPI_Comm_size(host_comm_(d), &host_size));
    char *all = calloc((size_t)host_size, DIST_BUS);
    if (!all) { fprintf(stderr, "dist_select_device: out of host memory\n"); exit(1); }
    CHECK_MPI(MPI_Allgather(bus, DIST_BUS, MPI_CHAR, all, DIST_BUS, MPI_CHAR, host_comm_(d)));
    for (int j = 0; rc == 0 && j < host_rank; j++)
        if (strncmp(all + (size_t)j * DIST_BUS, bus, DIST_BUS) == 0) {
            snprintf(err, errlen, "local ranks %d and %d on %s would both drive the GPU at PCI %s: give each process "
                     "its own GPU (one process per GPU)", j, host_rank, d->host, bus);
            rc = -1;
        }
    free(all);
    if (rc != 0) d->device = -1;
    return dist_agree(d, rc, err, errlen);
}

int dist_agree(const dist_t *d, int rc, char *err, size_t errlen) {
    if (!d) return rc;
    int mine = rc ? d->rank : d->size, first;
    CHECK_MPI(MPI_Allreduce(&mine, &first, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD));
    if (first == d->size) return 0;
    char msg[DIST_MSG] = "";
    if (d->rank == first) {
        /* Messages that already name their rank (the local-rank check) keep their own prefix. */
        if (first && strncmp(err, "rank ", 5) != 0) snprintf(msg, sizeof msg, "rank %d on %s: %s", first, d->host, err);
        else snprintf(msg, sizeof msg, "%s", err);
    }
    CHECK_MPI(MPI_Bcast(msg, DIST_MSG, MPI_CHAR, first, MPI_COMM_WORLD));
    CHECK_MPI(MPI_Bcast(&rc, 1, MPI_INT, first, MPI_COMM_WORLD));
    if (err && errlen) snprintf(err, errlen, "%s", msg);
    return rc;
}

void dist_bcast(const dist_t *d, void *buf, size_t bytes) {
    if (!d) return;
    CHECK_MPI(MPI_Bcast(buf, (int)bytes, MPI_BYTE, 0, MPI_COMM_WORLD));
}

void dist_gather(const dist_t *d, const void *mine, size_t bytes, void *out) {
    if (!d) { memcpy(out, mine, bytes); return; }
    CHECK_MPI(MPI_Gather(mine, (int)bytes, MPI_BYTE, out, (int)bytes, MPI_BYTE, 0, MPI_COMM_WORLD));
}

void dist_allgather_u64(const dist_t *d, unsigned long long mine, unsigned long long *out) {
    if (!d) { out[0] = mine; return; }
    CHECK_MPI(MPI_Allgather(&mine, 1, MPI_UNSIGNED_LONG_LONG, out, 1, MPI_UNSIGNED_LONG_LONG, MPI_COMM_WORLD));
}

double dist_max(const dist_t *d, double x) {
    if (!d) return x;
    double m;
    CHECK_MPI(MPI_Allreduce(&x, &m, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD));
    return m;
}

void dist_nccl_id(const dist_t *d, void *id, size_t bytes) {
    if (d->is_root) CHECK_NCCL(ncclGetUniqueId((ncclUniqueId *)id));
    CHECK_MPI(MPI_Bcast(id, (int)bytes, MPI_BYTE, 0, MPI_COMM_WORLD));
}

typedef struct {
    char host[64], node[DIST_NODE_ID_MAX], bus[DIST_BUS];
    int pid, local_rank, local_size, device;
} rank_line_t;

void dist_report(const dist_t *d, FILE *f) {
    if (!d) return;
    rank_line_t me = {.pid = (int)getpid(), .local_rank = d->local_rank, .local_size = d->local_size,
                      .device = d->device};
    snprintf(me.host, sizeof me.host, "%s", d->host);
    snprintf(me.node, sizeof me.node, "%s", d->node);
    if (d->device < 0 || cudaDeviceGetPCIBusId(me.bus, sizeof me.bus, d->device) != cudaSuccess)
        snprintf(me.bus, sizeof me.bus, "?");
    rank_line_t *all = d->is_root ? calloc((size_t)d->size, sizeof *all) : NULL;
    if (d->is_root && !all) { fprintf(stderr, "dist_report: out of host memory\n"); exit(1); }
    CHECK_MPI(MPI_Gather(&me, sizeof me, MPI_BYTE, all, sizeof me, MPI_BYTE, 0, MPI_COMM_WORLD));
    if (!d->is_root) return;
    fprintf(f, "# one process per GPU: %d ranks on %d node(s), %d per node, started by %s\n", d->size, d->n_nodes,
            d->gpus_per_node, d->launcher);
    for (int r = 0; r < d->size; r++) {
        /* SCALING_NODE_ID: the node a rank counts as, where it is not its host */
        char node[DIST_NODE_ID_MAX + 8] = "";
        if (strcmp(all[r].node, all[r].host) != 0) snprintf(node, sizeof node, " node %s", all[r].node);
        fprintf(f, "#   rank %-3d host %-20s%s pid %-8d local %d/%d  device %d  PCI %s\n", r, all[r].host, node,
                all[r].pid, all[r].local_rank, all[r].local_size, all[r].device, all[r].bus);
    }
    free(all);
}

_Static_assert(sizeof(MPI_Request) <= sizeof(((dist_vote_t *)0)->req[0]), "dist_vote_t.req holds an MPI_Request");

/* A vote's request lives in dist_vote_t as bytes (dist.h has no mpi.h): copied out and back, never aliased. */
static MPI_Request vote_req_(const dist_vote_t *v, int slot) {
    MPI_Request q;
    memcpy(&q, &v->req[slot], sizeof q);
    return q;
}
static void vote_set_req_(dist_vote_t *v, int slot, MPI_Request q) { memcpy(&v->req[slot], &q, sizeof q); }

/* The vote of step v->read, complete (at once where it already was); its agreed value. */
static int vote_wait_(dist_vote_t *v) {
    int slot = v->read % DIST_VOTE_LAG;
    MPI_Request q = vote_req_(v, slot);
    CHECK_MPI(MPI_Wait(&q, MPI_STATUS_IGNORE));
    vote_set_req_(v, slot, q);
    v->read++;
    return v->agreed[slot];
}

int dist_vote_step(dist_vote_t *v, int step, int mine) {
    if (!v->dist) return mine;
    if (step != v->posted) {    /* a skipped or repeated step would pair different votes on different ranks */
        fprintf(stderr, "scaling: internal error: dist_vote_step(%d) after %d votes\n", step, v->posted);
        dist_abort(v->dist, 1);
    }
    if (step >= DIST_VOTE_LAG) {
        int agreed = vote_wait_(v);
        if (agreed) return agreed;
    }
    int slot = step % DIST_VOTE_LAG;
    MPI_Request q;
    v->mine[slot] = mine;
    CHECK_MPI(MPI_Iallreduce(&v->mine[slot], &v->agreed[slot], 1, MPI_INT, MPI_MAX,
                             ((dist_impl_t *)v->dist->impl)->vote, &q));
    vote_set_req_(v, slot, q);
    v->posted++;
    /* One progress call per step (on the oldest vote, which completes first): an MPI without a progress thread
     * moves a reduction's rounds on only inside MPI calls, and the step itself (NCCL) makes none. */
    int oldest = v->read % DIST_VOTE_LAG, done = 0;
    q = vote_req_(v, oldest);
    CHECK_MPI(MPI_Test(&q, &done, MPI_STATUS_IGNORE));
    vote_set_req_(v, oldest, q);
    return 0;
}

void dist_vote_drain(dist_vote_t *v) {
    while (v->dist && v->read < v->posted) vote_wait_(v);
    dist_vote_begin(v, v->dist);
}

void dist_abort(const dist_t *d, int code) {
    if (d && d->impl) MPI_Abort(MPI_COMM_WORLD, code);   /* unchecked: it does not return where it works */
    _exit(code);
}

void dist_finalize(dist_t *d) {
    if (!d || !d->impl) return;
    dist_impl_t *impl = d->impl;
    if (impl->host != MPI_COMM_NULL) CHECK_MPI(MPI_Comm_free(&impl->host));
    if (impl->vote != MPI_COMM_NULL) CHECK_MPI(MPI_Comm_free(&impl->vote));
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
    CHECK_MPI(MPI_Finalize());
    free(impl);
    d->impl = NULL;
}

#else   /* no MPI in this build */

int dist_init(dist_t *d, char *err, size_t errlen) {
    dist_env_t env;
    int multi = dist_start_(d, &env, err, errlen);
    if (multi <= 0) return multi;
    d->is_root = env.rank == 0;
    if (env.size > 0)
        snprintf(err, errlen, "this build has no MPI (install libopenmpi-dev and rebuild) but it was started by %s "
                 "with %d processes", env.launcher, env.size);
    else
        snprintf(err, errlen, "this build has no MPI (install libopenmpi-dev and rebuild) but it was started by %s "
                 "(rank %d)", env.launcher, env.rank);
    return -1;
}

/* dist_init never returns 1 here, so callers hold no dist_t: reaching these with one is a bug. */
static void no_mpi_(const char *fn) {
    fprintf(stderr, "scaling: internal error: %s called with a dist_t in a build without MPI\n", fn);
    exit(1);
}

int dist_select_device(dist_t *d, char *err, size_t errlen) {
    (void)d; (void)err; (void)errlen;
    no_mpi_(__func__);
    return -1;
}
int dist_agree(const dist_t *d, int rc, char *err, size_t errlen) {
    (void)err; (void)errlen;
    if (d) no_mpi_(__func__);
    return rc;
}
void dist_bcast(const dist_t *d, void *buf, size_t bytes) { (void)buf; (void)bytes; if (d) no_mpi_(__func__); }
void dist_gather(const dist_t *d, const void *mine, size_t bytes, void *out) {
    if (d) no_mpi_(__func__);
    memcpy(out, mine, bytes);
}
void dist_allgather_u64(const dist_t *d, unsigned long long mine, unsigned long long *out) {
    if (d) no_mpi_(__func__);
    out[0] = mine;
}
double dist_max(const dist_t *d, double x) { if (d) no_mpi_(__func__); return x; }
void dist_nccl_id(const dist_t *d, void *id, size_t bytes) { (void)d; (void)id; (void)bytes; no_mpi_(__func__); }
void dist_report(const dist_t *d, FILE *f) { (void)f; if (d) no_mpi_(__func__); }
void dist_finalize(dist_t *d) { (void)d; }
int dist_vote_step(dist_vote_t *v, int step, int mine) { (void)step; if (v->dist) no_mpi_(__func__); return mine; }
void dist_vote_drain(dist_vote_t *v) { if (v->dist) no_mpi_(__func__); }
void dist_abort(const dist_t *d, int code) { (void)d; _exit(code); }

#endif

/* Both builds: a vote holds nothing of MPI until its first step. */
void dist_vote_begin(dist_vote_t *v, const dist_t *d) {
    memset(v, 0, sizeof *v);
    v->dist = d;
}

/* Both builds: the single-process mode has no dist_t, and dist_gather then copies this process's values. */
#define DIST_VALUE 64           /* bytes of one variable's value gathered per rank (longer values are cut) */

void dist_nccl_transport(const dist_t *d, char *out, size_t len) {
    int n = d ? d->size : 1, root = !d || d->is_root;
    char *all = malloc((size_t)n * DIST_VALUE);
    const char **vals = malloc((size_t)n * sizeof *vals);
    if (!all || !vals) { fprintf(stderr, "dist_nccl_transport: out of host memory\n"); exit(1); }
    out[0] = '\0';
    for (int v = 0; dist_nccl_transport_vars[v]; v++) {
        char mine[DIST_VALUE] = "";
        const char *e = getenv(dist_nccl_transport_vars[v]);
        if (e) snprintf(mine, sizeof mine, "%s", e);
        dist_gather(d, mine, sizeof mine, all);
        if (!root) continue;
        for (int r = 0; r < n; r++) vals[r] = all + (size_t)r * DIST_VALUE;
        dist_transport_add(out, len, dist_nccl_transport_vars[v], vals, n);
    }
    if (root && !out[0]) snprintf(out, len, "default");
    free(vals);
    free(all);
}

int dist_nccl_settings(const dist_t *d, char *out, size_t len) {
    extern char **environ;
    int n = d ? d->size : 1, root = !d || d->is_root;
    char *mine = malloc(DIST_SETTINGS_BLOB), *all = root ? malloc((size_t)n * DIST_SETTINGS_BLOB) : NULL;
    if (!mine || (root && !all)) { fprintf(stderr, "dist_nccl_settings: out of host memory\n"); exit(1); }
    int rc = dist_settings_blob((const char *const *)environ, mine, DIST_SETTINGS_BLOB);
    dist_gather(d, mine, DIST_SETTINGS_BLOB, all);
    if (root && dist_settings_merge(all, DIST_SETTINGS_BLOB, n, out, len) != 0) rc = -1;
    free(all);
    free(mine);
    return root ? rc : 0;
}
