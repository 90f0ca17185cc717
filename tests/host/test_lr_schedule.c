/* test_lr_schedule.c — the learning-rate schedule (engine/schedule.h) at chosen steps against values worked out by hand,
 * the scaling rules through the sweep under weak and strong scaling, and the noise scale's estimator (engine/gns.h) on
 * synthetic per-example gradients of known mean and variance. */
#include "test.h"
#include "bench/sweep.h"
#include "engine/gns.h"
#include "engine/rng.h"
#include "engine/schedule.h"
#include <string.h>

#define NEAR(a, b) (fabs((a) - (b)) <= 1e-6 * fabs(b) + 1e-12)

static void test_kinds(void) {
    /* 2 epochs of 10 steps, half an epoch of warm-up: W = 5, then T = 15 steps of decay. */
    lr_schedule_t s = {.kind = LR_CONSTANT, .peak = 0.1, .warmup_epochs = 0.5, .epochs = 2};
    const double warm[5] = {0.02, 0.04, 0.06, 0.08, 0.1};
    for (int i = 0; i < 5; i++) EXPECT(NEAR(lr_schedule_at(&s, i, 10), warm[i]), "warm-up step %d", i);
    EXPECT(lr_warmup_steps(&s, 10) == 5, "W = 5");
    EXPECT(NEAR(lr_schedule_at(&s, 19, 10), 0.1), "constant to the end");
    s.kind = LR_COSINE;   /* 0.1 (1 + cos(pi t / 15)) / 2 */
    EXPECT(NEAR(lr_schedule_at(&s, 5, 10), 0.1), "cosine starts at the peak");
    EXPECT(NEAR(lr_schedule_at(&s, 12, 10), 0.0552264231633827), "cosine at t = 7: cos 84 deg = 0.104528");
    EXPECT(NEAR(lr_schedule_at(&s, 19, 10), 0.00109261996330972), "cosine at t = 14");
    EXPECT(NEAR(lr_schedule_at(&s, 25, 10), 0.00109261996330972), "past the end: the last step's rate");
    s.kind = LR_LINEAR;
    EXPECT(NEAR(lr_schedule_at(&s, 12, 10), 0.1 * 8.0 / 15.0), "linear at t = 7");
    EXPECT(NEAR(lr_schedule_at(&s, 19, 10), 0.1 / 15.0), "linear's last step");
    s.kind = LR_STEP;   /* x0.1 from t = 7.5, x0.01 from t = 11.25 */
    EXPECT(NEAR(lr_schedule_at(&s, 12, 10), 0.1) && NEAR(lr_schedule_at(&s, 13, 10), 0.01), "first drop at t = 8");
    EXPECT(NEAR(lr_schedule_at(&s, 16, 10), 0.01) && NEAR(lr_schedule_at(&s, 17, 10), 0.001), "second at t = 12");
    s.warmup_epochs = 0;
    s.kind = LR_COSINE;
    EXPECT(NEAR(lr_schedule_at(&s, 0, 10), 0.1), "no warm-up: the peak at step 0");
    s.warmup_epochs = 5;   /* longer than the run: warm-up to its last step, which reaches the peak */
    EXPECT(lr_warmup_steps(&s, 10) == 20 && NEAR(lr_schedule_at(&s, 19, 10), 0.1), "warm-up capped at the run");
    float t[20];
    s = (lr_schedule_t){.kind = LR_COSINE, .peak = 0.1, .warmup_epochs = 0.5, .epochs = 2};
    lr_schedule_table(&s, 10, t, 20);
    int same = 1;
    for (int i = 0; i < 20; i++) same &= t[i] == (float)lr_schedule_at(&s, i, 10);
    EXPECT(same, "the device's table is the function rounded to float, step by step");
}

static int expand(const char *args, sweep_point_t **p) {
    char buf[512], *argv[32], err[256];
    int argc = 0;
    snprintf(buf, sizeof buf, "scaling %s", args);
    for (char *w = strtok(buf, " "); w && argc < 31; w = strtok(NULL, " ")) argv[argc++] = w;
    options_t o;
    if (options_parse(&o, argc, argv, err, sizeof err) != 0) {
        fprintf(stderr, "%s: %s\n", args, err);
        return -1;
    }
    return sweep_expand(&o, p, err, sizeof err);
}

