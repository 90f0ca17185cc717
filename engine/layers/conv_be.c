/* conv_be.c — one convolution direction as a cuDNN backend operation graph: its candidate engine configs (from the
 * heuristics), a config's plan, and running it. Setup-time calls fail softly (the legacy algorithm stays). */
#include "conv_be.h"
#include "../check.h"
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#define OK(call) ((call) == CUDNN_STATUS_SUCCESS)

static void destroy(cudnnBackendDescriptor_t *d) {
    if (*d) CHECK_CUDNN(cudnnBackendDestroyDescriptor(*d));
    *d = NULL;
}

/* A new descriptor kept in parts (freed with them); NULL when cuDNN refuses or the list is full. */
static cudnnBackendDescriptor_t part(conv_be_parts_t *p, cudnnBackendDescriptorType_t type) {
    cudnnBackendDescriptor_t d = NULL;
    if (p->n == (int)(sizeof p->d / sizeof p->d[0]) || !OK(cudnnBackendCreateDescriptor(type, &d))) return NULL;
    p->d[p->n++] = d;
    return d;
}

void conv_be_parts_free(conv_be_parts_t *p) {
    for (int i = p->n - 1; i >= 0; i--) destroy(&p->d[i]);
    p->n = 0;
}

static int tensor(conv_be_parts_t *p, cudnnBackendDescriptor_t *t, int64_t uid, cudnnDataType_t dt, int64_t n,
                  int64_t c, int64_t h, int64_t w) {
    int64_t dims[4] = {n, c, h, w}, strides[4] = {h * w * c, 1, w * c, c}, align = 16;
    return (*t = part(p, CUDNN_BACKEND_TENSOR_DESCRIPTOR)) != NULL
        && OK(cudnnBackendSetAttribute(*t, CUDNN_ATTR_TENSOR_DATA_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &dt))
        && OK(cudnnBackendSetAttribute(*t, CUDNN_ATTR_TENSOR_DIMENSIONS, CUDNN_TYPE_INT64, 4, dims))
        && OK(cudnnBackendSetAttribute(*t, CUDNN_ATTR_TENSOR_STRIDES, CUDNN_TYPE_INT64, 4, strides))
        && OK(cudnnBackendSetAttribute(*t, CUDNN_ATTR_TENSOR_UNIQUE_ID, CUDNN_TYPE_INT64, 1, &uid))
        && OK(cudnnBackendSetAttribute(*t, CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT, CUDNN_TYPE_INT64, 1, &align))
        && OK(cudnnBackendFinalize(*t));
}

