/* gpt2_sdpa.c — causal attention as two cuDNN backend operation graphs (gpt2_sdpa.h), lowered the way cuDNN's fused
 * flash-attention engines match them (cudnn-frontend's composite SDPA), planned once and executed per call. */
#include "gpt2_sdpa.h"
#include "../check.h"
#include <float.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

/* The tensors a variant pack binds; virtual ones are numbered from UID_VIRTUAL up. */
enum { UID_Q = 1, UID_K, UID_V, UID_O, UID_STATS, UID_DO, UID_DQ, UID_DK, UID_DV, UID_SCALE, UID_NEG_INF, UID_ONE,
       UID_SUM, UID_DQ_ACC, UID_VIRTUAL = 100 };

#define MAX_OPS 32
#define MAX_CFGS 8
#define ALIGN_UP(x) (((x) + 255) / 256 * 256)

typedef struct {
    gpt2_sdpa_t *a;
    int64_t next_uid;
    cudnnBackendDescriptor_t ops[MAX_OPS];
    int n_ops;
    cudnnDataType_t index_type;   /* GEN_INDEX's compute type: cuDNN releases have matched either */
    char *err;
    size_t errlen;
    int failed;
} bld_t;

static void fail_msg(bld_t *g, int line, const char *what, const char *why) {
    if (!g->failed) snprintf(g->err, g->errlen, "%s:%d: %s -> %s", __FILE__, line, what, why);
    g->failed = 1;
}

/* Setup fails softly: the first failure is recorded (file:line, the call, cuDNN's status and its last message) and
 * every later step is skipped, so the caller can fall back to the plain path. */
#define TRY(g, call) try_((g), (call), __LINE__, #call)
static int try_(bld_t *g, cudnnStatus_t st, int line, const char *what) {
    if (st == CUDNN_STATUS_SUCCESS) return 1;
    if (!g->failed) {
        char last[256] = "", why[384];
        cudnnGetLastErrorString(last, sizeof last);
        snprintf(why, sizeof why, "%s%s%s", cudnnGetErrorString(st), last[0] ? ": " : "", last);
        fail_msg(g, line, what, why);
    }
    return 0;
}
#define SET(g, d, name, type, n, ptr) TRY(g, cudnnBackendSetAttribute(d, name, type, n, ptr))
#define FIN(g, d) TRY(g, cudnnBackendFinalize(d))

static cudnnBackendDescriptor_t part(bld_t *g, cudnnBackendDescriptorType_t type) {
    gpt2_sdpa_t *a = g->a;
    cudnnBackendDescriptor_t d = NULL;
    if (g->failed) return NULL;
    if (a->n_parts == GPT2_SDPA_PARTS) {
        fail_msg(g, __LINE__, "part", "more descriptors than GPT2_SDPA_PARTS");
        return NULL;
    }
    if (!TRY(g, cudnnBackendCreateDescriptor(type, &d))) return NULL;
    a->parts[a->n_parts++] = d;
    return d;
}

/* Destroys the parts made after the first n (a variant that failed), newest first. */
static void rewind_parts(gpt2_sdpa_t *a, int n) {
    while (a->n_parts > n) CHECK_CUDNN(cudnnBackendDestroyDescriptor(a->parts[--a->n_parts]));
}

// --- tensors and operations

static cudnnBackendDescriptor_t tensor(bld_t *g, int64_t uid, cudnnDataType_t dt, const int64_t *dims,
                                       const int64_t *strides, int virt, int by_value) {
    cudnnBackendDescriptor_t t = part(g, CUDNN_BACKEND_TENSOR_DESCRIPTOR);
    int64_t align = 16;
    bool v = virt != 0, bv = by_value != 0;
    if (uid == 0) uid = g->next_uid++;
    int ok = t && SET(g, t, CUDNN_ATTR_TENSOR_DATA_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &dt)
        && SET(g, t, CUDNN_ATTR_TENSOR_DIMENSIONS, CUDNN_TYPE_INT64, 4, dims)
        && SET(g, t, CUDNN_ATTR_TENSOR_STRIDES, CUDNN_TYPE_INT64, 4, strides)
        && SET(g, t, CUDNN_ATTR_TENSOR_UNIQUE_ID, CUDNN_TYPE_INT64, 1, &uid)
        && SET(g, t, CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT, CUDNN_TYPE_INT64, 1, &align)
        && SET(g, t, CUDNN_ATTR_TENSOR_IS_VIRTUAL, CUDNN_TYPE_BOOLEAN, 1, &v)
        && (!by_value || SET(g, t, CUDNN_ATTR_TENSOR_IS_BY_VALUE, CUDNN_TYPE_BOOLEAN, 1, &bv))
        && FIN(g, t);
    return ok ? t : NULL;
}
/* An intermediate the fused kernel keeps in registers or shared memory. */
static cudnnBackendDescriptor_t virt(bld_t *g, cudnnDataType_t dt, const int64_t *dims, const int64_t *strides) {
    return tensor(g, 0, dt, dims, strides, 1, 0);
}
/* A host float passed by value at execution (its address in the variant pack). */
static cudnnBackendDescriptor_t scalar(bld_t *g, int64_t uid) {
    static const int64_t one4[4] = {1, 1, 1, 1};
    return tensor(g, uid, CUDNN_DATA_FLOAT, one4, one4, 0, 1);
}

