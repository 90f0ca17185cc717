/* resnet18.c — the d2l ResNet-18 for 1x28x28 inputs (any side >= 8, channels and classes follow the data): 3x3 stem (stride 1, no max-pool), four stages of two
 * residual blocks (64/128/256/512, 1x1 stride-2 projection on each down-sampling block), global average pool, dense 10. */
#include "../model.h"
#include <stdio.h>

static int conv(model_t *m, const char *label, int in, int cout, int k, int stride, int pad) {
    /* Biases kept although BN follows, to match the reference's nn.Conv2d default (bias=True). */
    return model_add(m, &layer_conv_ops, label, in, -1,
                     (layer_cfg_t){.k = k, .stride = stride, .pad = pad, .cout = cout, .bias = 1});
}

/* relu(bn(x)) as one layer: cuDNN's fused kernels save two passes over the activation each way. */
static int bn_relu(model_t *m, const char *label, int in) {
    return model_add(m, &layer_bn_ops, label, in, -1, (layer_cfg_t){.fuse = BN_FUSE_RELU});
}

/* relu(bn(x) + shortcut) as one layer: the residual add and the block's last ReLU fused into batch norm. */
static int bn_add_relu(model_t *m, const char *label, int in, int shortcut) {
    return model_add(m, &layer_bn_ops, label, in, shortcut, (layer_cfg_t){.fuse = BN_FUSE_ADD_RELU});
}

/* relu(bn2(conv2(relu(bn1(conv1(x))))) + shortcut(x)), shortcut = 1x1 conv when the shape changes; the ReLUs and
 * the add run inside the batch-norm layers (cfg.fuse). */
static int residual(model_t *m, int x, int stage, int blk, int cout, int stride, int project) {
    char l[32];
#define LBL(s) (snprintf(l, sizeof l, "s%d.b%d.%s", stage, blk, s), l)
    int y = conv(m, LBL("conv1"), x, cout, 3, stride, 1);
    y = bn_relu(m, LBL("bn1"), y);
    y = conv(m, LBL("conv2"), y, cout, 3, 1, 1);
    int sc = project ? conv(m, LBL("proj"), x, cout, 1, stride, 0) : x;
    y = bn_add_relu(m, LBL("bn2"), y, sc);
#undef LBL
    return y;
}

void model_build_resnet18(model_t *m, int batch, model_input_t in) {
    model_begin(m, "resnet18", batch, (shape_t){batch, in.image, in.image, in.channels}, in.classes);
    int t = conv(m, "stem.conv", m->input, 64, 3, 1, 1);
    t = bn_relu(m, "stem.bn", t);
    static const int channels[4] = {64, 128, 256, 512};
    for (int s = 0; s < 4; s++) {
        int down = s > 0;   /* stage 1 keeps 64 channels at 28x28, as in d2l */
        t = residual(m, t, s + 1, 0, channels[s], down ? 2 : 1, down);
        t = residual(m, t, s + 1, 1, channels[s], 1, 0);
    }
    t = model_add(m, &layer_gap_ops, "gap", t, -1, (layer_cfg_t){0});
    t = model_add(m, &layer_dense_ops, "fc", t, -1, (layer_cfg_t){.cout = in.classes});
    model_end(m, t);
}
