/* conv_be.h — convolutions through cuDNN's backend (graph) API: an engine config of heuristics modes A and B runs
 * some ResNet shapes up to 2.9x faster than the best legacy algorithm cudnnFind offers (a 1x1 filter gradient). */
#pragma once
#include <stddef.h>
#include <cudnn.h>
#include "../conv_algo.h"

#ifdef __cplusplus
extern "C" {
#endif

/* NHWC x (n, h, w, c), KRSC w (k, r, s, c), NHWC y (n, oh, ow, k) of one data type; fp32 compute. */
typedef struct {
    int n, h, w, c, k, r, s, stride, pad, oh, ow;
    cudnnDataType_t dtype;
} conv_be_shape_t;

/* Directions, in conv_algo_t.be's order: forward (x, w -> y), data gradient (dy, w -> dx), filter gradient
 * (x, dy -> dw). Each direction's tensors are named by the forward's roles: x/dx, w/dw, y/dy. */
enum { CONV_BE_FWD = 0, CONV_BE_DGRAD = 1, CONV_BE_WGRAD = 2 };
/* The graph's tensor ids, for a variant pack: x/dx, w/dw, y/dy. */
enum { CONV_BE_UID_X = 1, CONV_BE_UID_W = 2, CONV_BE_UID_Y = 3 };

/* Descriptors kept alive together and destroyed in reverse (cuDNN does not say that a finalized plan outlives its
 * graph). */
typedef struct {
    cudnnBackendDescriptor_t d[8 + CONV_BE_KNOBS];
    int n;
} conv_be_parts_t;

/* A plan, what it was built from, and its variant pack for the pointers it last ran with (a pointer that changes
 * rebuilds it; a layer's never do, so an eager step builds no descriptor). */
typedef struct {
    cudnnBackendDescriptor_t plan, pack;
    conv_be_parts_t parts;
    const void *ptr[3];
    void *ws_ptr;
    size_t ws;
} conv_be_plan_t;

/* The operation graph of one direction, y = op + beta y, into *graph (its descriptors appended to parts, which the
 * caller frees with conv_be_parts_free, also on failure). 1 on success, 0 when cuDNN refuses it. */
int conv_be_graph(cudnnHandle_t h, const conv_be_shape_t *s, int dir, float beta, conv_be_parts_t *parts,
                  cudnnBackendDescriptor_t *graph);
void conv_be_parts_free(conv_be_parts_t *p);

/* The first `max` configs of heuristics A, then B (duplicates dropped) that may replace a legacy algorithm:
 * deterministic, fp32 accumulation and inputs kept at their type, no runtime compilation (seconds per plan). Fills
 * out[0..cap); returns their count (0 when cuDNN builds no graph for the shape). */
int conv_be_candidates(cudnnHandle_t h, const conv_be_shape_t *s, int dir, int max, conv_be_cfg_t *out, int cap);
/* cfg's execution plan for the direction with y = alpha op + beta y (alpha 1). 0, or -1 when cuDNN refuses it (the
 * caller keeps the legacy algorithm). Sets cfg->ws from the plan. */
int conv_be_plan(cudnnHandle_t h, const conv_be_shape_t *s, int dir, float beta, conv_be_cfg_t *cfg,
                 conv_be_plan_t *out);
void conv_be_plan_free(conv_be_plan_t *p);
/* Runs the plan on the handle's stream; ws holds at least p->ws bytes. Pointers 16-byte aligned (the tensors'
 * declared alignment). */
void conv_be_run(cudnnHandle_t h, conv_be_plan_t *p, const void *x, const void *w, const void *y, void *ws);
/* "e62 25=2 2=7" for logs. */
void conv_be_describe(const conv_be_cfg_t *cfg, char *buf, size_t len);

#ifdef __cplusplus
}
#endif
