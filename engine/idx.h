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

/* A data set as training sees it. Fields left 0 mean the IDX defaults (1 channel, 10 classes, no resize), so a set
 * filled by hand in a test stays valid. */
typedef struct {
    idx_split_t train, test;
    int channels;               /* image channels: 1 for IDX files; 3 for the generated ImageNet-shaped set */
    int classes;                /* 10 for IDX files; 1000 for the generated ImageNet-shaped set */
    int image;                  /* side of the images a batch holds: 0 or rows (as stored), else each batch is resized
                                 * to image x image on the GPU (bilinear) while the set stays as stored */
    int generated;              /* 1: no bytes on the host (images, labels NULL); every image and label is a function
                                 * of (gen_seed, split, row), computed on the GPU when a batch is gathered */
    unsigned long long gen_seed;
    int synthetic;              /* random data (idx_synthetic or generated): throughput only, no accuracy */
    /* A language model's corpus (engine/tokens.h), owned (idx_free frees it), or NULL for images: train.n and test.n
     * are then its windows, training's and the held-out split's, and nothing else of the splits is set. */
    struct tokens_corpus *corpus;
} idx_dataset_t;

static inline int idx_channels(const idx_dataset_t *d) { return d->channels > 0 ? d->channels : 1; }
static inline int idx_classes(const idx_dataset_t *d) { return d->classes > 0 ? d->classes : 10; }
/* The side of a gathered image. */
static inline int idx_image(const idx_dataset_t *d) { return d->image > 0 ? d->image : d->train.rows; }

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
/* The ImageNet-shaped synthetic set of the ImageNet models: ImageNet-1k's 1,281,167 training and 50,000 test images
 * of channels x side x side and `classes` labels, generated on the GPU from seed (nothing is allocated here: 1.28 M
 * images of 150,528 floats would not fit any GPU). */
void idx_synthetic_generated(idx_dataset_t *d, unsigned long long seed, int side, int channels, int classes);
void idx_free(idx_dataset_t *d);
#ifdef __cplusplus
}
#endif