static int push(bld_t *g, cudnnBackendDescriptor_t op) {
    if (g->n_ops == MAX_OPS) {
        fail_msg(g, __LINE__, "push", "more operations than MAX_OPS");
        return 0;
    }
    g->ops[g->n_ops++] = op;
    return 1;
}

/* c = a b over the last two dimensions, batched over the first two, fp32 accumulation. */
static int matmul(bld_t *g, cudnnBackendDescriptor_t x, cudnnBackendDescriptor_t w, cudnnBackendDescriptor_t y) {
    cudnnDataType_t comp = CUDNN_DATA_FLOAT;
    cudnnBackendDescriptor_t md = part(g, CUDNN_BACKEND_MATMUL_DESCRIPTOR), op = NULL;
    return md && SET(g, md, CUDNN_ATTR_MATMUL_COMP_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &comp) && FIN(g, md)
        && (op = part(g, CUDNN_BACKEND_OPERATION_MATMUL_DESCRIPTOR)) != NULL
        && SET(g, op, CUDNN_ATTR_OPERATION_MATMUL_ADESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &x)
        && SET(g, op, CUDNN_ATTR_OPERATION_MATMUL_BDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &w)
        && SET(g, op, CUDNN_ATTR_OPERATION_MATMUL_CDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &y)
        && SET(g, op, CUDNN_ATTR_OPERATION_MATMUL_DESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &md)
        && FIN(g, op) && push(g, op);
}

/* y = mode(x[, b][, t]) in precision prec; axis >= 0 for GEN_INDEX. */
static int pw(bld_t *g, cudnnPointwiseMode_t mode, cudnnDataType_t prec, int64_t axis, cudnnBackendDescriptor_t x,
              cudnnBackendDescriptor_t b, cudnnBackendDescriptor_t t, cudnnBackendDescriptor_t y) {
    cudnnBackendDescriptor_t pd = part(g, CUDNN_BACKEND_POINTWISE_DESCRIPTOR), op = NULL;
    return pd && SET(g, pd, CUDNN_ATTR_POINTWISE_MODE, CUDNN_TYPE_POINTWISE_MODE, 1, &mode)
        && SET(g, pd, CUDNN_ATTR_POINTWISE_MATH_PREC, CUDNN_TYPE_DATA_TYPE, 1, &prec)
        && (axis < 0 || SET(g, pd, CUDNN_ATTR_POINTWISE_AXIS, CUDNN_TYPE_INT64, 1, &axis)) && FIN(g, pd)
        && (op = part(g, CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR)) != NULL
        && SET(g, op, CUDNN_ATTR_OPERATION_POINTWISE_PW_DESCRIPTOR, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &pd)
        && SET(g, op, CUDNN_ATTR_OPERATION_POINTWISE_XDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &x)
        && (!b || SET(g, op, CUDNN_ATTR_OPERATION_POINTWISE_BDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &b))
        && (!t || SET(g, op, CUDNN_ATTR_OPERATION_POINTWISE_TDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &t))
        && SET(g, op, CUDNN_ATTR_OPERATION_POINTWISE_YDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &y)
        && FIN(g, op) && push(g, op);
}
static int pw_f(bld_t *g, cudnnPointwiseMode_t mode, cudnnBackendDescriptor_t x, cudnnBackendDescriptor_t b,
                cudnnBackendDescriptor_t y) {
    return pw(g, mode, CUDNN_DATA_FLOAT, -1, x, b, NULL, y);
}