static void test_scaling(void) {
    EXPECT(NEAR(lr_scale(0.1, LR_SCALE_LINEAR, 1024, 256), 0.4), "linear x4");
    EXPECT(NEAR(lr_scale(0.1, LR_SCALE_SQRT, 1024, 256), 0.2), "sqrt x2");
    EXPECT(NEAR(lr_scale(0.1, LR_SCALE_NONE, 1024, 256), 0.1), "none");
    sweep_point_t *p = NULL;
    int n = expand("--gpus 1,4 --batch 256 --lr 0.1", &p);
    EXPECT(n == 2 && NEAR(p[0].lr, 0.1) && NEAR(p[1].lr, 0.4) && p[1].global_batch == 1024, "weak, linear: x GPUs");
    free(p);
    n = expand("--gpus 1,4 --batch 256 --lr 0.1 --lr-scaling sqrt", &p);
    EXPECT(n == 2 && NEAR(p[1].lr, 0.2), "weak, sqrt: x sqrt(GPUs)");
    free(p);
    n = expand("--gpus 1,4 --batch 1024 --lr 0.4 --scale strong", &p);
    EXPECT(n == 2 && NEAR(p[0].lr, 0.4) && NEAR(p[1].lr, 0.4), "strong: the global batch is its own base");
    free(p);
    n = expand("--batch 256,4096 --lr 0.1 --lr-base-batch 256", &p);
    EXPECT(n == 2 && NEAR(p[0].lr, 0.1) && NEAR(p[1].lr, 1.6), "a batch sweep from base 256: 0.1 to 1.6");
    free(p);
    n = expand("--batch 256,4096 --lr 0.1 --lr-base-batch 256 --lr-scaling none", &p);
    EXPECT(n == 2 && NEAR(p[1].lr, 0.1), "none keeps the rate");
    free(p);
}

/* Per-example gradients mu + sigma z in D dimensions: |G|^2 = |mu|^2 = 1 and tr(Sigma) = D sigma^2 = 2. Each draw is a
 * step: a batch of B_BIG examples and its first half, as the engine measures. */
#define D 40
#define B_BIG 32
#define DRAWS 4000
static void test_gns(void) {
    rng_t r;
    rng_seed(&r, 12345);
    double mu[D], sigma = sqrt(2.0 / D), small = 0, big = 0;
    for (int k = 0; k < D; k++) mu[k] = 1.0 / sqrt((double)D);
    for (int draw = 0; draw < DRAWS; draw++) {
        double sum[D] = {0}, half[D] = {0};
        for (int i = 0; i < B_BIG; i++)
            for (int k = 0; k < D; k++) {
                double g = mu[k] + sigma * rng_normal(&r);
                sum[k] += g;
                if (i < B_BIG / 2) half[k] += g;
            }
        for (int k = 0; k < D; k++) {
            double a = half[k] / (B_BIG / 2), b = sum[k] / B_BIG;
            small += a * a / DRAWS;
            big += b * b / DRAWS;
        }
    }
    gns_est_t e;
    EXPECT(gns_estimate(small, big, B_BIG / 2, B_BIG, &e) == 0, "estimate");
    EXPECT(fabs(e.g2 - 1) < 0.05 && fabs(e.trace - 2) < 0.1, "|G|^2 %.4f (1), tr(Sigma) %.4f (2)", e.g2, e.trace);
    EXPECT(fabs(gns_b_simple(e.trace, e.g2) - 2) < 0.2, "B_simple %.3f (2)", gns_b_simple(e.trace, e.g2));
    gns_est_t swapped;   /* the negative control: the batches the wrong way round */
    gns_estimate(big, small, B_BIG / 2, B_BIG, &swapped);
    EXPECT(swapped.trace < 0 && !(gns_b_simple(swapped.trace, swapped.g2) > 0), "swapped norms: tr(Sigma) %.3f",
           swapped.trace);
    EXPECT(isnan(gns_b_simple(1.0, 0.0)) && isnan(gns_b_simple(NAN, 1.0)), "no signal or no trace: no noise scale");
    EXPECT(gns_estimate(small, big, 32, 32, &e) == -1 && isnan(e.g2), "equal batches estimate nothing");
    EXPECT(gns_estimate(NAN, big, 16, 32, &e) == -1, "a non-finite mean estimates nothing");
}

int main(void) {
    test_kinds();
    test_scaling();
    test_gns();
    return test_summary();
}
