/* optim.cu — the optimizer on the device (optim.h): the schedule's rate read at the step counter, SGD through
 * sgd_step, LARS's per-segment norms and update, and the squared gradient norm of the noise scale. */
#include "optim.h"
#include "sgd.h"
#include "model.h"
#include "check.h"
#include "launch.h"
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <type_traits>

/* A LARS chunk: enough elements that a block's launch is amortised, few enough that a small layer is one block. */
#define OPTIM_CHUNK 16384
#define OPTIM_THREADS 256

// --- the rate

__global__ static void begin_step_kernel(const float *table, long n, long long *step, float *lr) {
    long long s = *step;
    *lr = table[s < n ? s : n - 1];
    *step = s + 1;
}

// --- block sums

__device__ static double block_sum(double x) {
    __shared__ double part[OPTIM_THREADS / 32];
    for (int o = 16; o > 0; o >>= 1) x += __shfl_down_sync(0xffffffffu, x, o);
    if ((threadIdx.x & 31) == 0) part[threadIdx.x >> 5] = x;
    __syncthreads();
    x = threadIdx.x < blockDim.x / 32 ? part[threadIdx.x] : 0.0;
    if (threadIdx.x < 32)
        for (int o = 16; o > 0; o >>= 1) x += __shfl_down_sync(0xffffffffu, x, o);
    __syncthreads();   /* part is reused by the next call */
    return x;
}

/* The gradient of element i as the update reads it: widened, the split's other half added, unscaled. */
template <typename G, typename L>
__device__ static inline float grad_at(const G *g, const L *g2, size_t i, float inv) {
    float x = (float)g[i];
    if constexpr (!std::is_void<L>::value) if (g2) x += (float)g2[i];
    return x * inv;
}

template <typename G, typename L>
__global__ static void sumsq_kernel(const G *g, const L *g2, size_t n, const loss_scale_t *ls, double *acc) {
    float inv = ls ? 1.0f / ls->scale : 1.0f;
    double s = 0;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
        double x = grad_at(g, g2, i, inv);
        s += x * x;
    }
    s = block_sum(s);
    if (threadIdx.x == 0) atomicAdd(acc, s);
}

// --- LARS

template <typename G, typename L>
__global__ static void lars_norms_kernel(const float *p, const G *g, const L *g2, const int *chunk_seg,
                                         const size_t *chunk_at, const int *chunk_len, const int *adapt,
                                         const loss_scale_t *ls, float *norms) {
    int seg = chunk_seg[blockIdx.x];
    if (!adapt[seg] || (ls && ls->found_inf)) return;
    float inv = ls ? 1.0f / ls->scale : 1.0f;
    size_t at = chunk_at[blockIdx.x];
    double w2 = 0, g2s = 0;
    for (int k = threadIdx.x; k < chunk_len[blockIdx.x]; k += blockDim.x) {
        double w = p[at + k], x = grad_at(g, g2, at + k, inv);
        w2 += w * w;
        g2s += x * x;
    }
    w2 = block_sum(w2);
    g2s = block_sum(g2s);
    if (threadIdx.x == 0) {
        atomicAdd(&norms[2 * seg], (float)w2);
        atomicAdd(&norms[2 * seg + 1], (float)g2s);
    }
}

/* You et al.'s update with momentum on the scaled step: local = lr * trust, v = mu v + local (g + wd w), w -= v;
 * trust = eta |w| / (|g| + wd |w|) for an adapted segment with both norms positive, else 1. */