/* y = max or sum of x over the dimensions where y has extent 1. */
static int reduce(bld_t *g, cudnnReduceTensorOp_t rop, cudnnBackendDescriptor_t x, cudnnBackendDescriptor_t y) {
    cudnnDataType_t comp = CUDNN_DATA_FLOAT;
    cudnnBackendDescriptor_t rd = part(g, CUDNN_BACKEND_REDUCTION_DESCRIPTOR), op = NULL;
    return rd && SET(g, rd, CUDNN_ATTR_REDUCTION_OPERATOR, CUDNN_TYPE_REDUCTION_OPERATOR_TYPE, 1, &rop)
        && SET(g, rd, CUDNN_ATTR_REDUCTION_COMP_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &comp) && FIN(g, rd)
        && (op = part(g, CUDNN_BACKEND_OPERATION_REDUCTION_DESCRIPTOR)) != NULL
        && SET(g, op, CUDNN_ATTR_OPERATION_REDUCTION_XDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &x)
        && SET(g, op, CUDNN_ATTR_OPERATION_REDUCTION_YDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &y)
        && SET(g, op, CUDNN_ATTR_OPERATION_REDUCTION_DESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &rd)
        && FIN(g, op) && push(g, op);
}

/* y: x's elements seen through y's dimensions and strides (a transpose, nothing moved). */
static int reshape(bld_t *g, cudnnBackendDescriptor_t x, cudnnBackendDescriptor_t y) {
    cudnnBackendDescriptor_t op = part(g, CUDNN_BACKEND_OPERATION_RESHAPE_DESCRIPTOR);
    return op && SET(g, op, CUDNN_ATTR_OPERATION_RESHAPE_XDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &x)
        && SET(g, op, CUDNN_ATTR_OPERATION_RESHAPE_YDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &y)
        && FIN(g, op) && push(g, op);
}

/* s (B, NH, T, T) with -inf (lowest before cuDNN 9.10) above the diagonal: keys after the query's position. */
static cudnnBackendDescriptor_t causal(bld_t *g, cudnnBackendDescriptor_t s, const int64_t *tt, const int64_t *tts) {
    cudnnBackendDescriptor_t row = virt(g, CUDNN_DATA_INT32, tt, tts), col = virt(g, CUDNN_DATA_INT32, tt, tts);
    cudnnBackendDescriptor_t keep = virt(g, CUDNN_DATA_BOOLEAN, tt, tts), y = virt(g, CUDNN_DATA_FLOAT, tt, tts);
    cudnnBackendDescriptor_t ninf = scalar(g, UID_NEG_INF);
    int ok = pw(g, CUDNN_POINTWISE_GEN_INDEX, g->index_type, 2, s, NULL, NULL, row)
        && pw(g, CUDNN_POINTWISE_GEN_INDEX, g->index_type, 3, s, NULL, NULL, col)
        && pw(g, CUDNN_POINTWISE_CMP_GE, CUDNN_DATA_BOOLEAN, -1, row, col, NULL, keep)
        && pw(g, CUDNN_POINTWISE_BINARY_SELECT, CUDNN_DATA_FLOAT, -1, s, ninf, keep, y);   /* keep ? s : ninf */
    return ok ? y : NULL;
}

// --- the two graphs

/* Shapes shared by both graphs: q, k, v, dq, dk, dv where qkv has them, (B, NH, T, hd) with k and v also seen
 * transposed (B, NH, hd, T); out and dout (B, T, C) seen as (B, NH, T, hd); the scores (B, NH, T, T) packed; the
 * per-row statistics (B, NH, T, 1) packed. */
typedef struct {
    int64_t qd[4], qs[4], td[4], ts[4], od[4], os[4], tt[4], tts[4], ttt[4], rd[4], rs[4];
} shapes_t;

static shapes_t shapes(const gpt2_sdpa_t *a) {
    int64_t B = a->B, T = a->T, C = a->C, H = a->NH, D = C / H;
    shapes_t s = {{B, H, T, D}, {T * 3 * C, D, 3 * C, 1}, {B, H, D, T}, {T * 3 * C, D, 1, 3 * C},
                  {B, H, T, D}, {T * C, D, C, 1},         {B, H, T, T}, {H * T * T, T * T, T, 1},
                  {H * T * T, T * T, 1, T},               {B, H, T, 1}, {H * T, T, 1, 1}};
    return s;
}

