/* test_pipeline_equiv.c — splitting the model and the batch changes where and in which order the arithmetic runs,
 * not what it computes: after k = 5 steps, LeNet trained by the pipeline on p = 2 and min(4, present) stages with
 * M = 1, 2, 4 micro-batches, under GPipe, 1F1B and zero bubble (each backward in two parts, the weight gradients
 * deferred), has the parameters of 1-GPU `single` training with the same global batch (relative error <= 1e-5,
 * strict fp32): accumulated micro-batch gradients are the batch gradient.
 * Steps replay from CUDA graphs as in the command (--cuda-graph on); also eager steps, a hand split, copies staged
 * through host memory, one stage, and the row's pipeline columns. Then the same in bf16 and in fp16 mixed precision
 * against single in that math (2 stages, M = 1, 2, 4, every schedule), with the tolerances of dp_common.h; in fp16
 * the loss scale and skipped steps equal single's (every stage holds the scale and steps it alike, the zero-bubble
 * schedule's deferred weight gradients checked with the rest), and the staged copies' cases (host-staged links) run
 * too. */
#include "dp_common.h"
#include "../../strategies/pipeline/pipe_schedule.h"

#define B 96            /* divisible by 1, 2, 3 and 4, and by the micro-batch counts */
#define K 5


typedef struct {
    int gpus, micro, order, naive_path;     /* order: a sched_order_t */
    const int *split;
    int n_split;
    int graphs;
} case_t;

static int count_fields(const char *s) {
    int n = *s ? 1 : 0;
    for (; *s; s++) n += *s == ';';
    return n;
}

static void run_case(const case_t *c, run_cfg_t cfg, const float *ref, const float *p0, const float *dref,
                     size_t n_params, const epoch_stats_t *single, double single_acc, const dp_tol_t *tol) {
    const double single_loss = single->train_loss;
    const strategy_t *st = strategy_find("pipeline");
    cfg.n_gpus = c->gpus;
    cfg.micro_batches = c->micro;
    cfg.schedule = c->order;
    cfg.naive_path = c->naive_path;
    cfg.split = c->split;
    cfg.n_split = c->n_split;
    cfg.cuda_graph = c->graphs;
    epoch_stats_t s;
    epoch_stats_init(&s);   /* as the harness: what a strategy does not measure stays < 0 */
    void *state = dp_test_train(st, &cfg, K, &s);
    double acc = st->evaluate(state);
    size_t n = st->params(state, NULL, 0);
    float *p = malloc(n * sizeof *p), *d = malloc(n * sizeof *d);
    st->params(state, p, n);
    char label[96];
    snprintf(label, sizeof label, "[%s] %d stages, M=%d, %s%s%s%s", gpu_math_name(cfg.math), c->gpus, c->micro,
             sched_order_name((sched_order_t)c->order),
             c->split ? ", --split" : "", c->naive_path == NAIVE_PATH_HOST ? ", host-staged" : "",
             c->graphs ? "" : ", eager");
    EXPECT(n == n_params, "%s: %zu parameters, single has %zu", label, n, n_params);
    if (n == n_params) {
        double rel = dp_test_rel(p, ref, n);
        for (size_t k = 0; k < n; k++) d[k] = p[k] - p0[k];
        double rel_update = dp_test_rel(d, dref, n);
        printf("%-40s split %-8s params rel err %.3g, update rel err %.3g, loss %.4f (single %.4f), busy %s ms, "
               "bubble %.3f (ideal %.3f), step %.3f ms, %.0f MiB\n", label, s.split, rel, rel_update, s.train_loss,
               single_loss, s.stage_busy_ms, s.bubble, s.bubble_ideal, s.step_ms, s.peak_mem_mb);
        EXPECT(rel <= tol->params, "%s: parameters differ from single: rel err %.3g", label, rel);
        /* The update alone, looser: micro-batch gradients are summed in another order than one batch's. */
        EXPECT(rel_update <= tol->update, "%s: update differs from single: rel err %.3g", label, rel_update);
    }
    EXPECT(fabs(s.train_loss - single_loss) <= tol->loss * single_loss, "%s: loss %.7f, single %.7f", label,
           s.train_loss, single_loss);
    EXPECT(s.loss_scale == single->loss_scale && s.skipped_steps == single->skipped_steps,
           "%s: loss scale %g (%d skipped), single %g (%d)", label, s.loss_scale, s.skipped_steps, single->loss_scale,
           single->skipped_steps);
    EXPECT(fabs(acc - single_acc) <= tol->acc, "%s: test accuracy %.4f, single %.4f", label, acc, single_acc);
    EXPECT(s.steps == K && s.stages == c->gpus && s.micro_batches == c->micro &&
           strcmp(s.schedule, sched_order_name((sched_order_t)c->order)) == 0,
           "%s: steps %d stages %d micro %d schedule %s", label,
           s.steps, s.stages, s.micro_batches, s.schedule);
    EXPECT(count_fields(s.stage_busy_ms) == c->gpus && count_fields(s.split) == 1 && strncmp(s.split, "0", 1) == 0,
           "%s: busy \"%s\", split \"%s\"", label, s.stage_busy_ms, s.split);
    if (c->split) EXPECT(strcmp(s.split, "0,7") == 0, "%s: split \"%s\"", label, s.split);
    /* GPipe's and 1F1B's ideal is (p - 1) / (M + p - 1); zero bubble's depends on the measured op times, never
     * above. */
    double classic = (double)(c->gpus - 1) / (c->micro + c->gpus - 1);
    int ideal_ok = c->order == SCHED_ZB ? s.bubble_ideal >= 0 && s.bubble_ideal <= classic + 1e-12
                                        : fabs(s.bubble_ideal - classic) < 1e-12;
    EXPECT(ideal_ok && s.bubble >= -0.01 && s.bubble < 1 && s.stage_balance >= 1 - 1e-9,
           "%s: bubble %.4f, ideal %.4f (1f1b's %.4f), balance %.3f", label, s.bubble, s.bubble_ideal, classic,
           s.stage_balance);
    /* No check of peak_mem_mb here: it is a device-wide reading (in use now minus in use at setup), and tests run
     * side by side on one GPU free what they held at any time; test_pipeline_memory runs alone and checks it. */
    EXPECT(s.epoch_s > 0 && s.step_ms > 0 && s.compute_ms > 0 &&
           (c->gpus == 1 ? s.bytes_per_step == 0 : s.bytes_per_step > 0),
           "%s: epoch %.4f step %.4f compute %.4f bytes %.0f", label, s.epoch_s, s.step_ms, s.compute_ms,
           s.bytes_per_step);
    st->teardown(state);
    free(p);
    free(d);
}

