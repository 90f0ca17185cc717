/* test_graph.c — the CUDA-graph step replays exactly what the eager step does: after two epochs of a few steps
 * (the graph is captured in epoch 1 and replayed across the epoch boundary), parameters are bit-identical to
 * those of the same replica trained eagerly from the same starting point, in fp32 and in bf16 and fp16 mixed
 * precision (fp16: its loss scale's state too, decided on the device inside the graph), for LeNet, ResNet-18 and
 * ResNet-50. */
#include "gpu_test.h"
#include "../../engine/idx.h"
#include "../../engine/check.h"
#include "../../strategies/strategy.h"
#include "../../engine/replica.h"
#include "../../engine/reduce.h"
#include "../../engine/loss_scale_gpu.h"
#include "restart.h"
#include <string.h>

/* Two epochs of 6 steps; returns the parameters (host copy, n of them), and the loss scale at the end (ls, where
 * the math has one). */
static float *train(const strategy_t *st, void *state, size_t *n, loss_scale_t *ls) {
    replica_t *r = state;
    for (int e = 1; e <= 2; e++) {
        epoch_stats_t s;
        epoch_stats_init(&s);
        st->epoch_begin(state, e);
        for (int i = 0; i < 6; i++) st->train_step(state, i);
        st->epoch_end(state, 6, &s);
        printf("graph=%d epoch %d loss %.6f loss scale %g, %d skipped\n", r->use_graphs, e, s.train_loss,
               s.loss_scale, s.skipped_steps);
    }
    if (r->ls) *ls = loss_scale_read(r->ls, r->gpu.stream);
    *n = st->params(state, NULL, 0);
    float *p = malloc(*n * sizeof(float));
    st->params(state, p, *n);
    return p;
}

/* After eager runs that differ: one step twice from the start, each layer's weight gradient compared; backward
 * runs from the last layer, so the last layer whose gradient differs is where the difference starts (its own
 * kernel, or the data gradient it received from the layer after it). */
static void name_nondeterministic(const strategy_t *st, void *state, const float *p0, const float *v0,
                                  const float *s0) {
    replica_t *r = state;
    model_t *m = &r->model;
    size_t gb = m->n_params * sizeof(float);
    float *g1 = malloc(gb), *g2 = malloc(gb);
    for (int k = 0; k < 2; k++) {
        restart(r, p0, v0, s0);
        st->epoch_begin(state, 1);
        st->train_step(state, 0);
        CHECK_CUDA(cudaDeviceSynchronize());
        CHECK_CUDA(cudaMemcpy(k ? g2 : g1, m->grads, gb, cudaMemcpyDeviceToHost));
    }
    int last = -1, n = 0;
    for (int i = 0; i < m->n_layers; i++) {
        const layer_t *l = &m->layers[i];
        if (l->n_params && memcmp(g1 + l->param_offset, g2 + l->param_offset, l->n_params * sizeof(float)) != 0) {
            last = i;
            n++;
        }
    }
    printf("# one step twice: %d layers' gradients differ; the last: %s\n", n, last >= 0 ? m->layers[last].label : "-");
    free(g1);
    free(g2);
    /* The forward of step 0 twice: the first layer whose output differs. */
    size_t bytes = 0;
    for (int t = 0; t < m->n_tensors; t++) bytes += model_tensor_bytes(m, t);
    char *a1 = malloc(bytes), *a2 = malloc(bytes);
    for (int k = 0; k < 2; k++) {
        restart(r, p0, v0, s0);
        st->epoch_begin(state, 1);
        int shard = 0;
        replica_seg_forward(r, &shard);
        CHECK_CUDA(cudaDeviceSynchronize());
        size_t off = 0;
        for (int t = 0; t < m->n_tensors; t++) {
            CHECK_CUDA(cudaMemcpy((k ? a2 : a1) + off, m->tensors[t].val, model_tensor_bytes(m, t),
                                  cudaMemcpyDeviceToHost));
            off += model_tensor_bytes(m, t);
        }
    }
    size_t off = 0;
    const char *where = "none";
    for (int t = 0; t < m->n_tensors && !strcmp(where, "none"); t++) {
        if (memcmp(a1 + off, a2 + off, model_tensor_bytes(m, t)) != 0 && t == m->input) where = "the input";
        else if (memcmp(a1 + off, a2 + off, model_tensor_bytes(m, t)) != 0)
            for (int i = 0; i < m->n_layers; i++)
                if (m->layers[i].out == t) where = m->layers[i].label;
        off += model_tensor_bytes(m, t);
    }
    printf("# one forward twice: the first output that differs is %s's\n", where);
    free(a1);
    free(a2);
}

/* One replica trains eagerly, is put back to its starting point, then trains from graphs: the same cuDNN
 * algorithms both times (two setups could time cudnnFind differently, pick other deterministic algorithms and
 * round differently, which is not what this test is about). */
