/* probe_conv.c — does any engine of cuDNN's backend (graph) API, runtime-compiled ones included, run an NHWC
 * convolution faster than the legacy API's cudnnFind choice? Forward, data and filter gradient, one GPU.
 *
 *   build/probe_conv [-v] [--iters N] [--max-cfgs N] [--ws-mib M] [--dirs fwd,dgrad,wgrad] [--no-rtc]
 *                    [N H W C K R S STRIDE PAD DTYPE]        DTYPE bf16|fp32; no shape: the default list
 * Default list (all bf16): 256 224 224 3 64 7 7 2 3 (ResNet-50's stem) and with C=8, 256 28 28 1 64 3 3 1 1 (the
 * d2l ResNet-18's stem) and with C=8, 256 14 14 128 128 3 3 1 1, 256 56 56 64 64 3 3 1 1, 256 56 56 256 64 1 1 1 0.
 *
 * Per shape and direction: (1) legacy: cudnnFind*AlgorithmEx (tensor-op math, fp32 compute), its best algo then
 * timed again the same way as (2); (2) backend: one convolution operation graph, every global engine index with its
 * default knobs, then the configs of heuristics modes A, B and fallback (the first --max-cfgs of each; a config
 * already timed is not timed twice); each finalized plan within the workspace limit runs 3 warm-ups and --iters
 * timed executions. Timing: a train of memsets keeps the GPU busy while the host queues the timed calls, so each
 * event-to-event gap is GPU time ("host-bound" is noted when queuing outlasted the train). Inputs are small random
 * values; calls run back to back, so L2 is warm for small tensors, alike for both columns. An engine or plan that
 * fails is skipped with its file:line and cuDNN status (shown with -v); exit 2 without a GPU or on bad arguments.
 * Output: one line per shape and direction, then a TSV block (header line starts with "shape\t"). Knob numbers are
 * cudnnBackendKnobType_t values (cudnn_graph.h). */
#include <cudnn.h>
#include "engine/layers/conv_be.h"
#include <cuda_runtime.h>
#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

// ----------------------------------------------------------------------------
// checks: fatal ones for setup, soft ones that leave a note for a skipped engine

#define CUDA_CHECK(call) do { cudaError_t e_ = (call); if (e_ != cudaSuccess) { fprintf(stderr, \
    "probe_conv: %s:%d: %s -> %s\n", __FILE__, __LINE__, #call, cudaGetErrorString(e_)); exit(1); } } while (0)
#define CUDNN_CHECK(call) do { cudnnStatus_t s_ = (call); if (s_ != CUDNN_STATUS_SUCCESS) { fprintf(stderr, \
    "probe_conv: %s:%d: %s -> %s\n", __FILE__, __LINE__, #call, cudnnGetErrorString(s_)); exit(1); } } while (0)
/* Soft checks: 1 when the call succeeded; else the first failure of this note goes into `note` (a char array). */
#define CUDNN_TRY(call, note) cudnn_try_((call), __FILE__, __LINE__, (note), sizeof(note))

static int cudnn_try_(cudnnStatus_t s, const char *file, int line, char *note, size_t cap) {
    if (s == CUDNN_STATUS_SUCCESS) return 1;
    char last[160] = "";
    cudnnGetLastErrorString(last, sizeof last);   // read on every failure, so that no stale message lingers
    if (note[0] == '\0') {
        for (char *c = last; *c; c++) if (*c == '\n' || *c == '\t') *c = ' ';
        snprintf(note, cap, "%s:%d: %s%s%s", file, line, cudnnGetErrorString(s), last[0] ? ": " : "", last);
    }
    return 0;
}

static int cuda_try_(cudaError_t e, const char *file, int line, char *note, size_t cap) {
    if (e == cudaSuccess) return 1;
    if (note[0] == '\0') snprintf(note, cap, "%s:%d: %s", file, line, cudaGetErrorString(e));
    return 0;
}

/* After a failed call: clear the error; -1 when the context is lost (sticky error), else 0. */
static int cuda_recover(void) {
    (void)cudaDeviceSynchronize();
    (void)cudaGetLastError();
    return cudaDeviceSynchronize() == cudaSuccess ? 0 : -1;
}

static double now_ms(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e3 + t.tv_nsec * 1e-6;
}

// ----------------------------------------------------------------------------
// shapes, buffers, timing

typedef enum { DIR_FWD, DIR_DGRAD, DIR_WGRAD, N_DIR } dir_t;
static const char *const DIR_NAME[N_DIR] = {"fwd", "dgrad", "wgrad"};

typedef struct { int n, h, w, c, k, r, s, stride, pad, fp32; int p, q; } shape_t;

typedef struct {
    cudnnHandle_t handle;
    cudaStream_t stream;
    cudaEvent_t *ev;           // iters + 2: the train's start, then one before each timed call and one after the last
    void *train; size_t train_bytes;
    void *ws; size_t ws_bytes;
    void *x, *w, *y;           // the current shape's tensors (NHWC, KRSC for w)
    int iters, warmup, max_cfgs, verbose, no_rtc;
} probe_t;

typedef cudnnStatus_t (*run_fn)(const probe_t *p, void *ctx);

static int cmp_float(const void *a, const void *b) {
    float x = *(const float *)a, y = *(const float *)b;
    return (x > y) - (x < y);
}

/* Runs run(ctx) warmup times untimed, then iters times between events behind the memset train. Returns 0 with the
 * median in *ms, 1 when a call failed (note says where; the error is cleared), -1 when the CUDA context is lost. */
