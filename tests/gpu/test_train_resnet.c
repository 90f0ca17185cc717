/* test_train_resnet.c — ResNet-18 on Fashion-MNIST, batch 256, lr 0.1, Normal(0.01), three epochs, in tf32 and in
 * bf16 and fp16 mixed precision (fp16 with its loss scale): test accuracy must reach 0.90 in each (the PyTorch
 * reference: 0.919). */
#include "train_common.h"

int main(void) {
    gpu_test_require(1);
    const math_t maths[3] = {MATH_TF32, MATH_BF16, MATH_FP16};
    for (int i = 0; i < 3; i++) {
        double acc = train_accuracy("resnet18", "fashion-mnist", 256, 0.1, INIT_NORMAL, 3, maths[i]);
        EXPECT(acc >= 0.90, "ResNet-18/Fashion-MNIST (%s) test accuracy %.4f < 0.90 after 3 epochs",
               gpu_math_name(maths[i]), acc);
    }
    return test_summary();
}
