/* test_shard.c — the data-parallel shard arithmetic: shards tile each global batch in replica order, one replica
 * takes everything, and every invalid split (no replicas, a replica index out of range, fewer images than
 * replicas, an uneven split) is refused with a message that names the numbers. */
#include "strategies/shard.h"
#include "test.h"
#include <string.h>

static void test_tiling(void) {
    static const int batches[] = {1, 2, 4, 64, 256, 1024, 96};
    static const int ns[] = {1, 2, 3, 4, 8};
    char err[256];
    for (size_t b = 0; b < sizeof batches / sizeof batches[0]; b++)
        for (size_t k = 0; k < sizeof ns / sizeof ns[0]; k++) {
            int B = batches[b], n = ns[k];
            if (B < n || B % n) continue;
            int next = 0;
            for (int i = 0; i < n; i++) {
                shard_t s = {-1, -1};
                EXPECT(shard_split(B, n, i, &s, err, sizeof err) == 0, "B %d n %d i %d: %s", B, n, i, err);
                EXPECT(s.first == next && s.count == B / n, "B %d n %d i %d: first %d count %d", B, n, i, s.first,
                       s.count);
                next = s.first + s.count;
            }
            EXPECT(next == B, "B %d n %d: shards cover %d rows", B, n, next);
        }
}

static void test_one_replica(void) {
    shard_t s;
    char err[256];
    EXPECT(shard_split(256, 1, 0, &s, err, sizeof err) == 0 && s.first == 0 && s.count == 256, "1 replica");
}

static void test_first_image(void) {
    shard_t s;
    char err[256];
    EXPECT(shard_split(256, 4, 3, &s, err, sizeof err) == 0, "split");
    EXPECT(shard_first_image(0, 256, &s) == 192, "step 0: %lld", shard_first_image(0, 256, &s));
    EXPECT(shard_first_image(2, 256, &s) == 2 * 256 + 192, "step 2: %lld", shard_first_image(2, 256, &s));
    /* Past 2^31: no int overflow. */
    EXPECT(shard_first_image(100000, 60000, &s) == 6000000192LL, "large: %lld", shard_first_image(100000, 60000, &s));
}

static void expect_refused(int B, int n, int i, const char *needle) {
    shard_t s = {7, 7};
    char err[256] = "";
    int rc = shard_split(B, n, i, &s, err, sizeof err);
    EXPECT(rc == -1, "B %d n %d i %d accepted", B, n, i);
    EXPECT(strstr(err, needle) != NULL, "B %d n %d i %d: message \"%s\" lacks \"%s\"", B, n, i, err, needle);
    EXPECT(s.first == 7 && s.count == 7, "B %d n %d i %d: output written on refusal", B, n, i);
}

static void test_refusals(void) {
    expect_refused(256, 0, 0, "0 replicas");
    expect_refused(256, -2, 0, "-2 replicas");
    expect_refused(256, 4, 4, "replica 4 outside 0..3");
    expect_refused(256, 4, -1, "replica -1");
    expect_refused(3, 4, 0, "global batch 3 is smaller than the 4 replicas");
    expect_refused(0, 1, 0, "global batch 0");
    expect_refused(10, 4, 0, "global batch 10 does not split evenly over 4 replicas (2 left over)");
    expect_refused(256, 3, 1, "256 does not split evenly over 3");
}

int main(void) {
    test_tiling();
    test_one_replica();
    test_first_image();
    test_refusals();
    return test_summary();
}
