/* test_gpt2_stage.c — GPT-2 cut into pipeline stages (engine/gpt2/gpt2_model.h's stage model) trains as the whole
 * model does: the tiny GPT-2 on random tokens, K AdamW steps at batch B, against the whole model's gpt2_model_step;
 * the stages on GPU 0, each micro-batch's activations carried forward and its gradients back by copies, the weight
 * gradients accumulated over M micro-batches, the tied token embedding's two parts summed, the clipping's norm summed
 * over the stages (the token embedding once). Splits: 2 stages, 3, and each unit a stage; M 1 and 2; fp32 and bf16
 * at dp_common.h's bounds. Negative controls: the tie left out, and the micro-batches' gradients overwritten rather
 * than summed, are rejected by the same bounds. Run: ./test_gpt2_stage   (exits 77 without a CUDA device) */
#include "dp_common.h"
#include "gpt2_ref.h"
#include "../../engine/convert.h"
#include "../../engine/gpu.h"
#include "../../engine/rng.h"
#include "../../engine/gpt2/gpt2_model.h"

enum { B = 8, T = 32, K = 4, MAX_STAGES = 4, MAX_M = 2 };
#define LR 1e-3

/* What a variant leaves out, for the controls. */
enum { FAULT_NONE = 0, FAULT_NO_TIE, FAULT_NO_ACCUMULATE };

static const gpt2_adamw_cfg_t OPT = GPT2_ADAMW_RECIPE(0.1f);

static void model_init(gpt2_model_t *m, gpu_t *g, dtype_t t, int b, int lo, int hi) {
    char err[512] = "";
    if (gpt2_model_init_stage(m, gpt2_shape("tiny"), b, T, t, 0, g, &OPT, GPT2_ATTN_AUTO, lo, hi, err, sizeof err)) {
        fprintf(stderr, "gpt2_model_init_stage [%d, %d): %s\n", lo, hi, err);
        exit(1);
    }
    m->grad_B = B;   /* the loss's gradient is the whole batch's mean's share */
}

/* The whole model's K steps: its parameters (malloc'd, the whole layout) and mean loss. */
static float *whole(gpu_t *g, dtype_t t, const int *dtok, const int *dtgt, double *loss, size_t *n) {
    gpt2_model_t m;
    optim_t o;
    model_init(&m, g, t, B, 0, GPT2_UNITS(gpt2_shape("tiny")->layers));
    gpt2_test_optim(&o, LR, K);
    gpt2_model_init_params(&m, 7, g->stream);
    *loss = 0;
    for (int k = 0; k < K; k++) {
        gpt2_model_step(&m, dtok, dtgt, &o, g->stream);
        *loss += gpt2_model_loss(&m, g->stream) / K;
    }
    *n = m.n_params;
    float *p = malloc(*n * sizeof *p);
    gpt2_model_params_full(&m, p);
    optim_free(&o);
    gpt2_model_free(&m);
    return p;
}

/* The stages [starts[k], starts[k + 1]) at M micro-batches: GPipe's order (every forward, then every backward from
 * the last micro-batch), each micro-batch in its own slot. Their parameters in the whole layout (the token embedding
 * from stage 0; *wte_same: the last stage's copy equals it) and the micro-batches' mean loss. */
