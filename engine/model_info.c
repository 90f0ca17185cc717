/* model_info.c — the model table (engine/model_info.h). The builders in engine/models/ are the truth about the
 * layers; this table only holds what must be known before one runs (option checks, --help, the synthetic set). */
#include "model_info.h"
#include <string.h>

const model_info_t model_infos[] = {
    {"lenet", "LeNet-5 (d2l), 1x28x28 inputs", 256, 28, 0, 4, 1, 10, "xavier", 0.85, 0.98},
    {"resnet18", "ResNet-18 (d2l: 3x3 stem, no max-pool), 1x28x28 inputs", 256, 28, 1, 8, 1, 10, "normal", 0.92, 0.99},
    {"resnet50", "ResNet-50 v1.5 (torchvision), 3x224x224 inputs", 256, 224, 1, 32, 3, 1000, "kaiming", 0, 0},
    {"resnet101", "ResNet-101 v1.5 (torchvision), 3x224x224 inputs", 128, 224, 1, 32, 3, 1000, "kaiming", 0, 0},
    {NULL, NULL, 0, 0, 0, 0, 0, 0, NULL, 0, 0},
};

const model_info_t *model_info(const char *name) {
    for (int i = 0; name && model_infos[i].name; i++)
        if (strcmp(model_infos[i].name, name) == 0) return &model_infos[i];
    return NULL;
}

int model_info_imagenet(const model_info_t *mi) { return mi && mi->synth_classes == 1000; }

double model_info_target(const model_info_t *mi, const char *dataset) {
    if (!mi || !dataset) return 0;
    if (strcmp(dataset, "fashion-mnist") == 0) return mi->target_fashion;
    return strcmp(dataset, "mnist") == 0 ? mi->target_mnist : 0;
}
