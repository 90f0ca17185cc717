/* weight_init.h — how a model's weights start (--init), each way with its one name. Host-only (no CUDA headers): the
 * option table parses names to init_t and the rows write them back. */
#pragma once

/* normal: N(0, 0.01) weights; xavier: Glorot uniform; kaiming: torchvision's ResNet initialisation (convolutions
 * Kaiming normal, fan-out, gain for ReLU; dense layers as nn.Linear's default, weights and bias U(-1/sqrt(in),
 * 1/sqrt(in))). Biases start at 0 except kaiming's dense bias; batch norm starts at gamma 1, beta 0 in every mode. */
typedef enum { INIT_NORMAL = 0, INIT_XAVIER = 1, INIT_KAIMING = 2, INIT_COUNT } init_t;

/* The names, in init_t order, NULL-terminated: what --init takes and the init column holds. */
static const char *const init_names[INIT_COUNT + 1] = {"normal", "xavier", "kaiming", 0};
static inline const char *init_name(init_t i) { return init_names[i]; }
