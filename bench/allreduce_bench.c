/* allreduce_bench.c — the all-reduce benchmark: for each data-parallel strategy's reduction (naive copy-sum-broadcast,
 * NCCL ring), each GPU count and each wire type (float32; bfloat16 bare; bfloat16 with the fp32 -> bf16 cast that
 * --grad-dtype bf16 training pays), 4 KB..256 MB on the wire: one exactly checked run on integer inputs, warm-up,
 * then timed iterations with CUDA events; nccl-tests' algbw/busbw. Run: ./scaling --bench allreduce --gpus 2,4 */
#include "allreduce_bench.h"
#include "env.h"
#include "../engine/check.h"
#include "../engine/errmsg.h"
#include "../strategies/dp.h"
#include "../study/allreduce.h"
#include "../study/paths.h"
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define BENCH_MIN_BYTES ((size_t)4 << 10)
#define BENCH_MAX_BYTES ((size_t)256 << 20)
#define BENCH_WARMUP 5
#define BENCH_ITERS 20

#define HEADER_DIFFERS "%s: header differs from the all-reduce benchmark's (another CSV? use --out)"

/* f's first line against the benchmark's header: 1 the same, 0 another, -1 none (an empty file). */
static int header_state_(FILE *f) {
    char line[512] = "";
    rewind(f);
    if (!fgets(line, sizeof line, f)) return -1;
    line[strcspn(line, "\r\n")] = '\0';
    return strcmp(line, allreduce_header()) == 0;
}

int allreduce_bench_check(const char *path, char *err, size_t errlen) {
    FILE *f = fopen(path, "rb");    /* none yet: it is made with the header (paths_check vouched for the rest) */
    int h = f ? header_state_(f) : 1;
    if (f) fclose(f);
    return h == 0 ? errmsg(2, err, errlen, HEADER_DIFFERS, path) : 0;
}

/* Opens path for appending; a new or empty file gets the header, an existing one must already have it. */
static FILE *csv_open_(const char *path) {
    char err[PATH_MAX + 200];
    if (paths_make_parents(path, err, sizeof err) != 0) {
        errmsg_line(stderr, "scaling: error: ", "%s", err);
        return NULL;
    }
    /* a new file with O_EXCL, an existing one only where regular (study/paths.h: the one way to open an output) */
    int fd = paths_open_append(path, O_RDWR | O_APPEND, 0666);
    FILE *f = fd >= 0 ? fdopen(fd, "a+") : NULL;
    if (!f) {
        const char *why = fd < 0 && errno == EINVAL ? "not a regular file" : strerror(errno);
        errmsg_line(stderr, "scaling: error: ", "%s: %s", path, why);
        if (fd >= 0) close(fd);
        return NULL;
    }
    int h = header_state_(f);
    if (h == 0) {
        errmsg_line(stderr, "scaling: error: ", HEADER_DIFFERS, path);
        fclose(f);
        return NULL;
    }
    if (h < 0) fprintf(f, "%s\n", allreduce_header());
    fseek(f, 0, SEEK_END);
    return f;
}

/* One table of the benchmark: the wire type, and whether each reduction starts from fp32 inputs and casts them
 * (timed with it, as training runs it: the row's algo gets "+cast"). */
typedef struct {
    dtype_t wire;
    int cast;
    const char *type;               /* nccl-tests' name of the wire type */
} bench_kind_t;

static const bench_kind_t BENCH_KINDS[] = {
    {DTYPE_FP32, 0, "float"}, {DTYPE_BF16, 0, "bfloat16"}, {DTYPE_BF16, 1, "bfloat16"},
};

/* Mean time of one reduction over BENCH_ITERS, in ms: each GPU's compute stream brackets the iterations with
 * events (the reduction starts after and ends before them), and the slowest GPU is the reduction's time. */
static double time_reduce_(const reduce_ops_t *ops, void *ctx, gpu_t *gpus, int n, const float *const *src,
                           void *const *bufs, size_t count, cudaEvent_t *start, cudaEvent_t *stop) {
    for (int w = 0; w < BENCH_WARMUP; w++) ops->run(ctx, src, bufs, count);
    for (int i = 0; i < n; i++) {
        CHECK_CUDA(cudaSetDevice(gpus[i].device));
        CHECK_CUDA(cudaDeviceSynchronize());
    }
    for (int i = 0; i < n; i++) {
        CHECK_CUDA(cudaSetDevice(gpus[i].device));
        CHECK_CUDA(cudaEventRecord(start[i], gpus[i].stream));
    }
    for (int it = 0; it < BENCH_ITERS; it++) ops->run(ctx, src, bufs, count);
    double worst = 0;
    for (int i = 0; i < n; i++) {
        CHECK_CUDA(cudaSetDevice(gpus[i].device));
        CHECK_CUDA(cudaEventRecord(stop[i], gpus[i].stream));
    }
    for (int i = 0; i < n; i++) {
        float ms = 0;
        CHECK_CUDA(cudaEventSynchronize(stop[i]));
        CHECK_CUDA(cudaEventElapsedTime(&ms, start[i], stop[i]));
        if (ms > worst) worst = ms;
    }
    return worst / BENCH_ITERS;
}

