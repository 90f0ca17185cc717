/* dist_env.h — which launcher started this process, and which GPU it should drive: pure functions of an
 * environment table and a few numbers, no MPI and no CUDA, so CI tests every launcher's variables.
 *
 *   dist_env_detect(getenv_fn, ctx, &env, err, len)   Open MPI mpirun, MPICH/Intel mpiexec (PMI), PMIx, srun
 *   dist_local_rank_check(&env, mpi_local_rank, ...)  the launcher's node-local rank must be MPI's
 *   dist_pick_device(local_rank, local_size, n_visible, &device, ...)
 *   dist_node_id, dist_nodes_check, dist_transport_add   node identities, ranks per node, a row's NCCL settings
 *   dist_settings_blob, dist_settings_merge           every other NCCL_* variable in force, for a row
 *
 * The traps of llm.c's multi_gpu_config_init avoided here: the local GPU is never rank % GPUs (it
 * comes from the node-local rank, and the caller checks that no two processes of a node drive one GPU); a Slurm
 * batch script, which carries SLURM_NTASKS=N and SLURM_PROCID=0 itself, is not mistaken for rank 0 of N (only an
 * srun step counts); and a launcher's local-rank variable is only trusted from that launcher (a SLURM_LOCALID
 * inherited by every process of an mpirun inside an allocation says 0 for all of them). */
#pragma once
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Looks a variable up: the real getenv in the program, a table in the tests. NULL when unset. */
typedef const char *(*dist_getenv_t)(void *ctx, const char *name);

typedef struct {
    const char *launcher;       /* "mpirun", "srun", "mpiexec" (PMI) or "a PMIx launcher"; NULL: none */
    int size;                   /* processes it started; -1 when the launcher does not say (PMIx alone) */
    int rank;                   /* this process's rank in them */
    int local_rank;             /* node-local rank as the launcher states it, or -1 */
    const char *local_rank_var; /* the variable local_rank came from, or NULL */
} dist_env_t;

/* A variable holding a non-negative decimal int: 1 with *out set, 0 unset, -1 set but malformed. */
static inline int dist_env_int_(dist_getenv_t get, void *ctx, const char *name, int *out) {
    const char *s = get(ctx, name);
    if (!s) return 0;
    char *end;
    long v = (*s >= '0' && *s <= '9') ? strtol(s, &end, 10) : -1;
    if (v < 0 || *end || v > INT_MAX) return -1;
    *out = (int)v;
    return 1;
}

/* Reads a variable into *out; -1 with a message naming it when it is malformed. */
static inline int dist_env_get_(dist_getenv_t get, void *ctx, const char *name, int *out, int *present, char *err,
                                size_t errlen) {
    int rc = dist_env_int_(get, ctx, name, out);
    if (rc < 0) {
        snprintf(err, errlen, "environment variable %s=\"%s\" is not a non-negative integer", name, get(ctx, name));
        return -1;
    }
    *present = rc;
    return 0;
}

/* Fills env from the launcher's variables, first match wins:
 *   Open MPI's mpirun    OMPI_COMM_WORLD_SIZE, _RANK, _LOCAL_RANK
 *   PMI (MPICH/Intel mpiexec, srun --mpi=pmi2)   PMI_SIZE, PMI_RANK; local rank MPI_LOCALRANKID, or SLURM_LOCALID
 *                        inside an srun step
 *   PMIx (srun --mpi=pmix, prterun)   PMIX_RANK; size from the srun step, else unknown (-1)
 *   srun                 SLURM_STEP_NUM_TASKS (or SLURM_NTASKS in a step), SLURM_PROCID, SLURM_LOCALID; only in a
 *                        step (SLURM_STEP_ID set): the batch script itself is not one of the tasks
 * No launcher: env->launcher NULL, size 1, rank 0. Returns 0, or -1 with a one-line message when a variable is
 * malformed or the rank lies outside the size. */
