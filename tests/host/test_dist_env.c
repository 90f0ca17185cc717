/* test_dist_env.c — one process per GPU, without MPI or a GPU: which launcher started the process (Open MPI's
 * mpirun, MPICH/Intel mpiexec through PMI, srun with PMIx or PMI-2, a bare srun step), from tables of environment
 * variables as each sets them; the traps (a Slurm batch script is not rank 0 of N; a SLURM_LOCALID inherited by an
 * mpirun inside an allocation is not trusted); the local-rank agreement; the GPU of each node-local rank (never
 * rank % GPUs); --gpus under a launcher; node identities (SCALING_NODE_ID), ranks per node, and a row's NCCL
 * transport settings. `test_dist_env --probe` reports on its real environment (tests/cli/test_slurm.sh). */
#include "strategies/dist_env.h"
#include "bench/options.h"
#include "test.h"
#include <string.h>

typedef struct {
    const char *const *kv;      /* name, value, name, value, ..., NULL */
} table_t;

static const char *process_getenv(void *ctx, const char *name) {
    (void)ctx;
    return getenv(name);
}

static const char *table_get(void *ctx, const char *name) {
    const table_t *t = ctx;
    for (int i = 0; t->kv[i]; i += 2)
        if (strcmp(t->kv[i], name) == 0) return t->kv[i + 1];
    return NULL;
}

/* Detects from the table; returns the rc, env and message filled. */
static int detect(const char *const *kv, dist_env_t *env, char *err, size_t errlen) {
    table_t t = {kv};
    err[0] = '\0';
    return dist_env_detect(table_get, &t, env, err, errlen);
}

static void expect_env(const char *what, const char *const *kv, const char *launcher, int size, int rank, int local,
                       const char *local_var, int multi) {
    dist_env_t e;
    char err[256];
    int rc = detect(kv, &e, err, sizeof err);
    EXPECT(rc == 0, "%s: rc %d (%s)", what, rc, err);
    EXPECT((launcher == NULL && e.launcher == NULL) || (launcher && e.launcher && strcmp(launcher, e.launcher) == 0),
           "%s: launcher \"%s\", want \"%s\"", what, e.launcher ? e.launcher : "(none)",
           launcher ? launcher : "(none)");
    EXPECT(e.size == size && e.rank == rank && e.local_rank == local, "%s: size %d rank %d local %d, want %d %d %d",
           what, e.size, e.rank, e.local_rank, size, rank, local);
    EXPECT((local_var == NULL && e.local_rank_var == NULL) ||
               (local_var && e.local_rank_var && strcmp(local_var, e.local_rank_var) == 0),
           "%s: local rank from %s, want %s", what, e.local_rank_var ? e.local_rank_var : "(none)",
           local_var ? local_var : "(none)");
    EXPECT(dist_env_multi(&e) == multi, "%s: multi %d, want %d", what, dist_env_multi(&e), multi);
}

static void expect_refused(const char *what, const char *const *kv, const char *needle) {
    dist_env_t e;
    char err[256];
    int rc = detect(kv, &e, err, sizeof err);
    EXPECT(rc == -1, "%s: accepted", what);
    EXPECT(strstr(err, needle) != NULL, "%s: message \"%s\" lacks \"%s\"", what, err, needle);
}

