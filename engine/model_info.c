/* model_info.c — the model table (MODEL_TABLE, engine/model_info.h) as model_infos. The builders in engine/models/
 * are the truth about the layers; this table only holds what must be known before one runs (option checks, --help,
 * the synthetic set). */
#include "model_info.h"
#include "gpt2/gpt2_shape.h"
#include <stdio.h>
#include <string.h>

#define MODEL_INFO(name, ...) {#name, __VA_ARGS__},
const model_info_t model_infos[] = {MODEL_TABLE(MODEL_INFO){.name = NULL}};
#undef MODEL_INFO

const model_info_t *model_info(const char *name) {
    for (int i = 0; name && model_infos[i].name; i++)
        if (strcmp(model_infos[i].name, name) == 0) return &model_infos[i];
    return NULL;
}

int model_info_imagenet(const model_info_t *mi) { return mi && mi->synth_classes == 1000; }

int model_info_lm(const model_info_t *mi) { return mi && mi->kind == MODEL_TOKENS; }

/* The sizes are GPT-2's table (the one model with sizes): a model of one size has none. */
int model_info_size_ok(const model_info_t *mi, const char *size) {
    return mi && mi->size && gpt2_shape(size) != NULL;
}

int model_info_context(const model_info_t *mi, const char *size) {
    const gpt2_shape_t *s = model_info_lm(mi) ? gpt2_shape(size) : NULL;
    return s ? s->context : 0;
}

int model_info_vocab(const model_info_t *mi, const char *size) {
    const gpt2_shape_t *s = model_info_lm(mi) ? gpt2_shape(size) : NULL;
    return s ? s->vocab : 0;
}

void model_info_sizes(const model_info_t *mi, char *buf, size_t len) {
    size_t at = 0;
    if (len) buf[0] = '\0';
    for (int i = 0; mi && mi->size && gpt2_shapes[i].name && at < len; i++)
        at += (size_t)snprintf(buf + at, len - at, "%s%s", i ? ", " : "", gpt2_shapes[i].name);
}

double model_info_target(const model_info_t *mi, const char *dataset) {
    if (!mi || !dataset) return 0;
    if (strcmp(dataset, "fashion-mnist") == 0) return mi->target_fashion;
    return strcmp(dataset, "mnist") == 0 ? mi->target_mnist : 0;
}
