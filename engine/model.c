/* model.c — building a layer graph, giving it one flat parameter/gradient buffer, and running it.
 * The model owns all memory; layers only see views, so strategies can reduce or split the flat buffers. */
#include "model.h"
#include "check.h"
#include "nvtx.h"
#include "layers/softmax_xent.h"
#include "reduce.h"
#include "model_info.h"
#include "split.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ALIGN_FLOATS 64   /* elements: 256 bytes in fp32, 128 in bf16 or fp16, for every tensor and parameter slice */

static size_t align_up(size_t n) { return (n + ALIGN_FLOATS - 1) / ALIGN_FLOATS * ALIGN_FLOATS; }

static int add_tensor(model_t *m, shape_t s, const char *label) {
    if (m->n_tensors >= MODEL_MAX_TENSORS) {
        fprintf(stderr, "model %s: more than %d tensors\n", m->name, MODEL_MAX_TENSORS);
        exit(1);
    }
    tensor_t *t = &m->tensors[m->n_tensors];
    memset(t, 0, sizeof *t);
    t->shape = s;
    snprintf(t->label, sizeof t->label, "%s", label);
    return m->n_tensors++;
}

static void assign_bias_use(model_t *m);

void model_begin(model_t *m, const char *name, int batch, shape_t input, int classes) {
    memset(m, 0, sizeof *m);
    snprintf(m->name, sizeof m->name, "%s", name);
    m->batch = batch;
    m->classes = classes;
    input.n = batch;
    m->input = add_tensor(m, input, "input");
    m->logits = -1;
}

int model_add(model_t *m, const layer_ops_t *ops, const char *label, int in0, int in1, layer_cfg_t cfg) {
    if (m->n_layers >= MODEL_MAX_LAYERS) {
        fprintf(stderr, "model %s: more than %d layers\n", m->name, MODEL_MAX_LAYERS);
        exit(1);
    }
    layer_t *l = &m->layers[m->n_layers];
    memset(l, 0, sizeof *l);
    l->ops = ops;
    l->cfg = cfg;
    snprintf(l->label, sizeof l->label, "%s", label);
    l->n_in = in1 >= 0 ? 2 : 1;
    l->in[0] = in0;
    l->in[1] = in1;
    for (int i = 0; i < l->n_in; i++) l->in_shape[i] = m->tensors[l->in[i]].shape;
    char err[256] = "";
    if (ops->out_shape(l, &l->out_shape, err, sizeof err) != 0) {
        fprintf(stderr, "model %s: layer %s (%s): %s\n", m->name, label, ops->name, err);
        exit(1);
    }
    l->out = add_tensor(m, l->out_shape, label);
    l->n_params = ops->param_count(l);
    l->n_state = ops->state_count(l);
    m->n_layers++;
    return l->out;
}

void model_end(model_t *m, int logits) {
    m->logits = logits;
    size_t p = 0, s = 0;
    for (int i = 0; i < m->n_layers; i++) {
        layer_t *l = &m->layers[i];
        l->param_offset = p;
        l->state_offset = s;
        p += align_up(l->n_params);
        s += align_up(l->n_state);
    }
    m->n_params = m->n_params_all = p;
    m->n_state = m->n_state_all = s;
    m->first = 0;
    m->end = m->n_layers;
    /* Backward runs in reverse: the last reader of a tensor writes its gradient first (overwrite), every
     * earlier reader adds to it. This is what makes a residual branch's two gradients sum. */
    char written[MODEL_MAX_TENSORS] = {0};
    for (int i = m->n_layers - 1; i >= 0; i--) {
        layer_t *l = &m->layers[i];
        for (int k = 0; k < l->n_in; k++) {
            l->dx_beta[k] = written[l->in[k]] ? 1.0f : 0.0f;
            written[l->in[k]] = 1;
        }
    }
    assign_bias_use(m);
}