static void test_launchers(void) {
    static const char *const none[] = {"HOME", "/root", "PATH", "/usr/bin", NULL};
    expect_env("plain process", none, NULL, 1, 0, -1, NULL, 0);

    /* Open MPI 4's mpirun also sets PMIX_RANK: OMPI_COMM_WORLD_* win. */
    static const char *const ompi[] = {"OMPI_COMM_WORLD_SIZE", "4", "OMPI_COMM_WORLD_RANK", "3",
                                       "OMPI_COMM_WORLD_LOCAL_RANK", "1", "OMPI_COMM_WORLD_LOCAL_SIZE", "2",
                                       "PMIX_RANK", "3", NULL};
    expect_env("mpirun -np 4 over 2 nodes", ompi, "mpirun", 4, 3, 1, "OMPI_COMM_WORLD_LOCAL_RANK", 1);
    static const char *const ompi1[] = {"OMPI_COMM_WORLD_SIZE", "1", "OMPI_COMM_WORLD_RANK", "0", NULL};
    expect_env("mpirun -np 1: single-process mode", ompi1, "mpirun", 1, 0, -1, NULL, 0);

    /* mpirun inside a Slurm batch script: the script's SLURM_* are inherited by every rank and must not count. */
    static const char *const ompi_in_slurm[] = {"SLURM_NTASKS", "8", "SLURM_PROCID", "0", "SLURM_LOCALID", "0",
                                                "SLURM_JOB_ID", "12", "OMPI_COMM_WORLD_SIZE", "8",
                                                "OMPI_COMM_WORLD_RANK", "5", "OMPI_COMM_WORLD_LOCAL_RANK", "5", NULL};
    expect_env("mpirun inside sbatch", ompi_in_slurm, "mpirun", 8, 5, 5, "OMPI_COMM_WORLD_LOCAL_RANK", 1);

    static const char *const hydra[] = {"PMI_SIZE", "2", "PMI_RANK", "1", "MPI_LOCALRANKID", "1", NULL};
    expect_env("MPICH mpiexec", hydra, "mpiexec", 2, 1, 1, "MPI_LOCALRANKID", 1);

    static const char *const srun_pmi2[] = {"SLURM_STEP_ID", "0", "SLURM_STEP_NUM_TASKS", "4", "SLURM_NTASKS", "4",
                                            "SLURM_PROCID", "2", "SLURM_LOCALID", "2", "PMI_SIZE", "4", "PMI_RANK", "2",
                                            NULL};
    expect_env("srun --mpi=pmi2", srun_pmi2, "srun", 4, 2, 2, "SLURM_LOCALID", 1);

    static const char *const srun_pmix[] = {"SLURM_STEP_ID", "3", "SLURM_STEP_NUM_TASKS", "8", "SLURM_NTASKS", "16",
                                            "SLURM_PROCID", "6", "SLURM_LOCALID", "2", "PMIX_RANK", "6", NULL};
    expect_env("srun --mpi=pmix (a step of 8 in an allocation of 16)", srun_pmix, "srun", 8, 6, 2, "SLURM_LOCALID", 1);

    static const char *const pmix_only[] = {"PMIX_RANK", "0", "PMIX_NAMESPACE", "x", NULL};
    expect_env("PMIx launcher without a size", pmix_only, "a PMIx launcher", -1, 0, -1, NULL, 1);

    static const char *const srun_plain[] = {"SLURM_STEPID", "1", "SLURM_NTASKS", "2", "SLURM_PROCID", "1",
                                             "SLURM_LOCALID", "0", NULL};
    expect_env("srun step without PMI (old SLURM_STEPID)", srun_plain, "srun", 2, 1, 0, "SLURM_LOCALID", 1);

    /* The trap: a batch script carries SLURM_NTASKS=N and SLURM_PROCID=0 but is no task of a step. */
    static const char *const sbatch[] = {"SLURM_JOB_ID", "200505", "SLURM_NTASKS", "4", "SLURM_NPROCS", "4",
                                         "SLURM_PROCID", "0", "SLURM_LOCALID", "0", "SLURM_NODEID", "0", NULL};
    expect_env("sbatch script running ./scaling itself", sbatch, NULL, 1, 0, -1, NULL, 0);
    static const char *const srun_n1[] = {"SLURM_STEP_ID", "0", "SLURM_STEP_NUM_TASKS", "1", "SLURM_PROCID", "0",
                                          "SLURM_LOCALID", "0", NULL};
    expect_env("srun -n 1: single-process mode", srun_n1, "srun", 1, 0, 0, "SLURM_LOCALID", 0);
}

static void test_malformed(void) {
    static const char *const bad_size[] = {"OMPI_COMM_WORLD_SIZE", "four", "OMPI_COMM_WORLD_RANK", "0", NULL};
    expect_refused("OMPI size not a number", bad_size, "OMPI_COMM_WORLD_SIZE=\"four\"");
    static const char *const neg[] = {"PMI_SIZE", "-2", "PMI_RANK", "0", NULL};
    expect_refused("negative PMI_SIZE", neg, "PMI_SIZE=\"-2\"");
    static const char *const out_of_range[] = {"OMPI_COMM_WORLD_SIZE", "2", "OMPI_COMM_WORLD_RANK", "2", NULL};
    expect_refused("rank past size", out_of_range, "rank 2 outside 0..1");
    static const char *const no_rank[] = {"OMPI_COMM_WORLD_SIZE", "2", NULL};
    expect_refused("size without rank", no_rank, "does not say this one's rank");
    static const char *const zero[] = {"OMPI_COMM_WORLD_SIZE", "0", "OMPI_COMM_WORLD_RANK", "0", NULL};
    expect_refused("zero processes", zero, "started 0 processes");
    static const char *const bad_local[] = {"SLURM_STEP_ID", "0", "SLURM_STEP_NUM_TASKS", "2", "SLURM_PROCID", "0",
                                            "SLURM_LOCALID", "x1", NULL};
    expect_refused("SLURM_LOCALID not a number", bad_local, "SLURM_LOCALID");
    static const char *const bad_pmix[] = {"PMIX_RANK", "", NULL};
    expect_refused("empty PMIX_RANK", bad_pmix, "PMIX_RANK");
}