static float *staged(gpu_t *g, dtype_t t, const int *dtok, const int *dtgt, const int *starts, int p, int M,
                     int fault, double *loss, int *wte_same) {
    gpt2_model_t st[MAX_STAGES], slot[MAX_STAGES][MAX_M];
    optim_t o[MAX_STAGES];
    cudaStream_t s = g->stream;
    int mb = B / M, rows = mb * T;
    char err[256] = "";
    for (int k = 0; k < p; k++) {
        model_init(&st[k], g, t, mb, starts[k], starts[k + 1]);
        gpt2_test_optim(&o[k], LR, K);
        gpt2_model_init_params(&st[k], 7, s);
        for (int j = 0; j < M; j++)
            if (j == 0) slot[k][0] = st[k];
            else if (gpt2_model_init_slot(&slot[k][j], &st[k], err, sizeof err)) {
                fprintf(stderr, "%s\n", err);
                exit(1);
            }
    }
    const gpt2_model_t *last = &st[p - 1];
    size_t wte = 0;   /* the token embedding's elements (first in both end stages' layouts) */
    {
        const gpt2_slice_t *w = gpt2_layout_find(st[0].slices, st[0].n_slices, GPT2_WTE, -1);
        wte = w->len;
    }
    size_t act = (size_t)rows * gpt2_shape("tiny")->width * dtype_size(t);
    double *acc;
    CHECK_CUDA(cudaMalloc((void **)&acc, sizeof(double)));
    *loss = 0;
    for (int step = 0; step < K; step++) {
        for (int j = 0; j < M; j++)
            for (int k = 0; k < p; k++) {
                gpt2_model_t *m = &slot[k][j];
                void *in;
                gpt2_model_stage_io(m, &in, NULL, NULL, NULL);
                if (in) {   /* the previous stage's output of this micro-batch */
                    void *out;
                    gpt2_model_stage_io(&slot[k - 1][j], NULL, &out, NULL, NULL);
                    CHECK_CUDA(cudaMemcpyAsync(in, out, act, cudaMemcpyDeviceToDevice, s));
                }
                gpt2_model_forward(m, dtok + (size_t)j * rows, dtgt + (size_t)j * rows, 1, s);
                if (k == p - 1) *loss += gpt2_model_loss(m, s) / (K * M);
            }
        for (int j = M - 1; j >= 0; j--)
            for (int k = p - 1; k >= 0; k--) {
                gpt2_model_t *m = &slot[k][j];
                void *dout;
                gpt2_model_stage_io(m, NULL, NULL, &dout, NULL);
                if (dout) {   /* the next stage's input gradient of this micro-batch */
                    void *din;
                    gpt2_model_stage_io(&slot[k + 1][j], NULL, NULL, NULL, &din);
                    CHECK_CUDA(cudaMemcpyAsync(dout, din, act, cudaMemcpyDeviceToDevice, s));
                }
                float beta = j == M - 1 || fault == FAULT_NO_ACCUMULATE ? 0.0f : 1.0f;
                gpt2_model_backward_stage(m, dtok + (size_t)j * rows, beta, s);
            }
        if (p > 1 && fault != FAULT_NO_TIE) {   /* the tied token embedding: both parts, on both ends */
            convert_acc_f32(st[0].grads, last->grads, DTYPE_FP32, wte, 1.0f, s);
            CHECK_CUDA(cudaMemcpyAsync(last->grads, st[0].grads, wte * sizeof(float), cudaMemcpyDeviceToDevice, s));
        }
        CHECK_CUDA(cudaMemsetAsync(acc, 0, sizeof(double), s));
        for (int k = 0; k < p; k++) gpt2_model_grad_sumsq(&st[k], p > 1 && k == p - 1, acc, s);
        for (int k = 0; k < p; k++) {
            CHECK_CUDA(cudaMemcpyAsync(st[k].sumsq, acc, sizeof(double), cudaMemcpyDeviceToDevice, s));
            gpt2_model_adamw(&st[k], &o[k], s);
        }
    }
    size_t total = gpt2_layout(gpt2_shape("tiny"), NULL, 0);
    float *full = calloc(total, sizeof *full), *tmp = calloc(total, sizeof *tmp);
    for (int k = p - 1; k >= 0; k--) gpt2_model_params_full(&st[k], full);   /* stage 0's embedding last */
    gpt2_model_params_full(last, tmp);
    *wte_same = memcmp(full, tmp, wte * sizeof(float)) == 0;
    free(tmp);
    CHECK_CUDA(cudaFree(acc));
    for (int k = 0; k < p; k++) {
        for (int j = M - 1; j >= 1; j--) gpt2_model_free(&slot[k][j]);
        optim_free(&o[k]);
        gpt2_model_free(&st[k]);
    }
    return full;
}

