/* dtype.h — the element types the engine stores and moves: fp32 (master parameters, gradients, statistics) and
 * bf16 (activations and their gradients under --math bf16; gradients on the wire with --grad-dtype bf16). Host-only. */
#pragma once
#include <stddef.h>

typedef enum { DTYPE_FP32 = 0, DTYPE_BF16 = 1 } dtype_t;

static inline size_t dtype_size(dtype_t t) { return t == DTYPE_BF16 ? 2 : 4; }
/* As written in CSV rows and options: "fp32", "bf16". */
static inline const char *dtype_name(dtype_t t) { return t == DTYPE_BF16 ? "bf16" : "fp32"; }