static int time_runs(const probe_t *p, run_fn run, void *ctx, float *ms, int *host_bound, char *note, size_t cap) {
    for (int i = 0; i < p->warmup; i++)
        if (!cudnn_try_(run(p, ctx), __FILE__, __LINE__, note, cap)) return cuda_recover() ? -1 : 1;
    if (!cuda_try_(cudaStreamSynchronize(p->stream), __FILE__, __LINE__, note, cap)) return cuda_recover() ? -1 : 1;
    CUDA_CHECK(cudaEventRecord(p->ev[0], p->stream));
    for (int b = 0; b < 16; b++) CUDA_CHECK(cudaMemsetAsync(p->train, b, p->train_bytes, p->stream));
    CUDA_CHECK(cudaEventRecord(p->ev[1], p->stream));
    double t0 = now_ms();
    for (int i = 0; i < p->iters; i++) {
        if (!cudnn_try_(run(p, ctx), __FILE__, __LINE__, note, cap)) return cuda_recover() ? -1 : 1;
        CUDA_CHECK(cudaEventRecord(p->ev[i + 2], p->stream));
    }
    double queued = now_ms() - t0;
    if (!cuda_try_(cudaStreamSynchronize(p->stream), __FILE__, __LINE__, note, cap)) return cuda_recover() ? -1 : 1;
    float train_ms = 0, t[1024];
    CUDA_CHECK(cudaEventElapsedTime(&train_ms, p->ev[0], p->ev[1]));
    for (int i = 0; i < p->iters; i++) CUDA_CHECK(cudaEventElapsedTime(&t[i], p->ev[i + 1], p->ev[i + 2]));
    qsort(t, (size_t)p->iters, sizeof t[0], cmp_float);
    *ms = p->iters % 2 ? t[p->iters / 2] : 0.5f * (t[p->iters / 2 - 1] + t[p->iters / 2]);
    *host_bound = queued > train_ms;
    return 0;
}

/* Small random values (multiples of 1/64 in [-1, 1)), bf16 or fp32, for the host buffer. */
static void fill_random(const shape_t *s, void *host, size_t host_bytes) {
    size_t es = s->fp32 ? 4 : 2, n = host_bytes / es;
    uint64_t seed = 0x9e3779b97f4a7c15ull;
    for (size_t i = 0; i < n; i++) {
        seed ^= seed << 13; seed ^= seed >> 7; seed ^= seed << 17;
        float v = (float)((int)(seed >> 40 & 127) - 64) / 64.0f;
        uint32_t bits;
        memcpy(&bits, &v, 4);
        if (s->fp32) ((uint32_t *)host)[i] = bits; else ((uint16_t *)host)[i] = (uint16_t)(bits >> 16);
    }
}

