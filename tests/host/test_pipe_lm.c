/* test_pipe_lm.c — a language model's pipeline stages (strategies/pipeline/pipe_lm.h): GPT-2's units' FLOPs add up to
 * the model's training FLOPs a token; the balanced split's slowest stage is brute force's optimum for every size
 * and stage count tried, and beats cutting the blocks evenly (the head weighs about 4.5 blocks at 1,024 tokens);
 * hand splits are taken or refused with a message naming the fault. */
#include "strategies/pipeline/pipe_lm.h"
#include "strategies/pipeline/partition.h"
#include "test.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#define MAX_UNITS 64

/* The cost of the slowest stage of starts (p stages), the units' FLOPs summed by partition_stage_cost. */
static double slowest(const gpt2_shape_t *s, int T, const int *starts, int p) {
    double cost[MAX_UNITS], worst = 0;
    int n = GPT2_UNITS(s->layers);
    for (int j = 0; j < n; j++) cost[j] = gpt2_shape_unit_flops(s, T, j);
    for (int k = 0; k < p; k++) {
        double c = partition_stage_cost(cost, n, starts, p, k);
        if (c > worst) worst = c;
    }
    return worst;
}

/* The least slowest stage over every split of n units into p stages (recursion over the next stage's end). */
static double brute(const gpt2_shape_t *s, int T, int *starts, int k, int p, int n) {
    if (k == p) return starts[p] == n ? slowest(s, T, starts, p) : INFINITY;
    double best = INFINITY;
    for (int e = starts[k] + 1; e <= n - (p - k - 1); e++) {
        starts[k + 1] = e;
        if (k + 1 == p && e != n) continue;
        double v = brute(s, T, starts, k + 1, p, n);
        if (v < best) best = v;
    }
    return best;
}

static void test_flops(void) {
    static const int Ts[] = {64, 1024};
    for (int i = 0; gpt2_shapes[i].name; i++) {
        const gpt2_shape_t *s = &gpt2_shapes[i];
        for (int t = 0; t < 2; t++) {
            int T = Ts[t] < s->context ? Ts[t] : s->context, n = GPT2_UNITS(s->layers);
            double sum = 0;
            for (int j = 0; j < n; j++) sum += gpt2_shape_unit_flops(s, T, j);
            double want = gpt2_shape_flops_per_token(s, T);
            EXPECT(fabs(sum - want) <= 1e-12 * want, "%s at T %d: the units' FLOPs sum to %.6g, the model's are %.6g",
                   s->name, T, sum, want);
            EXPECT(gpt2_shape_unit_flops(s, T, 0) == 0 && gpt2_shape_unit_flops(s, T, n) == 0 &&
                       gpt2_shape_unit_flops(s, T, -1) == 0,
                   "%s: the embeddings or a unit outside the model has FLOPs", s->name);
            for (int j = 2; j <= s->layers; j++)
                EXPECT(gpt2_shape_unit_flops(s, T, j) == gpt2_shape_unit_flops(s, T, 1), "%s: block %d differs",
                       s->name, j - 1);
        }
    }
    const gpt2_shape_t *s = gpt2_shape("small");
    double block = gpt2_shape_unit_flops(s, 1024, 1), head = gpt2_shape_unit_flops(s, 1024, s->layers + 1);
    /* By hand: a block's 12 C^2 + 13 C parameters and its attention; the head's V C product and the final LayerNorm. */
    double c = 768, hand_block = 6 * (12 * c * c + 13 * c) + 12 * 1024 * c, hand_head = 6 * (50257 * c + 2 * c);
    EXPECT(block == hand_block && head == hand_head, "small: block %.6g (by hand %.6g), head %.6g (by hand %.6g)",
           block, hand_block, head, hand_head);
    printf("small at 1024 tokens: a block %.4g FLOPs a token, the head %.4g (%.2f blocks)\n", block, head,
           head / block);
}