/* The one layer reading tensor t and at which input (returns -1 when none or several read it). */
static int sole_reader(const model_t *m, int t, int *input) {
    int who = -1;
    for (int i = 0; i < m->n_layers; i++)
        for (int k = 0; k < m->layers[i].n_in; k++)
            if (m->layers[i].in[k] == t) {
                if (who >= 0) return -1;
                who = i;
                *input = k;
            }
    return who;
}

/* BIAS_DEAD / BIAS_FOLDED for every biased convolution whose only reader is a batch norm (layer.h says why). */
static void assign_bias_use(model_t *m) {
    for (int i = 0; i < m->n_layers; i++) {
        layer_t *l = &m->layers[i];
        l->bias_use = BIAS_ADD;
        l->fold_from = 0;
    }
    for (int i = 0; i < m->n_layers; i++) {
        layer_t *l = &m->layers[i];
        int k = 0, r;
        if (l->ops != &layer_conv_ops || !l->cfg.bias || (r = sole_reader(m, l->out, &k)) < 0) continue;
        layer_t *bn = &m->layers[r];
        if (bn->ops != &layer_bn_ops) continue;
        if (k == 0) l->bias_use = BIAS_DEAD;
        else if (bn->cfg.fuse == BN_FUSE_ADD_RELU && !bn->fold_from) {
            l->bias_use = BIAS_FOLDED;
            bn->fold_from = i + 1;
        }
    }
}

int model_build_input(model_t *m, const char *name, int batch, model_input_t in) {
    static const int r50[4] = {3, 4, 6, 3}, r101[4] = {3, 4, 23, 3};
    const model_info_t *mi = model_info(name);
    if (!mi) return -1;
    if (!in.image) in.image = mi->image;
    if (!in.channels) in.channels = mi->synth_channels;
    if (!in.classes) in.classes = mi->synth_classes;
    if ((!mi->resizable && in.image != mi->image) || in.image < mi->stride || in.channels < 1 || in.classes < 1) {
        fprintf(stderr, "model %s: cannot take %dx%dx%d inputs with %d classes\n", name, in.channels, in.image,
                in.image, in.classes);
        exit(1);
    }
    if (strcmp(name, "lenet") == 0) model_build_lenet(m, batch, in);
    else if (strcmp(name, "resnet18") == 0) model_build_resnet18(m, batch, in);
    else if (strcmp(name, "resnet50") == 0) model_build_bottleneck(m, name, batch, in, r50, 64);
    else if (strcmp(name, "resnet101") == 0) model_build_bottleneck(m, name, batch, in, r101, 64);
    else return -1;
    return 0;
}

int model_build(model_t *m, const char *name, int batch) {
    return model_build_input(m, name, batch, (model_input_t){0, 0, 0});
}

model_input_t model_input_of(const idx_dataset_t *d) {
    return (model_input_t){idx_image(d), idx_channels(d), idx_classes(d)};
}

size_t model_param_count(const model_t *m) {
    size_t n = 0;
    for (int i = 0; i < m->n_layers; i++) n += m->layers[i].n_params;
    return n;
}

/* Forward multiply-adds of one image through layer l; 0 for the memory-bound kinds. */
static double layer_macs(const layer_t *l) {
    if (l->ops == &layer_conv_ops)   /* per output element: k*k*C multiply-adds */
        return (double)shape_per_sample(l->out_shape) * l->cfg.k * l->cfg.k * l->in_shape[0].c;
    if (l->ops == &layer_dense_ops) return (double)shape_per_sample(l->in_shape[0]) * l->cfg.cout;
    return 0;
}

/* The data is the one tensor without a gradient: nothing before it learns. Every "needs dx" follows from this. */
static int tensor_has_grad(const model_t *m, int t) { return t != m->input; }

double model_macs_per_image(const model_t *m) {
    double total = 0;
    for (int i = 0; i < m->n_layers; i++) total += layer_macs(&m->layers[i]);
    return total;
}