static inline int dist_env_detect(dist_getenv_t get, void *ctx, dist_env_t *env, char *err, size_t errlen) {
    env->launcher = NULL;
    env->size = 1;
    env->rank = 0;
    env->local_rank = -1;
    env->local_rank_var = NULL;
    int v, have, have_rank;
    /* An srun step: SLURM_STEP_ID (SLURM_STEPID in old releases) is set for the tasks of srun, not for the batch
     * script, whose SLURM_NTASKS and SLURM_PROCID=0 describe the allocation. */
    int slurm_step = get(ctx, "SLURM_STEP_ID") != NULL || get(ctx, "SLURM_STEPID") != NULL;
    int slurm_size = -1, slurm_rank = -1, slurm_local = -1;
    if (slurm_step) {
        if (dist_env_get_(get, ctx, "SLURM_STEP_NUM_TASKS", &v, &have, err, errlen)) return -1;
        if (have) slurm_size = v;
        else {
            if (dist_env_get_(get, ctx, "SLURM_NTASKS", &v, &have, err, errlen)) return -1;
            if (have) slurm_size = v;
        }
        if (dist_env_get_(get, ctx, "SLURM_PROCID", &v, &have, err, errlen)) return -1;
        if (have) slurm_rank = v;
        if (dist_env_get_(get, ctx, "SLURM_LOCALID", &v, &have, err, errlen)) return -1;
        if (have) slurm_local = v;
    }

    if (dist_env_get_(get, ctx, "OMPI_COMM_WORLD_SIZE", &v, &have, err, errlen)) return -1;
    if (have) {
        env->launcher = "mpirun";
        env->size = v;
        if (dist_env_get_(get, ctx, "OMPI_COMM_WORLD_RANK", &env->rank, &have_rank, err, errlen)) return -1;
        if (!have_rank) env->rank = -1;
        if (dist_env_get_(get, ctx, "OMPI_COMM_WORLD_LOCAL_RANK", &v, &have, err, errlen)) return -1;
        if (have) { env->local_rank = v; env->local_rank_var = "OMPI_COMM_WORLD_LOCAL_RANK"; }
    } else if (dist_env_get_(get, ctx, "PMI_SIZE", &v, &have, err, errlen) == 0 && have) {
        env->launcher = slurm_step ? "srun" : "mpiexec";
        env->size = v;
        if (dist_env_get_(get, ctx, "PMI_RANK", &env->rank, &have_rank, err, errlen)) return -1;
        if (!have_rank) env->rank = -1;
        if (dist_env_get_(get, ctx, "MPI_LOCALRANKID", &v, &have, err, errlen)) return -1;
        if (have) { env->local_rank = v; env->local_rank_var = "MPI_LOCALRANKID"; }
        else if (slurm_local >= 0) { env->local_rank = slurm_local; env->local_rank_var = "SLURM_LOCALID"; }
    } else if (get(ctx, "PMI_SIZE")) {
        return -1;                                  /* malformed PMI_SIZE: the message is in err */
    } else if (dist_env_get_(get, ctx, "PMIX_RANK", &v, &have, err, errlen) == 0 && have) {
        env->launcher = slurm_step ? "srun" : "a PMIx launcher";
        env->rank = v;
        env->size = slurm_step ? slurm_size : -1;
        if (slurm_step && slurm_local >= 0) { env->local_rank = slurm_local; env->local_rank_var = "SLURM_LOCALID"; }
    } else if (get(ctx, "PMIX_RANK")) {
        return -1;
    } else if (slurm_step && slurm_size >= 0) {
        env->launcher = "srun";
        env->size = slurm_size;
        env->rank = slurm_rank;
        if (slurm_local >= 0) { env->local_rank = slurm_local; env->local_rank_var = "SLURM_LOCALID"; }
    }
    if (!env->launcher) return 0;
    if (env->size == 0) {
        snprintf(err, errlen, "%s says it started 0 processes", env->launcher);
        return -1;
    }
    if (env->rank < 0) {
        snprintf(err, errlen, "%s started %d processes but does not say this one's rank", env->launcher, env->size);
        return -1;
    }
    if (env->size > 0 && env->rank >= env->size) {
        snprintf(err, errlen, "%s: rank %d outside 0..%d", env->launcher, env->rank, env->size - 1);
        return -1;
    }
    return 0;
}

/* 1 when this process is one of several started by a launcher (or a PMIx launcher that does not say how many):
 * then MPI is initialised. A launcher that started one process runs the ordinary single-process mode. */
static inline int dist_env_multi(const dist_env_t *env) {
    return env->launcher && env->size != 1;
}

/* The launcher's node-local rank, where it states one, must be the one MPI's shared-memory split gives. 0, or -1
 * with a message naming both. */
static inline int dist_local_rank_check(const dist_env_t *env, int mpi_local_rank, const char *host, char *err,
                                        size_t errlen) {
    if (env->local_rank < 0 || env->local_rank == mpi_local_rank) return 0;
    snprintf(err, errlen, "rank %d on %s: %s=%d but MPI's shared-memory split makes it local rank %d", env->rank,
             host, env->local_rank_var, env->local_rank, mpi_local_rank);
    return -1;
}