/* The buffers and events of one strategy on n GPUs (devices 0..n-1). */
typedef struct {
    int n;
    gpu_t gpus[DP_MAX_GPUS];
    gpu_t *gp[DP_MAX_GPUS];
    void *bufs[DP_MAX_GPUS];        /* BENCH_MAX_BYTES: the wire buffers */
    float *src[DP_MAX_GPUS];        /* the fp32 inputs of a +cast table: 2 floats per wire byte at most */
    cudaEvent_t start[DP_MAX_GPUS], stop[DP_MAX_GPUS];
} bench_gpus_t;

/* One table: kind k of strategy st on b's GPUs. Returns wrong values (or -1 if the reduction could not be set up)
 * and adds the rows to f. */
static long long bench_table_(const strategy_t *st, const bench_kind_t *k, bench_gpus_t *b, int path, FILE *f,
                              const study_env_t *env, const char *stamp) {
    int n = b->n;
    size_t esize = dtype_size(k->wire);
    void *ctx = NULL;
    char err[512] = "";
    if (st->reduce->open(&ctx, b->gp, n, BENCH_MAX_BYTES / esize, path, k->wire, err, sizeof err) != 0) {
        fprintf(stderr, "scaling: %s (%s) on %d GPUs: %s\n", st->info->name, k->type, n, err);
        printf("# %s (%s) on %d GPUs: setup failed: %s\n", st->info->name, k->type, n, err);
        return -1;
    }
    char algo[80];
    snprintf(algo, sizeof algo, "%s%s", st->reduce->algo(ctx), k->cast ? "+cast" : "");
    /* as a training row's nccl_algo is written (NCCL_ALGO=^NVLS: _NVLS), so the report reads and matches it */
    for (char *c = algo; *c; c++)
        if (!study_name_byte_ok(RESULTS_F_NAME, (unsigned char)*c)) *c = '_';
    printf("#\n# %s (%s) on %d GPUs, %s in place%s\n", st->info->name, algo, n, k->type,
           k->cast ? ", cast from float32 included" : "");
    printf("#%11s %12s %8s %6s %11s %12s %12s %7s\n", "size(B)", "count", "type", "redop", "time(us)", "algbw(GB/s)",
           "busbw(GB/s)", "#wrong");
    const float *const *src = k->cast ? (const float *const *)b->src : NULL;
    double bus_sum = 0;
    int rows = 0;
    long long wrong = 0;
    for (size_t pow2 = BENCH_MIN_BYTES, extra = 0; pow2 <= BENCH_MAX_BYTES;) {
        /* Powers of two, plus the reference's odd sizes (6.7 MiB, 45 MiB) so busbw compares at the same size. */
        static const size_t odd[] = {7069696, 47185920};
        size_t bytes = pow2;
        if (extra < sizeof odd / sizeof odd[0] && odd[extra] < pow2) bytes = odd[extra++];
        else pow2 *= 2;
        size_t count = bytes / esize;
        /* Checked before it is timed: a fast wrong reduction is not a result. */
        unsigned long long bad = dp_check_reduce(st->reduce, ctx, b->gp, n, k->wire, src, b->bufs, count, 0);
        double ms = time_reduce_(st->reduce, ctx, b->gpus, n, src, b->bufs, count, b->start, b->stop);
        allreduce_row_t r = {.strategy = st->info->name, .gpus = n, .algo = algo, .size_bytes = bytes,
                             .count = count, .type = k->type, .redop = "sum", .time_us = ms * 1e3, .wrong = bad,
                             .gpu_name = env->gpu_name, .driver = env->driver, .cuda = env->cuda, .nccl = env->nccl,
                             .host = env->host, .git_commit = env->git_commit, .timestamp = stamp};
        r.algbw_gbs = (double)bytes / (ms * 1e-3) / 1e9;
        r.busbw_gbs = r.algbw_gbs * 2.0 * (n - 1) / n;   /* nccl-tests' all-reduce bus bandwidth */
        printf("%12zu %12zu %8s %6s %11.2f %12.2f %12.2f %7llu\n", bytes, count, k->type, r.redop, r.time_us,
               r.algbw_gbs, r.busbw_gbs, bad);
        fflush(stdout);
        allreduce_write_row(f, &r);
        check_report("alive\n");     /* a parent's deadline on silence (the default study's) counts from here */
        bus_sum += r.busbw_gbs;
        rows++;
        wrong += (long long)bad;
    }
    fflush(f);
    printf("# Avg bus bandwidth    : %.3f GB/s\n", bus_sum / rows);
    st->reduce->close(ctx);
    return wrong;
}