double model_flops_per_image(const model_t *m) {
    double total = 0;
    for (int i = 0; i < m->n_layers; i++) {
        const layer_t *l = &m->layers[i];
        int passes = tensor_has_grad(m, l->in[0]) ? 3 : 2;   /* forward, weight gradient, input gradient */
        total += 2.0 * layer_macs(l) * passes;
    }
    return total;
}

/* Where tensor t is produced (-1: the input) and the last layer that reads it (-1: none). */
static void tensor_span(const model_t *m, int t, int *producer, int *last_reader) {
    *producer = -1;
    *last_reader = -1;
    for (int j = 0; j < m->n_layers; j++) {
        const layer_t *l = &m->layers[j];
        if (l->out == t) *producer = j;
        for (int k = 0; k < l->n_in; k++)
            if (l->in[k] == t) *last_reader = j;
    }
}

int model_crossing(const model_t *m, int i, int *tensors, int max) {
    int n = 0;
    for (int t = 0; t < m->n_tensors; t++) {
        int producer, last;
        tensor_span(m, t, &producer, &last);
        if (producer < i && last >= i && (producer >= 0 || t == m->input)) {
            if (n < max) tensors[n] = t;
            n++;
        }
    }
    return n;
}

static int crossing_at(const model_t *m, int i) { return model_crossing(m, i, NULL, 0); }

/* Whether a boundary before layer i splits a convolution from the batch norm that folds its bias (layer.h): the
 * batch norm reads the bias itself, so both live on one stage. */
static int splits_fold(const model_t *m, int i) {
    for (int j = i; j < m->n_layers; j++)
        if (m->layers[j].fold_from && m->layers[j].fold_from - 1 < i) return 1;
    return 0;
}

void model_spans(const model_t *m, model_spans_t *s) {
    s->n = m->n_tensors;
    for (int t = 0; t < m->n_tensors; t++) {
        int producer, last;
        tensor_span(m, t, &producer, &last);
        s->producer[t] = producer;
        s->last[t] = t == m->input || producer >= 0 ? last : -1;   /* a tensor nobody produces crosses nothing */
    }
}

int model_spans_stage_valid(const model_spans_t *s, int first, int end, int *through) {
    for (int t = 0; first > 0 && t < s->n; t++)
        if (s->producer[t] < first && s->last[t] >= end) {
            if (through) *through = t;
            return 0;
        }
    return 1;
}

int model_stage_valid(const model_t *m, int first, int end, int *through) {
    model_spans_t s;
    model_spans(m, &s);
    return model_spans_stage_valid(&s, first, end, through);
}

/* Which tensors layers [first, end) read or write. */
static void touched_tensors(const model_t *m, int first, int end, char *touched) {
    memset(touched, 0, MODEL_MAX_TENSORS);
    for (int i = first; i < end; i++) {
        const layer_t *l = &m->layers[i];
        for (int k = 0; k < l->n_in; k++) touched[l->in[k]] = 1;
        touched[l->out] = 1;
    }
}

/* Whether a slot allocating layers [first, end) in grad mode `grads` (model.h) has its own gradient of tensor t:
 * with MODEL_GRADS_DEFERRED, the tensors a weight part reads as dy (a deferred weight gradient reads them after
 * other micro-batches' backward) and those crossing the range's ends (what a pipeline copies in and out). */
static int own_grad(const model_t *m, int first, int end, int grads, int t) {
    if (!tensor_has_grad(m, t)) return 0;
    if (grads == MODEL_GRADS_ALL) return 1;
    if (grads == MODEL_GRADS_SHARED) return 0;
    for (int i = first; i < end; i++)
        if (m->layers[i].out == t && m->layers[i].ops->backward_weight) return 1;
    int before = t == m->input, at_or_after = 0, inside = 0;
    for (int j = 0; j < m->n_layers; j++) {
        const layer_t *l = &m->layers[j];
        if (l->out == t) before |= j < first, inside |= j >= first && j < end;
        for (int k = 0; k < l->n_in; k++)
            if (l->in[k] == t) at_or_after |= j >= end;
    }
    return before || (inside && at_or_after);
}