static void test_local_rank_check(void) {
    char err[256];
    dist_env_t e = {.launcher = "mpirun", .size = 4, .rank = 3, .local_rank = 1,
                    .local_rank_var = "OMPI_COMM_WORLD_LOCAL_RANK"};
    EXPECT(dist_local_rank_check(&e, 1, "h", err, sizeof err) == 0, "agreeing local ranks refused");
    err[0] = '\0';
    EXPECT(dist_local_rank_check(&e, 0, "gpu7", err, sizeof err) == -1, "disagreeing local ranks accepted");
    EXPECT(strstr(err, "rank 3 on gpu7: OMPI_COMM_WORLD_LOCAL_RANK=1 but MPI's shared-memory split makes it local "
                       "rank 0") != NULL, "message \"%s\"", err);
    e.local_rank = -1;
    e.local_rank_var = NULL;
    EXPECT(dist_local_rank_check(&e, 2, "h", err, sizeof err) == 0, "no launcher local rank: nothing to compare");
}

static void test_pick_device(void) {
    char err[256];
    int dev = -7;
    /* The device is the node-local rank, whatever the global rank: with 8 ranks placed round-robin over two nodes
     * of 4 GPUs, rank 5 is local rank 2 (rank % 4 would say 1, the GPU of local rank 1). */
    EXPECT(dist_pick_device(1, 4, 4, "h", &dev, err, sizeof err) == 0 && dev == 1, "local 1 of 4: dev %d", dev);
    EXPECT(dist_pick_device(2, 4, 4, "h", &dev, err, sizeof err) == 0 && dev == 2, "round-robin local 2: dev %d", dev);
    EXPECT(dist_pick_device(3, 4, 8, "h", &dev, err, sizeof err) == 0 && dev == 3, "4 ranks on 8 GPUs: dev %d", dev);
    /* CUDA_VISIBLE_DEVICES (or srun --gpus-per-task) leaves one device to each process: device 0. */
    dev = -7;
    EXPECT(dist_pick_device(3, 4, 1, "h", &dev, err, sizeof err) == 0 && dev == 0, "one visible: dev %d", dev);
    err[0] = '\0';
    EXPECT(dist_pick_device(2, 4, 2, "node3", &dev, err, sizeof err) == -1, "4 ranks on 2 GPUs accepted");
    EXPECT(strstr(err, "node3: 4 processes on this node but only 2 CUDA devices visible") != NULL, "message \"%s\"",
           err);
    err[0] = '\0';
    EXPECT(dist_pick_device(0, 2, 0, "node3", &dev, err, sizeof err) == -1, "no device accepted");
    EXPECT(strstr(err, "no CUDA device visible") != NULL, "message \"%s\"", err);
}

static void test_gpus_for_world(void) {
    options_t o;
    char err[256];
    char *plain[] = {"scaling", "--strategy", "nccl", NULL};
    EXPECT(options_parse(&o, 3, plain, err, sizeof err) == 0 && !options_given(&o, "gpus"), "parse: %s", err);
    EXPECT(options_for_world(&o, 4, err, sizeof err) == 0 && o.n_gpus == 1 && o.gpus[0] == 4,
           "--gpus omitted under 4 processes: n %d gpus[0] %d (%s)", o.n_gpus, o.gpus[0], err);
    char *same[] = {"scaling", "--gpus", "2", NULL};
    EXPECT(options_parse(&o, 3, same, err, sizeof err) == 0 && options_given(&o, "gpus"), "parse: %s", err);
    EXPECT(options_for_world(&o, 2, err, sizeof err) == 0 && o.gpus[0] == 2, "--gpus 2 under 2 processes: %s", err);
    char *other[] = {"scaling", "--gpus", "2,4", NULL};
    EXPECT(options_parse(&o, 3, other, err, sizeof err) == 0, "parse: %s", err);
    err[0] = '\0';
    EXPECT(options_for_world(&o, 4, err, sizeof err) == 2, "--gpus 2,4 under 4 processes accepted");
    EXPECT(strstr(err, "--gpus 2, but 4 processes were started") != NULL, "message \"%s\"", err);
}