/* Q K^T, scaled, causal, softmax (its max + log sum exp kept as stats), times V. */
static int build_forward(bld_t *g) {
    shapes_t s = shapes(g->a);
    const cudnnDataType_t bf = CUDNN_DATA_BFLOAT16, f = CUDNN_DATA_FLOAT;
    cudnnBackendDescriptor_t q = tensor(g, UID_Q, bf, s.qd, s.qs, 0, 0), kt = tensor(g, UID_K, bf, s.td, s.ts, 0, 0);
    cudnnBackendDescriptor_t v = tensor(g, UID_V, bf, s.qd, s.qs, 0, 0), o = tensor(g, UID_O, bf, s.od, s.os, 0, 0);
    cudnnBackendDescriptor_t stats = tensor(g, UID_STATS, f, s.rd, s.rs, 0, 0), scale = scalar(g, UID_SCALE);
    cudnnBackendDescriptor_t sc = virt(g, f, s.tt, s.tts), sc2 = virt(g, f, s.tt, s.tts), masked = NULL;
    cudnnBackendDescriptor_t mx = virt(g, f, s.rd, s.rs), d = virt(g, f, s.tt, s.tts), e = virt(g, f, s.tt, s.tts);
    cudnnBackendDescriptor_t z = virt(g, f, s.rd, s.rs), lz = virt(g, f, s.rd, s.rs), p = virt(g, bf, s.tt, s.tts);
    return matmul(g, q, kt, sc) && pw_f(g, CUDNN_POINTWISE_MUL, sc, scale, sc2)
        && (masked = causal(g, sc2, s.tt, s.tts)) != NULL
        && reduce(g, CUDNN_REDUCE_TENSOR_MAX, masked, mx) && pw_f(g, CUDNN_POINTWISE_SUB, masked, mx, d)
        && pw_f(g, CUDNN_POINTWISE_EXP, d, NULL, e) && reduce(g, CUDNN_REDUCE_TENSOR_ADD, e, z)
        && pw_f(g, CUDNN_POINTWISE_LOG, z, NULL, lz) && pw_f(g, CUDNN_POINTWISE_ADD, mx, lz, stats)
        && pw_f(g, CUDNN_POINTWISE_DIV, e, z, p) && matmul(g, p, v, o);
}

/* P = exp(scale Q K^T - stats) under the mask; dV = P^T dO; dS = scale P (dO V^T - rowsum(dO o O)); dK = dS^T Q;
 * dQ = dS K, straight to dq when deterministic, else accumulated in fp32 (atomics) and converted. */
