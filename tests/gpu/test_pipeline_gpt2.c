/* test_pipeline_gpt2.c — the pipeline strategy trains GPT-2 as single does: the tiny GPT-2 on random tokens, K AdamW
 * steps at global batch B, its stages on GPU 0 (or on GPUs 0, 1, ... where present): 1 stage at 2 micro-batches, 2
 * stages under GPipe and 1F1B, 3 and 4 stages (each unit a stage), the stages balanced by FLOPs or split by hand;
 * fp32 and bf16 at dp_common.h's bounds on the parameters, the update, the training loss and the held-out loss.
 * Negative control: single at half the batch is rejected. Zero bubble is refused with a message.
 * Run: ./test_pipeline_gpt2   (exits 77 without a CUDA device) */
#include "dp_common.h"
#include "../../engine/tokens.h"
#include "../../strategies/pipeline/pipe_schedule.h"

#define B 8
#define K 4
#define T 32

/* K steps of st under cfg: its parameters (malloc'd), the epoch's stats and the held-out loss. */
static float *train(const strategy_t *st, const run_cfg_t *cfg, epoch_stats_t *s, double *held, size_t *n) {
    epoch_stats_init(s);
    void *state = dp_test_train(st, cfg, K, s);
    *n = st->params(state, NULL, 0);
    float *p = malloc(*n * sizeof(float));
    if (!p) { fprintf(stderr, "out of host memory\n"); exit(1); }
    st->params(state, p, *n);
    *held = st->evaluate(state);
    st->teardown(state);
    return p;
}

static int check(const char *label, const float *p, const float *ref, const float *p0, size_t n, const dp_tol_t *tol,
                 double loss, double ref_loss, double held, double ref_held) {
    float *d = malloc(n * sizeof(float)), *dref = malloc(n * sizeof(float));
    if (!d || !dref) { fprintf(stderr, "out of host memory\n"); exit(1); }
    for (size_t k = 0; k < n; k++) d[k] = p[k] - p0[k], dref[k] = ref[k] - p0[k];
    double ep = dp_test_rel(p, ref, n), eu = dp_test_rel(d, dref, n), el = fabs(loss - ref_loss) / fabs(ref_loss);
    double eh = fabs(held - ref_held) / fabs(ref_held);
    printf("%-44s params %.3g, update %.3g, loss %.3g, held-out %.3g (bounds %.3g, %.3g, %.3g)\n", label, ep, eu, el,
           eh, tol->params, tol->update, tol->loss);
    free(d);
    free(dref);
    return ep <= tol->params && eu <= tol->update && el <= tol->loss && eh <= tol->loss;
}

int main(void) {
    gpu_test_require(1);
    int n_dev = 0;
    CHECK_CUDA(cudaGetDeviceCount(&n_dev));
    tokens_corpus_t corpus;
    tokens_corpus_synthetic(&corpus, T, 512, 7);
    idx_dataset_t data = {.corpus = &corpus};
    /* stage k on GPU k where present, else on GPU 0 (the links then copy within it) */
    int devices[4];
    for (int k = 0; k < 4; k++) devices[k] = k < n_dev ? k : 0;
    static const int hand[1] = {3};   /* 2 stages: the embeddings and both blocks; the head */
    static const struct { const char *label; int p, micro, schedule; const int *split; } variants[] = {
        {"1 stage, M 2", 1, 2, SCHED_1F1B, NULL},
        {"2 stages, M 2, gpipe", 2, 2, SCHED_GPIPE, NULL},
        {"2 stages, M 4, 1f1b", 2, 4, SCHED_1F1B, NULL},
        {"2 stages split 3, M 2, 1f1b", 2, 2, SCHED_1F1B, hand},
        {"3 stages, M 4, 1f1b", 3, 4, SCHED_1F1B, NULL},
        {"4 stages (a unit each), M 2, gpipe", 4, 2, SCHED_GPIPE, NULL},
    };
    const math_t maths[2] = {MATH_FP32, MATH_BF16};
    const strategy_t *single = strategy_find("single"), *pipe = strategy_find("pipeline");
    for (int mi = 0; mi < 2; mi++) {
        math_t math = maths[mi];
        const dp_tol_t *tol = math == MATH_FP32 ? &dp_tol_fp32 : &dp_tol_bf16;
        run_cfg_t cfg = {.model = "gpt2", .model_size = "tiny", .n_gpus = 1, .devices = devices, .global_batch = B,
                         .lr = 1e-3, .weight_decay = 0.1, .optim = {.kind = OPTIM_ADAMW}, .math = math, .seed = 3,
                         .data = &data, .cuda_graph = 1};
        epoch_stats_t s;
        double ref_held, held;
        size_t n, n0;
        void *st0 = dp_test_train(single, &cfg, 0, &s);
        n0 = single->params(st0, NULL, 0);
        float *p0 = malloc(n0 * sizeof(float));
        if (!p0) { fprintf(stderr, "out of host memory\n"); exit(1); }
        single->params(st0, p0, n0);
        single->teardown(st0);
        float *ref = train(single, &cfg, &s, &ref_held, &n);
        double ref_loss = s.train_loss;
        printf("%s: single at batch %d, %d steps: loss %.5f, held-out %.5f\n", math_name(math), B, K, ref_loss,
               ref_held);
        run_cfg_t half = cfg;
        half.global_batch = B / 2;
        float *ph = train(single, &half, &s, &held, &n);
        char label[96];
        snprintf(label, sizeof label, "%s: control: single at half the batch", math_name(math));
        EXPECT(!check(label, ph, ref, p0, n, tol, s.train_loss, ref_loss, held, ref_held),
               "%s: the bounds accept one shard's gradient for the batch's", math_name(math));
        free(ph);
        for (size_t v = 0; v < sizeof variants / sizeof variants[0]; v++) {
            run_cfg_t c = cfg;
            c.n_gpus = variants[v].p;
            c.micro_batches = variants[v].micro;
            c.schedule = variants[v].schedule;
            c.split = variants[v].split;
            c.n_split = variants[v].split ? variants[v].p - 1 : 0;
            float *p = train(pipe, &c, &s, &held, &n);
            snprintf(label, sizeof label, "%s: %s", math_name(math), variants[v].label);
            EXPECT(n == n0 && check(label, p, ref, p0, n, tol, s.train_loss, ref_loss, held, ref_held),
                   "%s: not single's training", label);
            EXPECT(s.train_acc < 0 && s.steps == K && s.stages == variants[v].p,
                   "%s: accuracy %g, steps %d, stages %d in a language model's row", label, s.train_acc, s.steps,
                   s.stages);
            free(p);
        }
        run_cfg_t zb = cfg;
        zb.n_gpus = 2;
        zb.micro_batches = 2;
        zb.schedule = SCHED_ZB;
        char err[512] = "";
        void *state = NULL;
        EXPECT(pipe->setup(&state, &zb, err, sizeof err) != 0 && strstr(err, "zb"), "zero bubble: \"%s\"", err);
        free(ref);
        free(p0);
    }
    tokens_corpus_free(&corpus);
    return test_summary();
}
