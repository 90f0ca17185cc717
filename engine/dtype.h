/* dtype.h — the element types the engine stores and moves, as one table: fp32 (master parameters, gradients,
 * statistics), bf16 and fp16 (activations and their gradients under --math bf16 | fp16; gradients on the wire with
 * --grad-dtype). Host-only. */
#pragma once
#include <stddef.h>

typedef enum { DTYPE_FP32 = 0, DTYPE_BF16 = 1, DTYPE_FP16 = 2, DTYPE_COUNT } dtype_t;

typedef struct {
    const char *name;   /* as written in CSV rows and options */
    size_t size;        /* bytes per element */
} dtype_info_t;

static const dtype_info_t DTYPE_INFO[DTYPE_COUNT] = {{"fp32", 4}, {"bf16", 2}, {"fp16", 2}};

static inline size_t dtype_size(dtype_t t) { return DTYPE_INFO[t].size; }
static inline const char *dtype_name(dtype_t t) { return DTYPE_INFO[t].name; }
