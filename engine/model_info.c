/* model_info.c — the model table (MODEL_TABLE, engine/model_info.h) as model_infos. The builders in engine/models/
 * are the truth about the layers; this table only holds what must be known before one runs (option checks, --help,
 * the synthetic set). */
#include "model_info.h"
#include <string.h>

#define MODEL_INFO(name, ...) {#name, __VA_ARGS__},
const model_info_t model_infos[] = {MODEL_TABLE(MODEL_INFO){NULL, NULL, 0, 0, 0, 0, 0, 0, NULL, 0, 0}};
#undef MODEL_INFO

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
