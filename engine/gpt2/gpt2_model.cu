/* gpt2_model.cu — GPT-2 on one GPU (gpt2_model.h): gpt2_plan's buffers carved from three allocations, and the forward,
 * backward and update as fixed sequences of the gpt2 kernels' launches on one stream. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "gpt2_model.h"
#include "gpt2_kernels.h"
#include "gpt2_attn.h"
#include "../check.h"
#include "../gpu.h"
#include "../reduce.h"

// --- kernels

__global__ static void loss_mean_kernel(const double *acc, float *loss) {
    *loss = acc[1] > 0.0 ? (float)(acc[0] / acc[1]) : NAN;
}

__global__ static void sum_kernel(const double *parts, int n, double *out) {
    double s = 0;
    for (int i = 0; i < n; i++) s += parts[i];   /* in stage order: every stage adds alike */
    *out = s;
}

__global__ static void add2_kernel(const double *from, double *acc) {
    acc[0] += from[0];
    acc[1] += from[1];
}

// --- where things are

static void *buf(const gpt2_model_t *m, gpt2_buf_t k, int i) {
    return (char *)m->arena[m->plan.buf[k].arena] + gpt2_plan_at(&m->plan, k, i);
}

/* Elements from the flat buffers' start to tensor kind of block layer (-1: the embeddings, the final LayerNorm). */
static size_t at(const gpt2_model_t *m, gpt2_tensor_t kind, int layer) {
    const gpt2_slice_t *s = gpt2_layout_find(m->slices, m->n_slices, kind, layer);
    if (!s) check_fail(__FILE__, __LINE__, "gpt2_model", "a tensor missing from the layout");
    return s->at;
}
/* The tensor as the GEMMs and the embedding read it: the bf16 copy under bf16, the master otherwise. */
static const void *wt(const gpt2_model_t *m, gpt2_tensor_t kind, int layer) {
    size_t a = at(m, kind, layer);
    if (m->t == DTYPE_BF16) return (const char *)m->params_lp + a * 2;
    return m->params + a;
}
/* fp32: the LayerNorms' parameters (read in fp32 whatever t is) and every gradient. */
static const float *pf(const gpt2_model_t *m, gpt2_tensor_t kind, int layer) { return m->params + at(m, kind, layer); }
static float *gf(const gpt2_model_t *m, gpt2_tensor_t kind, int layer) { return m->grads + at(m, kind, layer); }
/* LayerNorm i's mean (rows), followed by its rstd (rows): i = 2l for block l's first, 2l + 1 its second, 2L final. */
static float *stats(const gpt2_model_t *m, int i) { return (float *)buf(m, GPT2_BUF_LN_STATS, i); }

// --- setup

int gpt2_model_init(gpt2_model_t *m, const gpt2_shape_t *s, int B, int T, dtype_t t, int tf32, gpu_t *g,
                    const gpt2_adamw_cfg_t *opt, char *err, size_t errlen) {
    return gpt2_model_init_stage(m, s, B, T, t, tf32, g, opt, GPT2_ATTN_AUTO, 0, GPT2_UNITS(s->layers), err, errlen);
}

