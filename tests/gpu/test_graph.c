/* test_graph.c — the CUDA-graph step replays exactly what the eager step does: after two epochs of a few steps
 * (the graph is captured in epoch 1 and replayed across the epoch boundary), parameters are bit-identical. */
#include "gpu_test.h"
#include "../../engine/idx.h"
#include "../../engine/check.h"
#include "../../strategies/strategy.h"
#include "../../engine/replica.h"
#include <string.h>

static float *train(const idx_dataset_t *data, int graph, const char *model, size_t *n) {
    const strategy_t *st = strategy_find("single");
    int dev = 0;
    run_cfg_t cfg = {.model = model, .n_gpus = 1, .devices = &dev, .global_batch = 64, .lr = 0.05, .momentum = 0.9,
                     .weight_decay = 1e-4, .math = MATH_FP32, .init = INIT_XAVIER, .seed = 7, .data = data,
                     .cuda_graph = graph};
    void *state;
    char err[256];
    if (st->setup(&state, &cfg, err, sizeof err) != 0) { fprintf(stderr, "setup: %s\n", err); exit(1); }
    for (int e = 1; e <= 2; e++) {
        epoch_stats_t s;
        st->epoch_begin(state, e);
        for (int i = 0; i < 6; i++) st->train_step(state, i);
        st->epoch_end(state, 6, &s);
        printf("%s graph=%d epoch %d loss %.6f\n", model, graph, e, s.train_loss);
    }
    /* The replica is the strategy's state (strategies/single.c); its model's flat buffer is what we compare. */
    const model_t *m = &((const replica_t *)state)->model;
    *n = m->n_params;
    float *p = malloc(*n * sizeof(float));
    CHECK_CUDA(cudaMemcpy(p, m->params, *n * sizeof(float), cudaMemcpyDeviceToHost));
    st->teardown(state);
    return p;
}

int main(void) {
    gpu_test_require(1);
    idx_dataset_t data;
    idx_synthetic(&data, 3);
    const char *models[2] = {"lenet", "resnet18"};
    for (int k = 0; k < 2; k++) {
        size_t n1, n2;
        float *eager = train(&data, 0, models[k], &n1), *graph = train(&data, 1, models[k], &n2);
        EXPECT(n1 == n2 && memcmp(eager, graph, n1 * sizeof(float)) == 0,
               "%s: parameters after graphed steps differ from eager steps", models[k]);
        free(eager);
        free(graph);
    }
    idx_free(&data);
    return test_summary();
}