template <typename G, typename L>
__global__ static void lars_update_kernel(float *p, L *lp, const G *g, const L *g2, float *v, const int *chunk_seg,
                                          const size_t *chunk_at, const int *chunk_len, const int *adapt,
                                          const float *norms, const float *lr_p, float mu, float wd, float eta,
                                          const loss_scale_t *ls) {
    if (ls && ls->found_inf) return;
    float inv = ls ? 1.0f / ls->scale : 1.0f;
    int seg = chunk_seg[blockIdx.x];
    float trust = 1.0f;
    if (adapt[seg]) {
        float wn = sqrtf(norms[2 * seg]), gn = sqrtf(norms[2 * seg + 1]);
        if (wn > 0.0f && gn > 0.0f) trust = eta * wn / (gn + wd * wn);
    }
    float local = *lr_p * trust;
    size_t at = chunk_at[blockIdx.x];
    for (int k = threadIdx.x; k < chunk_len[blockIdx.x]; k += blockDim.x) {
        size_t i = at + k;
        float w = p[i], d = grad_at(g, g2, i, inv) + wd * w;
        if (mu > 0.0f) {
            d = mu * v[i] + local * d;
            v[i] = d;
            w -= d;
        } else w -= local * d;
        p[i] = w;
        if constexpr (!std::is_void<L>::value) if (lp) lp[i] = (L)w;
    }
}

template <typename G, typename L>
static void lars_launch(const optim_t *o, model_t *m, const G *g, const L *g2, L *lp, const loss_scale_t *ls,
                        cudaStream_t s) {
    CHECK_CUDA(cudaMemsetAsync(o->norms, 0, 2 * sizeof(float) * (size_t)o->n_seg, s));
    lars_norms_kernel<G, L><<<o->n_chunks, OPTIM_THREADS, 0, s>>>(m->params, g, g2, o->chunk_seg, o->chunk_at,
                                                                 o->chunk_len, o->seg_adapt, ls, o->norms);
    CHECK_LAUNCH();
    lars_update_kernel<G, L><<<o->n_chunks, OPTIM_THREADS, 0, s>>>(
        m->params, lp, g, g2, m->momentum, o->chunk_seg, o->chunk_at, o->chunk_len, o->seg_adapt, o->norms, o->lr,
        o->momentum, o->weight_decay, o->eta, ls);
    CHECK_LAUNCH();
}

template <typename G>
static void lars_by_copy(const optim_t *o, model_t *m, const G *g, const void *g2, const loss_scale_t *ls,
                         cudaStream_t s) {
    if (!m->params_lp) {
        if (g2) check_fail(__FILE__, __LINE__, "optim_update", "split gradients without a 2-byte copy");
        lars_launch<G, void>(o, m, g, (const void *)NULL, (void *)NULL, ls, s);
    } else if (m->act_dtype == DTYPE_FP16) {
        lars_launch<G, __half>(o, m, g, (const __half *)g2, (__half *)m->params_lp, ls, s);
    } else {
        lars_launch<G, __nv_bfloat16>(o, m, g, (const __nv_bfloat16 *)g2, (__nv_bfloat16 *)m->params_lp, ls, s);
    }
}

// --- host

int optim_segments(const model_t *m, optim_seg_t *seg, int max) {
    int n = 0;
    for (int i = m->first; i < m->end; i++) {
        const layer_t *l = &m->layers[i];
        if (!l->n_params) continue;
        size_t at = l->param_offset - m->param_first, bias = 0;
        if (l->ops == &layer_conv_ops && l->cfg.bias) bias = (size_t)l->cfg.cout;
        if (l->ops == &layer_dense_ops) bias = (size_t)l->cfg.cout;
        if (bias > l->n_params) bias = 0;   /* batch norm: its scale and shift are one tensor of 2C */
        optim_seg_t parts[2] = {{at, l->n_params - bias, 1}, {at + l->n_params - bias, bias, 1}};
        for (int k = 0; k < 2; k++)
            if (parts[k].len) {
                if (n < max) seg[n] = parts[k];
                n++;
            }
    }
    return n;
}

static int optim_oom(char *err, size_t errlen, const char *what) {
    snprintf(err, errlen, "out of memory: the optimizer's %s", what);
    return -1;
}

