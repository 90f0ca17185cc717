/* math_mode.h — the arithmetic a run trains in (--math): each with its one name and what it is (the type of the
 * activations, strictness). Host-only (no CUDA headers): the option table parses names to math_t and the rows write
 * them back; every place that differs by math asks the table (or the activation type's row of dtype.h), never the
 * math's name. */
#pragma once
#include "dtype.h"

/* fp32: strict IEEE fp32 everywhere. tf32: TF32 tensor cores in cuDNN convolutions, fp32 in cuBLAS GEMMs
 * (PyTorch's defaults, so the comparison with it is at the same math). bf16 and fp16: mixed precision as PyTorch's
 * autocast: activations and convolution/dense operands in the 2-byte type with fp32 accumulation, fp32 master
 * parameters, batch-norm statistics, loss and update; fp16 with a dynamic loss scale (GradScaler's, kept on the
 * device: engine/loss_scale_gpu.h). */
typedef enum { MATH_FP32 = 0, MATH_TF32 = 1, MATH_BF16 = 2, MATH_FP16 = 3, MATH_COUNT } math_t;

/* The names, in math_t order, NULL-terminated: what --math takes and the math column holds. */
static const char *const math_names[MATH_COUNT + 1] = {"fp32", "tf32", "bf16", "fp16", 0};
static inline const char *math_name(math_t m) { return math_names[m]; }

/* What a math is, in math_t order. */
typedef struct {
    dtype_t act;        /* activations, their gradients, convolution and dense operands, the parameters' copy */
    /* FMA only: cuDNN under CUDNN_FMA_MATH whatever the search reports, cuBLAS pedantic, no backend engine configs
     * (the backend has no math type to forbid TF32). */
    int strict;
} math_info_t;

static const math_info_t MATH_INFO[MATH_COUNT] = {{DTYPE_FP32, 1}, {DTYPE_FP32, 0}, {DTYPE_BF16, 0}, {DTYPE_FP16, 0}};

static inline dtype_t math_act_dtype(math_t m) { return MATH_INFO[m].act; }
/* Whether a run in math m trains with a dynamic loss scale: its gradients are of a type that needs one. */
static inline int math_loss_scaled(math_t m) { return dtype_loss_scaled(MATH_INFO[m].act); }
