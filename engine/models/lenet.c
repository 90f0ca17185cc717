/* lenet.c — LeNet for 1x28x28 inputs: conv 20@5x5 + ReLU, max-pool 2, conv 50@5x5 + ReLU, max-pool 2,
 * flatten, dense 512 + ReLU, dense 10 (the d2l / PyTorch-reference layout). */
#include "../model.h"

void model_build_lenet(model_t *m, int batch, model_input_t in) {
    /* The dense layers are sized for 28x28 (model_build_input refuses other sides); channels and classes follow. */
    model_begin(m, "lenet", batch, (shape_t){batch, in.image, in.image, in.channels}, in.classes);
    int t = m->input;
    t = model_add(m, &layer_conv_ops, "conv1", t, -1, (layer_cfg_t){.k = 5, .stride = 1, .pad = 0, .cout = 20, .bias = 1});
    t = model_add(m, &layer_relu_ops, "relu1", t, -1, (layer_cfg_t){0});
    t = model_add(m, &layer_maxpool_ops, "pool1", t, -1, (layer_cfg_t){.k = 2, .stride = 2});
    t = model_add(m, &layer_conv_ops, "conv2", t, -1, (layer_cfg_t){.k = 5, .stride = 1, .pad = 0, .cout = 50, .bias = 1});
    t = model_add(m, &layer_relu_ops, "relu2", t, -1, (layer_cfg_t){0});
    t = model_add(m, &layer_maxpool_ops, "pool2", t, -1, (layer_cfg_t){.k = 2, .stride = 2});
    t = model_add(m, &layer_flatten_ops, "flatten", t, -1, (layer_cfg_t){0});
    t = model_add(m, &layer_dense_ops, "fc1", t, -1, (layer_cfg_t){.cout = 512});
    t = model_add(m, &layer_relu_ops, "relu3", t, -1, (layer_cfg_t){0});
    t = model_add(m, &layer_dense_ops, "fc2", t, -1, (layer_cfg_t){.cout = in.classes});
    model_end(m, t);
}