int conv_be_graph(cudnnHandle_t h, const conv_be_shape_t *s, int dir, float beta, conv_be_parts_t *p,
                  cudnnBackendDescriptor_t *graph) {
    static const struct {
        cudnnBackendDescriptorType_t type;
        cudnnBackendAttributeName_t x, w, y, conv, alpha, beta;
    } OP[3] = {
        {CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_X,
         CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_W, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_Y,
         CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_CONV_DESC, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_ALPHA,
         CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_BETA},
        {CUDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_DATA_DESCRIPTOR, CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_DX,
         CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_W, CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_DY,
         CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_CONV_DESC, CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_ALPHA,
         CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_BETA},
        {CUDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_FILTER_DESCRIPTOR, CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_X,
         CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_DW, CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_DY,
         CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_CONV_DESC, CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_ALPHA,
         CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_BETA},
    };
    cudnnDataType_t comp = CUDNN_DATA_FLOAT;
    cudnnConvolutionMode_t mode = CUDNN_CROSS_CORRELATION;
    int64_t dims = 2, pad[2] = {s->pad, s->pad}, stride[2] = {s->stride, s->stride}, dil[2] = {1, 1};
    float alpha = 1.0f;
    cudnnBackendDescriptor_t x, w, y, conv, op;
    if (dir < 0 || dir > 2) return 0;
    int ok = tensor(p, &x, CONV_BE_UID_X, s->dtype, s->n, s->c, s->h, s->w)
        && tensor(p, &w, CONV_BE_UID_W, s->dtype, s->k, s->c, s->r, s->s)
        && tensor(p, &y, CONV_BE_UID_Y, s->dtype, s->n, s->k, s->oh, s->ow)
        && (conv = part(p, CUDNN_BACKEND_CONVOLUTION_DESCRIPTOR)) != NULL
        && OK(cudnnBackendSetAttribute(conv, CUDNN_ATTR_CONVOLUTION_COMP_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &comp))
        && OK(cudnnBackendSetAttribute(conv, CUDNN_ATTR_CONVOLUTION_CONV_MODE, CUDNN_TYPE_CONVOLUTION_MODE, 1, &mode))
        && OK(cudnnBackendSetAttribute(conv, CUDNN_ATTR_CONVOLUTION_SPATIAL_DIMS, CUDNN_TYPE_INT64, 1, &dims))
        && OK(cudnnBackendSetAttribute(conv, CUDNN_ATTR_CONVOLUTION_PRE_PADDINGS, CUDNN_TYPE_INT64, 2, pad))
        && OK(cudnnBackendSetAttribute(conv, CUDNN_ATTR_CONVOLUTION_POST_PADDINGS, CUDNN_TYPE_INT64, 2, pad))
        && OK(cudnnBackendSetAttribute(conv, CUDNN_ATTR_CONVOLUTION_FILTER_STRIDES, CUDNN_TYPE_INT64, 2, stride))
        && OK(cudnnBackendSetAttribute(conv, CUDNN_ATTR_CONVOLUTION_DILATIONS, CUDNN_TYPE_INT64, 2, dil))
        && OK(cudnnBackendFinalize(conv))
        && (op = part(p, OP[dir].type)) != NULL
        && OK(cudnnBackendSetAttribute(op, OP[dir].x, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &x))
        && OK(cudnnBackendSetAttribute(op, OP[dir].w, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &w))
        && OK(cudnnBackendSetAttribute(op, OP[dir].y, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &y))
        && OK(cudnnBackendSetAttribute(op, OP[dir].conv, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &conv))
        && OK(cudnnBackendSetAttribute(op, OP[dir].alpha, CUDNN_TYPE_FLOAT, 1, &alpha))
        && OK(cudnnBackendSetAttribute(op, OP[dir].beta, CUDNN_TYPE_FLOAT, 1, &beta))
        && OK(cudnnBackendFinalize(op))
        && (*graph = part(p, CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR)) != NULL
        && OK(cudnnBackendSetAttribute(*graph, CUDNN_ATTR_OPERATIONGRAPH_HANDLE, CUDNN_TYPE_HANDLE, 1, &h))
        && OK(cudnnBackendSetAttribute(*graph, CUDNN_ATTR_OPERATIONGRAPH_OPS, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &op))
        && OK(cudnnBackendFinalize(*graph));
    return ok;
}

/* A heuristics config's engine index and knobs into out; 1 when it may replace a legacy algorithm (see
 * conv_be_candidates), 0 when not or unreadable. */
static int cfg_read(cudnnBackendDescriptor_t cfg, conv_be_cfg_t *out) {
    conv_be_parts_t tmp = {0};
    cudnnBackendDescriptor_t eng = part(&tmp, CUDNN_BACKEND_ENGINE_DESCRIPTOR), knobs[CONV_BE_KNOBS] = {0};
    cudnnBackendNumericalNote_t nn[CUDNN_NUMERICAL_NOTE_TYPE_COUNT];
    cudnnBackendBehaviorNote_t bn[CUDNN_BEHAVIOR_NOTE_TYPE_COUNT];
    int64_t got = 0, nn_n = 0, bn_n = 0, engine = -1, nk = 0;
    memset(out, 0, sizeof *out);
    out->engine = -1;
    int ok = eng && OK(cudnnBackendGetAttribute(cfg, CUDNN_ATTR_ENGINECFG_ENGINE, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1,
                                                &got, &eng))
        && OK(cudnnBackendGetAttribute(eng, CUDNN_ATTR_ENGINE_GLOBAL_INDEX, CUDNN_TYPE_INT64, 1, &got, &engine))
        && OK(cudnnBackendGetAttribute(eng, CUDNN_ATTR_ENGINE_NUMERICAL_NOTE, CUDNN_TYPE_NUMERICAL_NOTE,
                                       CUDNN_NUMERICAL_NOTE_TYPE_COUNT, &nn_n, nn))
        && OK(cudnnBackendGetAttribute(eng, CUDNN_ATTR_ENGINE_BEHAVIOR_NOTE, CUDNN_TYPE_BEHAVIOR_NOTE,
                                       CUDNN_BEHAVIOR_NOTE_TYPE_COUNT, &bn_n, bn));
    for (int64_t i = 0; ok && i < nn_n; i++)
        ok = nn[i] != CUDNN_NUMERICAL_NOTE_NONDETERMINISTIC && nn[i] != CUDNN_NUMERICAL_NOTE_DOWN_CONVERT_INPUTS &&
             nn[i] != CUDNN_NUMERICAL_NOTE_REDUCED_PRECISION_REDUCTION;
    for (int64_t i = 0; ok && i < bn_n; i++) ok = bn[i] != CUDNN_BEHAVIOR_NOTE_RUNTIME_COMPILATION;
    for (int i = 0; ok && i < CONV_BE_KNOBS; i++)
        ok = (knobs[i] = part(&tmp, CUDNN_BACKEND_KNOB_CHOICE_DESCRIPTOR)) != NULL;
    ok = ok && OK(cudnnBackendGetAttribute(cfg, CUDNN_ATTR_ENGINECFG_KNOB_CHOICES, CUDNN_TYPE_BACKEND_DESCRIPTOR,
                                           CONV_BE_KNOBS, &nk, knobs)) && nk <= CONV_BE_KNOBS;
    for (int64_t i = 0; ok && i < nk; i++) {
        cudnnBackendKnobType_t type;
        int64_t value;
        ok = OK(cudnnBackendGetAttribute(knobs[i], CUDNN_ATTR_KNOB_CHOICE_KNOB_TYPE, CUDNN_TYPE_KNOB_TYPE, 1, &got,
                                         &type))
            && OK(cudnnBackendGetAttribute(knobs[i], CUDNN_ATTR_KNOB_CHOICE_KNOB_VALUE, CUDNN_TYPE_INT64, 1, &got,
                                           &value));
        out->knob_type[i] = (int)type;
        out->knob_value[i] = (long long)value;
    }
    if (ok) { out->engine = (int)engine; out->n_knobs = (int)nk; }
    conv_be_parts_free(&tmp);
    return ok;
}