/* The host buffer's values into x, w and y (before each direction: the previous one wrote into one of them). */
static void fill_device(const probe_t *p, const shape_t *s, const void *host) {
    size_t es = s->fp32 ? 4 : 2;
    CUDA_CHECK(cudaMemcpy(p->x, host, (size_t)s->n * s->h * s->w * s->c * es, cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(p->w, host, (size_t)s->k * s->r * s->s * s->c * es, cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(p->y, host, (size_t)s->n * s->p * s->q * s->k * es, cudaMemcpyHostToDevice));
}

// ----------------------------------------------------------------------------
// legacy API: cudnnFind's best algo, then timed like the backend's plans

typedef struct {
    dir_t dir;
    cudnnTensorDescriptor_t xd, yd;
    cudnnFilterDescriptor_t wd;
    cudnnConvolutionDescriptor_t cd;
    int algo; size_t ws;
} legacy_t;

static cudnnStatus_t legacy_run(const probe_t *p, void *ctx) {
    const legacy_t *l = ctx;
    const float one = 1, zero = 0;
    switch (l->dir) {
    case DIR_FWD: return cudnnConvolutionForward(p->handle, &one, l->xd, p->x, l->wd, p->w, l->cd,
        (cudnnConvolutionFwdAlgo_t)l->algo, p->ws, l->ws, &zero, l->yd, p->y);
    case DIR_DGRAD: return cudnnConvolutionBackwardData(p->handle, &one, l->wd, p->w, l->yd, p->y, l->cd,
        (cudnnConvolutionBwdDataAlgo_t)l->algo, p->ws, l->ws, &zero, l->xd, p->x);
    default: return cudnnConvolutionBackwardFilter(p->handle, &one, l->xd, p->x, l->yd, p->y, l->cd,
        (cudnnConvolutionBwdFilterAlgo_t)l->algo, p->ws, l->ws, &zero, l->wd, p->w);
    }
}

typedef struct { float ms, find_ms; int algo, host_bound; char note[320]; } legacy_result_t;

/* Returns -1 when the CUDA context is lost, else 0 (r->ms < 0 with a note when the legacy path failed). */
static int legacy_probe(const probe_t *p, const shape_t *s, dir_t dir, legacy_result_t *r) {
    legacy_t l = {.dir = dir, .algo = -1};
    cudnnDataType_t dt = s->fp32 ? CUDNN_DATA_FLOAT : CUDNN_DATA_BFLOAT16;
    int rc = 0, got = 0, math = CUDNN_TENSOR_OP_MATH;
    r->ms = r->find_ms = -1; r->algo = -1; r->host_bound = 0; r->note[0] = '\0';
    CUDNN_CHECK(cudnnCreateTensorDescriptor(&l.xd)); CUDNN_CHECK(cudnnCreateTensorDescriptor(&l.yd));
    CUDNN_CHECK(cudnnCreateFilterDescriptor(&l.wd)); CUDNN_CHECK(cudnnCreateConvolutionDescriptor(&l.cd));
    if (!CUDNN_TRY(cudnnSetTensor4dDescriptor(l.xd, CUDNN_TENSOR_NHWC, dt, s->n, s->c, s->h, s->w), r->note) ||
        !CUDNN_TRY(cudnnSetTensor4dDescriptor(l.yd, CUDNN_TENSOR_NHWC, dt, s->n, s->k, s->p, s->q), r->note) ||
        !CUDNN_TRY(cudnnSetFilter4dDescriptor(l.wd, dt, CUDNN_TENSOR_NHWC, s->k, s->c, s->r, s->s), r->note) ||
        !CUDNN_TRY(cudnnSetConvolution2dDescriptor(l.cd, s->pad, s->pad, s->stride, s->stride, 1, 1,
                                                   CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT), r->note) ||
        !CUDNN_TRY(cudnnSetConvolutionMathType(l.cd, CUDNN_TENSOR_OP_MATH), r->note))
        goto done;
    if (dir == DIR_FWD) {
        cudnnConvolutionFwdAlgoPerf_t perf[CUDNN_CONVOLUTION_FWD_ALGO_COUNT];
        if (!CUDNN_TRY(cudnnFindConvolutionForwardAlgorithmEx(p->handle, l.xd, p->x, l.wd, p->w, l.cd, l.yd, p->y,
                CUDNN_CONVOLUTION_FWD_ALGO_COUNT, &got, perf, p->ws, p->ws_bytes), r->note)) goto done;
        for (int i = 0; i < got; i++)
            if (perf[i].status == CUDNN_STATUS_SUCCESS && (l.algo < 0 || perf[i].time < r->find_ms)) {
                l.algo = perf[i].algo; l.ws = perf[i].memory; r->find_ms = perf[i].time; math = perf[i].mathType;
            }
    } else if (dir == DIR_DGRAD) {
        cudnnConvolutionBwdDataAlgoPerf_t perf[CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT];
        if (!CUDNN_TRY(cudnnFindConvolutionBackwardDataAlgorithmEx(p->handle, l.wd, p->w, l.yd, p->y, l.cd, l.xd,
                p->x, CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT, &got, perf, p->ws, p->ws_bytes), r->note)) goto done;
        for (int i = 0; i < got; i++)
            if (perf[i].status == CUDNN_STATUS_SUCCESS && (l.algo < 0 || perf[i].time < r->find_ms)) {
                l.algo = perf[i].algo; l.ws = perf[i].memory; r->find_ms = perf[i].time; math = perf[i].mathType;
            }
    } else {
        cudnnConvolutionBwdFilterAlgoPerf_t perf[CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT];
        if (!CUDNN_TRY(cudnnFindConvolutionBackwardFilterAlgorithmEx(p->handle, l.xd, p->x, l.yd, p->y, l.cd, l.wd,
                p->w, CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT, &got, perf, p->ws, p->ws_bytes), r->note)) goto done;
        for (int i = 0; i < got; i++)
            if (perf[i].status == CUDNN_STATUS_SUCCESS && (l.algo < 0 || perf[i].time < r->find_ms)) {
                l.algo = perf[i].algo; l.ws = perf[i].memory; r->find_ms = perf[i].time; math = perf[i].mathType;
            }
    }
    if (l.algo < 0) { snprintf(r->note, sizeof r->note, "cudnnFind: no algo ran (%d returned)", got); goto done; }
    r->algo = l.algo;
    if (!CUDNN_TRY(cudnnSetConvolutionMathType(l.cd, (cudnnMathType_t)math), r->note)) goto done;
    rc = time_runs(p, legacy_run, &l, &r->ms, &r->host_bound, r->note, sizeof r->note);
    if (rc != 0) r->ms = -1;
done:
    CUDNN_CHECK(cudnnDestroyTensorDescriptor(l.xd));
    CUDNN_CHECK(cudnnDestroyTensorDescriptor(l.yd));
    CUDNN_CHECK(cudnnDestroyFilterDescriptor(l.wd));
    CUDNN_CHECK(cudnnDestroyConvolutionDescriptor(l.cd));
    return rc < 0 ? -1 : 0;
}

// ----------------------------------------------------------------------------
// backend API: the operation graph

/* The engine's graph builder (engine/layers/conv_be.c), and the graph's engine count. */
typedef struct { conv_be_parts_t parts; cudnnBackendDescriptor_t graph; int64_t engines; } be_graph_t;

static void be_destroy(cudnnBackendDescriptor_t *d) {
    if (*d) CUDNN_CHECK(cudnnBackendDestroyDescriptor(*d));
    *d = NULL;
}

static int be_graph_build(const probe_t *p, const shape_t *s, dir_t dir, be_graph_t *g, char *note, size_t cap) {
    conv_be_shape_t cs = {s->n, s->h, s->w, s->c, s->k, s->r, s->s, s->stride, s->pad, s->p, s->q,
                          s->fp32 ? CUDNN_DATA_FLOAT : CUDNN_DATA_BFLOAT16};
    memset(g, 0, sizeof *g);
    if (!conv_be_graph(p->handle, &cs, (int)dir, 0.0f, &g->parts, &g->graph)) {
        snprintf(note, cap, "cuDNN refused the operation graph (engine/layers/conv_be.c)");
        return 0;
    }
    return cudnn_try_(cudnnBackendGetAttribute(g->graph, CUDNN_ATTR_OPERATIONGRAPH_ENGINE_GLOBAL_COUNT,
                                               CUDNN_TYPE_INT64, 1, NULL, &g->engines), __FILE__, __LINE__, note, cap);
}

static void be_graph_free(be_graph_t *g) { conv_be_parts_free(&g->parts); }

// ----------------------------------------------------------------------------
// backend API: one engine config -> plan -> timed executions

typedef struct {
    char key[200];      // "e<index>" plus "k<type>=<value>" per knob: a config is timed once
    char src[48];       // enum, or A<rank>/B<rank>/F<rank> (heuristics mode, rank in its list); repeats appended
    int64_t engine, ws;
    char notes[64];     // numerical and behaviour notes: tc dc rpr fft nd wino w4 w6 w13 nan | rtc i8r b8r graph lt
    int rtc, host_bound, planned;   // planned: the execution plan finalized
    int knobs_unknown;
    double build_ms;
    float ms;           // < 0: not run
    char why[320];      // why it was skipped
} cand_t;

/* Engine index, notes and knobs of an engine config into c (key, engine, notes, rtc). 0 when its engine index is
 * unreadable; knobs that cannot be read leave " k?" in the key and c->knobs_unknown set (never deduplicated). */
static int cfg_describe(cudnnBackendDescriptor_t cfg, cand_t *c) {
    cudnnBackendDescriptor_t eng = NULL, knobs[CUDNN_KNOB_TYPE_COUNTS] = {0};
    cudnnBackendNumericalNote_t nn[CUDNN_NUMERICAL_NOTE_TYPE_COUNT];
    cudnnBackendBehaviorNote_t bn[CUDNN_BEHAVIOR_NOTE_TYPE_COUNT];
    static const char *const NN[] = {"tc", "dc", "rpr", "fft", "nd", "wino", "w4", "w6", "w13", "nan"};
    static const char *const BN[] = {"rtc", "i8r", "b8r", "graph", "lt"};
    int64_t got = 0, nk = 0;
    size_t len = 0;
    int ok = CUDNN_TRY(cudnnBackendCreateDescriptor(CUDNN_BACKEND_ENGINE_DESCRIPTOR, &eng), c->why)
        && CUDNN_TRY(cudnnBackendGetAttribute(cfg, CUDNN_ATTR_ENGINECFG_ENGINE, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &got,
                                              &eng), c->why)
        && CUDNN_TRY(cudnnBackendGetAttribute(eng, CUDNN_ATTR_ENGINE_GLOBAL_INDEX, CUDNN_TYPE_INT64, 1, &got,
                                              &c->engine), c->why);
    if (ok) {
        len = (size_t)snprintf(c->key, sizeof c->key, "e%lld", (long long)c->engine);
        c->notes[0] = '\0';
        if (cudnnBackendGetAttribute(eng, CUDNN_ATTR_ENGINE_NUMERICAL_NOTE, CUDNN_TYPE_NUMERICAL_NOTE,
                                     CUDNN_NUMERICAL_NOTE_TYPE_COUNT, &got, nn) == CUDNN_STATUS_SUCCESS)
            for (int64_t i = 0; i < got && i < CUDNN_NUMERICAL_NOTE_TYPE_COUNT; i++)
                if ((int)nn[i] >= 0 && (int)nn[i] < (int)(sizeof NN / sizeof NN[0]))
                    snprintf(c->notes + strlen(c->notes), sizeof c->notes - strlen(c->notes), "%s%s",
                             c->notes[0] ? "," : "", NN[nn[i]]);
        if (cudnnBackendGetAttribute(eng, CUDNN_ATTR_ENGINE_BEHAVIOR_NOTE, CUDNN_TYPE_BEHAVIOR_NOTE,
                                     CUDNN_BEHAVIOR_NOTE_TYPE_COUNT, &got, bn) == CUDNN_STATUS_SUCCESS)
            for (int64_t i = 0; i < got && i < CUDNN_BEHAVIOR_NOTE_TYPE_COUNT; i++)
                if ((int)bn[i] >= 0 && (int)bn[i] < (int)(sizeof BN / sizeof BN[0])) {
                    snprintf(c->notes + strlen(c->notes), sizeof c->notes - strlen(c->notes), "%s%s",
                             c->notes[0] ? "," : "", BN[bn[i]]);
                    c->rtc |= bn[i] == CUDNN_BEHAVIOR_NOTE_RUNTIME_COMPILATION;
                }
        for (int i = 0; i < CUDNN_KNOB_TYPE_COUNTS && ok; i++)
            ok = CUDNN_TRY(cudnnBackendCreateDescriptor(CUDNN_BACKEND_KNOB_CHOICE_DESCRIPTOR, &knobs[i]), c->why);
        int kok = ok && CUDNN_TRY(cudnnBackendGetAttribute(cfg, CUDNN_ATTR_ENGINECFG_KNOB_CHOICES,
                                                           CUDNN_TYPE_BACKEND_DESCRIPTOR, CUDNN_KNOB_TYPE_COUNTS, &nk,
                                                           knobs), c->why);
        for (int64_t i = 0; kok && i < nk && i < CUDNN_KNOB_TYPE_COUNTS; i++) {
            cudnnBackendKnobType_t type = CUDNN_KNOB_TYPE_COUNTS;
            int64_t value = 0;
            kok = CUDNN_TRY(cudnnBackendGetAttribute(knobs[i], CUDNN_ATTR_KNOB_CHOICE_KNOB_TYPE, CUDNN_TYPE_KNOB_TYPE,
                                                     1, &got, &type), c->why)
                && CUDNN_TRY(cudnnBackendGetAttribute(knobs[i], CUDNN_ATTR_KNOB_CHOICE_KNOB_VALUE, CUDNN_TYPE_INT64,
                                                      1, &got, &value), c->why);
            if (kok && len < sizeof c->key)
                len += (size_t)snprintf(c->key + len, sizeof c->key - len, " k%d=%lld", (int)type, (long long)value);
        }
        if (ok && !kok) {
            fprintf(stderr, "probe_conv: knobs of engine %lld unreadable (timed anyway): %s\n", (long long)c->engine,
                    c->why);
            if (len < sizeof c->key) snprintf(c->key + len, sizeof c->key - len, " k?");
            c->knobs_unknown = 1;
        }
        if (ok) c->why[0] = '\0';
    }
    for (int i = 0; i < CUDNN_KNOB_TYPE_COUNTS; i++) be_destroy(&knobs[i]);
    be_destroy(&eng);
    return ok;
}

typedef struct { cudnnBackendDescriptor_t plan, pack; } be_exec_t;

static cudnnStatus_t be_run(const probe_t *p, void *ctx) {
    const be_exec_t *e = ctx;
    return cudnnBackendExecute(p->handle, e->plan, e->pack);
}

/* Plan, variant pack and timing for one config (c->key and c->engine already set). -1: CUDA context lost. */
static int cand_time(const probe_t *p, cudnnBackendDescriptor_t cfg, cand_t *c) {
    be_exec_t e = {0};
    int64_t uids[3] = {CONV_BE_UID_X, CONV_BE_UID_W, CONV_BE_UID_Y};
    void *ptrs[3] = {p->x, p->w, p->y}, *ws = p->ws;
    int rc = 0;
    double t0 = now_ms();
    int ok = CUDNN_TRY(cudnnBackendCreateDescriptor(CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR, &e.plan), c->why)
        && CUDNN_TRY(cudnnBackendSetAttribute(e.plan, CUDNN_ATTR_EXECUTION_PLAN_HANDLE, CUDNN_TYPE_HANDLE, 1,
                                              &p->handle), c->why)
        && CUDNN_TRY(cudnnBackendSetAttribute(e.plan, CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG,
                                              CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &cfg), c->why)
        && CUDNN_TRY(cudnnBackendFinalize(e.plan), c->why);
    c->build_ms = now_ms() - t0;
    c->planned = ok;
    ok = ok && CUDNN_TRY(cudnnBackendGetAttribute(e.plan, CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE, CUDNN_TYPE_INT64,
                                                  1, NULL, &c->ws), c->why);
    if (ok && (c->ws < 0 || (size_t)c->ws > p->ws_bytes)) {
        snprintf(c->why, sizeof c->why, "workspace %lld B over the limit", (long long)c->ws);
        ok = 0;
    }
    ok = ok && CUDNN_TRY(cudnnBackendCreateDescriptor(CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR, &e.pack), c->why)
        && CUDNN_TRY(cudnnBackendSetAttribute(e.pack, CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS, CUDNN_TYPE_INT64, 3, uids),
                     c->why)
        && CUDNN_TRY(cudnnBackendSetAttribute(e.pack, CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS, CUDNN_TYPE_VOID_PTR, 3,
                                              ptrs), c->why)
        && CUDNN_TRY(cudnnBackendSetAttribute(e.pack, CUDNN_ATTR_VARIANT_PACK_WORKSPACE, CUDNN_TYPE_VOID_PTR, 1, &ws),
                     c->why)
        && CUDNN_TRY(cudnnBackendFinalize(e.pack), c->why);
    if (ok) {
        rc = time_runs(p, be_run, &e, &c->ms, &c->host_bound, c->why, sizeof c->why);
        if (rc != 0) {
            c->ms = -1;
            fprintf(stderr, "probe_conv: engine %s failed at execute, skipped: %s\n", c->key, c->why);
        }
    }
    be_destroy(&e.pack);
    be_destroy(&e.plan);
    return rc < 0 ? -1 : 0;
}

// ----------------------------------------------------------------------------
// one direction: every engine index, then the heuristics' configs

typedef struct {
    legacy_result_t legacy;
    cand_t best, best_rtc, top_a;          // ms < 0: none
    int64_t engines, engines_ok;
    int cfgs, plans_ok, ran, dups;
    double secs;                           // wall time of the direction, plan compilations included
    char note[320];                        // why the backend column is empty
} dir_result_t;

typedef struct { cand_t *v; int n, cap; } cand_list_t;

/* Times cfg unless its key was timed already; adds it to the list. -1: CUDA context lost. */
static int consider(const probe_t *p, cudnnBackendDescriptor_t cfg, const char *src,
                    cand_list_t *l, dir_result_t *r) {
    cand_t c = {.ms = -1, .engine = -1};
    snprintf(c.src, sizeof c.src, "%s", src);
    r->cfgs++;
    if (!cfg_describe(cfg, &c)) {
        if (p->verbose) printf("    %-6s %-28s unreadable config: %s\n", src, "?", c.why);
        return 0;
    }
    if (p->no_rtc && c.rtc) {
        if (p->verbose) printf("    %-6s %-28s %-20s skipped: runtime-compiled (--no-rtc)\n", src, c.key, c.notes);
        return 0;
    }
    for (int i = 0; i < l->n && !c.knobs_unknown; i++)
        if (strcmp(l->v[i].key, c.key) == 0) {
            size_t n = strlen(l->v[i].src);
            snprintf(l->v[i].src + n, sizeof l->v[i].src - n, "+%s", src);
            r->dups++;
            return 0;
        }
    int rc = cand_time(p, cfg, &c);
    r->plans_ok += c.planned;
    r->ran += c.ms >= 0;
    if (p->verbose) {
        if (c.ms >= 0)
            printf("    %-6s %-28s %-20s ws %8.1f MiB  plan %7.1f ms  %9.4f ms%s\n", src, c.key, c.notes,
                   c.ws / 1048576.0, c.build_ms, c.ms, c.host_bound ? " host-bound" : "");
        else
            printf("    %-6s %-28s %-20s skipped: %s\n", src, c.key, c.notes, c.why);
        fflush(stdout);
    }
    if (l->n == l->cap) {
        l->cap = l->cap ? 2 * l->cap : 64;
        l->v = realloc(l->v, (size_t)l->cap * sizeof *l->v);
        if (!l->v) { fprintf(stderr, "probe_conv: out of host memory\n"); exit(1); }
    }
    l->v[l->n++] = c;
    return rc;
}

/* The fastest config, the fastest runtime-compiled one and heuristics A's first choice, from the list. */
static void summarise(const cand_list_t *l, dir_result_t *r) {
    for (int i = 0; i < l->n; i++) {
        const cand_t *c = &l->v[i];
        char src[sizeof c->src], *save = NULL;
        snprintf(src, sizeof src, "%s", c->src);
        for (char *t = strtok_r(src, "+", &save); t; t = strtok_r(NULL, "+", &save))
            if (strcmp(t, "A0") == 0) r->top_a = *c;
        if (c->ms < 0) continue;
        if (r->best.ms < 0 || c->ms < r->best.ms) r->best = *c;
        if (c->rtc && (r->best_rtc.ms < 0 || c->ms < r->best_rtc.ms)) r->best_rtc = *c;
    }
}

/* Fills r for one shape and direction. -1: CUDA context lost (the caller stops). */
static int probe_dir(const probe_t *p, const shape_t *s, dir_t dir, const void *host, dir_result_t *r) {
    static const struct { cudnnBackendHeurMode_t mode; const char *tag; } HEUR[] = {
        {CUDNN_HEUR_MODE_A, "A"}, {CUDNN_HEUR_MODE_B, "B"}, {CUDNN_HEUR_MODE_FALLBACK, "F"}};
    be_graph_t g;
    cand_list_t l = {0};
    int rc = 0;
    memset(r, 0, sizeof *r);
    r->best.ms = r->best_rtc.ms = r->top_a.ms = -1;
    r->best.engine = r->best_rtc.engine = r->top_a.engine = -1;
    double t0 = now_ms();
    fill_device(p, s, host);
    if (legacy_probe(p, s, dir, &r->legacy) < 0) return -1;
    if (!be_graph_build(p, s, dir, &g, r->note, sizeof r->note)) {
        fprintf(stderr, "probe_conv: %s: backend operation graph failed: %s\n", DIR_NAME[dir], r->note);
        be_graph_free(&g);
        r->secs = (now_ms() - t0) * 1e-3;
        return 0;
    }
    r->engines = g.engines;
    for (int64_t i = 0; i < g.engines && rc == 0; i++) {
        cudnnBackendDescriptor_t eng = NULL, cfg = NULL;
        char why[320] = "";
        int ok = CUDNN_TRY(cudnnBackendCreateDescriptor(CUDNN_BACKEND_ENGINE_DESCRIPTOR, &eng), why)
            && CUDNN_TRY(cudnnBackendSetAttribute(eng, CUDNN_ATTR_ENGINE_OPERATION_GRAPH,
                                                  CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &g.graph), why)
            && CUDNN_TRY(cudnnBackendSetAttribute(eng, CUDNN_ATTR_ENGINE_GLOBAL_INDEX, CUDNN_TYPE_INT64, 1, &i), why)
            && CUDNN_TRY(cudnnBackendFinalize(eng), why);
        r->engines_ok += ok;
        ok = ok && CUDNN_TRY(cudnnBackendCreateDescriptor(CUDNN_BACKEND_ENGINECFG_DESCRIPTOR, &cfg), why)
            && CUDNN_TRY(cudnnBackendSetAttribute(cfg, CUDNN_ATTR_ENGINECFG_ENGINE, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1,
                                                  &eng), why)
            && CUDNN_TRY(cudnnBackendFinalize(cfg), why);
        if (ok) rc = consider(p, cfg, "enum", &l, r);
        else if (p->verbose) printf("    %-6s e%-27lld unsupported: %s\n", "enum", (long long)i, why);
        be_destroy(&cfg);
        be_destroy(&eng);
    }
    for (size_t m = 0; m < sizeof HEUR / sizeof HEUR[0] && rc == 0; m++) {
        cudnnBackendDescriptor_t heur = NULL, *cfgs = NULL;
        char why[320] = "";
        int64_t count = 0, got = 0;
        int ok = CUDNN_TRY(cudnnBackendCreateDescriptor(CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR, &heur), why)
            && CUDNN_TRY(cudnnBackendSetAttribute(heur, CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH,
                                                  CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &g.graph), why)
            && CUDNN_TRY(cudnnBackendSetAttribute(heur, CUDNN_ATTR_ENGINEHEUR_MODE, CUDNN_TYPE_HEUR_MODE, 1,
                                                  &HEUR[m].mode), why)
            && CUDNN_TRY(cudnnBackendFinalize(heur), why)
            && CUDNN_TRY(cudnnBackendGetAttribute(heur, CUDNN_ATTR_ENGINEHEUR_RESULTS, CUDNN_TYPE_BACKEND_DESCRIPTOR,
                                                  0, &count, NULL), why);
        if (ok && count > p->max_cfgs) count = p->max_cfgs;
        if (ok && count > 0) {
            cfgs = calloc((size_t)count, sizeof *cfgs);
            if (!cfgs) { fprintf(stderr, "probe_conv: out of host memory\n"); exit(1); }
            for (int64_t i = 0; i < count && ok; i++)
                ok = CUDNN_TRY(cudnnBackendCreateDescriptor(CUDNN_BACKEND_ENGINECFG_DESCRIPTOR, &cfgs[i]), why);
            ok = ok && CUDNN_TRY(cudnnBackendGetAttribute(heur, CUDNN_ATTR_ENGINEHEUR_RESULTS,
                                                          CUDNN_TYPE_BACKEND_DESCRIPTOR, count, &got, cfgs), why);
            for (int64_t i = 0; ok && i < got && i < count && rc == 0; i++) {
                char src[32];
                snprintf(src, sizeof src, "%s%lld", HEUR[m].tag, (long long)i);
                rc = consider(p, cfgs[i], src, &l, r);
            }
            for (int64_t i = 0; i < count; i++) be_destroy(&cfgs[i]);
            free(cfgs);
        }
        if (!ok) fprintf(stderr, "probe_conv: %s: heuristics mode %s gave nothing: %s\n", DIR_NAME[dir], HEUR[m].tag,
                         why);
        else if (p->verbose) printf("    heuristics mode %s: %lld configs\n", HEUR[m].tag, (long long)got);
        be_destroy(&heur);
    }
    summarise(&l, r);
    free(l.v);
    be_graph_free(&g);
    r->secs = (now_ms() - t0) * 1e-3;
    return rc;
}

// ----------------------------------------------------------------------------
// output

static void shape_name(const shape_t *s, char *out, size_t cap) {
    snprintf(out, cap, "%d_%dx%dx%d_%d_%dx%d_s%d_p%d_%s", s->n, s->h, s->w, s->c, s->k, s->r, s->s, s->stride, s->pad,
             s->fp32 ? "fp32" : "bf16");
}

static double tflops(const shape_t *s, float ms) {
    return ms > 0 ? 2.0 * s->n * s->k * s->p * s->q * s->c * s->r * s->s / (ms * 1e-3) / 1e12 : 0;
}

static void print_human(const shape_t *s, dir_t dir, const dir_result_t *r) {
    char name[96];
    const legacy_result_t *g = &r->legacy;
    shape_name(s, name, sizeof name);
    printf("%-34s %-5s | legacy ", name, DIR_NAME[dir]);
    if (g->ms >= 0)
        printf("%8.4f ms (algo %d, find %.4f)%s", g->ms, g->algo, g->find_ms, g->host_bound ? " host-bound" : "");
    else printf("   -     (%s)", g->note);
    printf(" | backend ");
    if (r->best.ms >= 0)
        printf("%8.4f ms (%s %s [%s]%s)", r->best.ms, r->best.key, r->best.src, r->best.notes,
               r->best.host_bound ? " host-bound" : "");
    else printf("   -     (%s)", r->note[0] ? r->note : "no plan ran");
    if (g->ms > 0 && r->best.ms >= 0) printf(" | be/leg %.3f", r->best.ms / g->ms);
    printf(" | TFLOP/s %.1f / %.1f", tflops(s, g->ms), tflops(s, r->best.ms));
    if (r->top_a.ms >= 0) printf(" | A0 %.4f ms (%s)", r->top_a.ms, r->top_a.key);
    else if (r->top_a.key[0]) printf(" | A0 failed (%s)", r->top_a.key);
    if (r->best_rtc.ms >= 0) printf(" | best rtc %.4f ms (%s)", r->best_rtc.ms, r->best_rtc.key);
    printf(" | engines %lld/%lld, configs %d (dup %d), plans %d, ran %d | %.1f s\n", (long long)r->engines_ok,
           (long long)r->engines, r->cfgs, r->dups, r->plans_ok, r->ran, r->secs);
    fflush(stdout);
}

static void print_tsv(const shape_t *shapes, const int *dirs, const dir_result_t *rows, int n_rows) {
    printf("shape\tN\tH\tW\tC\tK\tR\tS\tstride\tpad\tdtype\tdir\tlegacy_ms\tlegacy_find_ms\tlegacy_algo\t"
           "backend_ms\tbackend_config\tbackend_src\tbackend_notes\tbackend_ws\tratio\tlegacy_tflops\t"
           "backend_tflops\ta0_ms\ta0_config\trtc_ms\trtc_config\tengines\tengines_ok\tconfigs\tdups\tplans_ok\tran\n");
    for (int i = 0; i < n_rows; i++) {
        const shape_t *s = &shapes[i / N_DIR];
        const dir_result_t *r = &rows[i];
        char name[96];
        if (!dirs[i % N_DIR]) continue;
        shape_name(s, name, sizeof name);
        printf("%s\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%s\t%s\t%.5f\t%.5f\t%d\t%.5f\t%s\t%s\t%s\t%lld\t%.4f\t%.2f\t"
               "%.2f\t%.5f\t%s\t%.5f\t%s\t%lld\t%lld\t%d\t%d\t%d\t%d\n",
               name, s->n, s->h, s->w, s->c, s->k, s->r, s->s, s->stride, s->pad, s->fp32 ? "fp32" : "bf16",
               DIR_NAME[i % N_DIR], r->legacy.ms, r->legacy.find_ms, r->legacy.algo, r->best.ms, r->best.key,
               r->best.src, r->best.notes, (long long)r->best.ws,
               r->legacy.ms > 0 && r->best.ms >= 0 ? r->best.ms / r->legacy.ms : -1.0, tflops(s, r->legacy.ms),
               tflops(s, r->best.ms), r->top_a.ms, r->top_a.key, r->best_rtc.ms, r->best_rtc.key,
               (long long)r->engines, (long long)r->engines_ok, r->cfgs, r->dups, r->plans_ok, r->ran);
    }
}

// ----------------------------------------------------------------------------
// command line

static const struct { struct option opt; const char *arg, *help; } OPTS[] = {
    {{"verbose", no_argument, NULL, 'v'}, "", "one line per engine config tried (and why one was skipped)"},
    {{"iters", required_argument, NULL, 'i'}, "N", "timed executions per config, median reported (20; 1..1000)"},
    {{"max-cfgs", required_argument, NULL, 'm'}, "N", "configs taken from each heuristics mode (32)"},
    {{"ws-mib", required_argument, NULL, 'w'}, "M", "workspace limit in MiB, legacy and backend alike (1024)"},
    {{"dirs", required_argument, NULL, 'd'}, "LIST", "comma list of fwd, dgrad, wgrad (all)"},
    {{"no-rtc", no_argument, NULL, 'r'}, "", "skip runtime-compiled engines (their plans compile for seconds)"},
    {{"help", no_argument, NULL, 'h'}, "", "this text"},
};
#define N_OPTS ((int)(sizeof OPTS / sizeof OPTS[0]))

static void usage(FILE *f) {
    fprintf(f, "usage: probe_conv [options] [N H W C K R S STRIDE PAD DTYPE]   (DTYPE bf16|fp32; NHWC; none: the "
               "default list)\n");
    for (int i = 0; i < N_OPTS; i++) {
        char flag[32];
        snprintf(flag, sizeof flag, "--%s %s", OPTS[i].opt.name, OPTS[i].arg);
        fprintf(f, "  -%c, %-16s %s\n", OPTS[i].opt.val, flag, OPTS[i].help);
    }
}

static int parse_int(const char *s, int lo, int hi, int *out) {
    char *end;
    long v = strtol(s, &end, 10);
    if (*s == '\0' || *end != '\0' || v < lo || v > hi) return 0;
    *out = (int)v;
    return 1;
}

static int shape_finish(shape_t *s) {
    s->p = (s->h + 2 * s->pad - s->r) / s->stride + 1;
    s->q = (s->w + 2 * s->pad - s->s) / s->stride + 1;
    return s->h + 2 * s->pad >= s->r && s->w + 2 * s->pad >= s->s && s->p > 0 && s->q > 0;
}

int main(int argc, char **argv) {
    static const shape_t DEFAULTS[] = {
        {256, 224, 224, 3, 64, 7, 7, 2, 3, 0, 0, 0}, {256, 224, 224, 8, 64, 7, 7, 2, 3, 0, 0, 0},
        {256, 28, 28, 1, 64, 3, 3, 1, 1, 0, 0, 0}, {256, 28, 28, 8, 64, 3, 3, 1, 1, 0, 0, 0},
        {256, 14, 14, 128, 128, 3, 3, 1, 1, 0, 0, 0},
        {256, 56, 56, 64, 64, 3, 3, 1, 1, 0, 0, 0}, {256, 56, 56, 256, 64, 1, 1, 1, 0, 0, 0, 0}};
    probe_t p = {.iters = 20, .warmup = 3, .max_cfgs = 32};
    int ws_mib = 1024, dirs[N_DIR] = {1, 1, 1}, n_shapes = 0;
    struct option longopts[N_OPTS + 1];
    char shortopts[2 * N_OPTS + 1], *so = shortopts;
    for (int i = 0; i < N_OPTS; i++) {
        longopts[i] = OPTS[i].opt;
        *so++ = (char)OPTS[i].opt.val;
        if (OPTS[i].opt.has_arg) *so++ = ':';
    }
    *so = '\0';
    memset(&longopts[N_OPTS], 0, sizeof longopts[N_OPTS]);
    for (int o; (o = getopt_long(argc, argv, shortopts, longopts, NULL)) != -1;) {
        int ok = 1;
        if (o == 'v') p.verbose = 1;
        else if (o == 'r') p.no_rtc = 1;
        else if (o == 'i') ok = parse_int(optarg, 1, 1000, &p.iters);
        else if (o == 'm') ok = parse_int(optarg, 0, 100000, &p.max_cfgs);
        else if (o == 'w') ok = parse_int(optarg, 0, 1 << 20, &ws_mib);
        else if (o == 'd') {
            char buf[64], *save = NULL;
            snprintf(buf, sizeof buf, "%s", optarg);
            memset(dirs, 0, sizeof dirs);
            for (char *t = strtok_r(buf, ",", &save); t && ok; t = strtok_r(NULL, ",", &save)) {
                int d = 0;
                while (d < N_DIR && strcmp(t, DIR_NAME[d]) != 0) d++;
                if (d == N_DIR) ok = 0; else dirs[d] = 1;
            }
            ok = ok && (dirs[0] || dirs[1] || dirs[2]);
        } else if (o == 'h') { usage(stdout); return 0; }
        else { usage(stderr); return 2; }
        if (!ok) { fprintf(stderr, "probe_conv: bad value '%s' for -%c\n", optarg, o); usage(stderr); return 2; }
    }
    shape_t one;
    const shape_t *shapes = DEFAULTS;
    if (argc - optind == 10) {
        int *f[9] = {&one.n, &one.h, &one.w, &one.c, &one.k, &one.r, &one.s, &one.stride, &one.pad};
        for (int i = 0; i < 9; i++)
            if (!parse_int(argv[optind + i], i == 8 ? 0 : 1, 1 << 20, f[i])) {
                fprintf(stderr, "probe_conv: bad shape value '%s'\n", argv[optind + i]);
                return 2;
            }
        if (strcmp(argv[optind + 9], "bf16") != 0 && strcmp(argv[optind + 9], "fp32") != 0) {
            fprintf(stderr, "probe_conv: DTYPE must be bf16 or fp32, not '%s'\n", argv[optind + 9]);
            return 2;
        }
        one.fp32 = strcmp(argv[optind + 9], "fp32") == 0;
        if (!shape_finish(&one)) {
            fprintf(stderr, "probe_conv: the filter does not fit the padded input\n");
            return 2;
        }
        shapes = &one;
        n_shapes = 1;
    } else if (argc != optind) {
        fprintf(stderr, "probe_conv: give all 10 shape values or none\n");
        usage(stderr);
        return 2;
    } else {
        static shape_t defs[sizeof DEFAULTS / sizeof DEFAULTS[0]];
        n_shapes = (int)(sizeof DEFAULTS / sizeof DEFAULTS[0]);
        for (int i = 0; i < n_shapes; i++) { defs[i] = DEFAULTS[i]; shape_finish(&defs[i]); }
        shapes = defs;
    }

    int n_dev = 0;
    cudaError_t e = cudaGetDeviceCount(&n_dev);
    if (e != cudaSuccess || n_dev == 0) {
        fprintf(stderr, "probe_conv: no CUDA device (%s)\n", e != cudaSuccess ? cudaGetErrorString(e) : "0 devices");
        return 2;
    }
    struct cudaDeviceProp prop;
    int rt = 0, drv = 0;
    CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
    CUDA_CHECK(cudaRuntimeGetVersion(&rt));
    CUDA_CHECK(cudaDriverGetVersion(&drv));
    CUDA_CHECK(cudaStreamCreate(&p.stream));
    CUDNN_CHECK(cudnnCreate(&p.handle));
    CUDNN_CHECK(cudnnSetStream(p.handle, p.stream));
    p.ev = calloc((size_t)p.iters + 2, sizeof *p.ev);
    if (!p.ev) { fprintf(stderr, "probe_conv: out of host memory\n"); return 1; }
    for (int i = 0; i < p.iters + 2; i++) CUDA_CHECK(cudaEventCreate(&p.ev[i]));
    p.ws_bytes = (size_t)ws_mib << 20;
    p.train_bytes = (size_t)256 << 20;
    CUDA_CHECK(cudaMalloc(&p.ws, p.ws_bytes ? p.ws_bytes : 256));
    CUDA_CHECK(cudaMalloc(&p.train, p.train_bytes));
    printf("# probe_conv: %s (sm_%d%d, %d SMs), cuDNN %zu (built with %d), CUDA runtime %d, driver %d\n", prop.name,
           prop.major, prop.minor, prop.multiProcessorCount, cudnnGetVersion(), CUDNN_VERSION, rt, drv);
    printf("# NHWC, cross-correlation, fp32 compute; legacy: cudnnFind*Ex, tensor-op math; backend: every engine and "
           "the first %d configs of heuristics A, B, fallback; median of %d, workspace <= %d MiB\n",
           p.max_cfgs, p.iters, ws_mib);
    fflush(stdout);

    dir_result_t *rows = calloc((size_t)n_shapes * N_DIR, sizeof *rows);
    if (!rows) { fprintf(stderr, "probe_conv: out of host memory\n"); return 1; }
    int status = 0, n_rows = 0;
    for (int i = 0; i < n_shapes && status == 0; i++) {
        const shape_t *s = &shapes[i];
        size_t es = s->fp32 ? 4 : 2;
        size_t xb = (size_t)s->n * s->h * s->w * s->c * es, wb = (size_t)s->k * s->r * s->s * s->c * es;
        size_t yb = (size_t)s->n * s->p * s->q * s->k * es, hb = xb > wb ? xb : wb;
        hb = hb > yb ? hb : yb;
        void *host = malloc(hb);
        if (!host) { fprintf(stderr, "probe_conv: out of host memory (%zu B)\n", hb); return 1; }
        fill_random(s, host, hb);
        CUDA_CHECK(cudaMalloc(&p.x, xb)); CUDA_CHECK(cudaMalloc(&p.w, wb)); CUDA_CHECK(cudaMalloc(&p.y, yb));
        for (int d = 0; d < N_DIR && status == 0; d++) {
            n_rows = i * N_DIR + d + 1;
            if (!dirs[d]) continue;
            if (p.verbose) { char name[96]; shape_name(s, name, sizeof name); printf("## %s %s\n", name, DIR_NAME[d]); }
            if (probe_dir(&p, s, (dir_t)d, host, &rows[i * N_DIR + d]) < 0) {
                fprintf(stderr, "probe_conv: the CUDA context is lost (%s): stopping\n", DIR_NAME[d]);
                status = 1;
            }
            print_human(s, (dir_t)d, &rows[i * N_DIR + d]);
        }
        free(host);
        if (status == 0) { CUDA_CHECK(cudaFree(p.x)); CUDA_CHECK(cudaFree(p.w)); CUDA_CHECK(cudaFree(p.y)); }
    }
    print_tsv(shapes, dirs, rows, n_rows);
    free(rows);
    if (status == 0) {
        for (int i = 0; i < p.iters + 2; i++) CUDA_CHECK(cudaEventDestroy(p.ev[i]));
        CUDA_CHECK(cudaFree(p.ws)); CUDA_CHECK(cudaFree(p.train));
        CUDNN_CHECK(cudnnDestroy(p.handle));
        CUDA_CHECK(cudaStreamDestroy(p.stream));
    }
    free(p.ev);
    return status;
}
