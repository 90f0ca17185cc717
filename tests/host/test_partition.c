/* test_partition.c — pipeline stage balancing: known cost tables give known optimal splits, the dynamic programme
 * matches brute force on random tables (with and without copy costs and forbidden stages), a table that block cuts
 * cannot balance is balanced by cuts inside its blocks, and every kind of bad hand split is rejected with a message
 * naming it. */
#include "strategies/pipeline/partition.h"
#include "engine/split.h"
#include "test.h"

#include <string.h>

static const int all_cuts[] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15};

static void expect_starts(const char *what, const int *got, const int *want, int p) {
    int same = 1;
    for (int k = 0; k < p; k++) same &= got[k] == want[k];
    char g[64], w[64];
    partition_format(got, p, g, sizeof g);
    partition_format(want, p, w, sizeof w);
    EXPECT(same, "%s: starts %s, want %s", what, g, w);
}

/* Min-max balance over cost[0..n) at the given cuts, no copy costs, every range a stage. */
static int bal(const double *cost, int n, const int *cuts, int n_cuts, int p, int *s, char *err, size_t len) {
    partition_t pb = {.cost = cost, .n_layers = n, .cuts = cuts, .n_cuts = n_cuts, .micro = 8};
    return partition_balance(&pb, p, s, err, len);
}

static void test_known(void) {
    int s[8];
    char err[256];
    /* Equal layers split evenly. */
    double even[4] = {1, 1, 1, 1};
    EXPECT(bal(even, 4, all_cuts, 3, 2, s, err, sizeof err) == 0, "%s", err);
    expect_starts("even 2", s, (int[]){0, 2}, 2);
    EXPECT(bal(even, 4, all_cuts, 3, 4, s, err, sizeof err) == 0, "%s", err);
    expect_starts("even 4", s, (int[]){0, 1, 2, 3}, 4);
    /* One heavy layer gets a stage to itself. */
    double heavy[6] = {5, 1, 1, 1, 1, 1};
    EXPECT(bal(heavy, 6, all_cuts, 5, 2, s, err, sizeof err) == 0, "%s", err);
    expect_starts("heavy first", s, (int[]){0, 1}, 2);
    double heavy_last[6] = {1, 1, 1, 1, 1, 9};
    EXPECT(bal(heavy_last, 6, all_cuts, 5, 3, s, err, sizeof err) == 0, "%s", err);
    EXPECT(partition_stage_cost(heavy_last, 6, s, 3, 2) == 9, "the heavy layer alone: %g",
           partition_stage_cost(heavy_last, 6, s, 3, 2));
    EXPECT(s[2] == 5, "last stage starts at the heavy layer: %d", s[2]);
    /* Only some boundaries are cut points (residual blocks): the best of those, not of all boundaries. */
    double flat[8] = {1, 1, 1, 1, 1, 1, 1, 1};
    int blocks[2] = {3, 6};
    EXPECT(bal(flat, 8, blocks, 2, 2, s, err, sizeof err) == 0, "%s", err);
    expect_starts("cuts 3,6 / 2 stages", s, (int[]){0, 3}, 2);   /* max(3,5)=5 beats max(6,2)=6 */
    EXPECT(bal(flat, 8, blocks, 2, 3, s, err, sizeof err) == 0, "%s", err);
    expect_starts("cuts 3,6 / 3 stages", s, (int[]){0, 3, 6}, 3);
    /* LeNet-like: convolutions dominate; the dense layers go together. */
    double lenet[10] = {4, 1, 1, 6, 1, 1, 0.1, 2, 0.2, 0.1};
    EXPECT(bal(lenet, 10, all_cuts, 9, 2, s, err, sizeof err) == 0, "%s", err);
    expect_starts("lenet 2", s, (int[]){0, 3}, 2);   /* 6 | 10.4 beats 12 | 4.4 */
    /* One stage: everything. */
    EXPECT(bal(lenet, 10, all_cuts, 9, 1, s, err, sizeof err) == 0 && s[0] == 0, "one stage");
}

static void test_impossible(void) {
    int s[20];
    char err[256] = "";
    double c[4] = {1, 1, 1, 1};
    EXPECT(bal(c, 4, all_cuts, 3, 5, s, err, sizeof err) == -1, "5 stages of 4 layers");
    EXPECT(strstr(err, "more stages than layers") != NULL, "message: %s", err);
    int few[1] = {2};
    EXPECT(bal(c, 4, few, 1, 3, s, err, sizeof err) == -1, "3 stages, 1 cut point");
    EXPECT(strstr(err, "valid cut points") != NULL && strstr(err, "at most 2 stages") != NULL, "message: %s", err);
}

