/* naive_path.h — how naive's gradients reach GPU 0, and the pipeline's activations cross between stages
 * (--naive-path), each way with its one name. Host-only (no CUDA headers): the option table parses names to it. */
#pragma once

/* auto: peer copies where peer access exists, else through host memory; p2p: peer copies (an error without peer
 * access); host: staged through pinned host memory. */
typedef enum { NAIVE_PATH_AUTO = 0, NAIVE_PATH_P2P = 1, NAIVE_PATH_HOST = 2, NAIVE_PATH_COUNT } naive_path_t;

/* The names, in naive_path_t order, NULL-terminated: what --naive-path takes, and the nccl_algo cell of a naive row
 * whose path was chosen. */
static const char *const naive_path_names[NAIVE_PATH_COUNT + 1] = {"auto", "p2p", "host", 0};
static inline const char *naive_path_name(naive_path_t p) { return naive_path_names[p]; }
