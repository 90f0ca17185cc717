/* idx.h — reader for the IDX files of MNIST and Fashion-MNIST (gzip-compressed or raw, via zlib).
 * Pure host code with no CUDA headers, so CI tests it against the real files and broken copies. */
#pragma once
#include <stddef.h>
#include <stdint.h>

/* One split: n images of rows x cols bytes and their n labels (0..9). */
typedef struct {
    int n, rows, cols;
    uint8_t *images;    /* n * rows * cols, row-major per image */
    uint8_t *labels;    /* n */
} idx_split_t;

typedef struct {
    idx_split_t train, test;
} idx_dataset_t;

#ifdef __cplusplus
extern "C" {   /* called from CUDA sources (dataset tests, strategies) */
#endif

/* Reads <dir>/{train,t10k}-{images-idx3,labels-idx1}-ubyte[.gz], preferring .gz. Validates magic numbers
 * (0x00000803 images, 0x00000801 labels), dimensions (28x28), that image and label counts agree, that the
 * file holds exactly the bytes its header promises, and that labels are < 10. On failure returns -1 and
 * writes a one-line reason naming the file into err. */
int idx_load_dataset(const char *dir, idx_dataset_t *d, char *err, size_t errlen);
/* One images+labels pair; used by idx_load_dataset and by tests. */
int idx_load_split(const char *images_path, const char *labels_path, idx_split_t *s, char *err, size_t errlen);
/* Random images and labels for throughput-only runs (--dataset synthetic): 60000 train, 10000 test. */
void idx_synthetic(idx_dataset_t *d, unsigned long long seed);
void idx_free(idx_dataset_t *d);
#ifdef __cplusplus
}
#endif