int gpt2_model_init_stage(gpt2_model_t *m, const gpt2_shape_t *s, int B, int T, dtype_t t, int tf32, gpu_t *g,
                          const gpt2_adamw_cfg_t *opt, gpt2_attn_kind_t attn, int lo, int hi, char *err,
                          size_t errlen) {
    memset(m, 0, sizeof *m);
    if (t != DTYPE_FP32 && math_act_dtype(g->math) != t) {   /* the ones of the bias gradients' GEMMs */
        snprintf(err, errlen, "GPT-2 in %s on a GPU set up for %s math", dtype_name(t), math_name(g->math));
        return -1;
    }
    /* the shape, batch and units checked before cuDNN */
    if (gpt2_plan_stage(s, B, T, t, 0, lo, hi, &m->plan, err, errlen)) return -1;
    /* The fused attention where its plans build (bf16 on a GPU and cuDNN that have the engines): it keeps 4 bytes a
     * row where the plain one keeps the (T, T) softmax, and the plan is made again without the softmax. A refusal
     * is not an error: the plain path runs, said once. A stage without blocks has no attention. */
    if (attn == GPT2_ATTN_AUTO && t == DTYPE_BF16 && m->plan.nb > 0) {
        char why[512] = "";
        if (gpt2_sdpa_init(&m->sdpa, g->cudnn, B, T, s->width, s->heads, why, sizeof why) == 0) m->fused = 1;
        else fprintf(stderr, "gpt2: cuDNN's fused attention unavailable, running the plain one: %s\n", why);
        if (m->fused && gpt2_plan_stage(s, B, T, t, 1, lo, hi, &m->plan, err, errlen)) {
            gpt2_model_free(m);
            return -1;
        }
    }
    m->shape = *s;
    m->B = B;
    m->T = T;
    m->grad_B = B;
    m->t = t;
    m->tf32 = tf32;
    m->blas = g->cublas;
    m->n_slices = gpt2_layout_count(s);
    m->slices = (gpt2_slice_t *)calloc((size_t)m->n_slices, sizeof *m->slices);
    if (!m->slices) {
        snprintf(err, errlen, "out of host memory");
        gpt2_model_free(m);   /* the fused attention's plans */
        return -1;
    }
    m->n_params = gpt2_layout_stage(s, lo, hi, m->slices, m->n_slices);
    int rows = B * T;
    size_t ln = gpt2_layernorm_scratch_bytes(rows, s->width), em = gpt2_embed_scratch_bytes(rows, s->vocab);
    m->scratch_bytes = ln > em ? ln : em;
    /* The scratch, then the device scalars 256 bytes past its end. */
    size_t scratch_alloc = (m->scratch_bytes + 255) / 256 * 256 + 256;
    int oom = 0;
    for (int a = 0; a < GPT2_ARENAS; a++)
        oom = oom || gpu_try_malloc(&m->arena[a], m->plan.arena_bytes[a] ? m->plan.arena_bytes[a] : 1);
    if (oom || gpu_try_malloc(&m->scratch, scratch_alloc) ||
        (m->fused && gpu_try_malloc(&m->sdpa_ws, m->sdpa.ws_bytes))) {
        double need = (double)(m->plan.arena_bytes[0] + m->plan.arena_bytes[1] + m->plan.arena_bytes[2] +
                               scratch_alloc + m->sdpa.ws_bytes);
        snprintf(err, errlen, "out of memory: GPT-2 %s at %d x %d in %s needs %.2f GiB", s->name, B, T, dtype_name(t),
                 need / 1073741824.0);
        gpt2_model_free(m);
        return -1;
    }
    char *sc = (char *)m->scratch + (m->scratch_bytes + 255) / 256 * 256;
    m->loss_acc = (double *)sc;            /* 2 doubles */
    m->sumsq = (double *)(sc + 16);
    m->loss = (float *)(sc + 24);
    m->params = (float *)buf(m, GPT2_BUF_PARAMS, 0);
    m->grads = (float *)buf(m, GPT2_BUF_GRADS, 0);
    m->adam_m = (float *)buf(m, GPT2_BUF_ADAM_M, 0);
    m->adam_v = (float *)buf(m, GPT2_BUF_ADAM_V, 0);
    m->params_lp = t == DTYPE_BF16 ? buf(m, GPT2_BUF_PARAMS_LP, 0) : NULL;
    /* Zero: the padding between slices, which nothing writes, must add nothing to the gradient's norm. */
    CHECK_CUDA(cudaMemset(m->arena[0], 0, m->plan.arena_bytes[0]));
    CHECK_CUDA(cudaMemset(m->scratch, 0, scratch_alloc));
    if (gpt2_adamw_init(&m->adamw, m->slices, m->n_slices, opt->beta1, opt->beta2, opt->eps, opt->weight_decay,
                        opt->max_norm, err, errlen)) {
        gpt2_model_free(m);
        return -1;
    }
    gpt2_lt_init(&m->lt, g, rows);   /* synchronises the device */
    return 0;
}