static void test_node_id(void) {
    char node[DIST_NODE_ID_MAX], err[256];
    static const char *const plain[] = {"HOME", "/root", NULL};
    table_t t = {plain};
    EXPECT(dist_node_id(table_get, &t, "gpu-host-7", node, sizeof node, err, sizeof err) == 0 &&
           strcmp(node, "gpu-host-7") == 0, "no override: the host name, got \"%s\"", node);
    static const char *const over[] = {"SCALING_NODE_ID", "gpu-host-7.node1", NULL};
    t.kv = over;
    EXPECT(dist_node_id(table_get, &t, "gpu-host-7", node, sizeof node, err, sizeof err) == 1 &&
           strcmp(node, "gpu-host-7.node1") == 0, "override: got \"%s\"", node);
    static const char *const empty[] = {"SCALING_NODE_ID", "", NULL};
    static const char *const space[] = {"SCALING_NODE_ID", "node 1", NULL};
    static const char *const longer[] = {"SCALING_NODE_ID",
        "a123456789b123456789c123456789d123456789e123456789f123456789g123", NULL};   /* 64 characters */
    const char *const *bad[] = {empty, space, longer};
    for (int i = 0; i < 3; i++) {
        t.kv = bad[i];
        err[0] = '\0';
        EXPECT(dist_node_id(table_get, &t, "h", node, sizeof node, err, sizeof err) == -1 &&
               strstr(err, "SCALING_NODE_ID=\"") == err, "bad SCALING_NODE_ID %d accepted (%s)", i, err);
    }
}

static void test_nodes_check(void) {
    char err[256];
    int nodes = -1, per = -1;
    /* 8 ranks placed round-robin over 2 nodes: labels are each node's lowest rank. */
    static const int round_robin[] = {0, 1, 0, 1, 0, 1, 0, 1};
    EXPECT(dist_nodes_check(round_robin, 8, &nodes, &per, err, sizeof err) == 0 && nodes == 2 && per == 4,
           "2 nodes x 4: %d x %d", nodes, per);
    static const int emulated[] = {0, 1};
    EXPECT(dist_nodes_check(emulated, 2, &nodes, &per, err, sizeof err) == 0 && nodes == 2 && per == 1,
           "2 emulated nodes x 1: %d x %d", nodes, per);
    static const int one[] = {0, 0, 0};
    EXPECT(dist_nodes_check(one, 3, &nodes, &per, err, sizeof err) == 0 && nodes == 1 && per == 3, "1 node x 3");
    static const int three_on_two[] = {0, 0, 2};
    err[0] = '\0';
    EXPECT(dist_nodes_check(three_on_two, 3, &nodes, &per, err, sizeof err) == -1, "3 ranks on 2 nodes accepted");
    EXPECT(strstr(err, "3 ranks on 2 nodes: the node count does not divide the ranks") != NULL, "message \"%s\"",
           err);
    static const int uneven[] = {0, 0, 0, 3, 4, 4};     /* 3 + 1 + 2 on 3 nodes: divides, but uneven */
    err[0] = '\0';
    EXPECT(dist_nodes_check(uneven, 6, &nodes, &per, err, sizeof err) == -1, "3+1+2 accepted");
    EXPECT(strstr(err, "6 ranks on 3 nodes, but 3 on the node of rank 0 and 1 on another") != NULL,
           "message \"%s\"", err);
}

static void test_transport(void) {
    char out[128] = "";
    const char *none[] = {NULL, ""};
    dist_transport_add(out, sizeof out, "NCCL_NET", none, 2);
    EXPECT(out[0] == '\0', "unset everywhere adds nothing: \"%s\"", out);
    const char *same[] = {"1", "1"};
    dist_transport_add(out, sizeof out, "NCCL_P2P_DISABLE", same, 2);
    const char *hosts[] = {"h-node0", "h-node1", "h-node0"};
    dist_transport_add(out, sizeof out, "NCCL_HOSTID", hosts, 3);
    EXPECT(strcmp(out, "NCCL_P2P_DISABLE=1;NCCL_HOSTID=h-node0|h-node1") == 0, "got \"%s\"", out);
    const char *some[] = {NULL, "Socket"};
    out[0] = '\0';
    dist_transport_add(out, sizeof out, "NCCL_NET", some, 2);
    EXPECT(strcmp(out, "NCCL_NET=Socket") == 0, "set on one rank: \"%s\"", out);
    char tiny[12] = "";
    dist_transport_add(tiny, sizeof tiny, "NCCL_HOSTID", hosts, 3);
    EXPECT(strlen(tiny) < sizeof tiny, "a cut value stays inside the buffer");
    int n = 0;
    for (; dist_nccl_transport_vars[n]; n++) {}
    EXPECT(n == 5, "%d transport variables", n);
}