int main(void) {
    gpu_test_require(2);
    idx_dataset_t data;
    dp_test_load(&data, "mnist");
    int devices[4] = {0, 1, 2, 3};
    run_cfg_t cfg = {.model = "lenet", .n_gpus = 1, .devices = devices, .global_batch = B, .lr = 0.1,
                     .momentum = 0.9, .weight_decay = 5e-4, .math = MATH_FP32, .init = INIT_XAVIER, .seed = 1,
                     .data = &data, .micro_batches = 1};

    int counts[2], n_counts = dp_test_counts(counts);
    static const int micro[3] = {1, 2, 4};
    static const int classic[1] = {7};   /* convolutions on GPU 0, dense layers on GPU 1 */
    case_t extra[] = {
        {2, 2, SCHED_GPIPE, NAIVE_PATH_AUTO, classic, 1, 1},  /* a hand split */
        {2, 4, SCHED_1F1B, NAIVE_PATH_HOST, NULL, 0, 1},      /* copies staged through pinned host memory */
        {2, 4, SCHED_ZB, NAIVE_PATH_HOST, NULL, 0, 1},
        {1, 4, SCHED_GPIPE, NAIVE_PATH_AUTO, NULL, 0, 1},     /* one stage: gradient accumulation alone */
        {1, 4, SCHED_ZB, NAIVE_PATH_AUTO, NULL, 0, 1},
        {2, 4, SCHED_1F1B, NAIVE_PATH_AUTO, NULL, 0, 0},      /* eager: every launch from the host at every step */
        {2, 4, SCHED_GPIPE, NAIVE_PATH_AUTO, NULL, 0, 0},
        {2, 4, SCHED_ZB, NAIVE_PATH_AUTO, NULL, 0, 0},
    };
    static const math_t maths[3] = {MATH_FP32, MATH_BF16, MATH_FP16};
    for (int mi = 0; mi < 3; mi++) {
        cfg.math = maths[mi];
        const int low = dtype_is_low(math_act_dtype(cfg.math));
        const dp_tol_t *tol = !low ? &dp_tol_fp32 : cfg.math == MATH_FP16 ? &dp_tol_fp16 : &dp_tol_bf16;
        /* The reference: one GPU, batch B; its state is the replica (strategies/single.c). */
        const strategy_t *single = strategy_find("single");
        epoch_stats_t s;
        void *st0 = dp_test_train(single, &cfg, 0, &s);
        float *p0 = dp_test_params((replica_t *)st0);
        single->teardown(st0);
        st0 = dp_test_train(single, &cfg, K, &s);
        size_t n_params = ((replica_t *)st0)->model.n_params;
        float *ref = dp_test_params((replica_t *)st0);
        double single_acc = single->evaluate(st0);
        single->teardown(st0);
        printf("[%s] single: loss %.4f, loss scale %g, %d skipped\n", gpu_math_name(cfg.math), s.train_loss,
               s.loss_scale, s.skipped_steps);
        float *dref = malloc(n_params * sizeof(float));
        for (size_t k = 0; k < n_params; k++) dref[k] = ref[k] - p0[k];

        for (int c = 0; c < (low ? 1 : n_counts); c++)   /* 2-byte maths: 2 stages */
            for (int order = 0; order < SCHED_ORDERS; order++)
                for (int m = 0; m < 3; m++) {
                    case_t cs = {counts[c], micro[m], order, NAIVE_PATH_AUTO, NULL, 0, 1};
                    run_case(&cs, cfg, ref, p0, dref, n_params, &s, single_acc, tol);
                }
        for (size_t i = 0; i < sizeof extra / sizeof extra[0]; i++)   /* fp16: the host-staged links too */
            if (!low || (cfg.math == MATH_FP16 && extra[i].naive_path == NAIVE_PATH_HOST))
                run_case(&extra[i], cfg, ref, p0, dref, n_params, &s, single_acc, tol);
        free(p0);
        free(ref);
        free(dref);
    }
    idx_free(&data);
    return test_summary();
}