int gpt2_model_init_slot(gpt2_model_t *m, const gpt2_model_t *owner, char *err, size_t errlen) {
    *m = *owner;
    m->slot_of = owner;
    m->arena[1] = NULL;
    if (gpu_try_malloc(&m->arena[1], owner->plan.arena_bytes[1] ? owner->plan.arena_bytes[1] : 1)) {
        memset(m, 0, sizeof *m);
        snprintf(err, errlen, "out of memory: a GPT-2 activation slot of %.2f GiB",
                 (double)owner->plan.arena_bytes[1] / 1073741824.0);
        return -1;
    }
    return 0;
}

void gpt2_model_free(gpt2_model_t *m) {
    if (m->slot_of) {   /* a slot owns its activations alone */
        if (m->arena[1]) CHECK_CUDA(cudaFree(m->arena[1]));
        memset(m, 0, sizeof *m);
        return;
    }
    if (m->lt.lt) gpt2_lt_free(&m->lt);
    gpt2_adamw_free(&m->adamw);
    if (m->fused) gpt2_sdpa_free(&m->sdpa);
    void *bufs[] = {m->arena[0], m->arena[1], m->arena[2], m->scratch, m->sdpa_ws};
    for (int i = 0; i < 5; i++)
        if (bufs[i]) CHECK_CUDA(cudaFree(bufs[i]));
    free(m->slices);
    memset(m, 0, sizeof *m);
}

size_t gpt2_model_bytes(const gpt2_model_t *m) {
    if (m->slot_of) return m->plan.arena_bytes[1];
    return m->plan.arena_bytes[0] + m->plan.arena_bytes[1] + m->plan.arena_bytes[2] +
           (m->scratch_bytes + 255) / 256 * 256 + 256 + (m->fused ? m->sdpa.ws_bytes : 0);
}

int gpt2_model_has_embed(const gpt2_model_t *m) { return m->plan.lo == 0; }
int gpt2_model_has_head(const gpt2_model_t *m) { return m->plan.hi == GPT2_UNITS(m->shape.layers); }

void gpt2_model_stage_io(const gpt2_model_t *m, void **in, void **out, void **dout, void **din) {
    int first = gpt2_model_has_embed(m), last = gpt2_model_has_head(m);
    if (in) *in = first ? NULL : buf(m, GPT2_BUF_RESID, 0);
    if (out) *out = last ? NULL : buf(m, GPT2_BUF_RESID, 2 * m->plan.nb);
    if (dout) *dout = last ? NULL : buf(m, GPT2_BUF_DOUT, 0);
    if (din) *din = first ? NULL : buf(m, GPT2_BUF_DRESID, 0);
}

void gpt2_model_set_params(gpt2_model_t *m, const float *host, cudaStream_t stream) {
    size_t n = m->n_params;
    CHECK_CUDA(cudaMemcpyAsync(m->params, host, n * sizeof(float), cudaMemcpyHostToDevice, stream));
    if (m->params_lp) reduce_cast(m->params_lp, DTYPE_BF16, m->params, n, stream);
    CHECK_CUDA(cudaMemsetAsync(m->adam_m, 0, n * sizeof(float), stream));
    CHECK_CUDA(cudaMemsetAsync(m->adam_v, 0, n * sizeof(float), stream));
    CHECK_CUDA(cudaStreamSynchronize(stream));   /* host may be freed, and the step's stream sees the values */
}

/* The whole model's layout (its slices and total), for a stage's slices' places in it. */
static gpt2_slice_t *full_layout(const gpt2_model_t *m, size_t *total) {
    gpt2_slice_t *f = (gpt2_slice_t *)calloc((size_t)m->n_slices, sizeof *f);
    if (!f) check_fail(__FILE__, __LINE__, "gpt2_model", "out of host memory");
    *total = gpt2_layout(&m->shape, f, m->n_slices);
    return f;
}

