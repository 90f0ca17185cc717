/* model_alloc.c — giving a built model (or a stage of it) its device memory: one block for the activations and their
 * gradients, the flat parameter/gradient/momentum/state buffers or an owner's, the layers' views and their setup. */
#include "model.h"
#include "check.h"
#include "reduce.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
    if (!model_tensor_has_grad(m, t)) return 0;
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
        size_t n = model_align(shape_numel(m->tensors[i].shape));
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

/* Exits with a message unless layers [first, end) are in range and start and end at cut points. */
static void alloc_check_range(const model_t *m, int first, int end) {
    if (first < 0 || end > m->n_layers || first >= end) {
        fprintf(stderr, "model %s: bad layer range [%d, %d) of %d layers\n", m->name, first, end, m->n_layers);
        exit(1);
    }
    /* Boundaries a pipeline cannot copy across, or a tensor passing through the range unread, would leave a layer
     * reading memory nobody wrote. */
    if (!model_range_valid(m, first, end)) {
        fprintf(stderr, "model %s: layers [%d, %d) do not start and end at cut points\n", m->name, first, end);
        exit(1);
    }
}

/* What this instance is sure to allocate, compared with what is free before anything is: a configuration that
 * cannot fit is refused here, whole, rather than by whichever later allocation fails first. A lower bound
 * (workspaces are sized by the algorithm search, later): it never refuses what fits; what it misses still
 * fails as an allocation, in the run's own process (doc/faults.md). */
static size_t alloc_sure_bytes(const model_t *m, const gpu_t *g, int first, int end, const model_t *owner) {
    size_t n_params = param_offset_of(m, end) - param_offset_of(m, first);
    size_t n_state = state_offset_of(m, end) - state_offset_of(m, first);
    size_t sure = m->act_bytes + (size_t)m->batch * sizeof(int);
    if (!owner)
        sure += 3 * n_params * sizeof(float) + n_state * sizeof(float) +
                (dtype_is_low(m->act_dtype) ? n_params * dtype_size(m->act_dtype) : 0);
    for (int i = first; i < end; i++) {     /* layers' own buffers */
        const layer_t *l = &m->layers[i];
        if (l->ops->own_bytes) sure += l->ops->own_bytes(l, g, model_tensor_has_grad(m, l->in[0]), m->act_dtype);
    }
    return sure;
}

/* The one block of activations and their gradients, carved into the tensors layers [first, end) touch (a gradient
 * own_grad does not give this instance is the owner's). -1, with nothing allocated, where it does not fit. */
static int alloc_activations(model_t *m, gpu_t *g, int first, int end, const model_t *owner, int grads) {
    char touched[MODEL_MAX_TENSORS];
    touched_tensors(m, first, end, touched);
    /* Activations and their gradients in the math's activation type; everything else stays fp32. */
    m->act_dtype = model_act_dtype(g);
    size_t esz = dtype_size(m->act_dtype);
    m->act_bytes = model_activation_bytes(m, first, end, grads, m->act_dtype);
    size_t elems = m->act_bytes / esz;
    size_t sure = alloc_sure_bytes(m, g, first, end, owner);
    size_t mem_free = 0, mem_total = 0;
    if (cudaMemGetInfo(&mem_free, &mem_total) == cudaSuccess && sure > mem_free) {
        m->mem_need = sure;
        m->mem_free = mem_free;
        m->act_block = NULL;
        return -1;
    }
    m->mem_need = m->mem_free = 0;
    if (gpu_try_malloc(&m->act_block, m->act_bytes) != 0) return -1;   /* the sweep goes on */
    char *p = (char *)m->act_block;
    for (int i = 0; i < m->n_tensors; i++) {
        tensor_t *t = &m->tensors[i];
        t->val = t->grad = NULL;
        if (!touched[i]) continue;
        size_t n = model_align(shape_numel(t->shape)) * esz;
        t->val = p; p += n;
        if (own_grad(m, first, end, grads, i)) { t->grad = p; p += n; }
        else if (owner) t->grad = owner->tensors[i].grad;
    }
    /* Algorithm search times real kernels: give it non-zero data, as training will. */
    gpu_fill_uniform(g, m->act_block, m->act_dtype, elems, 12345u, -1.0f, 1.0f);
    return 0;
}

/* This instance's slice of the flat buffers, its labels and accumulators: its own (filled, so that the algorithm
 * search runs on real values), or, for a slot, the owner's. */
static void alloc_flat_buffers(model_t *m, gpu_t *g, int first, int end, const model_t *owner) {
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
}

/* Points every layer of [first, end) at its tensors and its slices of the flat buffers. */
static void alloc_bind_views(model_t *m, int first, int end) {
    int lp = dtype_is_low(m->act_dtype);
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
}

/* Runs every layer's setup (algorithm search) and sizes g's workspace arena to what the chosen algorithms need. */
static void alloc_setup_layers(model_t *m, gpu_t *g, int first, int end) {
    /* A generous search arena during cudnnFind (less where memory is short: cuDNN then only tries algorithms
     * that fit), then exactly what the chosen algorithms need. */
    size_t free_b = 0, total_b = 0;
    CHECK_CUDA(cudaMemGetInfo(&free_b, &total_b));
    size_t arena = (size_t)512 << 20;
    while (arena > ((size_t)16 << 20) && arena > free_b / 2) arena /= 2;
    gpu_workspace_reserve(g, arena);
    gpu_conv_cache_load(g);
    setup_count_begin(g->setup.count, g->device, end - first);
    size_t need = 0;
    for (int i = first; i < end; i++) {
        layer_t *l = &m->layers[i];
        int conv = g->conv_searches, bn = g->bn_searches;   /* the searches its setup runs (a cache hit is none) */
        size_t w = l->ops->setup ? l->ops->setup(l, g) : 0;
        if (w > need) need = w;
        setup_count_layer_done(g->setup.count, g->conv_searches - conv, g->bn_searches - bn);
    }
    gpu_conv_cache_save(g);
    m->workspace_bytes = need;
    gpu_workspace_set(g, need);
    gpu_ones_reserve(g, m->batch);
    CHECK_CUDA(cudaStreamSynchronize(g->stream));
}

/* model_alloc, model_alloc_range and model_alloc_slot: allocate what layers [first, end) touch; with an owner,
 * only activations, labels and layer state, the rest bound to the owner's buffers. Returns -1, with nothing
 * allocated, when the activations (by far the largest allocation) do not fit: a sweep records that as oom. */
static int alloc_layers(model_t *m, gpu_t *g, int first, int end, const model_t *owner, int grads) {
    alloc_check_range(m, first, end);
    CHECK_CUDA(cudaSetDevice(g->device));
    m->first = first;
    m->end = end;
    m->shared = owner != NULL;
    if (alloc_activations(m, g, first, end, owner, grads) != 0) return -1;
    alloc_flat_buffers(m, g, first, end, owner);
    alloc_bind_views(m, first, end);
    alloc_setup_layers(m, g, first, end);
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
