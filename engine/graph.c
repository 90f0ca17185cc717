/* graph.c — capture-once, replay-always CUDA graphs for the fixed launch sequences of a training step, shared by
 * replicas (engine/replica.c) and pipeline stages (strategies/pipeline/pipe_run.c). */
#include "graph.h"
#include "check.h"
#include <string.h>

void graph_seg_run(graph_seg_t *s, cudaStream_t stream, int use_graph, void (*fn)(void *ctx, const void *arg),
                   void *ctx, const void *arg) {
    if (!use_graph || s->state == 0) {
        fn(ctx, arg);
        if (!s->state) s->state = 1;
        return;
    }
    if (s->state == 1) {
        /* Relaxed: cuDNN and cuBLAS query the device and stream while being captured. */
        CHECK_CUDA(cudaStreamBeginCapture(stream, cudaStreamCaptureModeRelaxed));
        fn(ctx, arg);
        CHECK_CUDA(cudaStreamEndCapture(stream, &s->graph));
        CHECK_CUDA(cudaGraphInstantiate(&s->exec, s->graph, 0));
        s->state = 2;
    }
    CHECK_CUDA(cudaGraphLaunch(s->exec, stream));
}

void graph_seg_free(graph_seg_t *s) {
    if (s->exec) CHECK_CUDA(cudaGraphExecDestroy(s->exec));
    if (s->graph) CHECK_CUDA(cudaGraphDestroy(s->graph));
    memset(s, 0, sizeof *s);
}
