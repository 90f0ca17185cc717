/* test_setup_count.c — the setup counter the engine adds to and the watchdog thread reads: its sums over instances
 * and GPUs, NULL taken everywhere, and a reader on another thread never seeing more layers done than begun. */
#include "engine/setup_count.h"
#include "test.h"

#include <pthread.h>

static void test_sums(void) {
    setup_count_t c = {0};
    setup_count_now_t now = setup_count_read(&c);
    EXPECT(now.layers == 0 && now.layers_done == 0 && now.gpus == 0, "zeroed: nothing begun");
    setup_count_begin(&c, 0, 53);
    for (int i = 0; i < 20; i++) setup_count_layer_done(&c, i < 4 ? 3 : 0, i == 5);    /* 4 convolutions, a BN */
    now = setup_count_read(&c);
    EXPECT(now.layers == 53 && now.layers_done == 20 && now.gpus == 1, "GPU 0: %d of %d on %d GPU(s)",
           now.layers_done, now.layers, now.gpus);
    EXPECT(now.conv_searches == 12 && now.bn_searches == 1, "searches %d, %d", now.conv_searches, now.bn_searches);
    /* a second instance on GPU 0 (a pipeline's slot) adds layers, not a GPU; GPU 3 adds both */
    setup_count_begin(&c, 0, 10);
    setup_count_begin(&c, 3, 53);
    now = setup_count_read(&c);
    EXPECT(now.layers == 116 && now.gpus == 2, "%d layers on %d GPUs, want 116 on 2", now.layers, now.gpus);
    /* an ordinal past the mask's 64 bits counts its layers, and no GPU, rather than a wrong one */
    setup_count_begin(&c, 64, 1);
    setup_count_begin(&c, -1, 1);
    now = setup_count_read(&c);
    EXPECT(now.layers == 118 && now.gpus == 2, "%d layers on %d GPUs, want 118 on 2", now.layers, now.gpus);
}

static void test_null(void) {
    setup_count_begin(NULL, 0, 53);
    setup_count_layer_done(NULL, 3, 1);
    setup_count_now_t now = setup_count_read(NULL);
    EXPECT(now.layers == 0 && now.layers_done == 0 && now.conv_searches == 0 && now.bn_searches == 0 && now.gpus == 0,
           "NULL reads as nothing begun");
}

#define INSTANCES 20000
#define LAYERS 5

typedef struct {
    setup_count_t c;
    int finished;
} shared_t;

static void *count_up(void *arg) {
    shared_t *s = arg;
    for (int i = 0; i < INSTANCES; i++) {
        setup_count_begin(&s->c, i % 4, LAYERS);
        for (int k = 0; k < LAYERS; k++) setup_count_layer_done(&s->c, 1, 0);
    }
    __atomic_store_n(&s->finished, 1, __ATOMIC_RELEASE);
    return NULL;
}

/* The watchdog's view while the main thread counts: done never ahead of begun, neither ever going back. */
static void test_threads(void) {
    shared_t s = {0};
    pthread_t t;
    EXPECT(pthread_create(&t, NULL, count_up, &s) == 0, "writer thread");
    int ahead = 0, back = 0, reads = 0, last_done = 0, last_layers = 0;
    while (!__atomic_load_n(&s.finished, __ATOMIC_ACQUIRE)) {
        setup_count_now_t now = setup_count_read(&s.c);
        ahead += now.layers_done > now.layers;
        back += now.layers_done < last_done || now.layers < last_layers;
        last_done = now.layers_done, last_layers = now.layers;
        reads++;
    }
    pthread_join(t, NULL);
    setup_count_now_t now = setup_count_read(&s.c);
    EXPECT(ahead == 0 && back == 0, "%d of %d reads had more done than begun, %d went back", ahead, reads, back);
    EXPECT(now.layers == INSTANCES * LAYERS && now.layers_done == INSTANCES * LAYERS && now.gpus == 4 &&
           now.conv_searches == INSTANCES * LAYERS, "after: %d of %d on %d GPUs, %d searches", now.layers_done,
           now.layers, now.gpus, now.conv_searches);
}

int main(void) {
    test_sums();
    test_null();
    test_threads();
    return test_summary();
}
