/* test_train_lenet.c — LeNet on MNIST, batch 64, lr 0.1, Xavier, one epoch: test accuracy must reach 0.975
 * (the PyTorch reference reaches 0.979 with the same recipe). */
#include "train_common.h"

int main(void) {
    gpu_test_require(1);
    double acc = train_accuracy("lenet", "mnist", 64, 0.1, INIT_XAVIER, 1, MATH_TF32);
    EXPECT(acc >= 0.975, "LeNet/MNIST test accuracy %.4f < 0.975 after 1 epoch", acc);
    return test_summary();
}
