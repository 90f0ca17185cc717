/* dtype.h — the element types the engine stores and moves, as one table: fp32 (master parameters, gradients,
 * statistics), bf16 and fp16 (activations and their gradients under --math bf16 | fp16; gradients on the wire with
 * --grad-dtype). Host-only. */
#pragma once
#include <stddef.h>

/* The one dtype table: X(ID, name, bytes, loss_scaled): the enum, DTYPE_INFO and the --grad-dtype choices
 * (bench/options.c) are made from it. */
#define DTYPE_TABLE(X)                                                                                                 \
    X(FP32, "fp32", 4, 0)                                                                                              \
    X(BF16, "bf16", 2, 0)                                                                                              \
    X(FP16, "fp16", 2, 1)
/* The table's names, in dtype_t order, for an X that takes only them. */
#define DTYPE_NAME_STR(id, name, size, scaled) name,

#define DTYPE_ENUM(id, name, size, scaled) DTYPE_##id,
typedef enum { DTYPE_TABLE(DTYPE_ENUM) DTYPE_COUNT } dtype_t;
#undef DTYPE_ENUM

typedef struct {
    const char *name;   /* as written in CSV rows and options */
    size_t size;        /* bytes per element */
    /* Gradients computed in this type need a loss scale: fp16's 5-bit exponent flushes small gradients to 0 (below
     * 2^-24) and overflows past 65504, so training multiplies the loss by a scale that a GradScaler schedule adjusts
     * (engine/loss_scale.h). bf16 has fp32's exponent range and needs none. */
    int loss_scaled;
} dtype_info_t;

#define DTYPE_INFO_ENTRY(id, name, size, scaled) {name, size, scaled},
static const dtype_info_t DTYPE_INFO[DTYPE_COUNT] = {DTYPE_TABLE(DTYPE_INFO_ENTRY)};
#undef DTYPE_INFO_ENTRY

static inline size_t dtype_size(dtype_t t) { return DTYPE_INFO[t].size; }
static inline const char *dtype_name(dtype_t t) { return DTYPE_INFO[t].name; }
/* A 2-byte type: activations under a mixed-precision math, with fp32 master parameters beside a copy in this type. */
static inline int dtype_is_low(dtype_t t) { return DTYPE_INFO[t].size < 4; }
static inline int dtype_loss_scaled(dtype_t t) { return DTYPE_INFO[t].loss_scaled; }
