/* math_mode.h — the arithmetic a run trains in (--math), each with its one name. Host-only (no CUDA headers): the
 * option table parses names to math_t and the rows write them back. */
#pragma once

/* fp32: strict IEEE fp32 everywhere. tf32: TF32 tensor cores in cuDNN convolutions, fp32 in cuBLAS GEMMs
 * (PyTorch's defaults, so the comparison with it is at the same math). bf16: mixed precision as PyTorch's bf16
 * autocast: bf16 activations and convolution/dense operands with fp32 accumulation, fp32 master parameters,
 * batch-norm statistics and loss. */
typedef enum { MATH_FP32 = 0, MATH_TF32 = 1, MATH_BF16 = 2, MATH_COUNT } math_t;

/* The names, in math_t order, NULL-terminated: what --math takes and the math column holds. */
static const char *const math_names[MATH_COUNT + 1] = {"fp32", "tf32", "bf16", 0};
static inline const char *math_name(math_t m) { return math_names[m]; }
