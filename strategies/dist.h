/* dist.h — one process per GPU: the process-level bootstrap of `mpirun -np N ./scaling --strategy nccl` (and
 * `srun --mpi=pmix -n N`), after llm.c's multi_gpu_config_init with its traps fixed (dist_env.h lists them).
 *
 *   rank, size      MPI_COMM_WORLD
 *   local rank      MPI_Comm_split_type(MPI_COMM_TYPE_SHARED): node-local, never rank % GPUs; a launcher's own
 *                   local-rank variable (OMPI_COMM_WORLD_LOCAL_RANK, SLURM_LOCALID, MPI_LOCALRANKID) must agree.
 *                   SCALING_NODE_ID on every rank (a testing override, scripts/node_emu.sh) makes the ranks that
 *                   share its value a node instead, so one host can stand in for several; every node must run
 *                   the same number of ranks
 *   GPU             device local_rank, or device 0 where one device is visible per process; no two processes of
 *                   a node may drive the same GPU (PCI bus ids compared over the node)
 *   NCCL unique id  rank 0's ncclGetUniqueId, MPI_Bcast to every rank (dist_nccl_id)
 *
 * MPI is initialised only when a launcher started several processes (dist_env.h), so a plain ./scaling never
 * needs it. Built with MPI where CMake finds it (HAVE_MPI); a build without MPI started by a launcher refuses
 * with a message saying so. Every MPI call is checked (CHECK_MPI). A NULL dist_t * everywhere means the
 * single-process mode, and the collectives below are then no-ops. */
#pragma once
#include <stddef.h>
#include <stdio.h>

typedef struct dist {
    int rank, size;             /* MPI_COMM_WORLD */
    int local_rank, local_size; /* on this node (shared-memory split) */
    int is_root;                /* rank 0: the only one that writes the CSV, the table and progress */
    int n_nodes;
    int gpus_per_node;          /* ranks on each node (one GPU each): size / n_nodes */
    int device;                 /* CUDA ordinal this process drives; -1 until dist_select_device */
    const char *launcher;       /* "mpirun", "srun", ... (dist_env.h) */
    char host[64];
    char node[64];              /* node identity: SCALING_NODE_ID where set, else host (dist_env.h) */
    void *impl;                 /* MPI handles (dist.c) */
} dist_t;

/* Detects a launcher from the environment. Returns
 *    0  single process (no launcher, or a launcher that started one): d->size 1, d->is_root 1, nothing to free;
 *    1  several processes: MPI is initialised, d filled (device still -1); call dist_finalize at the end;
 *   -1  refused, one-line message in err, to be printed only where d->is_root (so once per job): this build has
 *       no MPI, MPI sees another world than the launcher (srun without --mpi=pmix), or a local-rank mismatch.
 *       MPI, if it was initialised, is finalised again; exit with status 2. */
int dist_init(dist_t *d, char *err, size_t errlen);
/* Picks and sets this process's GPU (see above), with n_visible = cudaGetDeviceCount. Collective; 0, or -1
 * with the message of the lowest failing rank in err on every rank. */
int dist_select_device(dist_t *d, char *err, size_t errlen);
/* Agreement after a step that may fail on some ranks only (a missing data file on one node, out of memory on
 * one GPU): every rank passes its own rc (0 ok) and message; every rank gets back the rc of the lowest failing
 * rank, and that rank's message in err, prefixed "rank R on HOST: " when R is not 0. Collective. NULL d: rc. */
