/* resnet_bottleneck.c — torchvision's ResNet v1.5 (resnet50, resnet101): 7x7 stride-2 stem, max-pool 3x3 stride 2
 * padding 1, four stages of bottleneck blocks (1x1, 3x3 carrying the stride, 1x1 with 4x expansion; a 1x1 projection
 * with batch norm on each stage's first block), global average pool, dense to the classes. No convolution biases. */
#include "../model.h"
#include <stdio.h>

static int conv(model_t *m, const char *label, int in, int cout, int k, int stride, int pad) {
    /* bias=False as torchvision: batch norm follows every convolution and would cancel a bias. */
    return model_add(m, &layer_conv_ops, label, in, -1,
                     (layer_cfg_t){.k = k, .stride = stride, .pad = pad, .cout = cout, .bias = 0});
}

static int bn(model_t *m, const char *label, int in, int fuse, int shortcut) {
    return model_add(m, &layer_bn_ops, label, in, shortcut, (layer_cfg_t){.fuse = fuse});
}

/* The projection comes before bn3, which adds it. No stage boundary can fall between a block's layers: x is read by
 * the first convolution and by the projection (or the add), so two tensors cross every boundary inside the block
 * (model_cut_points). */
int model_add_bottleneck(model_t *m, int x, const char *prefix, int width, int stride, int project) {
    char l[32];
#define LBL(s) (snprintf(l, sizeof l, "%s.%s", prefix, s), l)
    int y = conv(m, LBL("conv1"), x, width, 1, 1, 0);
    y = bn(m, LBL("bn1"), y, BN_FUSE_RELU, -1);
    y = conv(m, LBL("conv2"), y, width, 3, stride, 1);   /* v1.5: the stride on the 3x3, not the first 1x1 */
    y = bn(m, LBL("bn2"), y, BN_FUSE_RELU, -1);
    y = conv(m, LBL("conv3"), y, 4 * width, 1, 1, 0);
    int sc = x;
    if (project) {
        sc = conv(m, LBL("proj"), x, 4 * width, 1, stride, 0);
        sc = bn(m, LBL("proj.bn"), sc, BN_FUSE_NONE, -1);
    }
    y = bn(m, LBL("bn3"), y, BN_FUSE_ADD_RELU, sc);
#undef LBL
    return y;
}

void model_build_bottleneck(model_t *m, const char *name, int batch, model_input_t in, const int blocks[4], int width) {
    model_begin(m, name, batch, (shape_t){batch, in.image, in.image, in.channels}, in.classes);
    int t = conv(m, "stem.conv", m->input, width, 7, 2, 3);
    t = bn(m, "stem.bn", t, BN_FUSE_RELU, -1);
    t = model_add(m, &layer_maxpool_ops, "stem.pool", t, -1, (layer_cfg_t){.k = 3, .stride = 2, .pad = 1});
    int cin = width;
    for (int s = 0; s < 4; s++) {
        int w = width << s;
        for (int b = 0; b < blocks[s]; b++) {
            int stride = b == 0 && s > 0 ? 2 : 1;
            /* torchvision projects where the stride or the channel count changes: every stage's first block. */
            int project = b == 0 && (stride != 1 || cin != 4 * w);
            char prefix[16];
            snprintf(prefix, sizeof prefix, "s%d.b%d", s + 1, b);
            t = model_add_bottleneck(m, t, prefix, w, stride, project);
            cin = 4 * w;
        }
    }
    t = model_add(m, &layer_gap_ops, "gap", t, -1, (layer_cfg_t){0});
    t = model_add(m, &layer_dense_ops, "fc", t, -1, (layer_cfg_t){.cout = in.classes});
    model_end(m, t);
}

void model_build_resnet50(model_t *m, int batch, model_input_t in) {
    static const int blocks[4] = {3, 4, 6, 3};
    model_build_bottleneck(m, "resnet50", batch, in, blocks, 64);
}

void model_build_resnet101(model_t *m, int batch, model_input_t in) {
    static const int blocks[4] = {3, 4, 23, 3};
    model_build_bottleneck(m, "resnet101", batch, in, blocks, 64);
}
