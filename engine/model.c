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
        p += model_align(l->n_params);
        s += model_align(l->n_state);
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

/* Each model of MODEL_TABLE by its builder, model_build_<name>. */
typedef void (*model_builder_t)(model_t *m, int batch, model_input_t in);
#define MODEL_BUILDER(name, ...) model_build_##name,
static const model_builder_t model_builders[] = {MODEL_TABLE(MODEL_BUILDER)};
#undef MODEL_BUILDER

int model_build_input(model_t *m, const char *name, int batch, model_input_t in) {
    const model_info_t *mi = model_info(name);
    if (!mi || model_info_lm(mi)) return -1;    /* a language model is no layer graph: engine/gpt2/ */
    if (!in.image) in.image = mi->image;
    if (!in.channels) in.channels = mi->synth_channels;
    if (!in.classes) in.classes = mi->synth_classes;
    if ((!mi->resizable && in.image != mi->image) || in.image < mi->stride || in.channels < 1 || in.classes < 1) {
        fprintf(stderr, "model %s: cannot take %dx%dx%d inputs with %d classes\n", name, in.channels, in.image,
                in.image, in.classes);
        exit(1);
    }
    model_builders[mi - model_infos](m, batch, in);
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

double model_macs_per_image(const model_t *m) {
    double total = 0;
    for (int i = 0; i < m->n_layers; i++) total += layer_macs(&m->layers[i]);
    return total;
}

double model_flops_per_image(const model_t *m) {
    double total = 0;
    for (int i = 0; i < m->n_layers; i++) {
        const layer_t *l = &m->layers[i];
        int passes = model_tensor_has_grad(m, l->in[0]) ? 3 : 2;   /* forward, weight gradient, input gradient */
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

int model_range_valid(const model_t *m, int first, int end) {
    return !((first > 0 && (crossing_at(m, first) > MODEL_MAX_CROSS || splits_fold(m, first))) ||
             (end < m->n_layers && (crossing_at(m, end) > MODEL_MAX_CROSS || splits_fold(m, end))) ||
             !model_stage_valid(m, first, end, NULL));
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