size_t model_activation_bytes(const model_t *m, int first, int end, int grads, dtype_t t) {
    char touched[MODEL_MAX_TENSORS];
    touched_tensors(m, first, end, touched);
    /* A slot shares its owner's activation gradients where they live only within one micro-batch's backward. */
    size_t elems = 0;
    for (int i = 0; i < m->n_tensors; i++) {
        if (!touched[i]) continue;
        size_t n = align_up(shape_numel(m->tensors[i].shape));
        elems += own_grad(m, first, end, grads, i) ? 2 * n : n;
    }
    return (elems ? elems : 1) * dtype_size(t);
}

/* Where layer i's slice starts in the whole flat buffers (i == n_layers: the end). */
static size_t param_offset_of(const model_t *m, int i) {
    return i < m->n_layers ? m->layers[i].param_offset : m->n_params_all;
}
static size_t state_offset_of(const model_t *m, int i) {
    return i < m->n_layers ? m->layers[i].state_offset : m->n_state_all;
}

/* model_alloc, model_alloc_range and model_alloc_slot: allocate what layers [first, end) touch; with an owner,
 * only activations, labels and layer state, the rest bound to the owner's buffers. Returns -1, with nothing
 * allocated, when the activations (by far the largest allocation) do not fit: a sweep records that as oom. */
