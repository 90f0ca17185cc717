/* test_dp_reduce.c — every data-parallel strategy's gradient reduction sums exactly: integer-valued inputs (exact in
 * fp32) on 2 and on min(4, present) GPUs, at sizes that exercise the vector body and scalar tails, naive over its
 * peer and host paths; nothing past `count` may change, and a second call on the results sums again. */
#include "dp_common.h"

#define MAX_COUNT (((size_t)1 << 22) + 5)
#define GUARD 64

static int all_peers(int n) {
    for (int i = 1; i < n; i++) {
        int a = 0, b = 0;
        CHECK_CUDA(cudaDeviceCanAccessPeer(&a, 0, i));
        CHECK_CUDA(cudaDeviceCanAccessPeer(&b, i, 0));
        if (!a || !b) return 0;
    }
    return 1;
}

static void check_strategy(const strategy_t *st, int n, int path, const char *label) {
    static const size_t counts[] = {1, 3, 4, 1000, 4097, (size_t)1 << 20, MAX_COUNT};
    gpu_t gpus[DP_MAX_GPUS];
    gpu_t *gp[DP_MAX_GPUS];
    float *bufs[DP_MAX_GPUS];
    for (int i = 0; i < n; i++) {
        gpu_init(&gpus[i], i, MATH_FP32);
        gp[i] = &gpus[i];
        CHECK_CUDA(cudaMalloc((void **)&bufs[i], (MAX_COUNT + GUARD) * sizeof(float)));
    }
    void *ctx = NULL;
    char err[512] = "";
    int rc = st->reduce->open(&ctx, gp, n, MAX_COUNT, path, err, sizeof err);
    EXPECT(rc == 0, "%s on %d GPUs: open: %s", label, n, err);
    if (rc == 0) {
        printf("%s on %d GPUs (%s)\n", label, n, st->reduce->algo(ctx));
        for (size_t c = 0; c < sizeof counts / sizeof counts[0]; c++) {
            size_t count = counts[c];
            float guard_before[DP_MAX_GPUS][GUARD], guard_after[GUARD];
            for (int i = 0; i < n; i++) {
                CHECK_CUDA(cudaSetDevice(i));
                reduce_fill_pattern(bufs[i], count + GUARD, 100 + i, gpus[i].stream);
                CHECK_CUDA(cudaStreamSynchronize(gpus[i].stream));
                CHECK_CUDA(cudaMemcpy(guard_before[i], bufs[i] + count, sizeof guard_after, cudaMemcpyDeviceToHost));
            }
            unsigned long long wrong = dp_check_reduce(st->reduce, ctx, gp, n, bufs, count);
            EXPECT(wrong == 0, "%s on %d GPUs, %zu floats: %llu wrong sums", label, n, count, wrong);
            for (int i = 0; i < n; i++) {
                CHECK_CUDA(cudaSetDevice(i));
                CHECK_CUDA(cudaMemcpy(guard_after, bufs[i] + count, sizeof guard_after, cudaMemcpyDeviceToHost));
                EXPECT(memcmp(guard_before[i], guard_after, sizeof guard_after) == 0,
                       "%s on %d GPUs, %zu floats: GPU %d changed past the end", label, n, count, i);
            }
            /* Again on the sums: every buffer must become n times the sum (still exact: |n * sum| <= 128). */
            st->reduce->run(ctx, bufs, count);
            float first[2], got[2];
            size_t m = count < 2 ? count : 2;
            CHECK_CUDA(cudaSetDevice(0));
            CHECK_CUDA(cudaDeviceSynchronize());
            for (int i = 0; i < n; i++) {
                CHECK_CUDA(cudaSetDevice(i));
                CHECK_CUDA(cudaDeviceSynchronize());
                CHECK_CUDA(cudaMemcpy(got, bufs[i] + count - m, m * sizeof(float), cudaMemcpyDeviceToHost));
                if (i == 0) memcpy(first, got, sizeof got);
                EXPECT(memcmp(first, got, m * sizeof(float)) == 0, "%s: second call: GPU %d differs from GPU 0",
                       label, i);
            }
        }
        st->reduce->close(ctx);
    }
    for (int i = 0; i < n; i++) {
        CHECK_CUDA(cudaSetDevice(i));
        CHECK_CUDA(cudaFree(bufs[i]));
        gpu_free(&gpus[i]);
    }
}

int main(void) {
    gpu_test_require(2);
    int counts[2], n_counts = dp_test_counts(counts);
    const strategy_t *naive = strategy_find("naive"), *nccl = strategy_find("nccl");
    EXPECT(naive && naive->reduce && nccl && nccl->reduce, "naive and nccl are registered with a reduction");
    if (!naive || !nccl) return test_summary();
    for (int k = 0; k < n_counts; k++) {
        int n = counts[k];
        check_strategy(naive, n, NAIVE_PATH_AUTO, "naive auto");
        check_strategy(naive, n, NAIVE_PATH_HOST, "naive host");
        if (all_peers(n)) check_strategy(naive, n, NAIVE_PATH_P2P, "naive p2p");
        else printf("naive p2p on %d GPUs: no peer access between every pair, not tested\n", n);
        check_strategy(nccl, n, 0, "nccl");
    }
    return test_summary();
}