int main(void) {
    gpu_test_require(1);
    const gpt2_shape_t *sh = gpt2_shape("tiny");
    int U = GPT2_UNITS(sh->layers);   /* 4: the embeddings, 2 blocks, the head */
    int tok[B * T], tgt[B * T];
    rng_t r;
    rng_seed(&r, 11);
    for (int i = 0; i < B * T; i++) tok[i] = (int)rng_below(&r, (uint32_t)sh->vocab),
                                    tgt[i] = (int)rng_below(&r, (uint32_t)sh->vocab);
    static const struct { int p, starts[MAX_STAGES + 1]; } splits[] = {
        {2, {0, 2, 4}}, {3, {0, 1, 3, 4}}, {4, {0, 1, 2, 3, 4}},
    };
    const math_t maths[2] = {MATH_FP32, MATH_BF16};
    for (int mi = 0; mi < 2; mi++) {
        dtype_t t = math_act_dtype(maths[mi]);
        const dp_tol_t *tol = t == DTYPE_BF16 ? &dp_tol_bf16 : &dp_tol_fp32;
        gpu_t g;
        gpu_init(&g, 0, maths[mi]);
        int *dtok, *dtgt;
        CHECK_CUDA(cudaMalloc((void **)&dtok, sizeof tok));
        CHECK_CUDA(cudaMalloc((void **)&dtgt, sizeof tgt));
        CHECK_CUDA(cudaMemcpy(dtok, tok, sizeof tok, cudaMemcpyHostToDevice));
        CHECK_CUDA(cudaMemcpy(dtgt, tgt, sizeof tgt, cudaMemcpyHostToDevice));
        size_t n;
        double ref_loss, loss;
        float *ref = whole(&g, t, dtok, dtgt, &ref_loss, &n);
        float *p0 = calloc(n, sizeof *p0);
        gpt2_layout_init(sh, 7, p0, n);
        printf("%s: the whole model, batch %d x %d, %d steps: loss %.5f\n", math_name(maths[mi]), B, T, K, ref_loss);
        for (size_t v = 0; v < sizeof splits / sizeof splits[0]; v++)
            for (int M = 1; M <= MAX_M; M++) {
                int same = 0;
                float *q = staged(&g, t, dtok, dtgt, splits[v].starts, splits[v].p, M, FAULT_NONE, &loss, &same);
                char label[96];
                snprintf(label, sizeof label, "%s: %d stages, M %d", math_name(maths[mi]), splits[v].p, M);
                EXPECT(splits[v].starts[splits[v].p] == U &&
                           dp_test_near(label, q, ref, p0, n, tol, loss, ref_loss, -1, -1),
                       "%s: not the whole model's training", label);
                EXPECT(same, "%s: the two copies of the token embedding differ", label);
                free(q);
            }
        static const struct { int fault; const char *what; } controls[] = {
            {FAULT_NO_TIE, "control: the tie left out"},
            {FAULT_NO_ACCUMULATE, "control: micro-batches overwritten"},
        };
        for (int c = 0; c < 2; c++) {
            int same = 0;
            float *q = staged(&g, t, dtok, dtgt, splits[0].starts, 2, 2, controls[c].fault, &loss, &same);
            char label[96];
            snprintf(label, sizeof label, "%s: %s", math_name(maths[mi]), controls[c].what);
            EXPECT(!dp_test_near(label, q, ref, p0, n, tol, loss, ref_loss, -1, -1), "%s: accepted by the bounds",
                   label);
            free(q);
        }
        free(ref);
        free(p0);
        CHECK_CUDA(cudaFree(dtok));
        CHECK_CUDA(cudaFree(dtgt));
        gpu_free(&g);
    }
    return test_summary();
}
