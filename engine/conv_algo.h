/* conv_algo.h — one convolution shape's algorithm choices (cudnnFind's), as gpu_t caches them and the
 * --conv-cache file keeps them. Plain ints, no CUDA headers, so that host code can read and write them. */
#pragma once
#include <stddef.h>

#define CONV_CACHE_MAX 64
typedef struct {
    int key[12];                /* n,h,w,c, k,r,s, stride,pad, oh,ow, math */
    int fwd, bwd_data, bwd_filter;           /* cudnn*Algo_t values; -1: not searched */
    int fwd_math, bwd_data_math, bwd_filter_math;   /* cudnnMathType_t chosen with each */
    size_t ws_fwd, ws_bwd_data, ws_bwd_filter;
} conv_algo_t;