static int build_backward(bld_t *g, int det) {
    shapes_t s = shapes(g->a);
    int64_t B = g->a->B, T = g->a->T, H = g->a->NH, D = g->a->C / g->a->NH;
    const int64_t dood[4] = {B, H, T, D}, doos[4] = {H * T * D, T * D, H * D, 1}, accs[4] = {H * T * D, T * D, D, 1};
    const cudnnDataType_t bf = CUDNN_DATA_BFLOAT16, f = CUDNN_DATA_FLOAT;
    cudnnBackendDescriptor_t q = tensor(g, UID_Q, bf, s.qd, s.qs, 0, 0), kt = tensor(g, UID_K, bf, s.td, s.ts, 0, 0);
    cudnnBackendDescriptor_t vt = tensor(g, UID_V, bf, s.td, s.ts, 0, 0), o = tensor(g, UID_O, bf, s.od, s.os, 0, 0);
    cudnnBackendDescriptor_t dO = tensor(g, UID_DO, bf, s.od, s.os, 0, 0);
    cudnnBackendDescriptor_t stats = tensor(g, UID_STATS, f, s.rd, s.rs, 0, 0);
    cudnnBackendDescriptor_t dq = tensor(g, UID_DQ, bf, s.qd, s.qs, 0, 0), dk = tensor(g, UID_DK, bf, s.qd, s.qs, 0, 0);
    cudnnBackendDescriptor_t dv = tensor(g, UID_DV, bf, s.qd, s.qs, 0, 0);
    cudnnBackendDescriptor_t scale = scalar(g, UID_SCALE), one = scalar(g, UID_ONE);
    cudnnBackendDescriptor_t sum = tensor(g, UID_SUM, f, s.rd, s.rs, 0, 0);   /* rowsum(dO o O): in the workspace */
    cudnnBackendDescriptor_t doo = virt(g, f, dood, doos), r = virt(g, f, s.rd, s.rs);
    cudnnBackendDescriptor_t sc = virt(g, f, s.tt, s.tts), sc2 = virt(g, f, s.tt, s.tts);
    cudnnBackendDescriptor_t sc3 = virt(g, f, s.tt, s.tts), masked = NULL, e = virt(g, f, s.tt, s.tts);
    cudnnBackendDescriptor_t pt = virt(g, bf, s.tt, s.ttt), dp = virt(g, f, s.tt, s.tts);
    cudnnBackendDescriptor_t dps = virt(g, f, s.tt, s.tts), dpe = virt(g, f, s.tt, s.tts);
    cudnnBackendDescriptor_t ds = virt(g, f, s.tt, s.tts), dst = virt(g, bf, s.tt, s.ttt);
    cudnnBackendDescriptor_t k = virt(g, bf, s.qd, s.qs);
    int ok = pw_f(g, CUDNN_POINTWISE_MUL, dO, o, doo) && reduce(g, CUDNN_REDUCE_TENSOR_ADD, doo, r)
        && pw_f(g, CUDNN_POINTWISE_MUL, r, one, sum)
        && matmul(g, q, kt, sc) && pw_f(g, CUDNN_POINTWISE_MUL, sc, scale, sc2)
        && pw_f(g, CUDNN_POINTWISE_SUB, sc2, stats, sc3) && (masked = causal(g, sc3, s.tt, s.tts)) != NULL
        && pw_f(g, CUDNN_POINTWISE_EXP, masked, NULL, e)
        && reshape(g, e, pt) && matmul(g, pt, dO, dv)
        && matmul(g, dO, vt, dp) && pw_f(g, CUDNN_POINTWISE_SUB, dp, sum, dps)
        && pw_f(g, CUDNN_POINTWISE_MUL, dps, e, dpe) && pw_f(g, CUDNN_POINTWISE_MUL, dpe, scale, ds)
        && reshape(g, ds, dst) && matmul(g, dst, q, dk)
        && reshape(g, kt, k);
    if (det) return ok && matmul(g, ds, k, dq);
    cudnnBackendDescriptor_t acc = tensor(g, UID_DQ_ACC, f, s.qd, accs, 0, 0);
    return ok && matmul(g, ds, k, acc) && pw(g, CUDNN_POINTWISE_IDENTITY, f, -1, acc, NULL, NULL, dq);
}

/* The graph of g's operations and the first of the heuristics' configs (mode A, then the fallback list) that
 * finalises into a plan on this GPU; NULL with the reason recorded when none does. */
