/* model_info.h — what the harness knows about each model before building it: default batch and image size, the
 * input it takes on synthetic data, and whether its input side may change. Host-only: options and --help use it. */
#pragma once

typedef struct {
    const char *name;
    const char *summary;    /* one line for --help */
    int batch;              /* default --batch */
    int image;              /* default image side (--image-size) */
    int resizable;          /* 0: the input is fixed at `image` (a dense layer is sized for it) */
    int stride;             /* total down-sampling to the last feature map: the smallest side it takes */
    int synth_channels;     /* --dataset synthetic: image channels and classes generated for it */
    int synth_classes;
    const char *init;       /* default --init */
    /* default --target-acc on Fashion-MNIST and on MNIST (a fraction; 0: none, as on synthetic data, whose random
     * labels have no accuracy): a level the model reaches in about 10 epochs at batch 256 with warm-up and a decay,
     * so that time to target ranks configurations that train it, not ones that only start to */
    double target_fashion, target_mnist;
} model_info_t;

/* Every model, NULL-name terminated. */
extern const model_info_t model_infos[];
/* The entry for name, or NULL. */
const model_info_t *model_info(const char *name);
/* The default --target-acc of model mi on `dataset` (an --dataset name), 0 for none. */
double model_info_target(const model_info_t *mi, const char *dataset);
/* 1 for the ImageNet-shaped models: --dataset synthetic gives them 3x224x224 images and 1000 classes. */
int model_info_imagenet(const model_info_t *mi);
