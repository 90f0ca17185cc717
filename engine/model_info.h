/* model_info.h — what the harness knows about each model before building it: what it learns from (images or
 * tokens), its defaults (batch, image size, recipe, size), its input on synthetic data. Host-only: options use it. */
#pragma once
#include <stddef.h>
#include "schedule.h"

/* What kind of data a model learns from, and so what a row measures of it: an image classifier takes images and
 * labels (throughput in images/s, test accuracy); a language model takes a token corpus (engine/tokens.h) and
 * predicts each next token (throughput in tokens/s, the held-out loss in place of test accuracy). */
typedef enum { MODEL_IMAGES = 0, MODEL_TOKENS = 1 } model_kind_t;

typedef struct {
    const char *name;
    const char *summary;    /* one line for --help */
    model_kind_t kind;
    int batch;              /* default --batch (sequences for a language model) */
    int image;              /* default image side (--image-size); 0: no images */
    int resizable;          /* 0: the input is fixed at `image` (a dense layer is sized for it) */
    int stride;             /* total down-sampling to the last feature map: the smallest side it takes */
    int synth_channels;     /* --dataset synthetic: image channels and classes generated for it */
    int synth_classes;
    const char *init;       /* default --init */
    /* default --target-acc on Fashion-MNIST and on MNIST (a fraction; 0: none, as on synthetic data, whose random
     * labels have no accuracy): a level the model reaches in about 10 epochs at batch 256 with warm-up and a decay,
     * so that time to target ranks configurations that train it, not ones that only start to */
    double target_fashion, target_mnist;
    /* Its training recipe, the defaults of --optimizer, --lr, --lr-schedule, --lr-scaling, --warmup-epochs and
     * --weight-decay: the command's long-standing SGD defaults for the image classifiers (the rate grown linearly
     * with the batch, Goyal et al. 2017); GPT-2's own (AdamW at 6e-4, warm-up then a cosine decay, weight decay 0.1
     * on its matrices), its rate grown by the square root of the batch, the rule for Adam (Malladi et al. 2022, "On
     * the SDEs and Scaling Rules for Adaptive Gradient Algorithms"): linearly, 8 GPUs would take it to 4.8e-3 */
    optim_kind_t optimizer;
    double lr;
    lr_kind_t lr_schedule;
    lr_scaling_t lr_scaling;
    double warmup_epochs, weight_decay;
    /* --model-size's default, NULL for a model of one size (the option is then refused): GPT-2's sizes are
     * engine/gpt2/gpt2_shape.h's table */
    const char *size;
} model_info_t;

/* The one model table: X(name, summary, kind, batch, image, resizable, stride, synth_channels, synth_classes, init,
 * target_fashion, target_mnist, optimizer, lr, lr_schedule, lr_scaling, warmup_epochs, weight_decay, size),
 * model_info_t's fields in order, the name an identifier. model_infos, the --model choices and the builders
 * (model_build_<name>, engine/model.c) are made from it: adding a model is its builder's file and one line here. */
#define MODEL_SGD OPTIM_SGD, 0.1, LR_CONSTANT, LR_SCALE_LINEAR, 0, 0, NULL   /* the image classifiers' recipe, size */
#define MODEL_TABLE(X)                                                                                                 \
    X(lenet, "LeNet-5 (d2l), 1x28x28 inputs", MODEL_IMAGES, 256, 28, 0, 4, 1, 10, "xavier", 0.85, 0.98, MODEL_SGD)    \
    X(resnet18, "ResNet-18 (d2l: 3x3 stem, no max-pool), 1x28x28 inputs", MODEL_IMAGES, 256, 28, 1, 8, 1, 10,          \
      "normal", 0.92, 0.99, MODEL_SGD)                                                                                 \
    X(resnet50, "ResNet-50 v1.5 (torchvision), 3x224x224 inputs", MODEL_IMAGES, 256, 224, 1, 32, 3, 1000, "kaiming",  \
      0, 0, MODEL_SGD)                                                                                                 \
    X(resnet101, "ResNet-101 v1.5 (torchvision), 3x224x224 inputs", MODEL_IMAGES, 128, 224, 1, 32, 3, 1000,           \
      "kaiming", 0, 0, MODEL_SGD)                                                                                      \
    X(gpt2, "GPT-2 (OpenAI's, pre-LN, tied head), sequences of its context", MODEL_TOKENS, 16, 0, 0, 0, 0, 0,          \
      "normal", 0, 0, OPTIM_ADAMW, 6e-4, LR_COSINE, LR_SCALE_SQRT, 0.1, 0.1, "small")
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
/* 1 for a language model (kind MODEL_TOKENS): a token corpus in, tokens/s and the held-out loss in its rows. */
int model_info_lm(const model_info_t *mi);
/* 1 when `size` is one of model mi's sizes (--model-size); a model without sizes has none. */
int model_info_size_ok(const model_info_t *mi, const char *size);
/* A language model's sequence length at `size` (its context: the windows of its corpus) and its vocabulary (the
 * synthetic corpus's tokens fall below it); 0 for an image classifier or an unknown size. */
int model_info_context(const model_info_t *mi, const char *size);
int model_info_vocab(const model_info_t *mi, const char *size);
/* Model mi's sizes as "a, b, c" into buf ("" for a model without sizes). */
void model_info_sizes(const model_info_t *mi, char *buf, size_t len);
