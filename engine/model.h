/* model.h — a model is a small DAG of layers over a table of NHWC tensors, with all parameters in one
 * contiguous device buffer and all gradients in another (layers hold views), so an all-reduce is one call. */
#pragma once
#include <stddef.h>
#include "layer.h"
#include "idx.h"

/* ResNet-101 has 211 layers. A model_t is ~100 KB: allocate it on the heap (or inside a heap struct). */
#define MODEL_MAX_LAYERS 256
#define MODEL_MAX_TENSORS (MODEL_MAX_LAYERS + 1)

typedef struct {
    shape_t shape;
    void *val;          /* activation, of the model's act_dtype */
    void *grad;         /* d loss / d activation; NULL for the input */
    char label[32];
} tensor_t;

typedef struct model {
    char name[16];                  /* its MODEL_TABLE name (model_info.h) */
    int batch;                      /* the N every tensor was built for */
    dtype_t act_dtype;              /* activations and their gradients: the GPU's math's (math_act_dtype: bf16, fp16
                                     * or fp32), set by model_alloc */
    int classes;
    int n_layers;
    layer_t layers[MODEL_MAX_LAYERS];
    int n_tensors;
    tensor_t tensors[MODEL_MAX_TENSORS];
    int input;                      /* tensor index of the images (N, H, W, C) */
    int logits;                     /* tensor index of the logits (N, 1, 1, classes) */

    size_t n_params, n_state;
    float *params, *grads, *momentum;   /* flat device buffers, n_params floats each, layer order */
    float *state;                       /* flat device buffer: BN running statistics */
    void *params_lp;                    /* --math bf16 | fp16: the copy of params in act_dtype that convolutions and
                                         * dense layers read, rewritten by every SGD step; NULL otherwise */
    const float *loss_scale;            /* device: the scale the loss's gradient is multiplied by (fp16's dynamic loss
                                         * scale, loss_scale_t.scale of whoever owns it), or NULL: none. A slot takes
                                         * its owner's at model_alloc_slot */
    int *labels;                        /* (N) device labels of the current batch */
    double *acc;                        /* device: [loss sum, correct count] since the last reset */
    size_t workspace_bytes;             /* the arena the chosen algorithms need */
    void *act_block;                    /* one allocation for every activation and activation gradient */
    size_t act_bytes;                   /* its size (also when it did not fit: the out-of-memory message) */
    size_t mem_need, mem_free;          /* when model_alloc refused: the device memory it needs at least (activations,
                                         * flat buffers, batch-norm buffers) and what was free */

    /* A pipeline stage is an instance that runs only layers [first, end) and holds only its slice of the flat
     * buffers; a whole model is the stage [0, n_layers) with the whole buffers. */
    int first, end;
    size_t param_first, state_first;    /* where this instance's slice starts in the whole model's flat buffers */
    size_t n_params_all, n_state_all;   /* the whole model's sizes (n_params, n_state: this instance's slice) */
    int shared;                         /* 1: params, grads, momentum, state, activation gradients and acc are
                                         * another instance's (a further activation slot of the same stage) */
} model_t;

/* The type of activations and their gradients on g: its math's (math_act_dtype), which model_alloc sets as act_dtype. */
dtype_t model_act_dtype(const gpu_t *g);
/* Bytes of tensor t's activation (or its gradient): what a pipeline copy between stages moves. */
static inline size_t model_tensor_bytes(const model_t *m, int t) {
    return shape_numel(m->tensors[t].shape) * dtype_size(m->act_dtype);
}

/* Every tensor and every layer's parameter and state slice starts at a multiple of MODEL_ALIGN elements: 256 bytes
 * in fp32, 128 in bf16 or fp16. */
#define MODEL_ALIGN 64
static inline size_t model_align(size_t n) { return (n + MODEL_ALIGN - 1) / MODEL_ALIGN * MODEL_ALIGN; }
/* The data is the one tensor without a gradient: nothing before it learns. Every "needs dx" follows from this. */
static inline int model_tensor_has_grad(const model_t *m, int t) { return t != m->input; }

/* ---- building (host only) ---- */
void model_begin(model_t *m, const char *name, int batch, shape_t input, int classes);
/* Appends a layer reading tensor(s) in0 (and in1 >= 0 for add); returns the output tensor index,
 * or exits with a message on an invalid configuration. */
int model_add(model_t *m, const layer_ops_t *ops, const char *label, int in0, int in1, layer_cfg_t cfg);
/* Closes the graph: assigns parameter/state offsets and which gradients accumulate. */
void model_end(model_t *m, int logits);

/* What a model is built for: the side of its square input images, their channels and the classes of its last
 * layer. 0 in a field: the model's default (engine/model_info.h: 28, 1, 10 for lenet and resnet18; 224, 3, 1000
 * for resnet50 and resnet101). LeNet takes only 28x28. */
typedef struct { int image, channels, classes; } model_input_t;