/* Brute force over every subset of p - 1 cut points. */
static double brute(const double *cost, int n, const int *cuts, int n_cuts, int p) {
    double best = -1;
    int idx[16];
    for (int k = 0; k < p - 1; k++) idx[k] = k;
    for (;;) {
        int st[16];
        st[0] = 0;
        for (int k = 0; k < p - 1; k++) st[k + 1] = cuts[idx[k]];
        double worst = 0;
        for (int k = 0; k < p; k++) {
            double c = partition_stage_cost(cost, n, st, p, k);
            if (c > worst) worst = c;
        }
        if (best < 0 || worst < best) best = worst;
        int k = p - 2;
        while (k >= 0 && idx[k] == n_cuts - (p - 1) + k) k--;
        if (k < 0) break;
        idx[k]++;
        for (int i = k + 1; i < p - 1; i++) idx[i] = idx[i - 1] + 1;
    }
    return best;
}

static void test_random_vs_brute(void) {
    unsigned long long x = 12345;
    int bad = 0, runs = 0;
    for (int t = 0; t < 400; t++) {
        double cost[14];
        int cuts[13], n_cuts = 0;
        x = x * 6364136223846793005ULL + 1442695040888963407ULL;
        int n = 2 + (int)((x >> 33) % 12);
        for (int i = 0; i < n; i++) {
            x = x * 6364136223846793005ULL + 1442695040888963407ULL;
            cost[i] = (double)((x >> 33) % 100) / 10.0;
        }
        for (int i = 1; i < n; i++) {
            x = x * 6364136223846793005ULL + 1442695040888963407ULL;
            if ((x >> 40) % 3) cuts[n_cuts++] = i;
        }
        for (int p = 1; p <= n_cuts + 1; p++) {
            int s[16];
            char err[256];
            if (bal(cost, n, cuts, n_cuts, p, s, err, sizeof err) != 0) { bad++; continue; }
            double worst = 0;
            int valid = s[0] == 0;
            for (int k = 0; k < p; k++) {
                double c = partition_stage_cost(cost, n, s, p, k);
                if (c > worst) worst = c;
                if (k > 0) {
                    int at_cut = 0;
                    for (int c2 = 0; c2 < n_cuts; c2++) at_cut |= cuts[c2] == s[k];
                    valid &= at_cut && s[k] > s[k - 1];
                }
            }
            if (!valid || fabs(worst - brute(cost, n, cuts, n_cuts, p)) > 1e-9) bad++;   /* sums in another order */
            runs++;
        }
    }
    EXPECT(bad == 0, "%d of %d random tables not optimal or not valid", bad, runs);
}

/* The copies across a cut count against the slowest stage (M - 1) times less: an expensive cut is avoided where a
 * cheap one costs little balance, and taken where the balance is worth it. */
static void test_cut_costs(void) {
    int s[4];
    char err[256];
    double cost[6] = {1, 1, 1, 1, 1, 1};
    int cuts[5] = {1, 2, 3, 4, 5};
    double copies[5] = {0, 0, 3, 0, 0};   /* the cut before layer 3, the even split, is dear */
    partition_t pb = {.cost = cost, .n_layers = 6, .cuts = cuts, .n_cuts = 5, .cut_cost = copies, .micro = 2};
    EXPECT(partition_balance(&pb, 2, s, err, sizeof err) == 0, "%s", err);
    expect_starts("M = 2: a stage of 4 beats the dear even cut (4 + 0 < 3 + 3)", s, (int[]){0, 2}, 2);
    pb.micro = 8;
    EXPECT(partition_balance(&pb, 2, s, err, sizeof err) == 0, "%s", err);
    expect_starts("M = 8: the even cut is worth its copies (7 x 3 + 3 < 7 x 4)", s, (int[]){0, 3}, 2);
    pb.cut_cost = NULL;
    EXPECT(partition_balance(&pb, 2, s, err, sizeof err) == 0, "%s", err);
    expect_starts("free copies: min-max", s, (int[]){0, 3}, 2);
}

/* Brute force: the best objective over every subset of p - 1 cuts whose stages are all allowed (-1: none). */
static int forbid_seed;
static int stage_ok_rand(const void *ctx, int first, int end) {
    (void)ctx;
    unsigned h = (unsigned)(first * 7919 + end * 104729 + forbid_seed * 31);
    h ^= h >> 13; h *= 0x5bd1e995u; h ^= h >> 15;
    return h % 5 != 0;   /* a fifth of the ranges forbidden */
}

static double objective(const partition_t *pb, const int *st, int p) {
    double worst = 0, copies = 0;
    for (int k = 0; k < p; k++) {
        double c = partition_stage_cost(pb->cost, pb->n_layers, st, p, k);
        if (c > worst) worst = c;
        for (int i = 0; k > 0 && pb->cut_cost && i < pb->n_cuts; i++)
            copies += pb->cuts[i] == st[k] ? pb->cut_cost[i] : 0;
    }
    return (pb->micro > 2 ? pb->micro - 1 : 1) * worst + copies;
}