void gpt2_model_init_params(gpt2_model_t *m, unsigned long long seed, cudaStream_t stream) {
    float *host = (float *)malloc(m->n_params * sizeof(float));
    if (!host) check_fail(__FILE__, __LINE__, "gpt2_model_init_params", "out of host memory");
    gpt2_layout_init_stage(&m->shape, m->plan.lo, m->plan.hi, seed, host, m->n_params);
    gpt2_model_set_params(m, host, stream);
    free(host);
}

void gpt2_model_params_full(const gpt2_model_t *m, float *full) {
    size_t total;
    gpt2_slice_t *f = full_layout(m, &total);
    float *host = (float *)malloc(m->n_params * sizeof(float));
    if (!host) check_fail(__FILE__, __LINE__, "gpt2_model_params_full", "out of host memory");
    gpu_params_download(m->lt.g, m->params, m->n_params, host, m->n_params);
    for (int i = 0; i < m->n_slices; i++)
        if (m->slices[i].len) memcpy(full + f[i].at, host + m->slices[i].at, m->slices[i].len * sizeof(float));
    free(host);
    free(f);
}

// --- the step

void gpt2_model_forward(gpt2_model_t *m, const int *tok, const int *tgt, int grad, cudaStream_t s) {
    const gpt2_shape_t *sh = &m->shape;
    int B = m->B, T = m->T, rows = B * T, C = sh->width, NH = sh->heads, nb = m->plan.nb, b0 = m->plan.b0;
    dtype_t t = m->t;
    gpt2_lt_t *lt = &m->lt;
    if (gpt2_model_has_embed(m))   /* else the residual stream comes in from the previous stage */
        gpt2_embed_forward(tok, wt(m, GPT2_WTE, -1), wt(m, GPT2_WPE, -1), buf(m, GPT2_BUF_RESID, 0), t, rows, T, C,
                           sh->vocab, s);
    for (int j = 0; j < nb; j++) {   /* the model's block l = b0 + j, its buffers j */
        int l = b0 + j;
        /* res1 = res0 + proj(attention(qkv(ln1(res0)))); res2 = res1 + proj(GELU(fc(ln2(res1)))) */
        void *res0 = buf(m, GPT2_BUF_RESID, 2 * j), *res1 = buf(m, GPT2_BUF_RESID, 2 * j + 1);
        void *res2 = buf(m, GPT2_BUF_RESID, 2 * j + 2);
        void *ln1 = buf(m, GPT2_BUF_LN1, j), *qkv = buf(m, GPT2_BUF_QKV, j), *atty = buf(m, GPT2_BUF_ATTY, j);
        void *ln2 = buf(m, GPT2_BUF_LN2, j), *fc = buf(m, GPT2_BUF_FC, j);
        float *st1 = stats(m, 2 * j), *st2 = stats(m, 2 * j + 1);
        gpt2_layernorm_forward(res0, pf(m, GPT2_LN1_W, l), pf(m, GPT2_LN1_B, l), ln1, st1, st1 + rows, t, rows, C, s);
        gpt2_linear_forward(lt, t, m->tf32, ln1, wt(m, GPT2_QKV_W, l), wt(m, GPT2_QKV_B, l), qkv, NULL, rows, C, 3 * C,
                            s);
        if (m->fused) gpt2_sdpa_forward(&m->sdpa, qkv, atty, (float *)buf(m, GPT2_BUF_ATT_STATS, j), m->sdpa_ws, s);
        else gpt2_attn_forward(m->blas, t, m->tf32, qkv, buf(m, GPT2_BUF_ATT, j), atty, B, T, C, NH, s);
        gpt2_linear_forward_residual(lt, t, m->tf32, atty, wt(m, GPT2_ATTN_PROJ_W, l), wt(m, GPT2_ATTN_PROJ_B, l), res0,
                                     res1, rows, C, C, s);
        gpt2_layernorm_forward(res1, pf(m, GPT2_LN2_W, l), pf(m, GPT2_LN2_B, l), ln2, st2, st2 + rows, t, rows, C, s);
        gpt2_linear_forward(lt, t, m->tf32, ln2, wt(m, GPT2_FC_W, l), wt(m, GPT2_FC_B, l), fc,
                            buf(m, GPT2_BUF_FC_PRE, j), rows, C, 4 * C, s);
        gpt2_linear_forward_residual(lt, t, m->tf32, fc, wt(m, GPT2_MLP_PROJ_W, l), wt(m, GPT2_MLP_PROJ_B, l), res1,
                                     res2, rows, 4 * C, C, s);
    }
    if (!gpt2_model_has_head(m)) return;   /* the residual stream goes out to the next stage */
    float *stf = stats(m, 2 * nb);
    void *lnf = buf(m, GPT2_BUF_LNF, 0), *logits = buf(m, GPT2_BUF_LOGITS, 0);
    gpt2_layernorm_forward(buf(m, GPT2_BUF_RESID, 2 * nb), pf(m, GPT2_LNF_W, -1), pf(m, GPT2_LNF_B, -1), lnf, stf,
                           stf + rows, t, rows, C, s);
    /* The head is the token embedding, its padding rows included: their logits are 0, outside the loss's columns. */
    gpt2_linear_forward(lt, t, m->tf32, lnf, wt(m, GPT2_WTE, -1), NULL, logits, NULL, rows, C, sh->vocab_pad, s);
    CHECK_CUDA(cudaMemsetAsync(m->loss_acc, 0, 2 * sizeof(double), s));
    gpt2_xent(logits, tgt, NULL, m->loss_acc, t, rows, sh->vocab, sh->vocab_pad, 1.0f / ((float)m->grad_B * T), grad,
              s);
    loss_mean_kernel<<<1, 1, 0, s>>>(m->loss_acc, m->loss);
    CHECK_LAUNCH();
}