/* ---- builders (engine/models/), one per MODEL_TABLE line (model_info.h): model_build_<name> ---- */
void model_build_lenet(model_t *m, int batch, model_input_t in);
void model_build_resnet18(model_t *m, int batch, model_input_t in);
/* torchvision's ResNet v1.5 with bottleneck blocks: blocks[4] per stage ({3, 4, 6, 3}: ResNet-50; {3, 4, 23, 3}:
 * ResNet-101), 64 * 2^s bottleneck channels, 4x expansion. width: channels of the first stage's bottleneck (64 in
 * torchvision; smaller in tests). */
void model_build_bottleneck(model_t *m, const char *name, int batch, model_input_t in, const int blocks[4], int width);
/* ResNet-50 and ResNet-101: model_build_bottleneck at torchvision's blocks and width. */
void model_build_resnet50(model_t *m, int batch, model_input_t in);
void model_build_resnet101(model_t *m, int batch, model_input_t in);
/* GPT-2's slot in the builders' table: it is no graph of layers (engine/gpt2/gpt2_model.h builds it), so
 * model_build_input refuses it before any builder runs, and this one only stops the process if called anyway. */
void model_build_gpt2(model_t *m, int batch, model_input_t in);
/* Appends one bottleneck block reading tensor x: relu(bn3(conv3(relu(bn2(conv2(relu(bn1(conv1(x))))))) + sc) with
 * sc = proj.bn(proj(x)) (1x1, stride) when project, else x; conv2 (3x3) carries the stride; 4 x width outputs.
 * Layers labelled "<prefix>.conv1" etc. Returns the output tensor. */
int model_add_bottleneck(model_t *m, int x, const char *prefix, int width, int stride, int project);
/* Builds by name at the model's default input; returns -1 for an unknown name. */
int model_build(model_t *m, const char *name, int batch);
/* Builds by name for input `in` (0 fields: defaults); -1 for an unknown name. Exits with a message on an input the
 * model cannot take (options_validate refuses those first). */
int model_build_input(model_t *m, const char *name, int batch, model_input_t in);
/* The input a model is built for to train on d: d's gathered image side, channels and classes. */
model_input_t model_input_of(const idx_dataset_t *d);
/* The real trainable parameter count (the sum over layers, without the 64-float alignment of the flat buffer). */
size_t model_param_count(const model_t *m);
/* Which activation gradients an instance holds itself: every one (a model, a stage's owner), none (a further
 * activation slot whose gradients live only within one micro-batch's backward, the owner's), or those a deferred
 * weight part reads as dy and those crossing the stage's ends, the rest the owner's (a zero-bubble pipeline's slot:
 * its weight gradients run after other micro-batches' backward, its copies in and out may overlap them). */
enum { MODEL_GRADS_ALL = 0, MODEL_GRADS_SHARED = 1, MODEL_GRADS_DEFERRED = 2 };
/* Bytes model_alloc_range (grads = MODEL_GRADS_ALL) or model_alloc_slot allocates for the activations and their
 * gradients of layers [first, end) in type t: the bulk of a run's memory, known before anything is allocated. */
size_t model_activation_bytes(const model_t *m, int first, int end, int grads, dtype_t t);
/* Forward multiply-adds of one image through the convolutions and dense layers (torchvision's "GFLOPS" column and
 * fvcore count these: 4.09 G for ResNet-50 at 224x224). */
double model_macs_per_image(const model_t *m);
/* Floating-point operations of one image's forward and backward through the convolutions and dense layers (2 per
 * multiply-add; backward = the weight gradient, plus the input gradient except where the input is the data),
 * counted from the layer shapes. The rest (batch norm, pooling, element-wise) is memory-bound and not counted. */
double model_flops_per_image(const model_t *m);

/* ---- device ---- */
/* Allocates buffers on g's device, binds views, runs each layer's setup (algorithm search),
 * and sizes g's workspace arena. 0, or -1 with nothing allocated when the activations (act_bytes) do not fit. */
int model_alloc(model_t *m, gpu_t *g);
/* Host initialisation from seed, then one upload; running statistics start at mean 0, var 1. The whole model is
 * initialised with one RNG stream and a stage uploads its slice, so stages start as 1-GPU training does. */
void model_init_params(model_t *m, init_t init, unsigned long long seed);
/* Forward through every layer; images must already be in tensors[input], labels in m->labels. */
void model_forward(model_t *m, gpu_t *g, int training);
/* Loss, gradient of the logits (scale = 1/global batch, times *m->loss_scale where set) and accumulation of
 * loss/correct into m->acc;
 * n_valid < batch marks padding rows (evaluation of a last partial chunk). */
void model_loss(model_t *m, gpu_t *g, int n_valid, float scale, int want_grad);
/* Backward through every layer in reverse; dw_beta = 1 accumulates into the existing gradients. */
void model_backward(model_t *m, gpu_t *g, float dw_beta);
/* Backward of layers end-1 down to first only: data-parallel strategies interleave it with bucketed
 * all-reduces (a bucket's gradients are final once every layer holding them has run backward). */
