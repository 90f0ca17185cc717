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

/* The one model table: X(name, summary, batch, image, resizable, stride, synth_channels, synth_classes, init,
 * target_fashion, target_mnist), model_info_t's fields in order, the name an identifier. model_infos, the --model
 * choices and the builders (model_build_<name>, engine/model.c) are made from it: adding a model is its builder's
 * file and one line here. */
#define MODEL_TABLE(X)                                                                                                 \
    X(lenet, "LeNet-5 (d2l), 1x28x28 inputs", 256, 28, 0, 4, 1, 10, "xavier", 0.85, 0.98)                             \
    X(resnet18, "ResNet-18 (d2l: 3x3 stem, no max-pool), 1x28x28 inputs", 256, 28, 1, 8, 1, 10, "normal", 0.92, 0.99) \
    X(resnet50, "ResNet-50 v1.5 (torchvision), 3x224x224 inputs", 256, 224, 1, 32, 3, 1000, "kaiming", 0, 0)          \
    X(resnet101, "ResNet-101 v1.5 (torchvision), 3x224x224 inputs", 128, 224, 1, 32, 3, 1000, "kaiming", 0, 0)
/* The table's names, for an X that takes only them. */
#define MODEL_NAME_STR(name, ...) #name,

/* Every model, NULL-name terminated. */
extern const model_info_t model_infos[];
/* The entry for name, or NULL. */
const model_info_t *model_info(const char *name);
/* The default --target-acc of model mi on `dataset` (an --dataset name), 0 for none. */
double model_info_target(const model_info_t *mi, const char *dataset);
/* 1 for the ImageNet-shaped models: --dataset synthetic gives them 3x224x224 images and 1000 classes. */
int model_info_imagenet(const model_info_t *mi);