static cudnnBackendDescriptor_t plan_graph(bld_t *g, int64_t *engine, size_t *ws) {
    static const cudnnBackendHeurMode_t MODES[2] = {CUDNN_HEUR_MODE_A, CUDNN_HEUR_MODE_FALLBACK};
    gpt2_sdpa_t *a = g->a;
    cudnnBackendDescriptor_t graph = part(g, CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR);
    int ok = graph && SET(g, graph, CUDNN_ATTR_OPERATIONGRAPH_HANDLE, CUDNN_TYPE_HANDLE, 1, &a->h)
        && SET(g, graph, CUDNN_ATTR_OPERATIONGRAPH_OPS, CUDNN_TYPE_BACKEND_DESCRIPTOR, g->n_ops, g->ops)
        && FIN(g, graph);
    cudnnStatus_t last = CUDNN_STATUS_NOT_SUPPORTED;
    int tried = 0;
    for (int m = 0; ok && m < 2; m++) {
        cudnnBackendDescriptor_t heur = part(g, CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR), cfgs[MAX_CFGS];
        int64_t n = 0;
        ok = heur && SET(g, heur, CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &graph)
            && SET(g, heur, CUDNN_ATTR_ENGINEHEUR_MODE, CUDNN_TYPE_HEUR_MODE, 1, &MODES[m]);
        if (!ok) break;
        /* a mode with no engine for this graph may refuse to finalise: the next mode is still worth asking */
        if (cudnnBackendFinalize(heur) != CUDNN_STATUS_SUCCESS) continue;
        for (int i = 0; ok && i < MAX_CFGS; i++) ok = (cfgs[i] = part(g, CUDNN_BACKEND_ENGINECFG_DESCRIPTOR)) != NULL;
        ok = ok && TRY(g, cudnnBackendGetAttribute(heur, CUDNN_ATTR_ENGINEHEUR_RESULTS, CUDNN_TYPE_BACKEND_DESCRIPTOR,
                                                   MAX_CFGS, &n, cfgs));
        for (int64_t i = 0; ok && i < n && i < MAX_CFGS; i++) {
            cudnnBackendDescriptor_t plan = part(g, CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR), eng = NULL;
            int64_t w = 0, got = 0;
            ok = plan && SET(g, plan, CUDNN_ATTR_EXECUTION_PLAN_HANDLE, CUDNN_TYPE_HANDLE, 1, &a->h)
                && SET(g, plan, CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &cfgs[i]);
            if (!ok) break;
            tried++;
            if ((last = cudnnBackendFinalize(plan)) != CUDNN_STATUS_SUCCESS) continue;   /* the next config */
            ok = TRY(g, cudnnBackendGetAttribute(plan, CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE, CUDNN_TYPE_INT64, 1,
                                                 &got, &w)) && w >= 0;
            *engine = -1;
            if (ok && (eng = part(g, CUDNN_BACKEND_ENGINE_DESCRIPTOR)) != NULL
                && cudnnBackendGetAttribute(cfgs[i], CUDNN_ATTR_ENGINECFG_ENGINE, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1,
                                            &got, &eng) == CUDNN_STATUS_SUCCESS)
                cudnnBackendGetAttribute(eng, CUDNN_ATTR_ENGINE_GLOBAL_INDEX, CUDNN_TYPE_INT64, 1, &got, engine);
            if (!ok) return NULL;
            *ws = (size_t)w;
            return plan;
        }
    }
    if (ok) {
        char why[160];
        snprintf(why, sizeof why, "no engine config finalised a plan (%d tried, last: %s)", tried,
                 cudnnGetErrorString(last));
        fail_msg(g, __LINE__, "the fused attention graph", why);
    }
    return NULL;
}

// --- setup

void gpt2_sdpa_free(gpt2_sdpa_t *a) {
    rewind_parts(a, 0);
    memset(a, 0, sizeof *a);
}

int gpt2_sdpa_init(gpt2_sdpa_t *a, cudnnHandle_t h, int B, int T, int C, int NH, char *err, size_t errlen) {
    static const cudnnDataType_t INDEX[2] = {CUDNN_DATA_INT32, CUDNN_DATA_FLOAT};
    size_t ver = cudnnGetVersion();
    memset(a, 0, sizeof *a);
    if (B < 1 || T < 1 || NH < 1 || C % NH || (C / NH) % 8 || C / NH > 256) {
        snprintf(err, errlen, "the fused attention takes head widths of 8 to 256 in steps of 8, not %d / %d", C, NH);
        return -1;
    }
    if (ver >= 91000 && ver < 91002) {   /* the frontend refuses these releases' bf16 SDPA forward: known bugs */
        snprintf(err, errlen, "cuDNN %zu's fused attention has known bugs (9.10.0 and 9.10.1)", ver);
        return -1;
    }
    bld_t g = {a, UID_VIRTUAL, {0}, 0, CUDNN_DATA_INT32, err, errlen, 0};
    a->B = B, a->T = T, a->C = C, a->NH = NH;
    a->scale = 1.0f / sqrtf((float)(C / NH));
    a->neg_inf = ver < 91000 ? -FLT_MAX : -INFINITY;   /* what each release's masked softmax expects */
    a->one = 1.0f;
    a->h = h;
    /* forward: the first index type that plans is kept, and backward tries it first */
    int fwd_ok = 0, idx = 0;
    for (; idx < 2 && !fwd_ok; idx++) {
        int mark = a->n_parts;
        g.failed = 0, g.n_ops = 0, g.index_type = INDEX[idx];
        fwd_ok = build_forward(&g) && (a->fwd = plan_graph(&g, &a->fwd_engine, &a->fwd_ws)) != NULL;
        if (!fwd_ok) rewind_parts(a, mark);
    }
    /* backward: deterministic (the dS K product straight to dq) first, then fp32 accumulation with atomics */
    int bwd_ok = 0;
    for (int det = 1; fwd_ok && det >= 0 && !bwd_ok; det--)
        for (int i = 0; i < 2 && !bwd_ok; i++) {
            int mark = a->n_parts;
            g.failed = 0, g.n_ops = 0, g.index_type = INDEX[(idx - 1 + i) % 2];
            bwd_ok = build_backward(&g, det) && (a->bwd = plan_graph(&g, &a->bwd_engine, &a->bwd_ws)) != NULL;
            if (!bwd_ok) rewind_parts(a, mark);
            else a->deterministic = det;
        }
    if (!fwd_ok || !bwd_ok) {
        gpt2_sdpa_free(a);
        return -1;
    }
    size_t rows = (size_t)B * NH * T * sizeof(float), acc = a->deterministic ? 0 : rows * (size_t)(C / NH);
    size_t bwd = ALIGN_UP(a->bwd_ws) + ALIGN_UP(rows) + ALIGN_UP(acc);
    a->ws_bytes = ALIGN_UP(a->fwd_ws) > bwd ? ALIGN_UP(a->fwd_ws) : bwd;
    return 0;
}

