/* layer.h — the layer interface. A layer kind is a table of functions (layer_ops_t) over a layer_t;
 * layers hold views into the model's flat parameter/gradient buffers and own only descriptors and scratch. */
#pragma once
#include <stddef.h>
#include "tensor.h"
#include "gpu.h"
#include "rng.h"
#include "dtype.h"
#include "weight_init.h"

/* init_t and its names: weight_init.h. */

typedef struct layer layer_t;

typedef struct {
    const char *name;   /* "conv", "bn", "relu", "maxpool", "avgpool", "gap", "dense", "add", "flatten" */
    /* Output shape from l->in_shape[] and the config; returns -1 (and writes why to err) on a bad config.
     * Host-only: no CUDA calls. */
    int (*out_shape)(const layer_t *l, shape_t *out, char *err, size_t errlen);
    /* Trainable floats (weights then biases) and non-trainable state floats (BN running mean, var). */
    size_t (*param_count)(const layer_t *l);
    size_t (*state_count)(const layer_t *l);
    /* Host-side initialisation of this layer's slices of host copies of params and state.
     * NULL for layers without parameters or state. */
    void (*init)(const layer_t *l, float *params, float *state, init_t init, rng_t *rng);
    /* After every buffer is bound: create descriptors, run cudnnFind (caching per shape in g), allocate
     * private scratch. Returns the workspace bytes the chosen algorithms need from g->workspace. */
    size_t (*setup)(layer_t *l, gpu_t *g);
    /* y = f(x). training selects batch statistics (BN) and keeps what backward needs. */
    void (*forward)(layer_t *l, gpu_t *g, int training);
    /* dx[i] = dx_beta[i]*dx[i] + df/dx[i] . dy  for each i with dx[i] != NULL;
     * dw = dw_beta*dw + df/dw . dy  (dw_beta = 1 accumulates micro-batches; in fp32 whatever the layer's dtype). */
    void (*backward)(layer_t *l, gpu_t *g, float dw_beta);
    void (*destroy)(layer_t *l);
    /* Device bytes setup will allocate for the layer itself (scratch, copies, saved masks) on g with activations of
     * type t, needs_dx saying whether its first input has a gradient: known before setup, for the memory plan.
     * NULL: none. Host-only. */
    size_t (*own_bytes)(const layer_t *l, const gpu_t *g, int needs_dx, dtype_t t);
    /* Optional, both or neither: backward in two parts, for a zero-bubble pipeline that runs the weight gradient
     * later, in a bubble. backward_data: what backward does but the weight gradient (dx, and the parameter gradients
     * that come out of the same kernels, as batch norm's, which therefore has no split); backward_weight: the rest
     * of dw, with the same dw_beta. Data then weight (other layers' work may run between) computes exactly what
     * backward does; the weight part reads only x and dy. NULL: backward is all data part. */
    void (*backward_data)(layer_t *l, gpu_t *g, float dw_beta);
    void (*backward_weight)(layer_t *l, gpu_t *g, float dw_beta);
} layer_ops_t;

/* Per-kind configuration; unused fields stay 0. */
typedef struct {
    int k;          /* conv/pool window (square) */
    int stride;
    int pad;
    int cout;       /* conv output channels; dense output features */
    int bias;       /* conv: has a bias (dense always has one) */
    int fuse;       /* bn: BN_FUSE_NONE, BN_FUSE_RELU (relu(bn(x))), BN_FUSE_ADD_RELU (relu(bn(x0) + x1)) */
} layer_cfg_t;

/* Fusing the activation (and a residual add) into batch norm saves whole passes over the activations. */
enum { BN_FUSE_NONE = 0, BN_FUSE_RELU = 1, BN_FUSE_ADD_RELU = 2 };

/* What a convolution's bias does, from the graph (model_end). Batch norm subtracts the per-channel mean, so a bias
 * feeding batch norm changes no output and gets an exactly zero gradient: it is neither added nor differentiated
 * (DEAD; the parameter stays, as in the d2l model, with a gradient of 0). A bias feeding only the residual input of
 * a batch norm + add lands where that batch norm's shift lands: the batch norm adds it to its shift and hands it
 * the shift's gradient (FOLDED). Layers built outside a model keep ADD. */
enum { BIAS_ADD = 0, BIAS_DEAD = 1, BIAS_FOLDED = 2 };

struct layer {
    const layer_ops_t *ops;
    layer_cfg_t cfg;
    char label[32];             /* e.g. "s2.b0.conv1", for NVTX, errors and tests */

    /* graph: indices into the model's tensor table */
    int n_in;
    int in[2];
    int out;
    shape_t in_shape[2];
    shape_t out_shape;

    /* Precision is a parameter of the layer, set by the model from the GPU's math before setup: the type of x, dx,
     * y and dy. bf16 and fp16 (--math bf16 | fp16) are PyTorch's autocast: convolution and dense operands in the
     * 2-byte type with fp32 accumulation (they read w_lp), batch norm with fp32 statistics, scale and bias; w and dw
     * stay fp32. */
    dtype_t dtype;

    /* bound device pointers (set by the model after allocation), of type `dtype` */
    const void *x[2];
    void *dx[2];                /* NULL: this input needs no gradient (the data) */
    float dx_beta[2];           /* 0 overwrite, 1 accumulate: a tensor read by several layers */
    void *y;
    const void *dy;

    float *w, *dw;              /* view: params/grads + offset; biases follow weights. Always fp32 */
    const void *w_lp;           /* 2-byte layers: view into the model's copy of the parameters in `dtype` (else NULL) */
    void *dw_lp;                /* NULL, or where backward writes the gradients it computes in `dtype` (a
                                 * convolution's weights: layer_conv_lp_grads) instead of widening them into dw, a
                                 * 2-byte gradient buffer's slice; backward then takes dw_beta 0 only */
    size_t n_params;
    size_t param_offset;        /* floats from the start of the flat buffer */
    float *state;               /* view into the model's state buffer (BN running stats) */
    size_t n_state;
    size_t state_offset;

    int bias_use;               /* conv with a bias: BIAS_ADD, BIAS_DEAD or BIAS_FOLDED (set by model_end) */
    int fold_from;              /* bn with BN_FUSE_ADD_RELU: 1 + the index of the conv whose bias it folds, 0 none */
    const float *fold_b;        /* that conv's fp32 bias (cout floats) and its gradient, bound with the views */
    float *fold_db;

    void *priv;                 /* kind-specific: descriptors, algorithm choice, saved statistics */
};

/* The kinds, one file each under engine/layers/. */
extern const layer_ops_t layer_conv_ops;
extern const layer_ops_t layer_bn_ops;
extern const layer_ops_t layer_relu_ops;
extern const layer_ops_t layer_maxpool_ops;
extern const layer_ops_t layer_avgpool_ops;
extern const layer_ops_t layer_gap_ops;
extern const layer_ops_t layer_dense_ops;
extern const layer_ops_t layer_add_ops;
extern const layer_ops_t layer_flatten_ops;

#ifdef __cplusplus
extern "C" {
#endif
/* conv.cu, after setup: how many of its parameters (its weights, the first ones) a convolution computes the gradient
 * of in its 2-byte dtype (cuDNN's path under bf16 and fp16), which backward widens into dw, or writes to dw_lp where
 * that is set; 0 for every other path and math. */
size_t layer_conv_lp_grads(const layer_t *l);
#ifdef __cplusplus
}
#endif
