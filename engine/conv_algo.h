/* conv_algo.h — one convolution shape's algorithm choices (cudnnFind's, and a faster backend engine config where one
 * was found), as gpu_t caches them and the
 * --conv-cache file keeps them, and the growable list both keep them in. No CUDA headers: host code reads them. */
#pragma once
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#define CONV_BE_KNOBS 16

/* A cuDNN backend (graph API) engine config that ran a direction faster than cudnnFind's choice: the global engine
 * index, its knob choices (cudnnBackendKnobType_t, value) and its plan's workspace. engine -1: none (the direction
 * runs cudnnFind's algorithm). */
typedef struct {
    int engine, n_knobs;
    int knob_type[CONV_BE_KNOBS];
    long long knob_value[CONV_BE_KNOBS];
    size_t ws;
} conv_be_cfg_t;

/* A batch norm's measured choice rides in the same list and file: key {n, h, w, c, CONV_KEY_BN, fuse, has dx, has
 * a folded bias, 0, 0, 0, math} (no convolution has -1 output channels), fwd = its forward's way, bwd_data = its
 * backward's (engine/layers/bn.cu: 0 cuDNN's, 1 + bn_nhwc_impl_t ours), bwd_filter -1, workspaces 0. */
#define CONV_KEY_BN -1

typedef struct {
    int key[12];                /* n,h,w,c, k,r,s, stride,pad, oh,ow, math (a batch norm: CONV_KEY_BN in k) */
    int fwd, bwd_data, bwd_filter;           /* cudnn*Algo_t values; -1: not searched */
    int fwd_math, bwd_data_math, bwd_filter_math;   /* cudnnMathType_t chosen with each */
    size_t ws_fwd, ws_bwd_data, ws_bwd_filter;
    conv_be_cfg_t be[3];        /* fwd, bwd_data, bwd_filter: searched with the direction's algorithm */
} conv_algo_t;

/* The entry for key among e[0..n), or NULL. */
static inline conv_algo_t *conv_algo_find(conv_algo_t *e, int n, const int key[12]) {
    for (int i = 0; i < n; i++)
        if (memcmp(e[i].key, key, sizeof e[i].key) == 0) return &e[i];
    return NULL;
}

/* The entry for key in the growable list (*e, *n, *cap; free(*e) when done), appended with no direction searched
 * (-1) when new. NULL when out of host memory. Appending may move the list: earlier entry pointers go stale. */
static inline conv_algo_t *conv_algo_add(conv_algo_t **e, int *n, int *cap, const int key[12]) {
    conv_algo_t *have = conv_algo_find(*e, *n, key);
    if (have) return have;
    if (*n == *cap) {
        int c = *cap ? 2 * *cap : 64;
        conv_algo_t *grown = (conv_algo_t *)realloc(*e, (size_t)c * sizeof *grown);
        if (!grown) return NULL;
        *e = grown;
        *cap = c;
    }
    conv_algo_t *a = &(*e)[(*n)++];
    memset(a, 0, sizeof *a);
    memcpy(a->key, key, sizeof a->key);
    a->fwd = a->bwd_data = a->bwd_filter = -1;
    for (int d = 0; d < 3; d++) a->be[d].engine = -1;
    return a;
}