// --- execution

static void run(gpt2_sdpa_t *a, cudnnBackendDescriptor_t plan, int n, const int64_t *uids, void **ptrs, void *ws,
                cudaStream_t stream) {
    cudnnBackendDescriptor_t pack = NULL;
    CHECK_CUDNN(cudnnSetStream(a->h, stream));
    CHECK_CUDNN(cudnnBackendCreateDescriptor(CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR, &pack));
    CHECK_CUDNN(cudnnBackendSetAttribute(pack, CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS, CUDNN_TYPE_INT64, n, uids));
    CHECK_CUDNN(cudnnBackendSetAttribute(pack, CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS, CUDNN_TYPE_VOID_PTR, n, ptrs));
    CHECK_CUDNN(cudnnBackendSetAttribute(pack, CUDNN_ATTR_VARIANT_PACK_WORKSPACE, CUDNN_TYPE_VOID_PTR, 1, &ws));
    CHECK_CUDNN(cudnnBackendFinalize(pack));
    CHECK_CUDNN(cudnnBackendExecute(a->h, plan, pack));
    CHECK_CUDNN(cudnnBackendDestroyDescriptor(pack));
}

void gpt2_sdpa_forward(gpt2_sdpa_t *a, const void *qkv, void *out, float *stats, void *ws, cudaStream_t stream) {
    size_t c = (size_t)a->C * 2;   /* bytes from q to k, k to v in a row of qkv */
    const char *q = (const char *)qkv;
    int64_t uids[7] = {UID_Q, UID_K, UID_V, UID_O, UID_STATS, UID_SCALE, UID_NEG_INF};
    void *ptrs[7] = {(void *)q, (void *)(q + c), (void *)(q + 2 * c), out, stats, &a->scale, &a->neg_inf};
    run(a, a->fwd, 7, uids, ptrs, ws, stream);
}

void gpt2_sdpa_backward(gpt2_sdpa_t *a, const void *qkv, const void *out, const float *stats, const void *dout,
                        void *dqkv, void *ws, cudaStream_t stream) {
    size_t c = (size_t)a->C * 2, rows = (size_t)a->B * a->NH * a->T * sizeof(float);
    const char *q = (const char *)qkv;
    char *dq = (char *)dqkv, *sum = (char *)ws + ALIGN_UP(a->bwd_ws), *acc = sum + ALIGN_UP(rows);
    int64_t uids[14] = {UID_Q, UID_K, UID_V, UID_O, UID_DO, UID_STATS, UID_DQ, UID_DK, UID_DV, UID_SCALE,
                        UID_NEG_INF, UID_ONE, UID_SUM, UID_DQ_ACC};
    void *ptrs[14] = {(void *)q, (void *)(q + c), (void *)(q + 2 * c), (void *)out, (void *)dout, (void *)stats,
                      dq, dq + c, dq + 2 * c, &a->scale, &a->neg_inf, &a->one, sum, acc};
    /* cuDNN before 9.6 left zeroing the fp32 accumulator to its caller; zeroing it always costs one memset */
    if (!a->deterministic)
        CHECK_CUDA(cudaMemsetAsync(acc, 0, rows * (size_t)(a->C / a->NH), stream));
    run(a, a->bwd, a->deterministic ? 13 : 14, uids, ptrs, ws, stream);
}