/* The CUDA ordinal for node-local rank local_rank of local_size processes that each see n_visible devices:
 * the only one when CUDA_VISIBLE_DEVICES (or the launcher's GPU binding) leaves one device per process, else
 * device local_rank. 0, or -1 with a message when the node has fewer visible GPUs than processes. Two processes
 * that still end up on one physical GPU (one device visible to each, the same one) are the caller's check. */
static inline int dist_pick_device(int local_rank, int local_size, int n_visible, const char *host, int *device,
                                   char *err, size_t errlen) {
    if (n_visible < 1) {
        snprintf(err, errlen, "%s: no CUDA device visible to local rank %d", host, local_rank);
        return -1;
    }
    if (n_visible == 1) {
        *device = 0;
        return 0;
    }
    if (local_rank < 0 || local_rank >= local_size || local_size > n_visible) {
        snprintf(err, errlen, "%s: %d processes on this node but only %d CUDA devices visible (one GPU per process)",
                 host, local_size, n_visible);
        return -1;
    }
    *device = local_rank;
    return 0;
}

/* ---- nodes: which ranks share a node, and the NCCL transport settings of a row ---- */

#define DIST_NODE_ID_MAX 64     /* bytes of a node identity, NUL included */

/* This process's node identity: SCALING_NODE_ID where set (a testing override: ranks of one host counted as
 * separate nodes, scripts/node_emu.sh), else the host name. Returns 1 for the override, 0 for the host name, or
 * -1 with a message when SCALING_NODE_ID is empty, too long or holds other than [A-Za-z0-9._-]. */