int optim_set_segments(optim_t *o, const optim_seg_t *seg, int n, char *err, size_t errlen) {
    int chunks = 0;
    for (int i = 0; i < n; i++) chunks += (int)((seg[i].len + OPTIM_CHUNK - 1) / OPTIM_CHUNK);
    int *cs = (int *)calloc((size_t)chunks + 1, sizeof(int)), *cl = (int *)calloc((size_t)chunks + 1, sizeof(int));
    int *ad = (int *)calloc((size_t)n + 1, sizeof(int));
    size_t *ca = (size_t *)calloc((size_t)chunks + 1, sizeof(size_t));
    int rc = -1;
    if (!cs || !cl || !ad || !ca) {
        snprintf(err, errlen, "out of host memory");
        goto out;
    }
    for (int i = 0, c = 0; i < n; i++) {
        ad[i] = seg[i].adapt;
        for (size_t at = 0; at < seg[i].len; at += OPTIM_CHUNK, c++) {
            cs[c] = i;
            ca[c] = seg[i].at + at;
            cl[c] = (int)(seg[i].len - at < OPTIM_CHUNK ? seg[i].len - at : OPTIM_CHUNK);
        }
    }
    if (gpu_try_malloc((void **)&o->chunk_seg, sizeof(int) * (size_t)(chunks + 1)) ||
        gpu_try_malloc((void **)&o->chunk_len, sizeof(int) * (size_t)(chunks + 1)) ||
        gpu_try_malloc((void **)&o->chunk_at, sizeof(size_t) * (size_t)(chunks + 1)) ||
        gpu_try_malloc((void **)&o->seg_adapt, sizeof(int) * (size_t)(n + 1)) ||
        gpu_try_malloc((void **)&o->norms, 2 * sizeof(float) * (size_t)(n + 1))) {
        optim_oom(err, errlen, "LARS tables");
        goto out;
    }
    CHECK_CUDA(cudaMemcpy(o->chunk_seg, cs, sizeof(int) * (size_t)chunks, cudaMemcpyHostToDevice));
    CHECK_CUDA(cudaMemcpy(o->chunk_len, cl, sizeof(int) * (size_t)chunks, cudaMemcpyHostToDevice));
    CHECK_CUDA(cudaMemcpy(o->chunk_at, ca, sizeof(size_t) * (size_t)chunks, cudaMemcpyHostToDevice));
    CHECK_CUDA(cudaMemcpy(o->seg_adapt, ad, sizeof(int) * (size_t)n, cudaMemcpyHostToDevice));
    o->n_seg = n;
    o->n_chunks = chunks;
    rc = 0;
out:
    free(cs), free(cl), free(ad), free(ca);
    return rc;
}

int optim_init(optim_t *o, optim_kind_t kind, float momentum, float weight_decay, const lr_schedule_t *sched,
               long steps_per_epoch, const model_t *m, char *err, size_t errlen) {
    memset(o, 0, sizeof *o);
    CHECK_CUDA(cudaGetDevice(&o->device));
    o->kind = kind;
    o->momentum = momentum;
    o->weight_decay = weight_decay;
    o->eta = (float)OPTIM_LARS_ETA;
    o->n_steps = (long)sched->epochs * steps_per_epoch;
    if (o->n_steps < 1) o->n_steps = 1;
    float *h = (float *)malloc(sizeof(float) * (size_t)o->n_steps);
    if (!h) return snprintf(err, errlen, "out of host memory"), -1;
    if (sched->epochs > 0) lr_schedule_table(sched, steps_per_epoch, h, o->n_steps);
    else h[0] = (float)sched->peak;
    int bad = gpu_try_malloc((void **)&o->table, sizeof(float) * (size_t)o->n_steps) ||
              gpu_try_malloc((void **)&o->step, sizeof(long long)) || gpu_try_malloc((void **)&o->lr, sizeof(float));
    if (!bad) {
        CHECK_CUDA(cudaMemcpy(o->table, h, sizeof(float) * (size_t)o->n_steps, cudaMemcpyHostToDevice));
        CHECK_CUDA(cudaMemset(o->step, 0, sizeof(long long)));
        CHECK_CUDA(cudaMemcpy(o->lr, h, sizeof(float), cudaMemcpyHostToDevice));
    }
    free(h);
    if (bad) return optim_oom(err, errlen, "learning-rate table");
    if (kind != OPTIM_LARS || !m) return 0;   /* no model: segments come from optim_set_segments */
    int n = optim_segments(m, NULL, 0);
    optim_seg_t *seg = (optim_seg_t *)calloc((size_t)n + 1, sizeof *seg);
    if (!seg) return snprintf(err, errlen, "out of host memory"), -1;
    optim_segments(m, seg, n);
    int rc = optim_set_segments(o, seg, n, err, errlen);
    free(seg);
    return rc;
}