static double brute_obj(const partition_t *pb, int p) {
    double best = -1;
    int idx[16], st[16];
    for (int k = 0; k < p - 1; k++) idx[k] = k;
    for (;;) {
        st[0] = 0;
        for (int k = 0; k < p - 1; k++) st[k + 1] = pb->cuts[idx[k]];
        int ok = 1;
        for (int k = 0; k < p && pb->stage_ok; k++)
            ok &= pb->stage_ok(pb->ctx, st[k], k + 1 < p ? st[k + 1] : pb->n_layers);
        double o = objective(pb, st, p);
        if (ok && (best < 0 || o < best)) best = o;
        int k = p - 2;
        while (k >= 0 && idx[k] == pb->n_cuts - (p - 1) + k) k--;
        if (k < 0) break;
        idx[k]++;
        for (int i = k + 1; i < p - 1; i++) idx[i] = idx[i - 1] + 1;
    }
    return best;
}

static void test_costs_vs_brute(void) {
    unsigned long long x = 777;
    int bad = 0, runs = 0;
    for (int t = 0; t < 300; t++) {
        double cost[14], copies[13];
        int cuts[13], n_cuts = 0;
#define RND (x = x * 6364136223846793005ULL + 1442695040888963407ULL, x >> 33)
        int n = 2 + (int)(RND % 12);
        for (int i = 0; i < n; i++) cost[i] = (double)(RND % 100) / 10.0;
        for (int i = 1; i < n; i++)
            if (RND % 3) { copies[n_cuts] = (double)(RND % 40) / 10.0; cuts[n_cuts++] = i; }
        forbid_seed = t;
        partition_t pb = {.cost = cost, .n_layers = n, .cuts = cuts, .n_cuts = n_cuts,
                          .cut_cost = t % 2 ? copies : NULL, .micro = 1 + (int)(RND % 9),
                          .stage_ok = t % 3 ? stage_ok_rand : NULL};
#undef RND
        for (int p = 1; p <= n_cuts + 1; p++) {
            int s[16];
            char err[256];
            double want = brute_obj(&pb, p);
            int rc = partition_balance(&pb, p, s, err, sizeof err);
            runs++;
            if (want < 0) { bad += rc != -1; continue; }
            int valid = rc == 0 && s[0] == 0;
            for (int k = 1; valid && k < p; k++) {
                int at_cut = 0;
                for (int c = 0; c < n_cuts; c++) at_cut |= cuts[c] == s[k];
                valid &= at_cut && s[k] > s[k - 1];
            }
            for (int k = 0; valid && pb.stage_ok && k < p; k++)
                valid &= pb.stage_ok(NULL, s[k], k + 1 < p ? s[k + 1] : n);
            /* without copy costs the min-max is exact; with them the objective */
            double got = valid ? objective(&pb, s, p) : -1;
            if (!valid || fabs(got - want) > 1e-9 * (1 + want)) bad++;
        }
    }
    EXPECT(bad == 0, "%d of %d random problems not optimal, not valid or not refused", bad, runs);
}

/* A table block cuts cannot balance: 4 blocks of 8 layers, the first block's layers twice as heavy, over 4 stages.
 * At block boundaries the heavy block is a stage of its own, 1.6 x the mean; with cuts inside blocks (a block cut at
 * most once: stage_ok) the slowest stage is within 5 % of the mean. */
static int one_cut_per_block(const void *ctx, int first, int end) {
    (void)ctx;
    /* a stage passes a block's shortcut through when it starts inside a block and ends inside the same one */
    return !(first % 8 && end % 8 && first / 8 == end / 8);
}

