/* test_pipeline_split.c — where a model may be cut (LeNet: every boundary; ResNet-18: block boundaries where one
 * tensor crosses, and inside blocks with the shortcut crossing too, except between a projection and the batch norm
 * that folds its bias) and the one-line errors for bad pipeline configurations: an empty stage, more stages than
 * layers, a split out of range, a cut that parts a folded bias, two cuts in one block, a wrong number of values, a
 * micro-batch count that does not divide the batch. These are checked before any GPU is touched, so that part runs
 * without one; with 2 GPUs hand splits are run, between blocks and inside one. */
#include "gpu_test.h"
#include "../../engine/idx.h"
#include "../../strategies/strategy.h"
#include "../../strategies/pipeline/pipe_schedule.h"
#include <string.h>

static void test_cut_points(void) {
    model_t *m = calloc(1, sizeof *m);
    int cuts[MODEL_MAX_LAYERS];
    model_build(m, "lenet", 8);
    int n = model_cut_points(m, MODEL_MAX_CROSS, cuts), ok = n == 9;
    for (int i = 0; ok && i < n; i++) ok = cuts[i] == i + 1;
    EXPECT(ok, "LeNet: every boundary is a cut (%d of 9)", n);
    model_build(m, "resnet18", 8);
    static const int want[] = {1, 2, 6, 10, 15, 19, 24, 28, 33, 37, 38};
    n = model_cut_points(m, 1, cuts);
    ok = n == (int)(sizeof want / sizeof want[0]);
    for (int i = 0; ok && i < n; i++) ok = cuts[i] == want[i];
    EXPECT(ok, "ResNet-18: cuts after the stem conv, between blocks, before the head (got %d)", n);
    for (int i = 0; i < n; i++) printf("resnet18 cut %d: before %s\n", cuts[i], m->layers[cuts[i]].label);
    /* Inside blocks too, but not before the three batch norms that fold a projection's bias (38 boundaries). */
    n = model_cut_points(m, MODEL_MAX_CROSS, cuts);
    EXPECT(n == m->n_layers - 1 - 3, "ResNet-18: %d cuts inside and between blocks, want %d", n, m->n_layers - 4);
    free(m);
}

typedef struct {
    const char *model;
    int gpus, micro;
    int split[12], n_split;
    const char *want;
} bad_t;

static void test_bad_configs(const idx_dataset_t *data) {
    static const bad_t bad[] = {
        {"lenet", 3, 1, {3, 3}, 2, "stage 2 would be empty"},
        {"lenet", 2, 1, {0}, 1, "stage 1 would be empty"},
        {"lenet", 2, 1, {10}, 1, "it would be empty"},
        {"lenet", 3, 1, {6, 4}, 2, "strictly increasing"},
        {"lenet", 12, 1, {0}, 0, "more stages than layers"},                       /* automatic split */
        {"lenet", 12, 1, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}, 11, "more stages than layers"},
        {"lenet", 2, 1, {99}, 1, "out of range"},
        {"lenet", 2, 1, {-3}, 1, "out of range"},
        {"lenet", 3, 1, {7}, 1, "1 value for 3 GPUs"},
        {"resnet18", 2, 1, {14}, 1, "layer 14 (s2.b0.bn2) is not a valid cut"},
        {"resnet18", 3, 1, {11, 12}, 2, "stage 2 (layers 11-11, s2.b0.bn1..s2.b0.bn1) would pass"},
        {"lenet", 2, 5, {0}, 0, "--micro-batches 5 does not divide the global batch 96"},
    };
    const strategy_t *st = strategy_find("pipeline");
    EXPECT(st != NULL, "pipeline is registered");
    if (!st) return;
    int devices[16];
    for (int i = 0; i < 16; i++) devices[i] = i;
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        const bad_t *b = &bad[i];
        run_cfg_t cfg = {.model = b->model, .n_gpus = b->gpus, .devices = devices, .global_batch = 96, .lr = 0.1,
                         .math = MATH_FP32, .init = INIT_XAVIER, .seed = 1, .data = data, .micro_batches = b->micro,
                         .split = b->n_split ? b->split : NULL, .n_split = b->n_split};
        char err[512] = "";
        void *state = NULL;
        int rc = st->setup(&state, &cfg, err, sizeof err);
        printf("%s on %d GPUs, M=%d: %s\n", b->model, b->gpus, b->micro, err);
        EXPECT(rc == -1 && state == NULL, "bad config %zu accepted", i);
        EXPECT(strstr(err, b->want) != NULL && !strchr(err, '\n'), "bad config %zu: message \"%s\", want \"%s\"", i,
               err, b->want);
        if (rc == 0 && state) st->teardown(state);
    }
}

/* With two GPUs: valid hand splits run, between blocks and inside one (the shortcut crossing beside the branch),
 * and the row records them. */
static void run_split(const idx_dataset_t *data, int at, const char *want) {
    const strategy_t *st = strategy_find("pipeline");
    int devices[2] = {0, 1}, split[1] = {at};
    run_cfg_t cfg = {.model = "resnet18", .n_gpus = 2, .devices = devices, .global_batch = 64, .lr = 0.05,
                     .math = MATH_TF32, .init = INIT_NORMAL, .seed = 1, .data = data, .micro_batches = 2,
                     .schedule = SCHED_1F1B, .split = split, .n_split = 1};
    char err[512] = "";
    void *state = NULL;
    EXPECT(st->setup(&state, &cfg, err, sizeof err) == 0, "resnet18 --split %d: %s", at, err);
    if (!state) return;
    epoch_stats_t s;
    st->epoch_begin(state, 1);
    for (int i = 0; i < 3; i++) st->train_step(state, i);
    st->epoch_end(state, 3, &s);
    printf("resnet18 2 stages, split %s, M=2 1f1b: loss %.4f, busy %s ms, bubble %.3f (ideal %.3f), %.0f bytes per "
           "step\n", s.split, s.train_loss, s.stage_busy_ms, s.bubble, s.bubble_ideal, s.bytes_per_step);
    EXPECT(strcmp(s.split, want) == 0 && s.stages == 2 && s.micro_batches == 2 && strcmp(s.schedule, "1f1b") == 0,
           "row: split %s stages %d micro %d schedule %s", s.split, s.stages, s.micro_batches, s.schedule);
    EXPECT(isfinite(s.train_loss) && s.train_loss > 0, "loss %.4f", s.train_loss);
    st->teardown(state);
}

static void test_hand_split(const idx_dataset_t *data) {
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess || n < 2) {
        printf("hand split run skipped: needs 2 CUDA devices\n");
        return;
    }
    run_split(data, 10, "0,10");
    run_split(data, 12, "0,12");   /* inside s2.b0: its input crosses beside conv1's branch */
}

int main(void) {
    idx_dataset_t data;
    idx_synthetic(&data, 1);
    test_cut_points();
    test_bad_configs(&data);
    test_hand_split(&data);
    idx_free(&data);
    return test_summary();
}