static int alloc_layers(model_t *m, gpu_t *g, int first, int end, const model_t *owner, int grads) {
    if (first < 0 || end > m->n_layers || first >= end) {
        fprintf(stderr, "model %s: bad layer range [%d, %d) of %d layers\n", m->name, first, end, m->n_layers);
        exit(1);
    }
    /* Boundaries a pipeline cannot copy across, or a tensor passing through the range unread, would leave a layer
     * reading memory nobody wrote. */
    if ((first > 0 && (crossing_at(m, first) > MODEL_MAX_CROSS || splits_fold(m, first))) ||
        (end < m->n_layers && (crossing_at(m, end) > MODEL_MAX_CROSS || splits_fold(m, end))) ||
        !model_stage_valid(m, first, end, NULL)) {
        fprintf(stderr, "model %s: layers [%d, %d) do not start and end at cut points\n", m->name, first, end);
        exit(1);
    }
    CHECK_CUDA(cudaSetDevice(g->device));
    m->first = first;
    m->end = end;
    m->shared = owner != NULL;
    char touched[MODEL_MAX_TENSORS];
    touched_tensors(m, first, end, touched);
    /* Activations and their gradients in the math's activation type; everything else stays fp32. */
    m->act_dtype = model_act_dtype(g);
    size_t esz = dtype_size(m->act_dtype);
    m->act_bytes = model_activation_bytes(m, first, end, grads, m->act_dtype);
    size_t elems = m->act_bytes / esz;
    /* What this instance is sure to allocate, compared with what is free before anything is: a configuration that
     * cannot fit is refused here, whole, rather than by whichever later allocation fails first. A lower bound
     * (workspaces are sized by the algorithm search, later): it never refuses what fits; what it misses still
     * fails as an allocation, in the run's own process (doc/faults.md). */
    size_t n_params = param_offset_of(m, end) - param_offset_of(m, first);
    size_t n_state = state_offset_of(m, end) - state_offset_of(m, first);
    size_t sure = m->act_bytes + (size_t)m->batch * sizeof(int);
    if (!owner)
        sure += 3 * n_params * sizeof(float) + n_state * sizeof(float) +
                (dtype_is_low(m->act_dtype) ? n_params * dtype_size(m->act_dtype) : 0);
    for (int i = first; i < end; i++) {     /* layers' own buffers */
        const layer_t *l = &m->layers[i];
        if (l->ops->own_bytes) sure += l->ops->own_bytes(l, g, tensor_has_grad(m, l->in[0]), m->act_dtype);
    }
    size_t mem_free = 0, mem_total = 0;
    if (cudaMemGetInfo(&mem_free, &mem_total) == cudaSuccess && sure > mem_free) {
        m->mem_need = sure;
        m->mem_free = mem_free;
        m->act_block = NULL;
        return -1;
    }
    m->mem_need = m->mem_free = 0;
    cudaError_t e = cudaMalloc(&m->act_block, m->act_bytes);
    if (e == cudaSuccess && fault_inject(FAULT_ALLOC)) {   /* test-only (fault.h) */
        cudaFree(m->act_block);
        e = cudaErrorMemoryAllocation;
    }
    if (e == cudaErrorMemoryAllocation) {
        (void)cudaGetLastError();   /* not sticky: the context stays usable for the rest of the sweep */
        m->act_block = NULL;
        return -1;
    }
    CHECK_CUDA(e);
    char *p = (char *)m->act_block;
    for (int i = 0; i < m->n_tensors; i++) {
        tensor_t *t = &m->tensors[i];
        t->val = t->grad = NULL;
        if (!touched[i]) continue;
        size_t n = align_up(shape_numel(t->shape)) * esz;
        t->val = p; p += n;
        if (own_grad(m, first, end, grads, i)) { t->grad = p; p += n; }
        else if (owner) t->grad = owner->tensors[i].grad;
    }
    /* Algorithm search times real kernels: give it non-zero data, as training will. */
    gpu_fill_uniform(g, m->act_block, m->act_dtype, elems, 12345u, -1.0f, 1.0f);

    m->param_first = param_offset_of(m, first);
    m->state_first = state_offset_of(m, first);
    m->n_params = param_offset_of(m, end) - m->param_first;
    m->n_state = state_offset_of(m, end) - m->state_first;
    size_t pbytes = (m->n_params ? m->n_params : 1) * sizeof(float);
    int lp = dtype_is_low(m->act_dtype);
    if (owner) {
        m->params = owner->params;
        m->params_lp = owner->params_lp;
        m->loss_scale = owner->loss_scale;
        m->grads = owner->grads;
        m->momentum = owner->momentum;
        m->state = owner->state;
    } else {
        CHECK_ALLOC(cudaMalloc((void **)&m->params, pbytes));
        CHECK_ALLOC(cudaMalloc((void **)&m->grads, pbytes));
        CHECK_ALLOC(cudaMalloc((void **)&m->momentum, pbytes));
        CHECK_ALLOC(cudaMalloc((void **)&m->state, (m->n_state ? m->n_state : 1) * sizeof(float)));
        m->params_lp = NULL;
        if (lp) CHECK_ALLOC(cudaMalloc(&m->params_lp, (m->n_params ? m->n_params : 1) * dtype_size(m->act_dtype)));
    }
    CHECK_ALLOC(cudaMalloc((void **)&m->labels, (size_t)m->batch * sizeof(int)));
    if (owner) {
        m->acc = owner->acc;
    } else {
        CHECK_ALLOC(cudaMalloc((void **)&m->acc, 2 * sizeof(double)));
        CHECK_CUDA(cudaMemsetAsync(m->acc, 0, 2 * sizeof(double), g->stream));
        gpu_fill_uniform(g, m->params, DTYPE_FP32, m->n_params, 777u, -0.05f, 0.05f);
        gpu_fill_uniform(g, m->grads, DTYPE_FP32, m->n_params, 778u, -0.05f, 0.05f);
        if (lp) reduce_cast(m->params_lp, m->act_dtype, m->params, m->n_params, g->stream);
        CHECK_CUDA(cudaMemsetAsync(m->momentum, 0, pbytes, g->stream));
    }

    for (int i = first; i < end; i++) {
        layer_t *l = &m->layers[i];
        for (int k = 0; k < l->n_in; k++) {
            l->x[k] = m->tensors[l->in[k]].val;
            l->dx[k] = m->tensors[l->in[k]].grad;
        }
        l->y = m->tensors[l->out].val;
        l->dy = m->tensors[l->out].grad;
        l->dtype = m->act_dtype;
        size_t at = l->param_offset - m->param_first;
        l->w_lp = lp ? (const char *)m->params_lp + at * dtype_size(m->act_dtype) : NULL;
        l->w = m->params + (l->param_offset - m->param_first);
        l->dw = m->grads + (l->param_offset - m->param_first);
        l->state = m->state + (l->state_offset - m->state_first);
    }
    for (int i = first; i < end; i++) {   /* a folded bias and its batch norm sit in one block, so one stage */
        layer_t *l = &m->layers[i];
        l->fold_b = NULL;
        l->fold_db = NULL;
        if (!l->fold_from) continue;
        const layer_t *c = &m->layers[l->fold_from - 1];
        if (l->fold_from - 1 < first) {
            fprintf(stderr, "model %s: layer %s folds the bias of %s, outside layers [%d, %d)\n", m->name, l->label,
                    c->label, first, end);
            exit(1);
        }
        l->fold_b = c->w + (c->n_params - (size_t)c->cfg.cout);
        l->fold_db = c->dw + (c->n_params - (size_t)c->cfg.cout);
    }
    /* A generous search arena during cudnnFind (less where memory is short: cuDNN then only tries algorithms
     * that fit), then exactly what the chosen algorithms need. */
    size_t free_b = 0, total_b = 0;
    CHECK_CUDA(cudaMemGetInfo(&free_b, &total_b));
    size_t arena = (size_t)512 << 20;
    while (arena > ((size_t)16 << 20) && arena > free_b / 2) arena /= 2;
    gpu_workspace_reserve(g, arena);
    gpu_conv_cache_load(g);
    size_t need = 0;
    for (int i = first; i < end; i++) {
        layer_t *l = &m->layers[i];
        size_t w = l->ops->setup ? l->ops->setup(l, g) : 0;
        if (w > need) need = w;
    }
    gpu_conv_cache_save(g);
    m->workspace_bytes = need;
    gpu_workspace_set(g, need);
    gpu_ones_reserve(g, m->batch);
    CHECK_CUDA(cudaStreamSynchronize(g->stream));
    return 0;
}

