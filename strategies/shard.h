/* shard.h — how one global batch splits over N data-parallel replicas: pure arithmetic, no CUDA, so CI tests it.
 * Replica i takes rows [i*B/N, (i+1)*B/N) of every global batch of B images (as split_and_load does). */
#pragma once
#include <stddef.h>
#include <stdio.h>

typedef struct {
    int first;      /* first row of the global batch */
    int count;      /* rows: global_batch / n */
} shard_t;

/* Replica i's share of a global batch of global_batch images over n replicas. Returns 0, or -1 with a one-line
 * message in err: n < 1, i outside [0, n), global_batch < n, or global_batch not divisible by n (every replica
 * runs a model built for one batch size, and equal shards keep every replica's BatchNorm statistics comparable). */
static inline int shard_split(int global_batch, int n, int i, shard_t *out, char *err, size_t errlen) {
    if (n < 1) { snprintf(err, errlen, "%d replicas: need at least 1", n); return -1; }
    if (i < 0 || i >= n) { snprintf(err, errlen, "replica %d outside 0..%d", i, n - 1); return -1; }
    if (global_batch < n) {
        snprintf(err, errlen, "global batch %d is smaller than the %d replicas: a replica would get no image",
                 global_batch, n);
        return -1;
    }
    if (global_batch % n) {
        snprintf(err, errlen, "global batch %d does not split evenly over %d replicas (%d left over)", global_batch,
                 n, global_batch % n);
        return -1;
    }
    out->count = global_batch / n;
    out->first = i * out->count;
    return 0;
}

/* Position in the epoch's permutation of the first image of shard s in global batch `step`; 64-bit because
 * step * global_batch may pass 2^31 on a large data set. */
static inline long long shard_first_image(int step, int global_batch, const shard_t *s) {
    return (long long)step * global_batch + s->first;
}