static int same_cfg(const conv_be_cfg_t *a, const conv_be_cfg_t *b) {
    if (a->engine != b->engine || a->n_knobs != b->n_knobs) return 0;
    for (int i = 0; i < a->n_knobs; i++)
        if (a->knob_type[i] != b->knob_type[i] || a->knob_value[i] != b->knob_value[i]) return 0;
    return 1;
}

int conv_be_candidates(cudnnHandle_t h, const conv_be_shape_t *s, int dir, int max, conv_be_cfg_t *out, int cap) {
    static const cudnnBackendHeurMode_t MODES[2] = {CUDNN_HEUR_MODE_A, CUDNN_HEUR_MODE_B};
    conv_be_parts_t g = {0};
    cudnnBackendDescriptor_t graph = NULL;
    int n = 0;
    if (max > 64) max = 64;
    if (conv_be_graph(h, s, dir, 0.0f, &g, &graph))
        for (int m = 0; m < 2; m++) {
            conv_be_parts_t tmp = {0};
            cudnnBackendDescriptor_t heur = part(&tmp, CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR), cfgs[64];
            int64_t count = 0;
            int ok = heur && OK(cudnnBackendSetAttribute(heur, CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH,
                                                         CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &graph))
                && OK(cudnnBackendSetAttribute(heur, CUDNN_ATTR_ENGINEHEUR_MODE, CUDNN_TYPE_HEUR_MODE, 1, &MODES[m]))
                && OK(cudnnBackendFinalize(heur));
            int want = 0;
            for (; ok && want < max; want++) ok = OK(cudnnBackendCreateDescriptor(CUDNN_BACKEND_ENGINECFG_DESCRIPTOR,
                                                                                  &cfgs[want]));
            if (!ok && want > 0) want--;   /* the last create failed: nothing to free there */
            if (ok && OK(cudnnBackendGetAttribute(heur, CUDNN_ATTR_ENGINEHEUR_RESULTS, CUDNN_TYPE_BACKEND_DESCRIPTOR,
                                                  want, &count, cfgs)))
                for (int64_t i = 0; i < count && i < want && n < cap; i++) {
                    conv_be_cfg_t c;
                    int dup = 0;
                    if (!cfg_read(cfgs[i], &c)) continue;
                    for (int j = 0; j < n && !dup; j++) dup = same_cfg(&out[j], &c);
                    if (!dup) out[n++] = c;
                }
            for (int i = 0; i < want; i++) destroy(&cfgs[i]);
            conv_be_parts_free(&tmp);
        }
    conv_be_parts_free(&g);
    return n;
}