static void compare(const idx_dataset_t *data, const char *model, math_t math, init_t init) {
    const strategy_t *st = strategy_find("single");
    int dev = 0;
    run_cfg_t cfg = {.model = model, .n_gpus = 1, .devices = &dev, .global_batch = 64, .lr = 0.05, .momentum = 0.9,
                     .weight_decay = 1e-4, .math = math, .init = init, .seed = 7, .data = data,
                     .cuda_graph = 0};
    void *state;
    char err[256];
    if (st->setup(&state, &cfg, err, sizeof err) != 0) { fprintf(stderr, "setup: %s\n", err); exit(1); }
    replica_t *r = state;
    model_t *m = &r->model;
    size_t pb = m->n_params * sizeof(float), sb = m->n_state * sizeof(float);
    float *p0, *v0, *s0 = NULL;   /* the starting point: parameters, momentum, BN running statistics */
    CHECK_CUDA(cudaMalloc((void **)&p0, pb));
    CHECK_CUDA(cudaMalloc((void **)&v0, pb));
    if (sb) CHECK_CUDA(cudaMalloc((void **)&s0, sb));
    CHECK_CUDA(cudaDeviceSynchronize());
    CHECK_CUDA(cudaMemcpy(p0, m->params, pb, cudaMemcpyDeviceToDevice));
    CHECK_CUDA(cudaMemcpy(v0, m->momentum, pb, cudaMemcpyDeviceToDevice));
    if (sb) CHECK_CUDA(cudaMemcpy(s0, m->state, sb, cudaMemcpyDeviceToDevice));
    size_t n1, n2, n0;
    loss_scale_t ls_eager = {0}, ls_again = {0}, ls_graph = {0};
    /* Eager twice first: a kernel that is not deterministic would fail the comparison with the graph for a reason
     * that has nothing to do with graphs, so it is told apart here. */
    float *eager = train(st, state, &n1, &ls_eager);
    restart(r, p0, v0, s0);
    float *again = train(st, state, &n0, &ls_again);
    int same = n0 == n1 && memcmp(eager, again, n1 * sizeof(float)) == 0;
    EXPECT(same, "%s (%s): two eager runs from the same start differ (a kernel is not deterministic)", model,
           gpu_math_name(math));
    free(again);
    if (!same) name_nondeterministic(st, state, p0, v0, s0);
    restart(r, p0, v0, s0);
    r->use_graphs = 1;
    float *graph = train(st, state, &n2, &ls_graph);
    size_t first = 0;   /* where they part, to name the layer */
    while (n1 == n2 && first < n1 && memcmp(eager + first, graph + first, sizeof(float)) == 0) first++;
    const char *where = "?";
    for (int i = 0; i < m->n_layers; i++)
        if (m->layers[i].n_params && first >= m->layers[i].param_offset &&
            first < m->layers[i].param_offset + m->layers[i].n_params)
            where = m->layers[i].label;
    EXPECT(n1 == n2 && first == n1, "%s (%s): parameters after graphed steps differ from eager steps, first at %zu "
           "(layer %s)", model, gpu_math_name(math), first, where);
    EXPECT(memcmp(&ls_eager, &ls_again, sizeof ls_eager) == 0 && memcmp(&ls_eager, &ls_graph, sizeof ls_eager) == 0,
           "%s (%s): loss scale eager %g (%d skipped, %d clean), again %g, graphed %g (%d skipped, %d clean)", model,
           gpu_math_name(math), ls_eager.scale, ls_eager.skipped, ls_eager.clean, ls_again.scale, ls_graph.scale,
           ls_graph.skipped, ls_graph.clean);
    if (r->ls)   /* not vacuous either: at least one of the 12 steps applied */
        EXPECT(ls_eager.skipped < 12, "%s (%s): every step skipped", model, gpu_math_name(math));
    /* Not vacuous: training moved the parameters. */
    float *start = malloc(pb);
    CHECK_CUDA(cudaMemcpy(start, p0, pb, cudaMemcpyDeviceToHost));
    EXPECT(memcmp(start, eager, pb) != 0, "%s (%s): training left the parameters unchanged", model,
           gpu_math_name(math));
    free(start);
    free(eager);
    free(graph);
    CHECK_CUDA(cudaFree(p0));
    CHECK_CUDA(cudaFree(v0));
    if (s0) CHECK_CUDA(cudaFree(s0));
    st->teardown(state);
}

int main(void) {
    gpu_test_require(1);
    idx_dataset_t data;
    idx_synthetic(&data, 3);
    const math_t maths[3] = {MATH_FP32, MATH_BF16, MATH_FP16};
    for (int i = 0; i < 3; i++) {
        compare(&data, "lenet", maths[i], INIT_XAVIER);
        compare(&data, "resnet18", maths[i], INIT_XAVIER);
    }
    idx_free(&data);
    /* ResNet-50 on the ImageNet-shaped set generated on the GPU (at 128x128 to keep the test short; the layers and
     * the step's launches are those of 224x224): its 109 layers, bottleneck blocks and max-pool in one graph. */
    idx_synthetic_generated(&data, 3, 128, 3, 1000);
    for (int i = 0; i < 3; i++) compare(&data, "resnet50", maths[i], INIT_KAIMING);
    return test_summary();
}
