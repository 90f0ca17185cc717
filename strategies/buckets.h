/* buckets.h — how data parallelism cuts the flat gradient buffer into all-reduce buckets of consecutive layers, in
 * the order backward finishes them: pure arithmetic on the layers' offsets, no CUDA, so CI tests it on every model. */
#pragma once
#include <stddef.h>

typedef struct {
    int lo, hi;                     /* layers [lo, hi): backward runs hi-1 down to lo */
    size_t offset, count;           /* their contiguous slice of the flat gradient buffer, in elements */
} bucket_t;

/* The buckets of n_layers layers whose slices begin at first[0..n_layers) (non-decreasing, first[0] 0) in a flat
 * buffer of n_params elements of elem_bytes each (layer i ends where layer i + 1 begins, the last at n_params), at most
 * bucket_bytes a bucket, into out (room for n_layers): the first bucket holds the last layers, which backward
 * finishes first. Returns their count. */
int buckets_build(int n_layers, const size_t *first, size_t n_params, size_t elem_bytes, size_t bucket_bytes,
                  bucket_t *out);