dtype_t model_act_dtype(const gpu_t *g) { return math_act_dtype(g->math); }

int model_alloc(model_t *m, gpu_t *g) { return alloc_layers(m, g, 0, m->n_layers, NULL, MODEL_GRADS_ALL); }

int model_alloc_range(model_t *m, gpu_t *g, int first, int end) {
    return alloc_layers(m, g, first, end, NULL, MODEL_GRADS_ALL);
}

int model_alloc_slot(model_t *m, gpu_t *g, const model_t *owner, int grads) {
    if (m->n_layers != owner->n_layers || m->batch != owner->batch) {
        fprintf(stderr, "model %s: a slot must be built like its owner (%d layers, batch %d; got %d, %d)\n",
                m->name, owner->n_layers, owner->batch, m->n_layers, m->batch);
        exit(1);
    }
    if (grads != MODEL_GRADS_SHARED && grads != MODEL_GRADS_DEFERRED) {
        fprintf(stderr, "model %s: a slot shares its owner's gradients or keeps the deferred ones (grads %d)\n",
                m->name, grads);
        exit(1);
    }
    return alloc_layers(m, g, owner->first, owner->end, owner, grads);
}

int model_cut_points(const model_t *m, int max_cross, int *cuts) {
    int n = 0;
    for (int i = 1; i < m->n_layers; i++) {
        int c = crossing_at(m, i);
        if (c >= 1 && c <= max_cross && c <= MODEL_MAX_CROSS && !splits_fold(m, i)) cuts[n++] = i;
    }
    return n;
}