static void test_blocks_cannot_balance(void) {
    double cost[32];
    for (int i = 0; i < 32; i++) cost[i] = i < 8 ? 2 : 1;
    int block[3] = {8, 16, 24}, inside[31], s[4];
    for (int i = 0; i < 31; i++) inside[i] = i + 1;
    char err[256];
    partition_t pb = {.cost = cost, .n_layers = 32, .cuts = block, .n_cuts = 3, .micro = 8};
    EXPECT(partition_balance(&pb, 4, s, err, sizeof err) == 0, "%s", err);
    double blocks_only = partition_imbalance(cost, 32, s, 4);
    pb.cuts = inside, pb.n_cuts = 31, pb.stage_ok = one_cut_per_block;
    EXPECT(partition_balance(&pb, 4, s, err, sizeof err) == 0, "%s", err);
    double finer = partition_imbalance(cost, 32, s, 4);
    char b[64];
    partition_format(s, 4, b, sizeof b);
    printf("blocks only: max/mean %.3f; cuts inside blocks: %.3f (%s)\n", blocks_only, finer, b);
    EXPECT(blocks_only > 1.05 && fabs(blocks_only - 1.6) < 1e-12, "block cuts: max/mean %.3f", blocks_only);
    EXPECT(finer <= 1.05, "cuts inside blocks: max/mean %.3f, want within 5 %% of the mean", finer);
    for (int k = 0; k < 4; k++)
        EXPECT(one_cut_per_block(NULL, s[k], k < 3 ? s[k + 1] : 32), "stage %d of %s passes a shortcut through", k, b);
    pb.stage_ok = NULL;
    EXPECT(partition_balance(&pb, 4, s, err, sizeof err) == 0 && partition_imbalance(cost, 32, s, 4) <= finer + 1e-12,
           "unconstrained is at least as balanced");
}

static int never(const void *ctx, int first, int end) { (void)ctx, (void)first, (void)end; return 0; }

static void test_no_allowed_split(void) {
    double cost[4] = {1, 1, 1, 1};
    int s[4];
    char err[256] = "";
    partition_t pb = {.cost = cost, .n_layers = 4, .cuts = all_cuts, .n_cuts = 3, .micro = 4, .stage_ok = never};
    EXPECT(partition_balance(&pb, 2, s, err, sizeof err) == -1 && strstr(err, "no split into 2 stages") &&
           !strchr(err, '\n'), "message: %s", err);
}

static void test_check(void) {
    int s[8];
    char err[256];
    const char *labels[10] = {"conv1", "relu1", "pool1", "conv2", "relu2", "pool2", "flatten", "fc1", "relu3", "fc2"};
    int lenet_cuts[9] = {1, 2, 3, 4, 5, 6, 7, 8, 9};
    EXPECT(split_check((int[]){7}, 1, 10, lenet_cuts, 9, 2, labels, s, err, sizeof err) == 0, "%s", err);
    expect_starts("lenet --split 7", s, (int[]){0, 7}, 2);
    EXPECT(split_check((int[]){3, 6, 8}, 3, 10, lenet_cuts, 9, 4, labels, s, err, sizeof err) == 0, "%s", err);
    expect_starts("--split 3,6,8", s, (int[]){0, 3, 6, 8}, 4);

    struct { int split[4]; int n, p; const char *want; } bad[] = {
        {{7}, 1, 3, "2 values"},                                  /* wrong count */
        {{3, 6}, 2, 2, "give the first layer of stages 2..2"},
        {{1, 2, 3, 4}, 4, 12, "more stages than layers"},          /* 12 GPUs, 10 layers */
        {{99}, 1, 2, "out of range"},
        {{-1}, 1, 2, "out of range"},
        {{0}, 1, 2, "stage 1 would be empty"},
        {{10}, 1, 2, "it would be empty"},
        {{3, 3}, 2, 3, "stage 2 would be empty"},
        {{5, 3}, 2, 3, "strictly increasing"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        err[0] = '\0';
        int rc = split_check(bad[i].split, bad[i].n, 10, lenet_cuts, 9, bad[i].p, labels, s, err, sizeof err);
        EXPECT(rc == -1 && strstr(err, bad[i].want) && !strchr(err, '\n'), "bad split %zu: rc %d, message \"%s\", "
               "want \"%s\"", i, rc, err, bad[i].want);
    }
    /* ResNet-like: only block boundaries are cuts; the message names the layer and lists the valid ones. */
    const char *rl[8] = {"stem", "b0.conv1", "b0.bn1", "b0.conv2", "b0.bn2", "b1.conv1", "b1.bn1", "fc"};
    int rcuts[3] = {1, 5, 7};
    err[0] = '\0';
    EXPECT(split_check((int[]){3}, 1, 8, rcuts, 3, 2, rl, s, err, sizeof err) == -1, "mid-block cut");
    EXPECT(strstr(err, "layer 3 (b0.conv2) is not a valid cut") && strstr(err, "valid cuts: 1,5,7"), "message: %s",
           err);
}

static void test_format(void) {
    char b[64];
    partition_format((int[]){0, 23, 41}, 3, b, sizeof b);
    EXPECT(strcmp(b, "0,23,41") == 0, "format: %s", b);
    partition_format((int[]){0}, 1, b, sizeof b);
    EXPECT(strcmp(b, "0") == 0, "format one stage: %s", b);
}

int main(void) {
    test_known();
    test_impossible();
    test_random_vs_brute();
    test_cut_costs();
    test_costs_vs_brute();
    test_blocks_cannot_balance();
    test_no_allowed_split();
    test_check();
    test_format();
    return test_summary();
}
