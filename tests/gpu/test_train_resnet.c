/* test_train_resnet.c — ResNet-18 on Fashion-MNIST, batch 256, lr 0.1, Normal(0.01), three epochs: test accuracy
 * must reach 0.90 (the PyTorch reference: 0.919). */
#include "train_common.h"

int main(void) {
    gpu_test_require(1);
    double acc = train_accuracy("resnet18", "fashion-mnist", 256, 0.1, INIT_NORMAL, 3, MATH_TF32);
    EXPECT(acc >= 0.90, "ResNet-18/Fashion-MNIST test accuracy %.4f < 0.90 after 3 epochs", acc);
    return test_summary();
}