static void test_settings(void) {
    /* two ranks: NCCL_NVLS_ENABLE on both (one value), NCCL_ALGO on one, transport variables and others left out */
    const char *env0[] = {"PATH=/bin", "NCCL_NVLS_ENABLE=0", "NCCL_NET=Socket", "NCCL_ALGO=Ring", "NCCLX=1", NULL};
    const char *env1[] = {"NCCL_NVLS_ENABLE=0", "NCCL_HOSTID=h1", "NCCL_PROTO=Simple", "NCCL_ALGO=Tree", NULL};
    static char blobs[2 * DIST_SETTINGS_BLOB];
    EXPECT(dist_settings_blob(env0, blobs, DIST_SETTINGS_BLOB) == 0, "rank 0's settings fit");
    EXPECT(dist_settings_blob(env1, blobs + DIST_SETTINGS_BLOB, DIST_SETTINGS_BLOB) == 0, "rank 1's settings fit");
    char out[256];
    EXPECT(dist_settings_merge(blobs, DIST_SETTINGS_BLOB, 2, out, sizeof out) == 0, "merged");
    EXPECT(strcmp(out, "NCCL_ALGO=Ring|Tree;NCCL_NVLS_ENABLE=0;NCCL_PROTO=Simple") == 0, "got \"%s\"", out);
    EXPECT(dist_settings_merge(blobs, DIST_SETTINGS_BLOB, 1, out, sizeof out) == 0 &&
           strcmp(out, "NCCL_ALGO=Ring;NCCL_NVLS_ENABLE=0") == 0, "one rank: \"%s\"", out);
    const char *none[] = {"HOME=/root", "NCCL_SHM_DISABLE=1", NULL};
    EXPECT(dist_settings_blob(none, blobs, DIST_SETTINGS_BLOB) == 0 &&
           dist_settings_merge(blobs, DIST_SETTINGS_BLOB, 1, out, sizeof out) == 0 && out[0] == '\0',
           "no setting but a transport variable: \"%s\"", out);
    /* too long for the cell: the setting that does not fit is left out whole, and the caller is told */
    dist_settings_blob(env0, blobs, DIST_SETTINGS_BLOB);
    char small[24];
    EXPECT(dist_settings_merge(blobs, DIST_SETTINGS_BLOB, 1, small, sizeof small) == -1, "too long: -1");
    EXPECT(strcmp(small, "NCCL_ALGO=Ring") == 0, "whole settings only: \"%s\"", small);
    char tiny[24];
    EXPECT(dist_settings_blob(env0, tiny, sizeof tiny) == -1 && strcmp(tiny, "NCCL_NVLS_ENABLE=0") == 0,
           "a blob too small keeps whole entries: \"%s\"", tiny);
}

/* --probe: what this process's real environment says, for tests/cli/test_slurm.sh, which runs it as the task of a
 * stand-in srun: "launcher L size N rank R local K multi M device D" (device -1: dist_pick_device refused). */
static int probe(void) {
    dist_env_t e;
    char err[256] = "";
    if (dist_env_detect(process_getenv, NULL, &e, err, sizeof err) != 0) {
        printf("refused: %s\n", err);
        return 1;
    }
    const char *vis = getenv("CUDA_VISIBLE_DEVICES");
    int n_visible = vis && *vis ? 1 : 0, dev = -1;
    for (const char *c = vis; c && *c; c++) n_visible += *c == ',';
    if (dist_pick_device(e.local_rank, e.local_rank + 1, n_visible, "probe", &dev, err, sizeof err) != 0) dev = -1;
    printf("launcher %s size %d rank %d local %d multi %d device %d\n", e.launcher ? e.launcher : "none", e.size,
           e.rank, e.local_rank, dist_env_multi(&e), dev);
    return 0;
}

int main(int argc, char **argv) {
    if (argc == 2 && strcmp(argv[1], "--probe") == 0) return probe();
    test_node_id();
    test_nodes_check();
    test_transport();
    test_settings();
    test_launchers();
    test_malformed();
    test_local_rank_check();
    test_pick_device();
    test_gpus_for_world();
    return test_summary();
}