int conv_be_plan(cudnnHandle_t h, const conv_be_shape_t *s, int dir, float beta, conv_be_cfg_t *cfg,
                 conv_be_plan_t *out) {
    cudnnBackendDescriptor_t graph = NULL, eng, ec, knobs[CONV_BE_KNOBS];
    int64_t index = cfg->engine, ws = 0;
    memset(out, 0, sizeof *out);
    int ok = cfg->engine >= 0 && cfg->n_knobs >= 0 && cfg->n_knobs <= CONV_BE_KNOBS
        && conv_be_graph(h, s, dir, beta, &out->parts, &graph)
        && (eng = part(&out->parts, CUDNN_BACKEND_ENGINE_DESCRIPTOR)) != NULL
        && OK(cudnnBackendSetAttribute(eng, CUDNN_ATTR_ENGINE_OPERATION_GRAPH, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1,
                                       &graph))
        && OK(cudnnBackendSetAttribute(eng, CUDNN_ATTR_ENGINE_GLOBAL_INDEX, CUDNN_TYPE_INT64, 1, &index))
        && OK(cudnnBackendFinalize(eng));
    for (int i = 0; ok && i < cfg->n_knobs; i++) {
        cudnnBackendKnobType_t type = (cudnnBackendKnobType_t)cfg->knob_type[i];
        int64_t value = cfg->knob_value[i];
        ok = (knobs[i] = part(&out->parts, CUDNN_BACKEND_KNOB_CHOICE_DESCRIPTOR)) != NULL
            && OK(cudnnBackendSetAttribute(knobs[i], CUDNN_ATTR_KNOB_CHOICE_KNOB_TYPE, CUDNN_TYPE_KNOB_TYPE, 1, &type))
            && OK(cudnnBackendSetAttribute(knobs[i], CUDNN_ATTR_KNOB_CHOICE_KNOB_VALUE, CUDNN_TYPE_INT64, 1, &value))
            && OK(cudnnBackendFinalize(knobs[i]));
    }
    ok = ok && (ec = part(&out->parts, CUDNN_BACKEND_ENGINECFG_DESCRIPTOR)) != NULL
        && OK(cudnnBackendSetAttribute(ec, CUDNN_ATTR_ENGINECFG_ENGINE, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &eng))
        && (cfg->n_knobs == 0 || OK(cudnnBackendSetAttribute(ec, CUDNN_ATTR_ENGINECFG_KNOB_CHOICES,
                                                             CUDNN_TYPE_BACKEND_DESCRIPTOR, cfg->n_knobs, knobs)))
        && OK(cudnnBackendFinalize(ec))
        && (out->plan = part(&out->parts, CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR)) != NULL
        && OK(cudnnBackendSetAttribute(out->plan, CUDNN_ATTR_EXECUTION_PLAN_HANDLE, CUDNN_TYPE_HANDLE, 1, &h))
        && OK(cudnnBackendSetAttribute(out->plan, CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG,
                                       CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &ec))
        && OK(cudnnBackendFinalize(out->plan))
        && OK(cudnnBackendGetAttribute(out->plan, CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE, CUDNN_TYPE_INT64, 1, NULL,
                                       &ws)) && ws >= 0;
    if (!ok) { conv_be_plan_free(out); return -1; }
    out->ws = cfg->ws = (size_t)ws;
    return 0;
}

void conv_be_plan_free(conv_be_plan_t *p) {
    destroy(&p->pack);
    conv_be_parts_free(&p->parts);
    memset(p, 0, sizeof *p);
}

void conv_be_run(cudnnHandle_t h, conv_be_plan_t *p, const void *x, const void *w, const void *y, void *ws) {
    if (!p->pack || p->ptr[0] != x || p->ptr[1] != w || p->ptr[2] != y || p->ws_ptr != ws) {
        int64_t uids[3] = {CONV_BE_UID_X, CONV_BE_UID_W, CONV_BE_UID_Y};
        void *ptrs[3] = {(void *)x, (void *)w, (void *)y};
        destroy(&p->pack);
        CHECK_CUDNN(cudnnBackendCreateDescriptor(CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR, &p->pack));
        CHECK_CUDNN(cudnnBackendSetAttribute(p->pack, CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS, CUDNN_TYPE_INT64, 3, uids));
        CHECK_CUDNN(cudnnBackendSetAttribute(p->pack, CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS, CUDNN_TYPE_VOID_PTR, 3,
                                             ptrs));
        CHECK_CUDNN(cudnnBackendSetAttribute(p->pack, CUDNN_ATTR_VARIANT_PACK_WORKSPACE, CUDNN_TYPE_VOID_PTR, 1, &ws));
        CHECK_CUDNN(cudnnBackendFinalize(p->pack));
        p->ptr[0] = x; p->ptr[1] = w; p->ptr[2] = y; p->ws_ptr = ws;
    }
    CHECK_CUDNN(cudnnBackendExecute(h, p->plan, p->pack));
}

void conv_be_describe(const conv_be_cfg_t *cfg, char *buf, size_t len) {
    int k = snprintf(buf, len, "e%d", cfg->engine);
    for (int i = 0; i < cfg->n_knobs && k > 0 && (size_t)k < len; i++)
        k += snprintf(buf + k, len - (size_t)k, " %d=%lld", cfg->knob_type[i], cfg->knob_value[i]);
}