/* One strategy on n GPUs, every kind of table: adds the wrong values to *wrong and returns how many tables could
 * not be set up. */
static int bench_one_(const strategy_t *st, int n, const allreduce_bench_t *o, FILE *f, const study_env_t *env,
                      const char *stamp, long long *wrong) {
    bench_gpus_t b = {.n = n};
    for (int i = 0; i < n; i++) {
        gpu_init(&b.gpus[i], i, MATH_TF32);
        b.gp[i] = &b.gpus[i];
        CHECK_ALLOC(cudaMalloc(&b.bufs[i], BENCH_MAX_BYTES));
        CHECK_ALLOC(cudaMalloc((void **)&b.src[i], BENCH_MAX_BYTES / dtype_size(DTYPE_BF16) * sizeof(float)));
        CHECK_CUDA(cudaEventCreate(&b.start[i]));
        CHECK_CUDA(cudaEventCreate(&b.stop[i]));
    }
    int failed = 0;
    for (size_t k = 0; k < sizeof BENCH_KINDS / sizeof BENCH_KINDS[0]; k++) {
        long long w = bench_table_(st, &BENCH_KINDS[k], &b, o->naive_path, f, env, stamp);
        if (w < 0) failed++;
        else *wrong += w;
    }
    for (int i = 0; i < n; i++) {
        CHECK_CUDA(cudaSetDevice(b.gpus[i].device));
        CHECK_CUDA(cudaDeviceSynchronize());
        CHECK_CUDA(cudaFree(b.bufs[i]));
        CHECK_CUDA(cudaFree(b.src[i]));
        CHECK_CUDA(cudaEventDestroy(b.start[i]));
        CHECK_CUDA(cudaEventDestroy(b.stop[i]));
        gpu_free(&b.gpus[i]);
    }
    return failed;
}

int allreduce_bench_main(const allreduce_bench_t *o) {
    int n_dev = 0;
    char why[512];
    if (gpu_count(&n_dev, why, sizeof why)) {
        errmsg_line(stderr, "scaling: error: ", "%s", why);
        return 2;
    }
    for (int k = 0; k < o->n_gpus; k++)
        if (o->gpus[k] > n_dev || o->gpus[k] > DP_MAX_GPUS) {
            fprintf(stderr, "scaling: error: --gpus: %d GPUs requested, %d present (at most %d)\n", o->gpus[k], n_dev,
                    DP_MAX_GPUS);
            return 2;
        }
    const strategy_t *only = strategy_find(o->strategy);
    if (only && !only->reduce) only = NULL;     /* the default strategy has none: benchmark every one that has */
    /* o->out defaults to the benchmark's own file (options.c): the training CSV holds another schema. */
    const char *path = o->out;
    FILE *f = csv_open_(path);
    if (!f) return 2;
    study_env_t env;
    env_collect(&env, NULL);
    char stamp[32];
    time_t now = time(NULL);
    struct tm tm;
    gmtime_r(&now, &tm);
    strftime(stamp, sizeof stamp, "%Y-%m-%dT%H:%M:%SZ", &tm);
    printf("# allreduce benchmark: sums in place of float32, of bfloat16, and of bfloat16 cast from float32 first "
           "(algo +cast: what --grad-dtype bf16 training runs), %zu B..%zu B on the wire, %d warm-up + %d timed "
           "iterations per size\n", BENCH_MIN_BYTES, BENCH_MAX_BYTES, BENCH_WARMUP, BENCH_ITERS);
    printf("# time: CUDA events on each GPU, slowest GPU; algbw = size/time, busbw = algbw*2(n-1)/n -> %s\n", path);
    printf("# %s, driver %s, CUDA %s, NCCL %s, host %s, commit %s\n", env.gpu_name, env.driver, env.cuda, env.nccl,
           env.host, env.git_commit);
    for (int d = 0; d < n_dev; d++) {
        struct cudaDeviceProp p;
        CHECK_CUDA(cudaGetDeviceProperties(&p, d));
        printf("#  device %d [%04x:%02x:%02x] %s\n", d, p.pciDomainID, p.pciBusID, p.pciDeviceID, p.name);
    }
    long long wrong = 0;
    int failed = 0;
    for (int s = 0; strategy_table[s]; s++) {
        const strategy_t *st = strategy_table[s];
        if (!st->reduce || (only && only != st)) continue;
        for (int k = 0; k < o->n_gpus; k++) {
            int n = o->gpus[k];
            if (n < 2) {
                printf("#\n# %s on %d GPU: nothing to reduce, skipped\n", st->info->name, n);
                continue;
            }
            failed += bench_one_(st, n, o, f, &env, stamp, &wrong);
        }
    }
    fclose(f);
    printf("#\n# Wrong values : %lld %s%s\n", wrong, wrong ? "FAILED" : "OK",
           failed ? " (some reductions could not be set up)" : "");
    return wrong || failed ? 1 : 0;
}