int model_split_valid(const model_t *m, const int *starts, int p, char *err, size_t errlen) {
    for (int k = 0; k < p; k++) {
        int a = starts[k], b = k + 1 < p ? starts[k + 1] : m->n_layers, t = -1;
        if (model_stage_valid(m, a, b, &t)) continue;
        int producer, last;
        tensor_span(m, t, &producer, &last);
        snprintf(err, errlen, "--split: stage %d (layers %d-%d, %s..%s) would pass the output of %s through unread "
                 "(%s reads it again): cut a residual block at most once", k + 1, a, b - 1, m->layers[a].label,
                 m->layers[b - 1].label, producer >= 0 ? m->layers[producer].label : "the input",
                 m->layers[last].label);
        return -1;
    }
    return 0;
}

int model_split_check(const char *model, const int *split, int n_split, char *err, size_t errlen) {
    model_t *m = malloc(sizeof *m);
    if (!m) { snprintf(err, errlen, "out of host memory"); return -1; }
    if (model_build(m, model, 1) != 0) {
        snprintf(err, errlen, "unknown model \"%s\"", model);
        free(m);
        return -1;
    }
    int cuts[MODEL_MAX_LAYERS], starts[MODEL_MAX_LAYERS];
    const char *labels[MODEL_MAX_LAYERS];
    int n_cuts = model_cut_points(m, MODEL_MAX_CROSS, cuts);
    for (int i = 0; i < m->n_layers; i++) labels[i] = m->layers[i].label;
    int rc = n_split + 1 > MODEL_MAX_LAYERS
                 ? (snprintf(err, errlen, "--split: %d stages, more than layers", n_split + 1), -1)
                 : split_check(split, n_split, m->n_layers, cuts, n_cuts, n_split + 1, labels, starts, err, errlen);
    if (rc == 0) rc = model_split_valid(m, starts, n_split + 1, err, errlen);
    free(m);
    return rc;
}

void model_init_params(model_t *m, init_t init, unsigned long long seed) {
    /* Every layer draws from one stream in layer order, whichever slice is uploaded: a stage's parameters are
     * exactly the ones the whole model gets on one GPU. */
    float *hp = calloc(m->n_params_all ? m->n_params_all : 1, sizeof(float));
    float *hs = calloc(m->n_state_all ? m->n_state_all : 1, sizeof(float));
    if (!hp || !hs) { fprintf(stderr, "model_init_params: out of host memory\n"); exit(1); }
    rng_t rng;
    rng_seed(&rng, seed);
    for (int i = 0; i < m->n_layers; i++) {
        layer_t *l = &m->layers[i];
        if (l->ops->init) l->ops->init(l, hp + l->param_offset, hs + l->state_offset, init, &rng);
    }
    CHECK_CUDA(cudaMemcpy(m->params, hp + m->param_first, m->n_params * sizeof(float), cudaMemcpyHostToDevice));
    if (m->params_lp) {   /* the 2-byte copy starts as the rounding of the initial parameters, as SGD keeps it */
        reduce_cast(m->params_lp, m->act_dtype, m->params, m->n_params, 0);
        CHECK_CUDA(cudaDeviceSynchronize());
    }
    CHECK_CUDA(cudaMemcpy(m->state, hs + m->state_first, m->n_state * sizeof(float), cudaMemcpyHostToDevice));
    CHECK_CUDA(cudaMemset(m->grads, 0, m->n_params * sizeof(float)));
    CHECK_CUDA(cudaMemset(m->momentum, 0, m->n_params * sizeof(float)));
    free(hp);
    free(hs);
}

void model_forward(model_t *m, gpu_t *g, int training) {
    nvtx_push("forward gpu%d", g->device);
    for (int i = 0; i < m->n_layers; i++) m->layers[i].ops->forward(&m->layers[i], g, training);
    nvtx_pop();
}