float gpt2_model_loss(const gpt2_model_t *m, cudaStream_t stream) {
    float f = 0;
    CHECK_CUDA(cudaStreamSynchronize(stream));
    CHECK_CUDA(cudaMemcpy(&f, m->loss, sizeof f, cudaMemcpyDeviceToHost));
    return f;
}

void gpt2_model_backward(gpt2_model_t *m, const int *tok, cudaStream_t s) {
    gpt2_model_backward_units(m, tok, 0, GPT2_UNITS(m->shape.layers), s);
}

/* Backward keeps the residual stream's gradient in one buffer (dres): a residual add passes it through unchanged,
 * each LayerNorm adds its input's gradient to it (dx_beta 1), and each sublayer's products read it as their dy. */

/* Units [lo, hi) of m's, from hi - 1 down: the weight gradients written (dw_beta 0) or added to (dw_beta 1). */
static void backward_range(gpt2_model_t *m, const int *tok, int lo, int hi, float dw_beta, cudaStream_t s) {
    const gpt2_shape_t *sh = &m->shape;
    int B = m->B, T = m->T, rows = B * T, C = sh->width, NH = sh->heads, L = sh->layers, b0 = m->plan.b0;
    dtype_t t = m->t;
    gpt2_lt_t *lt = &m->lt;
    void *dres = buf(m, GPT2_BUF_DRESID, 0), *dc = buf(m, GPT2_BUF_DC, 0), *d4c = buf(m, GPT2_BUF_D4C, 0);
    void *datt = m->fused ? NULL : buf(m, GPT2_BUF_DATT, 0), *sc = m->scratch;
    size_t scb = m->scratch_bytes;
    if (lo < m->plan.lo || hi > m->plan.hi || lo > hi)
        check_fail(__FILE__, __LINE__, "gpt2_model_backward", "units outside the model's");
    if (lo == hi) return;
    if (hi == GPT2_UNITS(L)) {
        /* the head: dwte = dlogits^T lnf (the embedding's part is added last); dlnf = dlogits wte */
        int nb = m->plan.nb;
        gpt2_linear_backward(lt, t, m->tf32, buf(m, GPT2_BUF_LNF, 0), wt(m, GPT2_WTE, -1), buf(m, GPT2_BUF_LOGITS, 0),
                             dc, 0.0f, NULL, gf(m, GPT2_WTE, -1), NULL, dw_beta, rows, C, sh->vocab_pad, s);
        float *stf = stats(m, 2 * nb);
        gpt2_layernorm_backward(buf(m, GPT2_BUF_RESID, 2 * nb), pf(m, GPT2_LNF_W, -1), stf, stf + rows, dc, dres,
                                0.0f, gf(m, GPT2_LNF_W, -1), gf(m, GPT2_LNF_B, -1), dw_beta, t, rows, C, sc, scb, s);
    } else if (hi == m->plan.hi) {
        /* a stage's top below the head: its output's gradient, from the next stage */
        CHECK_CUDA(cudaMemcpyAsync(dres, buf(m, GPT2_BUF_DOUT, 0), (size_t)rows * C * dtype_size(t),
                                   cudaMemcpyDeviceToDevice, s));
    }
    for (int l = (hi < L + 1 ? hi : L + 1) - 2; l >= (lo > 1 ? lo : 1) - 1; l--) {   /* unit 1 + l */
        int j = l - b0;
        void *res0 = buf(m, GPT2_BUF_RESID, 2 * j), *res1 = buf(m, GPT2_BUF_RESID, 2 * j + 1);
        float *st1 = stats(m, 2 * j), *st2 = stats(m, 2 * j + 1);
        /* MLP: dres is res2's gradient. d fc_pre = (dres W_proj) GELU'(fc_pre), in the product's epilogue. */
        gpt2_linear_backward(lt, t, m->tf32, buf(m, GPT2_BUF_FC, j), wt(m, GPT2_MLP_PROJ_W, l), dres, d4c, 0.0f,
                             buf(m, GPT2_BUF_FC_PRE, j), gf(m, GPT2_MLP_PROJ_W, l), gf(m, GPT2_MLP_PROJ_B, l), dw_beta,
                             rows, 4 * C, C, s);
        gpt2_linear_backward(lt, t, m->tf32, buf(m, GPT2_BUF_LN2, j), wt(m, GPT2_FC_W, l), d4c, dc, 0.0f, NULL,
                             gf(m, GPT2_FC_W, l), gf(m, GPT2_FC_B, l), dw_beta, rows, C, 4 * C, s);
        gpt2_layernorm_backward(res1, pf(m, GPT2_LN2_W, l), st2, st2 + rows, dc, dres, 1.0f, gf(m, GPT2_LN2_W, l),
                                gf(m, GPT2_LN2_B, l), dw_beta, t, rows, C, sc, scb, s);
        /* attention: dres is now res1's whole gradient */
        gpt2_linear_backward(lt, t, m->tf32, buf(m, GPT2_BUF_ATTY, j), wt(m, GPT2_ATTN_PROJ_W, l), dres, dc, 0.0f,
                             NULL, gf(m, GPT2_ATTN_PROJ_W, l), gf(m, GPT2_ATTN_PROJ_B, l), dw_beta, rows, C, C, s);
        if (m->fused)
            gpt2_sdpa_backward(&m->sdpa, buf(m, GPT2_BUF_QKV, j), buf(m, GPT2_BUF_ATTY, j),
                               (const float *)buf(m, GPT2_BUF_ATT_STATS, j), dc, d4c, m->sdpa_ws, s);
        else
            gpt2_attn_backward(m->blas, t, m->tf32, buf(m, GPT2_BUF_QKV, j), buf(m, GPT2_BUF_ATT, j), dc, datt, d4c,
                               B, T, C, NH, s);
        gpt2_linear_backward(lt, t, m->tf32, buf(m, GPT2_BUF_LN1, j), wt(m, GPT2_QKV_W, l), d4c, dc, 0.0f, NULL,
                             gf(m, GPT2_QKV_W, l), gf(m, GPT2_QKV_B, l), dw_beta, rows, C, 3 * C, s);
        gpt2_layernorm_backward(res0, pf(m, GPT2_LN1_W, l), st1, st1 + rows, dc, dres, 1.0f, gf(m, GPT2_LN1_W, l),
                                gf(m, GPT2_LN1_B, l), dw_beta, t, rows, C, sc, scb, s);
    }
    if (lo > 0) return;   /* on a stage after the first, dres is now its input's gradient (din) */
    /* The embedding adds to its gradients: the position embedding's start from 0 at a step's first backward (its
     * rows past T stay 0), and so does the token embedding's on a stage whose head did not write it first. */
    if (dw_beta == 0.0f) {
        const gpt2_slice_t *wpe = gpt2_layout_find(m->slices, m->n_slices, GPT2_WPE, -1);
        CHECK_CUDA(cudaMemsetAsync(gf(m, GPT2_WPE, -1), 0, wpe->len * sizeof(float), s));
        if (!gpt2_model_has_head(m)) {
            const gpt2_slice_t *wte = gpt2_layout_find(m->slices, m->n_slices, GPT2_WTE, -1);
            CHECK_CUDA(cudaMemsetAsync(gf(m, GPT2_WTE, -1), 0, wte->len * sizeof(float), s));
        }
    }
    gpt2_embed_backward(tok, dres, gf(m, GPT2_WTE, -1), gf(m, GPT2_WPE, -1), t, rows, T, C, sh->vocab, sc, scb, s);
}