static void test_balance(void) {
    static const struct { const char *size; int T, max_p; } cases[] = {
        {"tiny", 64, 4}, {"small", 1024, 8}, {"small", 64, 8}, {"medium", 1024, 5},
    };
    char err[256];
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const gpt2_shape_t *s = gpt2_shape(cases[i].size);
        int n = GPT2_UNITS(s->layers);
        for (int p = 1; p <= cases[i].max_p; p++) {
            int starts[MAX_UNITS + 1], b[MAX_UNITS + 1] = {0};
            err[0] = '\0';
            int rc = pipe_lm_split(s, cases[i].T, p, NULL, 0, starts, err, sizeof err);
            EXPECT(rc == 0, "%s, %d stages: %s", s->name, p, err);
            if (rc) continue;
            int ordered = starts[0] == 0 && starts[p] == n;
            for (int k = 0; k < p; k++) ordered &= starts[k] < starts[k + 1];
            EXPECT(ordered, "%s, %d stages: the starts are not increasing from 0 to %d", s->name, p, n);
            double got = slowest(s, cases[i].T, starts, p), opt = brute(s, cases[i].T, b, 0, p, n);
            EXPECT(fabs(got - opt) <= 1e-12 * opt, "%s at T %d, %d stages: slowest stage %.6g, the optimum %.6g",
                   s->name, cases[i].T, p, got, opt);
        }
    }
    /* small on 4 stages: cutting the 12 blocks evenly (3 a stage) leaves the head's stage 1 + 4.5 blocks heavy; the
     * balance gives that stage fewer blocks. The control shows the check can tell. */
    const gpt2_shape_t *s = gpt2_shape("small");
    int even[5] = {0, 4, 7, 10, 14}, bal[5];
    EXPECT(pipe_lm_split(s, 1024, 4, NULL, 0, bal, err, sizeof err) == 0, "%s", err);
    double e = slowest(s, 1024, even, 4), b = slowest(s, 1024, bal, 4);
    printf("small, 4 stages: balanced starts %d,%d,%d,%d (slowest %.4g), blocks cut evenly %.4g (%.2fx)\n", bal[0],
           bal[1], bal[2], bal[3], b, e, e / b);
    EXPECT(b < 0.8 * e, "small, 4 stages: the balance (%.4g) is not clearly better than even blocks (%.4g)", b, e);
    EXPECT(bal[4] - bal[3] < bal[1] - bal[0], "small, 4 stages: the head's stage has as many units as the first");
}

/* A hand split: taken as given, or refused with the fault named. */
static void test_hand(void) {
    const gpt2_shape_t *s = gpt2_shape("small");
    char err[256];
    int starts[MAX_UNITS + 1];
    EXPECT(pipe_lm_split(s, 1024, 3, (int[]){5, 9}, 2, starts, err, sizeof err) == 0 && starts[0] == 0 &&
               starts[1] == 5 && starts[2] == 9 && starts[3] == 14,
           "a hand split 5,9: %s", err);
    static const struct { int split[3], n, p; const char *says; } bad[] = {
        {{5}, 1, 3, "2 values"},               /* too few */
        {{0}, 1, 2, "would be empty"},         /* stage 1 empty */
        {{14}, 1, 2, "past the last layer"},   /* the last stage empty */
        {{15}, 1, 2, "out of range"},
        {{9, 5}, 2, 3, "strictly increasing"},
        {{-1}, 1, 2, "out of range"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        err[0] = '\0';
        int rc = pipe_lm_split(s, 1024, bad[i].p, bad[i].split, bad[i].n, starts, err, sizeof err);
        EXPECT(rc != 0 && strstr(err, bad[i].says) && !strchr(err, '\n'), "bad hand split %zu: rc %d, \"%s\"", i, rc,
               err);
    }
    err[0] = '\0';
    EXPECT(pipe_lm_split(gpt2_shape("tiny"), 64, 5, NULL, 0, starts, err, sizeof err) != 0 &&
               strstr(err, "more stages than layers"),
           "tiny (4 units) on 5 stages: \"%s\"", err);
    char name[32];
    pipe_lm_unit_name(s, 0, name, sizeof name);
    EXPECT(strcmp(name, "embeddings") == 0, "unit 0 is \"%s\"", name);
    pipe_lm_unit_name(s, 4, name, sizeof name);
    EXPECT(strcmp(name, "block 3") == 0, "unit 4 is \"%s\"", name);
    pipe_lm_unit_name(s, 13, name, sizeof name);
    EXPECT(strcmp(name, "head") == 0, "unit 13 is \"%s\"", name);
}

int main(void) {
    test_flops();
    test_balance();
    test_hand();
    return test_summary();
}
