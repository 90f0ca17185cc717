/* graph.h — a piece of GPU work that launches the same sequence every time (a replica's forward, a bucket's
 * backward, a pipeline stage's micro-batch): run eagerly once, captured into a CUDA graph, then replayed. */
#pragma once
#include <cuda_runtime.h>

typedef struct {
    int state;                  /* 0 never run, 1 run once eagerly (library warm-up), 2 captured */
    cudaGraph_t graph;
    cudaGraphExec_t exec;
} graph_seg_t;

#ifdef __cplusplus
extern "C" {
#endif
/* Runs fn(ctx, arg) on `stream` (the current device's): eagerly every time when !use_graph; otherwise eagerly the
 * first time (cuDNN and cuBLAS allocate and tune on a first call, which a capture must not record), captured the
 * second, replayed from then on. fn must launch the same work every time; waits and timing events that differ
 * between calls belong outside, on the stream. */
void graph_seg_run(graph_seg_t *s, cudaStream_t stream, int use_graph, void (*fn)(void *ctx, const void *arg),
                   void *ctx, const void *arg);
void graph_seg_free(graph_seg_t *s);
#ifdef __cplusplus
}
#endif