int dist_agree(const dist_t *d, int rc, char *err, size_t errlen);
/* Rank 0's bytes to every rank (epoch statistics, decisions only rank 0 can take). NULL d: nothing. */
void dist_bcast(const dist_t *d, void *buf, size_t bytes);
/* Every rank's `bytes` to rank 0's out (size * bytes, rank-major); out is only written on rank 0. */
void dist_gather(const dist_t *d, const void *mine, size_t bytes, void *out);
/* Every rank's value to every rank's out[size]. */
void dist_allgather_u64(const dist_t *d, unsigned long long mine, unsigned long long *out);
/* Max of x over the ranks, on every rank. NULL d: x. */
double dist_max(const dist_t *d, double x);
/* The stop vote of one process per GPU: SIGINT/SIGTERM must stop every rank before the same step (their NCCL
 * collectives run in lockstep: a rank that stops one step early leaves the others blocked in one), and a blocking
 * agreement per step would cost every step. So each step posts a non-blocking all-reduce (max) of this rank's
 * signal and reads the one posted DIST_VOTE_LAG steps earlier, long completed by then: every rank reads the same
 * agreed value at the same step index and stops before the same step. Owned by the run, one per epoch (begin, a
 * step call per step, drain); it must not move while votes are outstanding (MPI writes into it). */
#define DIST_VOTE_LAG 3         /* steps a vote has before it is read: a reduction over many ranks takes a few
                                 * rounds, each moved on only inside an MPI call (one per step here, where MPI has no
                                 * progress thread), and a shorter lag would make the read wait for them; a longer
                                 * one only delays a stop */
typedef struct {
    const dist_t *dist;
    int posted, read;           /* votes of this epoch: posted for steps [0, posted), read for steps [0, read) */
    int mine[DIST_VOTE_LAG], agreed[DIST_VOTE_LAG];    /* step s's vote in slot s % DIST_VOTE_LAG */
    unsigned long long req[DIST_VOTE_LAG];             /* its MPI_Request (dist.c), opaque here */
} dist_vote_t;
/* A new epoch's votes, none outstanding. NULL d: one process, nothing to agree. */
void dist_vote_begin(dist_vote_t *v, const dist_t *d);
/* At the start of step `step` (0, 1, ... in order): the agreed vote of step - DIST_VOTE_LAG (0 before that step),
 * the largest signal number any rank had then. Non-zero: stop before this step, on every rank alike (this step
 * posts nothing; dist_vote_drain next). 0: this step's vote, `mine` (this rank's signal, 0 for none), is posted.
 * Collective over the run. A rank that stalls makes the others wait here (the watchdog's --timeout ends that).
 * NULL d: mine. */
int dist_vote_step(dist_vote_t *v, int step, int mine);
/* Waits for every outstanding vote (each rank posted the same ones, so they all complete), before anything else
 * the ranks agree on: at an epoch's end and on a stop. Leaves v as dist_vote_begin does. */
void dist_vote_drain(dist_vote_t *v);
/* A fresh NCCL unique id (ncclUniqueId, 128 bytes) from rank 0 to every rank. Collective. */
void dist_nccl_id(const dist_t *d, void *id, size_t bytes);
/* The NCCL transport settings in force for a row (dist_env.h dist_transport_add over every rank's environment),
 * "default" where none is set, on rank 0's out. Collective. NULL d: this process's. */
void dist_nccl_transport(const dist_t *d, char *out, size_t len);
/* Every other NCCL_* variable in force for a row (NCCL_NVLS_ENABLE, NCCL_ALGO, ...; dist_env.h dist_settings_merge
 * over every rank's environment), "" where none is set, on rank 0's out. 0, or -1 on rank 0 when some did not fit
 * len and were left out whole. Collective. NULL d: this process's. */
int dist_nccl_settings(const dist_t *d, char *out, size_t len);
/* One line per rank on rank 0's f: "# rank R  host H  pid P  local L/S  device D  PCI B". Collective. */
void dist_report(const dist_t *d, FILE *f);
/* Ends every rank of the job now (MPI_Abort; any thread, no barrier), then this process with code. NULL d: this
 * process only. For a fault or a deadline that leaves a collective unfinished. */
void dist_abort(const dist_t *d, int code);
/* MPI_Finalize (after a barrier, so no rank leaves while another still talks to it). NULL d: nothing. */
void dist_finalize(dist_t *d);