void optim_begin_step(optim_t *o, cudaStream_t stream) {
    begin_step_kernel<<<1, 1, 0, stream>>>(o->table, o->n_steps, o->step, o->lr);
    CHECK_LAUNCH();
}

void optim_update(const optim_t *o, model_t *m, size_t first, size_t count, const void *g, dtype_t gt,
                  const void *g2, const loss_scale_t *ls, cudaStream_t stream) {
    if (o->kind == OPTIM_SGD) {
        void *lp = m->params_lp ? (char *)m->params_lp + first * dtype_size(m->act_dtype) : NULL;
        sgd_step(m->params + first, lp, m->act_dtype, g, gt, g2, m->momentum + first, count, o->lr, o->momentum,
                 o->weight_decay, ls, stream);
        return;
    }
    if (o->kind != OPTIM_LARS)     /* AdamW steps GPT-2 (gpt2_model_update); the options refuse it for layers */
        check_fail(__FILE__, __LINE__, "optim_update", "this optimizer does not step a graph of layers");
    if (first != 0 || count != m->n_params)
        check_fail(__FILE__, __LINE__, "optim_update", "LARS stepped in slices (its norms need whole layers)");
    if (gt == DTYPE_BF16) lars_by_copy(o, m, (const __nv_bfloat16 *)g, g2, ls, stream);
    else if (gt == DTYPE_FP16) lars_by_copy(o, m, (const __half *)g, g2, ls, stream);
    else lars_by_copy(o, m, (const float *)g, g2, ls, stream);
}

template <typename G>
static void sumsq_by_g2(const G *g, const void *g2, dtype_t g2t, size_t n, const loss_scale_t *ls, double *acc,
                        cudaStream_t s) {
    unsigned b = launch_blocks(n, OPTIM_THREADS, 1024);
    if (!g2) sumsq_kernel<G, void><<<b, OPTIM_THREADS, 0, s>>>(g, (const void *)NULL, n, ls, acc);
    else if (g2t == DTYPE_FP16) sumsq_kernel<G, __half><<<b, OPTIM_THREADS, 0, s>>>(g, (const __half *)g2, n, ls, acc);
    else if (g2t == DTYPE_BF16)
        sumsq_kernel<G, __nv_bfloat16><<<b, OPTIM_THREADS, 0, s>>>(g, (const __nv_bfloat16 *)g2, n, ls, acc);
    else sumsq_kernel<G, float><<<b, OPTIM_THREADS, 0, s>>>(g, (const float *)g2, n, ls, acc);
    CHECK_LAUNCH();
}

void optim_sumsq(const void *g, dtype_t gt, const void *g2, dtype_t g2t, size_t n, const loss_scale_t *ls,
                 double *acc, cudaStream_t stream) {
    if (!n) return;
    if (gt == DTYPE_BF16) sumsq_by_g2((const __nv_bfloat16 *)g, g2, g2t, n, ls, acc, stream);
    else if (gt == DTYPE_FP16) sumsq_by_g2((const __half *)g, g2, g2t, n, ls, acc, stream);
    else sumsq_by_g2((const float *)g, g2, g2t, n, ls, acc, stream);
}

double optim_lr_read(const optim_t *o, cudaStream_t stream) {
    float h = 0;
    CHECK_CUDA(cudaMemcpyAsync(&h, o->lr, sizeof h, cudaMemcpyDeviceToHost, stream));
    CHECK_CUDA(cudaStreamSynchronize(stream));
    return h;
}

void optim_free(optim_t *o) {
    void *bufs[] = {o->table, o->step, o->lr, o->seg_adapt, o->norms, o->chunk_seg, o->chunk_at, o->chunk_len};
    for (size_t i = 0; i < sizeof bufs / sizeof bufs[0]; i++)
        if (bufs[i]) CHECK_CUDA(cudaFree(bufs[i]));
    memset(o, 0, sizeof *o);
}
