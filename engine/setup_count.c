/* setup_count.c — the setup counter: the main thread adds, the watchdog thread reads, through the compiler's atomic
 * builtins (as the run's step counters are), so that the header stays usable from C and CUDA C++ alike. */
#include "setup_count.h"

static void add(int *x, int n) { __atomic_fetch_add(x, n, __ATOMIC_RELEASE); }

void setup_count_begin(setup_count_t *c, int device, int layers) {
    if (!c) return;
    /* the total first: a reader that sees a layer of this instance done sees the instance's layers too */
    add(&c->layers, layers);
    if (device >= 0 && device < 64) __atomic_fetch_or(&c->devices, 1ull << device, __ATOMIC_RELEASE);
}

void setup_count_layer_done(setup_count_t *c, int conv, int bn) {
    if (!c) return;
    add(&c->conv_searches, conv);
    add(&c->bn_searches, bn);
    add(&c->layers_done, 1);
}

setup_count_now_t setup_count_read(const setup_count_t *c) {
    setup_count_now_t now = {0};
    if (!c) return now;
    /* done before the total (acquire): never more layers done than begun */
    now.layers_done = __atomic_load_n(&c->layers_done, __ATOMIC_ACQUIRE);
    now.layers = __atomic_load_n(&c->layers, __ATOMIC_ACQUIRE);
    now.conv_searches = __atomic_load_n(&c->conv_searches, __ATOMIC_ACQUIRE);
    now.bn_searches = __atomic_load_n(&c->bn_searches, __ATOMIC_ACQUIRE);
    now.gpus = __builtin_popcountll(__atomic_load_n(&c->devices, __ATOMIC_ACQUIRE));
    return now;
}