void model_forward_range(model_t *m, gpu_t *g, int first, int end, int training) {
    for (int i = first; i < end; i++) m->layers[i].ops->forward(&m->layers[i], g, training);
}

void model_loss(model_t *m, gpu_t *g, int n_valid, float scale, int want_grad) {
    tensor_t *t = &m->tensors[m->logits];
    softmax_xent(t->val, m->labels, want_grad ? t->grad : NULL, m->act_dtype, m->batch, n_valid, m->classes, scale,
                 m->loss_scale, m->acc, g->stream);
}

void model_backward(model_t *m, gpu_t *g, float dw_beta) {
    nvtx_push("backward gpu%d", g->device);
    model_backward_range(m, g, 0, m->n_layers, dw_beta);
    nvtx_pop();
}

void model_backward_range(model_t *m, gpu_t *g, int first, int end, float dw_beta) {
    for (int i = end - 1; i >= first; i--) m->layers[i].ops->backward(&m->layers[i], g, dw_beta);
}

/* Appends the part [at, end) of the flat buffer as a pair where it is not empty; counts it even without room. */
static void add_range(size_t *ranges, int max, int *n, size_t at, size_t end) {
    if (end <= at) return;
    if (*n < max) {
        ranges[2 * *n] = at;
        ranges[2 * *n + 1] = end - at;
    }
    (*n)++;
}

int model_bind_grads_lp(model_t *m, void *grads_lp, size_t *ranges, int max) {
    int n = 0;
    size_t at = 0;   /* the start of the fp32 part not yet written out */
    for (int i = m->first; i < m->end && grads_lp; i++) {
        const layer_t *l = &m->layers[i];
        size_t lp = l->ops == &layer_conv_ops ? layer_conv_lp_grads(l) : 0, off = l->param_offset - m->param_first;
        if (!lp) continue;
        add_range(ranges, max, &n, at, off);
        at = off + lp;
    }
    add_range(ranges, max, &n, at, m->n_params);
    if (n > max) return -1;
    for (int i = m->first; i < m->end; i++) {
        layer_t *l = &m->layers[i];
        size_t lp = l->ops == &layer_conv_ops ? layer_conv_lp_grads(l) : 0, off = l->param_offset - m->param_first;
        l->dw_lp = grads_lp && lp ? (char *)grads_lp + off * dtype_size(m->act_dtype) : NULL;
    }
    return n;
}

void model_backward_data_range(model_t *m, gpu_t *g, int first, int end, float dw_beta) {
    for (int i = end - 1; i >= first; i--) {
        layer_t *l = &m->layers[i];
        if (l->ops->backward_data) l->ops->backward_data(l, g, dw_beta);
        else l->ops->backward(l, g, dw_beta);
    }
}

void model_backward_weight_range(model_t *m, gpu_t *g, int first, int end, float dw_beta) {
    for (int i = end - 1; i >= first; i--)
        if (m->layers[i].ops->backward_weight) m->layers[i].ops->backward_weight(&m->layers[i], g, dw_beta);
}

void model_free(model_t *m) {
    for (int i = 0; i < m->n_layers; i++)
        if (m->layers[i].ops->destroy) m->layers[i].ops->destroy(&m->layers[i]);
    CHECK_CUDA(cudaFree(m->act_block));
    CHECK_CUDA(cudaFree(m->labels));
    if (!m->shared) {   /* a slot's other buffers are its owner's */
        CHECK_CUDA(cudaFree(m->params));
        CHECK_CUDA(cudaFree(m->grads));
        CHECK_CUDA(cudaFree(m->momentum));
        CHECK_CUDA(cudaFree(m->state));
        if (m->params_lp) CHECK_CUDA(cudaFree(m->params_lp));
        CHECK_CUDA(cudaFree(m->acc));
    }
    memset(m, 0, sizeof *m);
}
