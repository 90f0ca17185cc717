/* test_train_lenet.c — LeNet on MNIST, batch 64, lr 0.1, Xavier, one epoch, in tf32 and in bf16 and fp16 mixed
 * precision (fp16 with its loss scale): test accuracy must reach 0.975 in each (the PyTorch reference reaches 0.979
 * with the same recipe). */
#include "train_common.h"

int main(void) {
    gpu_test_require(1);
    const math_t maths[3] = {MATH_TF32, MATH_BF16, MATH_FP16};
    for (int i = 0; i < 3; i++) {
        double acc = train_accuracy("lenet", "mnist", 64, 0.1, INIT_XAVIER, 1, maths[i]);
        EXPECT(acc >= 0.975, "LeNet/MNIST (%s) test accuracy %.4f < 0.975 after 1 epoch", gpu_math_name(maths[i]), acc);
    }
    return test_summary();
}