void model_backward_range(model_t *m, gpu_t *g, int first, int end, float dw_beta);
/* Binds every layer that computes its weight gradient in act_dtype (layer_conv_lp_grads: --math bf16 | fp16
 * convolutions on cuDNN) to write it straight into grads_lp (layer_t.dw_lp), n_params of act_dtype at the flat
 * buffer's offsets, instead of widening it into grads (backward then takes dw_beta 0 only); the rest stays fp32 in
 * grads. grads_lp NULL unbinds.
 * Writes the parts of the flat buffer still written in fp32 (batch norm, dense layers, biases, other paths,
 * alignment padding), in order, adjacent parts merged, as (offset, count) pairs to ranges (room for max pairs,
 * MODEL_MAX_LAYERS + 1 always suffice); returns their count, or -1, with nothing bound, where max is too small.
 * After model_alloc. */
int model_bind_grads_lp(model_t *m, void *grads_lp, size_t *ranges, int max);
/* The same backward in two parts (layer.h: backward_data, backward_weight): every layer's data part, end-1 down to
 * first, then, at any later point before the layers' inputs or output gradients change, the weight parts. Together
 * they compute what model_backward_range does, bit for bit. */
void model_backward_data_range(model_t *m, gpu_t *g, int first, int end, float dw_beta);
void model_backward_weight_range(model_t *m, gpu_t *g, int first, int end, float dw_beta);
void model_free(model_t *m);

/* ---- pipeline stages ---- */
/* At most this many tensors cross a stage boundary: 1 between residual blocks, 2 inside one (the shortcut beside the
 * branch), which lets a pipeline balance finer than its blocks. */
#define MODEL_MAX_CROSS 2
/* The tensors produced before layer i (or the input) and read at or after it, in increasing index: what a stage
 * starting at i receives (activations forward, their gradients back). Returns the count; writes at most max. */
int model_crossing(const model_t *m, int i, int *tensors, int max);
/* Layer indices i (1 <= i < n_layers) before which a stage may start, in increasing order: 1 to max_cross tensors
 * cross (max_cross 1: LeNet's every boundary, a residual network's block boundaries; 2: also inside blocks), and no
 * batch norm after i folds the bias of a convolution before it. Host only. Returns the count. */
int model_cut_points(const model_t *m, int max_cross, int *cuts);
/* Whether model_alloc_range may allocate layers [first, end) (in range): a valid stage (model_stage_valid) whose
 * ends are the model's or cut points with at most MODEL_MAX_CROSS crossing tensors. 1 yes, 0 no. Host only. */
int model_range_valid(const model_t *m, int first, int end);
/* Whether layers [first, end) may form a stage: no tensor produced before first is read at or after end (a stage
 * passes nothing through; a block may be cut once). 1 yes; 0 no, with that tensor in *through (may be NULL). */
int model_stage_valid(const model_t *m, int first, int end, int *through);
/* The same for many ranges (a balancer's): each tensor's producing layer (-1: the input) and last reader, computed
 * once. */
typedef struct {
    int n;
    int producer[MODEL_MAX_TENSORS], last[MODEL_MAX_TENSORS];
} model_spans_t;
void model_spans(const model_t *m, model_spans_t *s);
int model_spans_stage_valid(const model_spans_t *s, int first, int end, int *through);
/* Whether every stage of starts[0..p) (starts[0] = 0, cut points) is valid: 0, or -1 with a one-line message naming
 * the stage and the tensor it would pass through. Host only. */
int model_split_valid(const model_t *m, const int *starts, int p, char *err, size_t errlen);
/* Whether split[0..n_split) are valid stage starts of `model` (n_split + 1 stages): each a cut point, every stage
 * valid (model_stage_valid). Host only (builds the model at its defaults: the graph does not depend on the input
 * size). 0, or -1 with a one-line message naming the bad layer and the valid cuts. */
int model_split_check(const char *model, const int *split, int n_split, char *err, size_t errlen);
/* As model_alloc for layers [first, end) only: the tensors they read or write (the boundary inputs with gradient
 * buffers unless one is the data), this stage's contiguous slice of the flat parameter, gradient,
 * momentum and state buffers (n_params/n_state become the slice's sizes), their setup and workspace.
 * [first, end) must be a valid stage (model_cut_points with MODEL_MAX_CROSS, model_stage_valid). */
int model_alloc_range(model_t *m, gpu_t *g, int first, int end);
/* A further activation slot of owner's stage on the same GPU (m built by the same builder and batch): its own
 * activations, labels and layer state (BN saved statistics), and owner's parameters, gradients, momentum,
 * running statistics and accumulators; activation gradients as `grads` says (MODEL_GRADS_SHARED or
 * MODEL_GRADS_DEFERRED). Free it before owner. */
int model_alloc_slot(model_t *m, gpu_t *g, const model_t *owner, int grads);
/* Forward of layers first .. end-1 (a stage: model_forward_range(m, g, m->first, m->end, training)). */
void model_forward_range(model_t *m, gpu_t *g, int first, int end, int training);