static inline int dist_node_id(dist_getenv_t get, void *ctx, const char *host, char *out, size_t len, char *err,
                               size_t errlen) {
    const char *id = get(ctx, "SCALING_NODE_ID");
    if (!id) {
        snprintf(out, len, "%s", host);
        return 0;
    }
    size_t n = strlen(id), bad = strspn(id, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._-");
    if (n == 0 || n >= DIST_NODE_ID_MAX || bad != n) {
        snprintf(err, errlen, "SCALING_NODE_ID=\"%s\": want 1 to %d characters of A-Z a-z 0-9 . _ -", id,
                 DIST_NODE_ID_MAX - 1);
        return -1;
    }
    snprintf(out, len, "%s", id);
    return 1;
}

/* The nodes of a job from node_of[r], any label shared by exactly the ranks of one node (the lowest rank on it):
 * *n_nodes, and *per_node ranks on each. 0, or -1 with a one-line message when the nodes run different numbers of
 * ranks (a study's rows are nodes x GPUs per node, one rank per GPU). */
static inline int dist_nodes_check(const int *node_of, int size, int *n_nodes, int *per_node, char *err,
                                   size_t errlen) {
    int nodes = 0, first = -1, min = INT_MAX, max = 0;
    for (int r = 0; r < size; r++) {
        int on = 0, seen = 0;
        for (int q = 0; q < size; q++) on += node_of[q] == node_of[r];
        for (int q = 0; q < r; q++) seen |= node_of[q] == node_of[r];
        if (seen) continue;
        nodes++;
        if (on < min) min = on;
        if (on > max) { max = on; first = r; }
    }
    *n_nodes = nodes;
    *per_node = nodes ? size / nodes : 0;
    if (nodes == 0 || min == max) return 0;
    if (size % nodes)
        snprintf(err, errlen, "%d ranks on %d nodes: the node count does not divide the ranks (run the same number "
                 "of ranks, one per GPU, on every node)", size, nodes);
    else
        snprintf(err, errlen, "%d ranks on %d nodes, but %d on the node of rank %d and %d on another: run the same "
                 "number of ranks, one per GPU, on every node", size, nodes, max, first, min);
    return -1;
}

/* The NCCL variables that choose its transports, in the order a row lists them. */
static const char *const dist_nccl_transport_vars[] = {
    "NCCL_NET", "NCCL_IB_DISABLE", "NCCL_P2P_DISABLE", "NCCL_SHM_DISABLE", "NCCL_HOSTID", NULL,
};

/* Appends "NAME=v" to out (';' between settings) for one variable given its value on each of n ranks (NULL or ""
 * where unset): the distinct values in rank order joined by '|' ("NCCL_HOSTID=h-node0|h-node1"); nothing where no
 * rank sets it. 0, or -1 when the setting does not fit len: it is then left out whole, never cut. */
static inline int dist_transport_add(char *out, size_t len, const char *name, const char *const *vals, int n) {
    size_t start = strlen(out), used = start;
    int any = 0;
    for (int r = 0; r < n; r++) {
        if (!vals[r] || !*vals[r]) continue;
        int dup = 0;
        for (int q = 0; q < r; q++) dup |= vals[q] && strcmp(vals[q], vals[r]) == 0;
        if (dup) continue;
        int k = any ? snprintf(out + used, len - used, "|%s", vals[r])
                    : snprintf(out + used, len - used, "%s%s=%s", used ? ";" : "", name, vals[r]);
        if (k < 0 || (size_t)k >= len - used) {
            out[start] = '\0';
            return -1;
        }
        used += (size_t)k;
        any = 1;
    }
    return 0;
}

/* ---- every other NCCL setting: what NCCL reads besides the transport variables (NCCL_NVLS_ENABLE, NCCL_ALGO,
 * NCCL_PROTO, NCCL_MIN_NCHANNELS, ...), as set when a row was made ---- */

#define DIST_SETTINGS_BLOB 4096 /* bytes of one process's settings as dist_settings_blob packs them */

static inline int dist_is_transport_var_(const char *name, size_t n) {
    for (int v = 0; dist_nccl_transport_vars[v]; v++)
        if (strlen(dist_nccl_transport_vars[v]) == n && strncmp(dist_nccl_transport_vars[v], name, n) == 0) return 1;
    return 0;
}

/* Packs the NCCL_* entries of envp ("NAME=value" strings, NULL-terminated, as environ) other than the transport
 * variables into blob: "NAME=value" strings one after another, each ended by '\0', the whole by an empty one. 0, or
 * -1 when they do not fit len (blob then holds those that did: a row's cell is never a cut list of settings, the
 * caller says so). */
static inline int dist_settings_blob(const char *const *envp, char *blob, size_t len) {
    size_t used = 0;
    int rc = 0;
    if (len == 0) return -1;
    for (int i = 0; envp && envp[i]; i++) {
        const char *eq = strchr(envp[i], '=');
        if (strncmp(envp[i], "NCCL_", 5) != 0 || !eq || dist_is_transport_var_(envp[i], (size_t)(eq - envp[i])))
            continue;
        size_t n = strlen(envp[i]) + 1;
        if (used + n + 1 > len) { rc = -1; continue; }
        memcpy(blob + used, envp[i], n);
        used += n;
    }
    blob[used] = '\0';
    return rc;
}

/* The value of `name` in a blob, or NULL. */
static inline const char *dist_settings_find_(const char *blob, const char *name, size_t n) {
    for (const char *e = blob; *e; e += strlen(e) + 1)
        if (strncmp(e, name, n) == 0 && e[n] == '=') return e + n + 1;
    return NULL;
}

static inline int dist_settings_cmp_(const void *a, const void *b) {
    const char *x = *(const char *const *)a, *y = *(const char *const *)b;
    size_t nx = strcspn(x, "="), ny = strcspn(y, "=");
    int c = strncmp(x, y, nx < ny ? nx : ny);
    return c ? c : (nx > ny) - (nx < ny);
}

/* The settings of n processes (blob r at blobs + r * stride) as one row's text: every name set on any of them, in
 * name order, as dist_transport_add writes them ("NCCL_ALGO=Ring;NCCL_NVLS_ENABLE=0", values that differ between
 * ranks joined by '|'); "" where none is set. 0, or -1 when the text would not fit len (out then holds the names
 * that fitted whole). */
static inline int dist_settings_merge(const char *blobs, size_t stride, int n, char *out, size_t len) {
    out[0] = '\0';
    if (n < 1) return 0;
    int count = 0;
    for (int r = 0; r < n; r++)
        for (const char *e = blobs + (size_t)r * stride; *e; e += strlen(e) + 1) count++;
    const char **names = malloc((size_t)(count ? count : 1) * sizeof *names);
    const char **vals = malloc((size_t)n * sizeof *vals);
    if (!names || !vals) { fprintf(stderr, "dist_settings_merge: out of host memory\n"); exit(1); }
    int k = 0;
    for (int r = 0; r < n; r++)
        for (const char *e = blobs + (size_t)r * stride; *e; e += strlen(e) + 1) names[k++] = e;
    qsort(names, (size_t)count, sizeof *names, dist_settings_cmp_);
    int rc = 0;
    char name[256];
    for (int i = 0; i < count; i++) {
        if (i && dist_settings_cmp_(&names[i - 1], &names[i]) == 0) continue;
        size_t nl = strcspn(names[i], "=");
        if (nl >= sizeof name) { rc = -1; continue; }
        memcpy(name, names[i], nl);
        name[nl] = '\0';
        for (int r = 0; r < n; r++) vals[r] = dist_settings_find_(blobs + (size_t)r * stride, name, nl);
        if (dist_transport_add(out, len, name, vals, n) != 0) rc = -1;
    }
    free(names);
    free(vals);
    return rc;
}