void gpt2_model_backward_units(gpt2_model_t *m, const int *tok, int lo, int hi, cudaStream_t s) {
    backward_range(m, tok, lo, hi, 0.0f, s);
}

void gpt2_model_backward_stage(gpt2_model_t *m, const int *tok, float dw_beta, cudaStream_t s) {
    backward_range(m, tok, m->plan.lo, m->plan.hi, dw_beta, s);
}

void gpt2_model_step(gpt2_model_t *m, const int *tok, const int *tgt, optim_t *o, cudaStream_t stream) {
    gpt2_model_forward(m, tok, tgt, 1, stream);
    gpt2_model_backward(m, tok, stream);
    gpt2_model_update(m, o, stream);
}

void gpt2_model_grad_sumsq(const gpt2_model_t *m, int skip_wte, double *acc, cudaStream_t s) {
    size_t from = 0;
    const gpt2_slice_t *wte = gpt2_layout_find(m->slices, m->n_slices, GPT2_WTE, -1);
    if (skip_wte && wte) from = wte->at + (wte->len + GPT2_ALIGN - 1) / GPT2_ALIGN * GPT2_ALIGN;   /* it is first */
    optim_sumsq(m->grads + from, DTYPE_FP32, NULL, DTYPE_FP32, m->n_params - from, NULL, acc, s);
}

void gpt2_model_adamw(gpt2_model_t *m, optim_t *o, cudaStream_t s) {
    optim_begin_step(o, s);
    gpt2_adamw_step(&m->adamw, m->params, m->params_lp, m->grads, m->adam_m, m->adam_v, o->lr, o->step, m->sumsq, s);
}

void gpt2_model_update(gpt2_model_t *m, optim_t *o, cudaStream_t s) {
    if (m->adamw.max_norm > 0.0f) {
        CHECK_CUDA(cudaMemsetAsync(m->sumsq, 0, sizeof(double), s));
        gpt2_model_grad_sumsq(m, 0, m->sumsq, s);
    }
    gpt2_model_adamw(m, o, s);
}

void gpt2_model_set_sumsq(gpt2_model_t *m, const double *parts, int n, cudaStream_t s) {
    sum_kernel<<<1, 1, 0, s>>>(parts, n, m->sumsq);
    CHECK_LAUNCH();
}

void gpt2_model_loss_add(const gpt2_model_t *m, double *acc, cudaStream_t s) {
    add2_kernel<<<1, 1, 0, s>>>(m->loss_acc, acc);
    CHECK_LAUNCH();
}
